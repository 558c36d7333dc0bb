//! `numakit join`, `aggregate` and `sort` as users call them: generated
//! data and files in every format, results checked, files written back,
//! and one clear error line for bad input.

use std::path::Path;

use numakit_frame::reference::{Row, Value};
use numakit_io::{Column, Table};

mod command;
use command::{assert_error, assert_usage_error, json_of};

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
        assert_eq!(r["verified"], serde_json::Value::Bool(true));
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

/// The rows of a result file, as plain values.
fn file_rows(path: &Path) -> (Vec<String>, Vec<Row>) {
    let source = numakit_io::Source::open(path, &Default::default()).unwrap();
    let projection = source.project(None).unwrap();
    let batches = source.read_all(&projection).unwrap();
    let schema = projection.schema().clone();
    let names = schema.fields().iter().map(|f| f.name().clone()).collect();
    let table = numakit_frame::Table::from_batches("out", schema, batches, 1).unwrap();
    (names, numakit_frame::reference::all_rows(&table).unwrap())
}

fn int(v: i64) -> Value {
    Value::int(v.into())
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
    let r = Table::new(vec![
        Column::signed("k", vec![2, 2, -4, 9, i64::MIN]),
        Column::signed("a", vec![7, 8, 9, 10, 11]),
    ]);
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
    assert_eq!(report["verified"], serde_json::Value::Bool(true));
    assert_eq!(
        report["rows"].as_u64(),
        Some(6),
        "2 twice, -4, MIN, and 1 and 3 unmatched"
    );
    let (names, mut rows) = file_rows(&out);
    assert_eq!(
        names,
        ["id", "a", "a_right"],
        "the key once, the clash renamed"
    );
    rows.sort();
    let null = Value::Null;
    assert_eq!(
        rows,
        vec![
            vec![int(i64::MIN), int(50), int(11)],
            vec![int(-4), int(40), int(9)],
            vec![int(1), int(10), null.clone()],
            vec![int(2), int(20), int(7)],
            vec![int(2), int(20), int(8)],
            vec![int(3), int(30), null],
        ]
    );
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
    for method in ["auto", "shuffle", "migration", "local", "partitioned"] {
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
            method,
            "--verify",
            "--out",
            p(&out),
        ]);
        assert_eq!(report["rows"].as_u64(), Some(3));
        let (names, mut groups) = file_rows(&out);
        assert_eq!(names, ["g", "count", "sum_v", "min_v", "max_v", "avg_v"]);
        groups.sort();
        let keys_counts_sums: Vec<Vec<Value>> = groups.iter().map(|g| g[..3].to_vec()).collect();
        assert_eq!(
            keys_counts_sums,
            vec![
                vec![int(-1), int(2), int(i64::MIN + 2)],
                vec![int(5), int(3), int(-2)],
                vec![int(7), int(1), int(i64::MAX)],
            ],
            "{method}"
        );
    }

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
    let (names, rows) = file_rows(&sorted);
    assert_eq!(names, ["v", "g"], "names kept");
    let v: Vec<Value> = rows.iter().map(|r| r[0].clone()).collect();
    assert_eq!(v, [i64::MIN, -6, 1, 2, 3, i64::MAX].map(int).to_vec());
}

/// The codec of every column chunk of a Parquet file.
fn parquet_codecs(path: &Path) -> Vec<String> {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let reader = SerializedFileReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let metadata = reader.metadata();
    metadata
        .row_groups()
        .iter()
        .flat_map(|g| g.columns().iter().map(|c| c.compression().to_string()))
        .collect()
}

#[test]
fn parquet_results_are_compressed_as_asked() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("t.arrow");
    let t = Table::new(vec![
        Column::signed("g", (0..1000).map(|i| i % 7).collect()),
        Column::signed("v", (0..1000).collect()),
    ]);
    numakit_io::write(&input, &t, None).unwrap();
    let out = dir.path().join("out.parquet");
    let mut sizes = Vec::new();
    for (given, codec) in [
        (None, "ZSTD"),
        (Some("snappy"), "SNAPPY"),
        (Some("none"), "UNCOMPRESSED"),
    ] {
        for command in [
            &["sort", "--key", "v"][..],
            &["aggregate", "--key", "g", "--value", "v"][..],
        ] {
            let mut args = command.to_vec();
            args.extend(["--json", "--quiet", "--input", p(&input), "--out", p(&out)]);
            if let Some(given) = given {
                args.extend(["--compression", given]);
            }
            json_of(&args);
            let codecs = parquet_codecs(&out);
            assert!(!codecs.is_empty());
            assert!(
                codecs.iter().all(|c| c.starts_with(codec)),
                "{args:?}: {codecs:?}"
            );
            if command[0] == "sort" {
                sizes.push(std::fs::metadata(&out).unwrap().len());
            }
        }
    }
    assert!(
        sizes[2] > sizes[0],
        "uncompressed {} vs zstd {}",
        sizes[2],
        sizes[0]
    );
    assert_usage_error(
        &[
            "sort",
            "--input",
            p(&input),
            "--key",
            "v",
            "--compression",
            "gzip",
        ],
        "zstd, snappy, none",
    );
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
        assert_eq!(
            json_of(args)["verified"],
            serde_json::Value::Bool(true),
            "{args:?}"
        );
    }
}

/// Li Figure 8's comparison: mpsm runs once per merge exchange, each
/// labelled, and all give the verified result.
#[test]
fn mpsm_runs_once_per_merge_exchange() {
    let report = json_of(&[
        "join",
        "--json",
        "--quiet",
        "--verify",
        "--output",
        "checksum",
        "--left-rows",
        "20000",
        "--right-rows",
        "80000",
        "--algorithm",
        "mpsm",
        "--merge-exchange",
        "naive,ring:loose",
    ]);
    assert_eq!(report["verified"], serde_json::Value::Bool(true));
    let runs = report["algorithms"].as_array().unwrap();
    let exchange = |i: usize, k: &str| runs[i]["merge_exchange"][k].clone();
    assert_eq!(runs.len(), 2, "{report}");
    assert_eq!(
        (exchange(0, "strategy"), exchange(0, "sync")),
        ("naive".into(), "tight".into())
    );
    assert_eq!(
        (exchange(1, "strategy"), exchange(1, "sync")),
        ("ring".into(), "loose".into())
    );
    assert_error(
        &["join", "--merge-exchange", "ring:sloppy"],
        "unknown synchronization",
    );
}

/// Li's exchange-driven methods, the naive shuffle included, report Li
/// Figure 11's split of their time; the others do not.
#[test]
fn exchange_methods_split_their_time_as_li_figure_11() {
    let report = json_of(&[
        "aggregate",
        "--json",
        "--quiet",
        "--verify",
        "--rows",
        "200000",
        "--method",
        "naive-shuffle,migration-copy,local",
    ]);
    assert_eq!(report["verified"], serde_json::Value::Bool(true));
    let methods = report["methods"].as_array().unwrap();
    for m in &methods[..2] {
        let b = &m["breakdown"];
        let field = |k: &str| b[k].as_f64().unwrap_or(-1.0);
        assert!(
            field("read_seconds") > 0.0 && field("update_seconds") > 0.0,
            "{m}"
        );
        assert!(
            field("copy_seconds") >= 0.0 && field("wait_seconds") >= 0.0,
            "{m}"
        );
    }
    assert_eq!(methods[0]["ran"], "naive-shuffle");
    assert!(methods[2].get("breakdown").is_none(), "{}", methods[2]);
}

/// On one node the cost model of `--method auto` is not consulted, and
/// the reason says so rather than ignoring the option silently.
#[test]
fn a_cost_model_on_one_node_is_reported_unused() {
    let report = json_of(&[
        "aggregate",
        "--json",
        "--quiet",
        "--rows",
        "100000",
        "--nodes",
        "0",
        "--cost-model",
        "nehalem-ex-4s",
    ]);
    let method = &report["methods"][0];
    let reason = method["reason"].as_str().unwrap();
    assert!(reason.contains("cost model was not consulted"), "{reason}");
    assert!(method.get("prediction").is_none(), "{method}");
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
        &["aggregate", "--rows", "1000", "--cost-model", "nosuch"],
        "--cost-model nosuch: unknown machine preset",
    );
    assert_error(
        &["sort", "--input", "/nonexistent/x.parquet"],
        "/nonexistent/x.parquet",
    );
    assert_error(
        &["sort", "--input", p(&strings), "--nulls", "middle"],
        "first or last",
    );
    assert_error(
        &["aggregate", "--input", p(&strings), "--agg", "median:key"],
        "median:key",
    );
    assert_error(
        &["aggregate", "--input", p(&strings), "--agg", "sum:name"],
        "\"name\" has type Utf8",
    );
    assert_error(
        &[
            "join",
            "--left",
            p(&strings),
            "--right",
            p(&strings),
            "--left-key",
            "key",
            "--right-key",
            "name",
        ],
        "cannot be compared",
    );
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

#[test]
fn results_of_every_type_print_as_a_table() {
    use std::sync::Arc;

    use arrow_array::{RecordBatch, StringArray, TimestampMicrosecondArray};
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("t.parquet");
    let batch = RecordBatch::try_from_iter(vec![
        (
            "ts",
            Arc::new(
                TimestampMicrosecondArray::from(vec![Some(1_000_000), None])
                    .with_timezone("Asia/Kolkata"),
            ) as arrow_array::ArrayRef,
        ),
        (
            "s",
            Arc::new(StringArray::from(vec![Some("a\nb"), None])) as _,
        ),
    ])
    .unwrap();
    numakit_io::write_batches(&input, &batch.schema(), &[batch], &Default::default()).unwrap();
    let out = command::numakit(&["sort", "--input", p(&input), "--key", "ts"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("1970-01-01T00:00:01Z"), "{text}");
    assert!(text.contains("a b") && text.contains("2 rows"), "{text}");
}

/// The usable cache that sizes the group-by's tables is measured once per
/// machine, kept with its date, and reported with its spread.
#[test]
fn the_usable_cache_is_measured_once_and_kept_with_its_date() {
    let dir = tempfile::tempdir().expect("temp dir");
    let run = || {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_numakit"))
            .args(["aggregate", "--rows", "20000", "--json", "--quiet"])
            .env("NUMAKIT_CACHE_DIR", dir.path())
            .output()
            .expect("numakit runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        v["usable_cache"].clone()
    };
    let first = run();
    assert_eq!(first["source"], "", "measured by the first run: {first}");
    assert!(
        first["runs"].as_array().is_some_and(|r| r.len() >= 3),
        "{first}"
    );
    assert!(
        first["usable_bytes"].as_u64().unwrap_or(0) >= 1 << 20,
        "{first}"
    );
    let second = run();
    let source = second["source"].as_str().unwrap_or("");
    assert!(
        source.starts_with("measured 20") && source.contains("kept in"),
        "{second}"
    );
    assert_eq!(
        second["usable_bytes"], first["usable_bytes"],
        "the kept figure"
    );
}
