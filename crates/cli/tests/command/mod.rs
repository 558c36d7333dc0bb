//! Running the `numakit` binary from the CLI's integration tests, shared
//! by the test files that call it as users do.

#![allow(dead_code)] // each test file uses what it needs

use std::process::{Command, Output};

use serde_json::Value;

/// Runs `numakit` with `args` and returns what it did.
pub fn numakit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_numakit"))
        .args(args)
        .output()
        .expect("numakit should start")
}

/// Runs `numakit` with `args`, which must succeed, and parses its stdout.
pub fn json_of(args: &[&str]) -> Value {
    let out = numakit(args);
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON on stdout")
}

/// A clean failure: exit code 2, nothing panicked, and one line on stderr
/// naming `needle` (clap's own `invalid value` errors add a hint line).
pub fn assert_error(args: &[&str], needle: &str) {
    let out = numakit(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?} should fail: {stderr}");
    assert!(
        stderr.contains(needle),
        "{args:?}: stderr should mention `{needle}`: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
    let lines = stderr.lines().filter(|l| !l.trim().is_empty()).count();
    assert!(
        lines == 1 || needle.starts_with("invalid value"),
        "{args:?}: one line: {stderr}"
    );
}
