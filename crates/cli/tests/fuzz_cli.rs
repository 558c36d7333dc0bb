//! A bounded fuzz of the command line: random argument vectors over every
//! command and its options, with values drawn from the troublesome
//! (0, -1, huge, 1e300, NaN, empty, garbage, lists, paths) and input files
//! of random bytes under every extension. Whatever comes, numakit must end
//! with exit 0, 1 or 2, never a panic, an abort or a signal, and a failure
//! must be exactly one `numakit: error:` line.
//!
//! Each case runs under a 6 GiB address-space limit (an allocation that
//! was not checked first aborts there) and is stopped after a few seconds
//! (a valid request may take longer; only how it ends matters). CI runs
//! 40 cases, a couple of minutes at most; set NUMAKIT_FUZZ_CASES for more.

mod command;

use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

/// Each command with options that keep a valid run short, then the
/// options the fuzz may add.
const COMMANDS: &[(&[&str], &[&str])] = &[
    (&["topo"], &["--machine"]),
    (
        &["simulate"],
        &["--machine", "--threads", "--aggregation", "--all-presets"],
    ),
    (
        &["shuffle", "--reps", "1"],
        &[
            "--size-mib",
            "--threads",
            "--schedules",
            "--sync",
            "--form",
            "--skew",
            "--state-kib",
            "--plan",
            "--machine",
        ],
    ),
    (
        &["join", "--reps", "1"],
        &[
            "--left-rows",
            "--right-rows",
            "--left-keys",
            "--right-keys",
            "--algorithm",
            "--threads",
            "--left",
            "--right",
            "--key",
            "--kind",
            "--output",
            "--memory-limit",
            "--format",
            "--show",
        ],
    ),
    (
        &["aggregate", "--reps", "1"],
        &[
            "--rows",
            "--groups",
            "--method",
            "--input",
            "--key",
            "--agg",
            "--value",
            "--threads",
            "--memory-limit",
            "--format",
        ],
    ),
    (
        &["sort", "--reps", "1"],
        &[
            "--rows",
            "--input",
            "--key",
            "--nulls",
            "--columns",
            "--threads",
            "--memory-limit",
            "--format",
        ],
    ),
    (
        &["mapreduce", "word-count"],
        &[
            "--size-mib",
            "--input",
            "--threads",
            "--chunk-kib",
            "--top",
            "--seed",
        ],
    ),
    (
        &["mapreduce", "kmeans"],
        &["--points", "--dims", "--clusters", "--input", "--seed"],
    ),
    (&["mapreduce", "pca"], &["--rows", "--cols", "--input"]),
    (&["mapreduce", "matrix-multiply"], &["--size", "--input"]),
    (
        &[
            "probe",
            "--only",
            "latency",
            "--latency-mib",
            "16",
            "--loads",
            "1000",
        ],
        &[
            "--latency-mib",
            "--threads-per-node",
            "--loads",
            "--nodes",
            "--reps",
        ],
    ),
    (
        &[
            "probe",
            "thread-migration",
            "--accesses",
            "1000",
            "--small-mib",
            "1",
            "--large-mib",
            "1",
        ],
        &["--migrations", "--threads", "--small-mib"],
    ),
    (
        &[
            "bench",
            "pool",
            "--reps",
            "1",
            "--tasks",
            "10",
            "--size-mib",
            "8",
        ],
        &[
            "--size-mib",
            "--threads",
            "--nodes",
            "--cpus",
            "--morsel-kib",
            "--huge-pages",
        ],
    ),
    (
        &["cluster", "join", "--rows-r", "1000", "--rows-s", "4000"],
        &[
            "--local",
            "--rows-r",
            "--rows-s",
            "--buckets",
            "--block-rows",
            "--left-keys",
            "--right-keys",
            "--sink",
            "--order",
            "--predicate",
            "--broadcast",
            "--peer-timeout",
        ],
    ),
];

/// Values that have broken programs before.
const VALUES: &[&str] = &[
    "0",
    "1",
    "2",
    "-1",
    "99999999999",
    "18446744073709551616",
    "1e300",
    "nan",
    "",
    " ",
    "abc",
    "1,2",
    "0-3",
    "64K",
    "1.5",
    "auto",
    "all",
    "count",
    "sum:x",
    "files:",
    "zipf:2",
    "nehalem-ex-4s",
    "/dev/null",
    "/nonexistent/x",
    "FILE",
];

const EXTENSIONS: &[&str] = &["csv", "parquet", "arrow", "json", "txt", ""];

#[derive(Debug, Clone)]
struct Case {
    command: usize,
    options: Vec<(usize, usize)>,
    file: Vec<u8>,
    extension: usize,
}

fn command_lines() -> impl Strategy<Value = Case> {
    (
        0..COMMANDS.len(),
        prop::collection::vec((0..16usize, 0..VALUES.len()), 0..4),
        prop::collection::vec(any::<u8>(), 0..2048),
        0..EXTENSIONS.len(),
    )
        .prop_map(|(command, options, file, extension)| Case {
            command,
            options,
            file,
            extension,
        })
}

/// The argument vector of `case`, with FILE replaced by `file`.
fn argv(case: &Case, file: &str) -> Vec<String> {
    let (base, options) = COMMANDS[case.command];
    let mut args: Vec<String> = base.iter().map(|s| s.to_string()).collect();
    args.push("--quiet".into());
    for &(option, value) in &case.options {
        args.push(options[option % options.len()].to_string());
        let value = VALUES[value];
        args.push(if value == "FILE" {
            file.to_string()
        } else {
            value.to_string()
        });
    }
    args
}

fn check(case: &Case, dir: &std::path::Path) -> Result<(), TestCaseError> {
    let extension = EXTENSIONS[case.extension];
    let file = dir.join(format!("input.{extension}"));
    std::fs::write(&file, &case.file).unwrap();
    let args = argv(case, file.to_str().unwrap());
    let (status, stderr) = command::run_bounded(&args, Some(dir), Duration::from_secs(5));
    let Some(status) = status else {
        return Ok(()); // still working: a valid request, stopped here
    };
    for sign in ["panicked", "memory allocation of", "stack backtrace"] {
        prop_assert!(!stderr.contains(sign), "{args:?}: {stderr}");
    }
    prop_assert!(
        status.signal().is_none(),
        "{args:?}: killed by {status:?}: {stderr}"
    );
    let code = status.code();
    prop_assert!(
        matches!(code, Some(0..=2)),
        "{args:?}: exit {code:?}: {stderr}"
    );
    if code != Some(0) {
        let errors: Vec<&str> = stderr.lines().filter(|l| l.contains("error")).collect();
        prop_assert_eq!(errors.len(), 1, "{:?}: {}", args, stderr);
        prop_assert!(
            errors[0].starts_with("numakit: error: "),
            "{args:?}: {stderr}"
        );
    }
    Ok(())
}

#[test]
fn no_command_line_panics_aborts_or_says_more_than_one_line() {
    let cases: u32 = std::env::var("NUMAKIT_FUZZ_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(40);
    let dir = tempfile::tempdir().unwrap();
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let outcome = runner.run(&command_lines(), |case| check(&case, dir.path()));
    if let Err(failure) = outcome {
        panic!("{failure}");
    }
}
