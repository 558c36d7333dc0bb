//! `numakit probe` as users call it: the matrices with small buffers, the
//! saved machine that the simulator reads, the heat maps, Kiefer's
//! experiments, the strategies, and one clear line for bad requests.

use serde_json::Value;

mod command;
use command::{assert_error, assert_usage_error, json_of, numakit};

/// Small buffers: the command's logic, not the machine's memory.
const SMALL: [&str; 8] = [
    "--latency-mib",
    "8",
    "--bandwidth-mib",
    "4",
    "--loads",
    "5000",
    "--reps",
    "1",
];

fn args<'a>(first: &[&'a str], rest: &[&'a str]) -> Vec<&'a str> {
    first.iter().chain(rest).copied().collect()
}

#[test]
fn the_probe_fills_every_matrix_and_verifies_placement() {
    let v = json_of(&args(&["probe", "--json"], &SMALL));
    assert_eq!(v["placement_verified"], Value::Bool(true), "{v}");
    let r = &v["report"];
    let rows = r["cpu_nodes"].as_array().unwrap().len();
    let cols = r["memory_nodes"].as_array().unwrap().len();
    for key in ["latency", "latency_huge", "read", "write", "copy"] {
        let m = r[key].as_array().unwrap();
        assert_eq!(m.len(), rows, "{key}");
        assert!(
            m.iter().all(|row| row.as_array().unwrap().len() == cols),
            "{key}"
        );
    }
    assert!(r["latency"][0][0]["ns"].as_f64().unwrap() > 0.0);
    assert!(r["read"][0][0]["gbs"].as_f64().unwrap() > 0.0);
    assert_eq!(r["options"]["latency_bytes"].as_u64(), Some(8 << 20));
    // Hardware counters beside the figures, or one line saying why not.
    match r["counters_unavailable"].as_str() {
        Some(reason) => {
            assert!(!reason.is_empty() && !reason.contains('\n'), "{reason}");
            assert!(r["latency"][0][0]["counters"].is_null(), "{v}");
        }
        None => assert!(r["latency"][0][0]["counters"].is_object(), "{v}"),
    }
    // --only leaves the other matrices empty.
    let v = json_of(&args(&["probe", "--json", "--only", "latency"], &SMALL));
    assert!(v["report"]["read"].as_array().unwrap().is_empty());
    assert!(!v["report"]["latency"].as_array().unwrap().is_empty());
    // lmbench's walk leaves the first touch to the linking; the pages
    // still land on their node.
    let v = json_of(&args(
        &[
            "probe",
            "--json",
            "--only",
            "latency",
            "--chase-order",
            "page-rounds",
        ],
        &SMALL,
    ));
    assert_eq!(v["placement_verified"], Value::Bool(true), "{v}");
    assert_eq!(v["report"]["options"]["chase_order"], "page-rounds");
}

#[test]
fn a_saved_machine_feeds_the_simulator_and_the_planner() {
    let dir = tempfile::tempdir().unwrap();
    let machine = dir.path().join("here.json");
    let chart = dir.path().join("heat.svg");
    let m = machine.to_str().unwrap();
    let c = chart.to_str().unwrap();
    let out = numakit(&args(
        &["probe", "--save", m, "--chart", c, "--name", "bench-box"],
        &SMALL,
    ));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("latency") && text.contains("saved the measured machine"),
        "{text}"
    );
    assert!(std::fs::read_to_string(&chart).unwrap().contains("<svg"));
    let topo = json_of(&["topo", "--json", "--machine", m]);
    assert_eq!(topo["origin"]["name"], "bench-box", "{topo}");
    let sim = json_of(&["simulate", "--json", "--machine", m]);
    let per_thread = sim["calibration"]["per_thread_gbs"].as_f64().unwrap();
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&machine).unwrap()).unwrap();
    assert_eq!(
        Some(per_thread),
        saved["nodes"][0]["thread_bandwidth_gbs"].as_f64()
    );
    let plan = numakit(&["shuffle", "--plan", "--machine", m]);
    assert!(
        plan.status.success(),
        "{}",
        String::from_utf8_lossy(&plan.stderr)
    );
}

const TINY_KIEFER: [&str; 14] = [
    "--accesses",
    "20000",
    "--small-mib",
    "1",
    "--large-mib",
    "4",
    "--migrations",
    "4",
    "--threads",
    "2",
    "--groups",
    "2",
    "--group-threads",
    "2",
];

#[test]
fn kiefer_s_experiments_run_alone_and_together() {
    let v = json_of(&args(&["probe", "kiefer", "--json"], &TINY_KIEFER));
    assert_eq!(v["report"]["rows"].as_array().unwrap().len(), 14);
    assert_eq!(v["placement_verified"], Value::Bool(true), "{v}");
    for (command, experiment, rows) in [
        ("remote-access", 1, 2),
        ("thread-migration", 2, 4),
        ("cache-migration", 3, 4),
        ("cache-concurrency", 4, 4),
    ] {
        let v = json_of(&args(&["probe", command, "--json"], &TINY_KIEFER));
        let r = v["report"]["rows"].as_array().unwrap();
        assert_eq!(r.len(), rows, "{command}");
        assert!(
            r.iter().all(|row| row["experiment"] == experiment),
            "{command}"
        );
    }
    let out = numakit(&args(&["probe", "kiefer"], &TINY_KIEFER));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Table 1") && text.contains("w/o migrations"),
        "{text}"
    );
    assert!(
        text.lines().any(|l| l.starts_with("placement: ")),
        "the placement line stands on its own: {text}"
    );
}

#[test]
fn the_strategies_are_normalized_to_default_and_one_is_recommended() {
    let small = [
        "--rows",
        "100000",
        "--groups",
        "1000",
        "--build-rows",
        "10000",
        "--reps",
        "1",
    ];
    let v = json_of(&args(&["probe", "strategies", "--json"], &small));
    assert_eq!(v["consistent"], Value::Bool(true));
    assert_eq!(v["outcomes"].as_array().unwrap().len(), 12);
    assert!(!v["recommendation"].as_str().unwrap().is_empty());
    let out = numakit(&args(
        &[
            "probe",
            "strategies",
            "--strategies",
            "aligned",
            "--workloads",
            "scan",
        ],
        &small,
    ));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("default") && text.lines().any(|l| l.starts_with("recommendation: ")),
        "the recommendation stands on its own line: {text}"
    );
}

#[test]
fn bad_requests_get_one_clear_line() {
    assert_error(
        &["probe", "--threads-per-node", "0"],
        "--threads-per-node must be at least 1",
    );
    assert_usage_error(&["probe", "--threads", "2"], "now --threads-per-node");
    assert_error(
        &["probe", "--latency-mib", "100000000"],
        "the latency buffer (--latency-mib 100000000) needs",
    );
    assert_error(&["probe", "--nodes", "77"], "node 77 cannot be probed");
    assert_error(&["probe", "--reps", "0"], "--reps");
    assert_error(
        &["probe", "kiefer", "--accesses", "0"],
        "accesses must be at least 1",
    );
    assert_error(
        &["probe", "kiefer", "--large-mib", "100000000"],
        "an experiment's array (--large-mib 100000000) needs",
    );
    assert_error(
        &["probe", "strategies", "--strategies", "random"],
        "unknown strategy `random`",
    );
    assert_error(
        &["probe", "strategies", "--workloads", "sort"],
        "unknown workload `sort`",
    );
    assert_error(
        &["probe", "strategies", "--instances", "0"],
        "instances must be at least 1",
    );
    assert_error(&["probe", "--only", "caches"], "invalid value");
}
