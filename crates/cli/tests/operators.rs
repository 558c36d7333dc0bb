//! `numakit join`, `aggregate` and `sort` as users call them: generated
//! data and files in every format, results checked, files written back,
//! and one clear error line for bad input.

use std::path::Path;

use numakit_io::{Column, Table};
use serde_json::Value;

mod command;
use command::{assert_error, json_of};

fn p(path: &Path) -> &str {
    path.to_str().expect("utf-8 temp path")
}

#[test]
fn join_on_generated_data_runs_every_algorithm_and_kind() {
    for kind in ["inner", "left", "semi", "anti"] {
        let r = json_of(&[
            "join",
            "--json",
            "--quiet",
            "--algorithm",
            "all",
            "--kind",
            kind,
            "--verify",
            "--output",
            "checksum",
            "--left-rows",
            "30000",
            "--right-rows",
            "90000",
            "--right-keys",
            "zipf:1.5:60000",
        ]);
        assert_eq!(r["verified"], Value::Bool(true));
        assert_eq!(r["algorithms"].as_array().unwrap().len(), 4);
        for a in r["algorithms"].as_array().unwrap() {
            assert!(a["phases"].as_array().unwrap().len() >= 2, "phases: {a}");
            assert!(a["rows_per_second"].as_f64().unwrap() > 0.0);
        }
    }
    let auto = json_of(&[
        "join",
        "--json",
        "--quiet",
        "--left-rows",
        "1000",
        "--right-rows",
        "4000",
    ]);
    assert_eq!(
        auto["rows"].as_u64(),
        Some(4000),
        "every fk row matches once"
    );
    assert!(auto["auto_reason"].as_str().unwrap().starts_with("cprl"));
}

#[test]
fn join_reads_files_and_writes_its_result() {
    let dir = tempfile::tempdir().unwrap();
    let left = dir.path().join("r.parquet");
    let right = dir.path().join("s.csv");
    let l = Table::new(vec![
        Column::signed("id", vec![1, 2, 3, -4, i64::MIN]),
        Column::signed("a", vec![10, 20, 30, 40, 50]),
    ]);
    let r = Table::new(vec![Column::signed("k", vec![2, 2, -4, 9, i64::MIN])]);
    numakit_io::write(&left, &l, None).unwrap();
    numakit_io::write(&right, &r, None).unwrap();
    let out = dir.path().join("out.arrow");
    let report = json_of(&[
        "join",
        "--json",
        "--quiet",
        "--left",
        p(&left),
        "--right",
        p(&right),
        "--left-key",
        "id",
        "--right-key",
        "k",
        "--kind",
        "left",
        "--verify",
        "--out",
        p(&out),
    ]);
    assert_eq!(
        report["rows"].as_u64(),
        Some(6),
        "2 twice, -4, MIN, and 1 and 3 unmatched"
    );
    let written = numakit_io::read(&out, None, None).unwrap();
    assert_eq!(written.rows(), 6);
    let matched = written
        .column("right_matched")
        .unwrap()
        .as_i64()
        .iter()
        .sum::<i64>();
    assert_eq!(matched, 4);
}

#[test]
fn aggregate_and_sort_read_and_write_files() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("t.arrow");
    let t = Table::new(vec![
        Column::signed("g", vec![5, -1, 5, 7, -1, 5]),
        Column::signed("v", vec![1, 2, 3, i64::MAX, i64::MIN, -6]),
    ]);
    numakit_io::write(&input, &t, None).unwrap();
    let out = dir.path().join("groups.csv");
    let report = json_of(&[
        "aggregate",
        "--json",
        "--quiet",
        "--input",
        p(&input),
        "--key",
        "g",
        "--value",
        "v",
        "--method",
        "all",
        "--verify",
        "--out",
        p(&out),
    ]);
    assert_eq!(report["rows"].as_u64(), Some(3));
    let groups = numakit_io::read(&out, None, None).unwrap();
    assert_eq!(groups.column("key").unwrap().as_i64(), &[-1, 5, 7]);
    assert_eq!(
        groups.column("sum").unwrap().as_i64(),
        &[i64::MIN + 2, -2, i64::MAX]
    );
    assert_eq!(groups.column("count").unwrap().as_u64(), &[2, 3, 1]);

    let sorted = dir.path().join("sorted.parquet");
    json_of(&[
        "sort",
        "--json",
        "--quiet",
        "--input",
        p(&input),
        "--key",
        "v",
        "--payload",
        "g",
        "--verify",
        "--out",
        p(&sorted),
    ]);
    let s = numakit_io::read(&sorted, None, None).unwrap();
    assert_eq!(
        s.column("key").unwrap().as_i64(),
        &[i64::MIN, -6, 1, 2, 3, i64::MAX]
    );
    assert_eq!(s.column("g").unwrap().as_i64(), &[-1, 5, 5, -1, 5, 7]);
}

#[test]
fn generated_sorts_and_aggregates_verify() {
    for args in [
        &["sort", "--json", "--quiet", "--verify", "--rows", "100000"][..],
        &[
            "sort",
            "--json",
            "--quiet",
            "--verify",
            "--rows",
            "100000",
            "--keys-only",
        ][..],
        &[
            "sort", "--json", "--quiet", "--verify", "--rows", "50000", "--keys", "zipf:1.5",
        ][..],
        &[
            "aggregate",
            "--json",
            "--quiet",
            "--verify",
            "--rows",
            "100000",
            "--method",
            "all",
        ][..],
        &[
            "aggregate",
            "--json",
            "--quiet",
            "--verify",
            "--rows",
            "100000",
            "--keys",
            "zipf:1.5",
        ][..],
    ] {
        assert_eq!(json_of(args)["verified"], Value::Bool(true), "{args:?}");
    }
}

#[test]
fn bad_operator_input_gives_one_clear_line() {
    let dir = tempfile::tempdir().unwrap();
    let strings = dir.path().join("s.csv");
    std::fs::write(&strings, "key,name\n1,x\n2,y\n").unwrap();
    assert_error(&["join", "--kind", "outer"], "unknown join kind");
    assert_error(
        &["join", "--algorithm", "nested-loop"],
        "unknown join algorithm",
    );
    assert_error(&["join", "--output", "print"], "unknown output");
    assert_error(&["join", "--left-keys", "zipf:x"], "bad key distribution");
    assert_error(&["join", "--threads", "0"], "--threads must be at least 1");
    assert_error(&["join", "--threads", "4096"], "CPUs");
    assert_error(
        &["aggregate", "--method", "magic"],
        "unknown aggregation method",
    );
    assert_error(&["aggregate", "--rows", "100000000000"], "memory");
    assert_error(
        &["sort", "--input", "/nonexistent/x.parquet"],
        "/nonexistent/x.parquet",
    );
    assert_error(&["sort", "--input", p(&strings), "--key", "name"], "name");
    assert_error(&["sort", "--input", p(&strings), "--key", "nope"], "nope");
    let odd = dir.path().join("t.txt");
    std::fs::write(&odd, "key\n1\n").unwrap();
    assert_error(&["sort", "--input", p(&odd)], "t.txt");
    let big = [
        "join",
        "--verify",
        "--left-rows",
        "30M",
        "--right-rows",
        "30M",
    ];
    assert_error(&big, "--verify is limited");
}
