//! numakit against DuckDB: `join`, `aggregate` and `sort` of files with
//! keys and values of every common type (nulls, NaN, -0.0, integer limits,
//! empty and skewed tables, composite keys), and TPC-H tables from
//! tpchgen-cli, each answer compared with the same query in DuckDB.
//!
//! The work is done by `tests/duckdb/compare.py` (see its docstring), run
//! with a Python that has duckdb, pyarrow and tpchgen-cli: the one named by
//! `NUMAKIT_TEST_PYTHON`, else `bench/compare/.venv/bin/python` when it has
//! them (`.ci/run` creates it from `tests/duckdb/requirements.txt`).
//! Without one the tests say `skipped` and pass, except under CI (`CI`
//! set), where they fail.
//!
//! `NUMAKIT_TPCH_SF` sets the TPC-H scale factor (default 1, the smallest
//! standard size: about two minutes with the debug binary on two cores,
//! both suites side by side; 0.1 takes under a minute).
//! `NUMAKIT_DUCKDB_ONLY` runs only the cases whose names contain one of its
//! comma-separated parts. On a failure the generated tables and results are
//! kept and their directory is named in the panic message.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The TPC-H scale factor when `NUMAKIT_TPCH_SF` is not set.
const DEFAULT_TPCH_SF: &str = "1";

// The two tests run side by side: the types suite is hundreds of short
// processes started one after the other, which leave a core of two idle
// about half the time (measured with vmstat), and TPC-H fills it. Nothing
// in either suite is timed.

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/duckdb/compare.py")
}

/// Whether PYTHON has everything compare.py needs (`--check`).
fn usable(python: &Path) -> Result<(), String> {
    match Command::new(python).arg(script()).arg("--check").output() {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => Err(format!(
            "{} lacks what compare.py needs: {}{}",
            python.display(),
            String::from_utf8_lossy(&out.stdout).trim(),
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        Err(e) => Err(format!("cannot run {}: {e}", python.display())),
    }
}

/// The Python to run compare.py with, or `None` after saying the test is
/// skipped; under CI a missing Python is a failure. A Python named by
/// `NUMAKIT_TEST_PYTHON` must be usable.
fn python_or_skip() -> Option<PathBuf> {
    if let Some(named) = std::env::var_os("NUMAKIT_TEST_PYTHON") {
        let python = PathBuf::from(named);
        if let Err(why) = usable(&python) {
            panic!("NUMAKIT_TEST_PYTHON: {why}");
        }
        return Some(python);
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("the workspace");
    let venv = root.join("bench/compare/.venv/bin/python");
    let why = if venv.exists() {
        match usable(&venv) {
            Ok(()) => return Some(venv),
            Err(why) => why,
        }
    } else {
        format!("no {} and NUMAKIT_TEST_PYTHON is not set", venv.display())
    };
    assert!(
        std::env::var_os("CI").is_none(),
        "CI must compare numakit with DuckDB, but there is no Python for it: {why}"
    );
    eprintln!("skipped: no Python with duckdb, pyarrow and tpchgen-cli ({why})");
    None
}

/// Runs compare.py on SUITE (`types` or `tpch`) and fails with its FAIL
/// lines when any case fails.
fn compare(suite: &str) {
    let Some(python) = python_or_skip() else {
        return;
    };
    let workdir = tempfile::Builder::new()
        .prefix(&format!("numakit-duckdb-{suite}-"))
        .tempdir()
        .expect("a temporary directory");
    let sf = std::env::var("NUMAKIT_TPCH_SF").unwrap_or_else(|_| DEFAULT_TPCH_SF.to_string());
    let mut command = Command::new(&python);
    command
        .arg(script())
        .args(["--numakit", env!("CARGO_BIN_EXE_numakit")])
        .arg("--workdir")
        .arg(workdir.path())
        .args(["--suite", suite, "--tpch-sf", &sf]);
    if let Ok(only) = std::env::var("NUMAKIT_DUCKDB_ONLY") {
        command.args(["--only", &only]);
    }
    let out = command.output().expect("run compare.py");
    let stdout = String::from_utf8_lossy(&out.stdout);
    // Shown by the test harness on failure or with --nocapture.
    print!("{stdout}");
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let mut lines: Vec<&str> = stdout
            .lines()
            .filter(|l| l.starts_with("FAIL") || l.starts_with("     numakit:"))
            .collect();
        // A crash of the script itself: its traceback's end.
        let tail = stderr.lines().rev().take(5).collect::<Vec<_>>();
        lines.extend(tail.into_iter().rev());
        let kept = workdir.keep();
        panic!(
            "compare.py --suite {suite} failed ({}); tables and results kept in {}:\n{}",
            out.status,
            kept.display(),
            lines.join("\n")
        );
    }
}

#[test]
fn join_aggregate_sort_match_duckdb_on_every_type() {
    compare("types");
}

#[test]
fn tpch_matches_duckdb() {
    compare("tpch");
}
