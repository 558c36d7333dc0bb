//! A closed pipe ends numakit quietly, as it ends `cat` or `grep`: when the
//! reader of stdout goes away (`numakit topo | head -1`), the next write
//! kills the process with SIGPIPE instead of failing inside `println!`,
//! which would panic with a backtrace.
//!
//! Rust starts programs with SIGPIPE ignored; this restores the default.
//! It does not cover a stdout that fails otherwise (a full disk): those
//! writes still panic in `println!`.

/// Restores the default action of SIGPIPE (end the process). Call it first
/// thing in `main`, before any thread starts.
pub fn end_quietly_when_stdout_closes() {
    #[cfg(unix)]
    // SAFETY: signal() with SIG_DFL installs no handler code; it only resets
    // the disposition of SIGPIPE, before any other thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
