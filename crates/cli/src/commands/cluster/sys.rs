//! The Linux call of the cluster commands, behind a safe function: a
//! started program that dies with the thread that started it
//! (`prctl(PR_SET_PDEATHSIG)`), for `--local`'s processes. Elsewhere than
//! Linux it does nothing. (Publishing a result directory swaps
//! directories with `renameat2`; that lives with the result directory in
//! `numakit_cluster::result_dir`, behind numakit-placement's safe
//! wrapper.)
//!
//! It does not decide when to use it; every `unsafe` block of the
//! cluster commands is here.

use std::process::Command;

/// Makes the program `command` starts die (SIGKILL) when the thread that
/// starts it ends, as when this process is killed, even by SIGKILL. The
/// caller must start and wait for the program on the same thread (the
/// kernel watches the thread, not the process). Should this process die
/// between the fork and the `prctl`, the program does not start.
#[cfg(target_os = "linux")]
pub fn die_with_parent(command: &mut Command) {
    use std::io;
    use std::os::unix::process::CommandExt;
    let parent = libc::pid_t::try_from(std::process::id()).unwrap_or(0);
    let arm = move || -> io::Result<()> {
        let signal = libc::SIGKILL as libc::c_ulong;
        // SAFETY: prctl(PR_SET_PDEATHSIG, signal) takes plain integers, is
        // a system call (async-signal-safe, as code between fork and exec
        // must be), and touches no memory of this process.
        if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, signal, 0, 0, 0) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: getppid has no preconditions and is async-signal-safe.
        if unsafe { libc::getppid() } != parent {
            // The parent died before prctl took effect: nobody would
            // signal this process, so it must not start.
            return Err(io::Error::from_raw_os_error(libc::ESRCH));
        }
        Ok(())
    };
    // SAFETY: `arm` runs in the child between fork and exec; it only makes
    // the two system calls above and builds an io::Error from an error
    // number (no allocation, no lock), which is what pre_exec allows.
    unsafe {
        command.pre_exec(arm);
    }
}

/// Elsewhere than Linux the program is not tied to its parent.
#[cfg(not(target_os = "linux"))]
pub fn die_with_parent(_command: &mut Command) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_tied_to_its_parent_still_runs_normally() {
        let mut c = Command::new("sh");
        c.args(["-c", "exit 7"]);
        die_with_parent(&mut c);
        assert_eq!(c.status().unwrap().code(), Some(7));
    }
}
