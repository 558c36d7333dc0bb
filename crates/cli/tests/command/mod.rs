//! Running the `numakit` binary from the CLI's integration tests, shared
//! by the test files that call it as users do.

#![allow(dead_code)] // each test file uses what it needs

use std::ffi::OsStr;
use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Runs `numakit` with `args` and returns what it did.
pub(crate) fn numakit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_numakit"))
        .args(args)
        .output()
        .expect("numakit should start")
}

/// Runs `numakit` with `args`: whether it succeeded, its stdout and its
/// stderr, as text.
pub(crate) fn outcome(args: &[&str]) -> (bool, String, String) {
    let out = numakit(args);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// Runs `numakit` with `args` in the directory `dir` (where relative
/// paths of its files land).
pub(crate) fn numakit_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_numakit"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("numakit should start")
}

/// Runs `numakit` with `args`, which must succeed, and parses its stdout.
pub(crate) fn json_of(args: &[&str]) -> Value {
    let out = numakit(args);
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON on stdout")
}

/// A clean failure: exit code 1 (the work failed) or 2 (the command line
/// is wrong), nothing panicked, and exactly one line on stderr, naming
/// `needle`.
pub(crate) fn assert_error(args: &[&str], needle: &str) {
    assert_error_with(args, needle, &[1, 2]);
}

/// [`assert_error`] for a wrong command line: exit code 2.
pub(crate) fn assert_usage_error(args: &[&str], needle: &str) {
    assert_error_with(args, needle, &[2]);
}

/// [`assert_error`] for work that failed: exit code 1.
pub(crate) fn assert_failure(args: &[&str], needle: &str) {
    assert_error_with(args, needle, &[1]);
}

fn assert_error_with(args: &[&str], needle: &str, codes: &[i32]) {
    let out = numakit(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let code = out.status.code();
    assert!(
        code.is_some_and(|c| codes.contains(&c)),
        "{args:?} should fail with {codes:?}, not {code:?}: {stderr}"
    );
    assert!(
        stderr.contains(needle),
        "{args:?}: stderr should mention `{needle}`: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{args:?}: one line: {stderr}");
    assert!(
        lines[0].starts_with("numakit: error: "),
        "{args:?}: prefixed like every error: {stderr}"
    );
}

/// Waits for `child` at most `limit`; if it still runs then, kills it and
/// returns `None`.
pub(crate) fn wait_or_kill(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("waiting for a child") {
            return Some(status);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits for `child`, failing the test if it runs past `limit`.
pub(crate) fn wait_within(child: &mut Child, limit: Duration, what: &str) -> ExitStatus {
    match wait_or_kill(child, limit) {
        Some(status) => status,
        None => panic!("{what} still ran after {limit:?}"),
    }
}

/// The address-space limit of [`run_bounded`]: 6 GiB, so that an
/// allocation that was not checked first aborts instead of swapping.
pub(crate) const ADDRESS_SPACE_KIB: u64 = 6 << 20;

/// Runs numakit with `args` (in `dir`, if given) under `ulimit -v`
/// [`ADDRESS_SPACE_KIB`], stdout discarded; stops it after `limit`.
/// Returns how it ended (`None`: still running, stopped) and its stderr.
pub(crate) fn run_bounded<S: AsRef<OsStr>>(
    args: &[S],
    dir: Option<&Path>,
    limit: Duration,
) -> (Option<ExitStatus>, String) {
    let mut command = Command::new("bash");
    command
        .arg("-c")
        .arg(format!("ulimit -v {ADDRESS_SPACE_KIB}; exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_numakit"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    let mut child = command.spawn().expect("numakit should start");
    let mut pipe = child.stderr.take().expect("stderr is piped");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = pipe.read_to_string(&mut text);
        text
    });
    let status = wait_or_kill(&mut child, limit);
    (status, reader.join().unwrap_or_default())
}
