//! Process-level faults of every command, injected as users meet them: a
//! reader that goes away, a full disk, absurd sizes for every sizing
//! option, hostile described machines, output paths that cannot be
//! written, SIGINT and SIGTERM in the middle of writing, and orphans of
//! killed runs. Each must end in exit 0, 1 or 2 with one clear line,
//! never a panic, an abort or an out-of-memory kill, and never leave
//! debris. (The distributed join's faults are in `cluster_faults.rs`.)

mod command;

use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use command::numakit;

/// Every command once, on small built-in data, each a few seconds at most.
const QUICK_COMMANDS: &[&[&str]] = &[
    &["run", "--size-mib", "8"],
    &["topo"],
    &["topo", "--list-presets", "--json"],
    &["topo", "--machine", "nehalem-ex-8s"],
    &["doctor"],
    &["simulate", "--all-presets", "--json"],
    &["simulate", "--machine", "nehalem-ex-4s", "--aggregation"],
    &["shuffle", "--plan", "--machine", "nehalem-ex-4s"],
    &[
        "shuffle",
        "--size-mib",
        "8",
        "--reps",
        "1",
        "--schedules",
        "ring",
        "--sync",
        "tight",
    ],
    &["join", "--left-rows", "20000", "--right-rows", "80000"],
    &["aggregate", "--rows", "50000"],
    &["sort", "--rows", "50000"],
    &["mapreduce", "word-count", "--size-mib", "1"],
    &["mapreduce", "pca", "--rows", "50", "--cols", "50"],
    &[
        "probe",
        "thread-migration",
        "--accesses",
        "10000",
        "--small-mib",
        "1",
        "--large-mib",
        "1",
        "--migrations",
        "2",
    ],
    &[
        "bench",
        "pool",
        "--size-mib",
        "8",
        "--reps",
        "1",
        "--tasks",
        "100",
    ],
    &[
        "cluster", "join", "--local", "2", "--rows-r", "2000", "--rows-s", "8000",
    ],
    &["--help"],
    &["join", "--help"],
    &["--version"],
];

/// Runs numakit with stdout going to `stdout`, stderr captured.
fn run_with_stdout(args: &[&str], stdout: Stdio) -> Output {
    Command::new(env!("CARGO_BIN_EXE_numakit"))
        .args(args)
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .expect("numakit should start")
}

fn assert_no_panic(args: &[&str], stderr: &str) {
    for sign in [
        "panicked",
        "memory allocation of",
        "stack backtrace",
        "RUST_BACKTRACE",
    ] {
        assert!(!stderr.contains(sign), "{args:?}: {sign}: {stderr}");
    }
}

#[test]
fn a_full_disk_on_stdout_is_one_error_line() {
    for args in QUICK_COMMANDS {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = run_with_stdout(args, Stdio::from(full));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_no_panic(args, &stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        let errors: Vec<&str> = stderr.lines().filter(|l| l.contains("error")).collect();
        assert_eq!(errors.len(), 1, "{args:?}: {stderr}");
        assert!(
            errors[0].starts_with("numakit: error: ") && errors[0].contains("stdout"),
            "{args:?}: {stderr}"
        );
    }
}

/// The write end of a pipe whose read end is already closed.
fn pipe_without_reader() -> Stdio {
    use std::os::fd::{FromRawFd, OwnedFd};
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe writes two new descriptors into the two-element array.
    let made = unsafe { libc::pipe(fds.as_mut_ptr()) };
    assert_eq!(made, 0, "pipe: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just made by pipe and belong to no one
    // else; each OwnedFd closes its own exactly once.
    let (reader, writer) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(reader);
    Stdio::from(writer)
}

#[test]
fn a_reader_that_goes_away_ends_numakit_quietly() {
    for args in QUICK_COMMANDS {
        // The reader is gone before the child exists: dropping the read
        // end after spawning raced a quick command that had written its
        // output into the pipe by then (and exited 0).
        let mut child = Command::new(env!("CARGO_BIN_EXE_numakit"))
            .args(*args)
            .stdout(pipe_without_reader())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        let status = child.wait().unwrap();
        assert_no_panic(args, &stderr);
        assert!(
            status.signal() == Some(libc::SIGPIPE) || status.code() == Some(141),
            "{args:?} should end by SIGPIPE, not {status:?}: {stderr}"
        );
        assert!(!stderr.contains("error"), "{args:?}: quietly: {stderr}");
    }
}

/// Runs numakit bounded in memory and time (see
/// [`command::run_bounded`]); a run killed by a signal fails the test.
fn run_limited(args: &[&str], seconds: u64) -> (Option<i32>, String) {
    let (status, stderr) = command::run_bounded(args, None, Duration::from_secs(seconds));
    if let Some(status) = status {
        assert!(
            status.signal().is_none(),
            "{args:?} died of signal {:?}: {stderr}",
            status.signal()
        );
    }
    (status.and_then(|s| s.code()), stderr)
}

/// One refusal: exit 1 or 2 and one error line naming `needle`.
fn assert_refused(args: &[&str], needle: &str) {
    let (code, stderr) = run_limited(args, 60);
    assert_no_panic(args, &stderr);
    assert!(
        matches!(code, Some(1 | 2)),
        "{args:?}: exit {code:?}: {stderr}"
    );
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("numakit: error:"))
        .collect();
    assert_eq!(errors.len(), 1, "{args:?}: {stderr}");
    assert!(
        errors[0].contains(needle),
        "{args:?}: should name {needle}: {stderr}"
    );
}

const HUGE: &str = "99999999999";

#[test]
fn absurd_sizes_are_refused_before_anything_is_allocated() {
    let cases: &[(&[&str], &str)] = &[
        (&["run", "--size-mib", HUGE], "--size-mib"),
        (&["run", "--threads", HUGE, "--size-mib", "8"], "--threads"),
        (&["bench", "pool", "--size-mib", HUGE], "--size-mib"),
        (&["bench", "pool", "--threads", HUGE], "--threads"),
        (&["shuffle", "--size-mib", HUGE], "--size-mib"),
        (
            &["shuffle", "--state-kib", HUGE, "--size-mib", "8"],
            "--state-kib",
        ),
        (
            &[
                "shuffle",
                "--threads",
                HUGE,
                "--oversubscribe",
                "--size-mib",
                "8",
            ],
            "--threads",
        ),
        (&["join", "--left-rows", HUGE], "--left-rows"),
        (&["join", "--right-rows", HUGE], "--right-rows"),
        (&["join", "--threads", HUGE], "threads"),
        (&["aggregate", "--rows", HUGE], "--rows"),
        (&["sort", "--rows", HUGE], "--rows"),
        (
            &["mapreduce", "word-count", "--size-mib", HUGE],
            "--size-mib",
        ),
        (
            &["mapreduce", "histogram", "--size-mib", HUGE],
            "--size-mib",
        ),
        (
            &["mapreduce", "linear-regression", "--size-mib", HUGE],
            "--size-mib",
        ),
        (
            &["mapreduce", "string-match", "--size-mib", HUGE],
            "--size-mib",
        ),
        (&["mapreduce", "kmeans", "--points", HUGE], "--points"),
        (&["mapreduce", "kmeans", "--dims", HUGE], "--dims"),
        (&["mapreduce", "kmeans", "--clusters", HUGE], "clusters"),
        (
            &["mapreduce", "matrix-multiply", "--size", "10000000"],
            "--size",
        ),
        (
            &["mapreduce", "pca", "--rows", HUGE, "--cols", HUGE],
            "--rows",
        ),
        (&["mapreduce", "word-count", "--threads", HUGE], "threads"),
        (&["probe", "--latency-mib", HUGE], "--latency-mib"),
        (&["probe", "--bandwidth-mib", HUGE], "--bandwidth-mib"),
        (
            &["probe", "remote-access", "--large-mib", HUGE],
            "--large-mib",
        ),
        (
            &["probe", "cache-concurrency", "--groups", HUGE],
            "--groups",
        ),
        (&["probe", "strategies", "--rows", HUGE], "strategies"),
        (&["probe", "strategies", "--instances", HUGE], "--instances"),
        (
            &["cluster", "join", "--local", "2", "--left-rows", HUGE],
            "--left-rows",
        ),
        (
            &["cluster", "join", "--local", "2", "--rows-s", HUGE],
            "--right-rows",
        ),
        (
            &["cluster", "join", "--local", "2", "--buckets", "4000000000"],
            "--buckets",
        ),
        (&["cluster", "join", "--local", HUGE], "--local"),
        (
            &["cluster", "join", "--local", "2", "--threads", HUGE],
            "threads",
        ),
        (&["join", "--memory-limit", "1e999"], "--memory-limit"),
    ];
    for (args, needle) in cases {
        assert_refused(args, needle);
    }
    // A limit below what a run needs is honoured by every command.
    assert_refused(
        &["--memory-limit", "64M", "run", "--size-mib", "256"],
        "--size-mib",
    );
    assert_refused(
        &[
            "mapreduce",
            "word-count",
            "--size-mib",
            "256",
            "--memory-limit",
            "64M",
        ],
        "memory limit",
    );
}

/// Options that count work rather than size memory: an absurd value only
/// makes the run long. Within a few seconds it must be refused cleanly or
/// still be running, never abort or panic.
#[test]
fn absurd_counts_cost_time_not_a_crash() {
    let cases: &[&[&str]] = &[
        &[
            "bench",
            "pool",
            "--size-mib",
            "8",
            "--reps",
            "1",
            "--tasks",
            HUGE,
        ],
        &["run", "--size-mib", "8", "--morsel-kib", HUGE],
        &[
            "probe",
            "--only",
            "latency",
            "--latency-mib",
            "16",
            "--loads",
            HUGE,
        ],
        &[
            "probe",
            "--only",
            "bandwidth",
            "--bandwidth-mib",
            "16",
            "--pass-mib",
            HUGE,
        ],
        &[
            "probe",
            "--only",
            "latency",
            "--latency-mib",
            "16",
            "--loads",
            "2000",
            "--reps",
            "1",
        ],
        &[
            "probe",
            "thread-migration",
            "--small-mib",
            "1",
            "--large-mib",
            "1",
            "--migrations",
            "4000000000",
        ],
        &[
            "probe",
            "remote-access",
            "--small-mib",
            "1",
            "--large-mib",
            "1",
            "--accesses",
            HUGE,
        ],
        &["probe", "strategies", "--groups", HUGE, "--rows", "1000"],
        &["simulate", "--machine", "nehalem-ex-4s", "--threads", HUGE],
        &[
            "mapreduce",
            "word-count",
            "--size-mib",
            "1",
            "--chunk-kib",
            HUGE,
            "--top",
            HUGE,
        ],
        &[
            "join",
            "--left-rows",
            "100",
            "--right-rows",
            "100",
            "--show",
            HUGE,
        ],
        &[
            "cluster",
            "join",
            "--local",
            "2",
            "--rows-r",
            "100",
            "--rows-s",
            "100",
            "--block-rows",
            HUGE,
        ],
        &[
            "cluster",
            "join",
            "--local",
            "2",
            "--rows-r",
            "100",
            "--rows-s",
            "100",
            "--peer-timeout",
            "1e300",
        ],
    ];
    for args in cases {
        let (code, stderr) = run_limited(args, 5);
        assert_no_panic(args, &stderr);
        assert!(
            matches!(code, None | Some(0..=2)),
            "{args:?}: exit {code:?}: {stderr}"
        );
        if matches!(code, Some(1 | 2)) {
            let errors = stderr
                .lines()
                .filter(|l| l.starts_with("numakit: error:"))
                .count();
            assert_eq!(errors, 1, "{args:?}: {stderr}");
        }
    }
}

#[test]
fn hostile_described_machines_are_refused_before_anything_is_built() {
    let dir = tempfile::tempdir().unwrap();
    let node = |id: &str, cores: &str, memory: &str, bandwidth: &str| {
        format!(
            r#"{{"name":"x","description":"d","source":"s","nodes":[{{"id":{id},"socket":0,"cores":{cores},"threads_per_core":1,"memory_gib":{memory},"memory_bandwidth_gbs":{bandwidth}}}]}}"#
        )
    };
    let cases = [
        (node("0", "4000000000", "16", "10"), "cores"),
        (node("4000000000", "4", "16", "10"), "node id"),
        (node("0", "4", "1e300", "10"), "memory_gib"),
        (node("0", "4", "-1", "10"), "memory_gib"),
        (node("0", "4", "16", "1e300"), "memory_bandwidth_gbs"),
        (node("0", "4", "16", "0"), "memory_bandwidth_gbs"),
    ];
    for (i, (text, needle)) in cases.iter().enumerate() {
        let path = dir.path().join(format!("m{i}.json"));
        std::fs::write(&path, text).unwrap();
        let spec = path.to_str().unwrap();
        assert_refused(&["topo", "--machine", spec], needle);
        assert_refused(&["simulate", "--machine", spec], needle);
    }
}

#[test]
fn output_paths_are_checked_before_the_work() {
    let missing = "/nonexistent-numakit-dir/out";
    let cases: &[(&[&str], &str)] = &[
        (
            &["probe", "--chart", "/nonexistent-numakit-dir/x.svg"],
            "--chart",
        ),
        (
            &["probe", "--save", "/nonexistent-numakit-dir/m.json"],
            "--save",
        ),
        (
            &["shuffle", "--chart", "/nonexistent-numakit-dir/x.svg"],
            "--chart",
        ),
        (
            &[
                "simulate",
                "--machine",
                "nehalem-ex-4s",
                "--chart",
                "/nonexistent-numakit-dir/x.svg",
            ],
            "--chart",
        ),
        (
            &["join", "--out", "/nonexistent-numakit-dir/x.csv"],
            "--out",
        ),
        (
            &["sort", "--out", "/nonexistent-numakit-dir/x.parquet"],
            "--out",
        ),
        (
            &["aggregate", "--out", "/nonexistent-numakit-dir/x.arrow"],
            "--out",
        ),
        (
            &[
                "mapreduce",
                "word-count",
                "--out",
                "/nonexistent-numakit-dir/wc.txt",
            ],
            "--out",
        ),
        (
            &[
                "cluster",
                "join",
                "--local",
                "2",
                "--chart",
                "/nonexistent-numakit-dir/c.svg",
            ],
            "--chart",
        ),
    ];
    for (args, needle) in cases {
        let start = Instant::now();
        assert_refused(args, needle);
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{args:?}: refused only after {:?}",
            start.elapsed()
        );
    }
    assert!(!Path::new(missing).exists());
}

/// Files in `dir`, sorted.
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Starts a join whose CSV result takes seconds to write, waits until its
/// temporary file exists, sends `signal`, and checks that nothing is left.
fn interrupt_while_writing(signal: i32) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("result.csv");
    let mut child = Command::new(env!("CARGO_BIN_EXE_numakit"))
        .args([
            "join",
            "--left-rows",
            "200000",
            "--right-rows",
            "3000000",
            "--out",
        ])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !entries(dir.path())
        .iter()
        .any(|n| n.ends_with(".numakit-tmp"))
    {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no temporary file appeared"
        );
        if child.try_wait().unwrap().is_some() {
            panic!("the join finished before it could be interrupted; make it bigger");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill() with a child's pid and a signal number has no
    // memory-safety preconditions.
    let sent = unsafe { libc::kill(child.id() as i32, signal) };
    assert_eq!(sent, 0);
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(signal), "{status:?}");
    assert!(
        entries(dir.path()).is_empty(),
        "debris: {:?}",
        entries(dir.path())
    );
}

#[test]
fn sigint_while_writing_leaves_no_debris() {
    interrupt_while_writing(libc::SIGINT);
}

#[test]
fn sigterm_while_writing_leaves_no_debris() {
    interrupt_while_writing(libc::SIGTERM);
}

#[test]
fn orphans_of_killed_runs_are_swept_by_the_next_write() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sorted.csv");
    // A pid above any pid_max: that process cannot be running.
    let orphan = dir.path().join(".sorted.csv.4294967294-0.numakit-tmp");
    std::fs::write(&orphan, b"half a result").unwrap();
    let done = numakit(&["sort", "--rows", "1000", "--out", out.to_str().unwrap()]);
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    assert_eq!(entries(dir.path()), vec!["sorted.csv"]);
}

#[test]
fn errors_exit_1_and_usage_errors_exit_2_with_the_same_prefix() {
    command::assert_usage_error(&["joinn"], "unrecognized subcommand");
    command::assert_usage_error(&["join", "--lft", "x"], "--left");
    command::assert_usage_error(&["join", "--threads", "x"], "--threads");
    command::assert_usage_error(&["sort", "--rows", "10", "--reps", "0"], "--reps");
    command::assert_failure(
        &[
            "join",
            "--left",
            "/nonexistent.csv",
            "--right",
            "/nonexistent.csv",
        ],
        "nonexistent",
    );
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.parquet");
    std::fs::write(&bad, b"PAR1 not really parquet PAR1").unwrap();
    command::assert_failure(
        &["sort", "--input", bad.to_str().unwrap(), "--key", "a"],
        "Parquet",
    );
    // A name without an extension: the message says how to name the format,
    // and --format does it.
    let plain = dir.path().join("table");
    std::fs::write(&plain, "a,b\n2,x\n1,y\n").unwrap();
    command::assert_failure(
        &["sort", "--input", plain.to_str().unwrap(), "--key", "a"],
        "--format",
    );
    let sorted = numakit(&[
        "sort",
        "--input",
        plain.to_str().unwrap(),
        "--key",
        "a",
        "--format",
        "csv",
    ]);
    assert!(
        sorted.status.success(),
        "{}",
        String::from_utf8_lossy(&sorted.stderr)
    );
    assert!(String::from_utf8_lossy(&sorted.stdout).contains("2 rows"));
}
