//! The two Linux calls of the cluster commands, each behind a safe
//! function: a started program that dies with the thread that started it
//! (`prctl(PR_SET_PDEATHSIG)`), for `--local`'s processes; and two
//! directories swapped in one step (`renameat2(RENAME_EXCHANGE)`), for
//! publishing a result directory. Elsewhere than Linux the first does
//! nothing and the second reports `Unsupported` (callers fall back).
//!
//! It does not decide when to use them; every `unsafe` block of the
//! cluster commands is here.

use std::io;
use std::path::Path;
use std::process::Command;

/// Makes the program `command` starts die (SIGKILL) when the thread that
/// starts it ends, as when this process is killed, even by SIGKILL. The
/// caller must start and wait for the program on the same thread (the
/// kernel watches the thread, not the process). Should this process die
/// between the fork and the `prctl`, the program does not start.
#[cfg(target_os = "linux")]
pub fn die_with_parent(command: &mut Command) {
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

/// Swaps `a` and `b` (two existing paths on one file system) in one step:
/// no moment has either missing. `Unsupported` (or the kernel's EINVAL
/// for a file system that cannot) tells the caller to fall back.
#[cfg(target_os = "linux")]
pub fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let a = CString::new(a.as_os_str().as_bytes())?;
    let b = CString::new(b.as_os_str().as_bytes())?;
    // SAFETY: both pointers are NUL-terminated strings that live until the
    // call returns; AT_FDCWD resolves relative paths as std does.
    let rc = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    match rc {
        0 => Ok(()),
        _ => {
            let err = io::Error::last_os_error();
            match err.raw_os_error() {
                Some(libc::EINVAL | libc::ENOSYS) => Err(io::ErrorKind::Unsupported.into()),
                _ => Err(err),
            }
        }
    }
}

/// Elsewhere than Linux there is no exchange.
#[cfg(not(target_os = "linux"))]
pub fn exchange(_a: &Path, _b: &Path) -> io::Result<()> {
    Err(io::ErrorKind::Unsupported.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exchange_swaps_two_directories() {
        let root = tempfile::tempdir().unwrap();
        let (a, b) = (root.path().join("a"), root.path().join("b"));
        std::fs::create_dir(&a).unwrap();
        std::fs::create_dir(&b).unwrap();
        std::fs::write(a.join("from-a"), "1").unwrap();
        std::fs::write(b.join("from-b"), "2").unwrap();
        match exchange(&a, &b) {
            Ok(()) => {
                assert!(a.join("from-b").exists() && b.join("from-a").exists());
            }
            Err(e) => assert_eq!(e.kind(), io::ErrorKind::Unsupported, "{e}"),
        }
        let missing = root.path().join("missing");
        assert!(exchange(&a, &missing).is_err());
    }

    #[test]
    fn a_child_tied_to_its_parent_still_runs_normally() {
        let mut c = Command::new("sh");
        c.args(["-c", "exit 7"]);
        die_with_parent(&mut c);
        assert_eq!(c.status().unwrap().code(), Some(7));
    }
}
