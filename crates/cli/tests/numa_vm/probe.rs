//! The memory probe in multi-node guests: complete matrices over every
//! allowed (CPU node, memory node) pair, every buffer on the node it
//! claims (page-location queries) and every thread where it claims
//! (`getcpu`), in guests with 2, 4 and 8 nodes, with memory-only nodes,
//! and with allowed node ids that have gaps (a cgroup of nodes 1 and 3,
//! there with lmbench's page-rounds chase, whose pages are first touched
//! by the thread that links them);
//! Kiefer's experiments and the placement strategies there too. The
//! guest has no real remote penalty: completeness and placement are the
//! point, not the figures.

use serde_json::Value;

use crate::guest::{harness_or_skip, in_guest, json, Guest};

/// Small sizes: the guest is emulated and slow.
const PROBE: &str = "probe --json --placement strict --latency-mib 8 --loads 2000 --bandwidth-mib 2 --pass-mib 2 --reps 1";
const KIEFER: &str = "probe kiefer --json --placement strict --accesses 5000 --small-mib 1 --large-mib 2 --migrations 3 --groups 2 --group-threads 2";
const STRATEGIES: &str = "probe strategies --json --placement strict --rows 20000 --groups 100 --build-rows 2000 --reps 1";
const ALL_REMOTE: &str =
    "probe all-remote --json --placement strict --buffer-mib 4 --passes 1 --reps 1";

fn ids(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

/// Every matrix is rows x columns, and every entry's buffer and threads
/// were where the probe put them.
fn check_matrices(what: &str, v: &Value, rows: &[u64], cols: &[u64]) {
    assert_eq!(v["placement_verified"], Value::Bool(true), "{what}: {v}");
    let r = &v["report"];
    assert_eq!(ids(&r["cpu_nodes"]), rows, "{what}: CPU nodes");
    assert_eq!(ids(&r["memory_nodes"]), cols, "{what}: memory nodes");
    for key in ["latency", "latency_huge", "read", "write", "copy"] {
        let m = r[key].as_array().unwrap();
        assert_eq!(m.len(), rows.len(), "{what}: {key} rows");
        for (i, row) in m.iter().enumerate() {
            let row = row.as_array().unwrap();
            assert_eq!(row.len(), cols.len(), "{what}: {key} row {i}");
            for (j, cell) in row.iter().enumerate() {
                assert_eq!(cell["cpu_node"].as_u64(), Some(rows[i]), "{what}: {key}");
                assert_eq!(cell["memory_node"].as_u64(), Some(cols[j]), "{what}: {key}");
                let threads = if key.starts_with("latency") {
                    &cell["threads"]
                } else {
                    &cell["thread_check"]
                };
                assert_eq!(
                    threads["threads"], threads["on_node"],
                    "{what}: {key} {i},{j} threads"
                );
                if key.starts_with("latency") {
                    let b = &cell["buffer"];
                    assert_eq!(b["pages"], b["on_node"], "{what}: {key} {i},{j} pages");
                    assert!(b["pages"].as_u64().unwrap() > 0);
                }
            }
        }
    }
    let pages = &r["buffers"];
    assert_eq!(pages["pages"], pages["on_node"], "{what}: every page");
    let pairs = rows.iter().flat_map(|c| cols.iter().map(move |m| (*c, *m)));
    let remote = pairs.filter(|(c, m)| c != m).count();
    if rows.len() > 1 {
        assert_eq!(
            r["cross"].as_array().unwrap().len(),
            remote,
            "{what}: cross traffic for every remote pair"
        );
    }
}

fn check_kiefer(what: &str, v: &Value) {
    assert_eq!(v["placement_verified"], Value::Bool(true), "{what}: {v}");
    let rows = v["report"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 14, "{what}");
    for row in rows {
        assert!(
            row["variant_ns"].as_f64().is_some(),
            "{what}: two nodes measure every column: {row}"
        );
    }
}

/// Li §2 in a guest: every node read, locally then only remotely, with
/// every thread on its node and every page where it was placed.
fn check_all_remote(what: &str, v: &Value, nodes: &[u64]) {
    assert_eq!(ids(&v["nodes"]), nodes, "{what}: {v}");
    let pages = v["pages"].as_array().unwrap();
    assert_eq!(pages[0], pages[1], "{what}: pages placed: {v}");
    for (name, local) in [("all_local", true), ("all_remote", false)] {
        let s = &v[name];
        assert!(s["gbs"].as_f64().unwrap() > 0.0, "{what}: {s}");
        let check = &s["thread_check"];
        assert_eq!(
            check["on_node"], check["threads"],
            "{what}: {name} placed: {s}"
        );
        for n in s["nodes"].as_array().unwrap() {
            let cpu = n["cpu_node"].as_u64().unwrap();
            let memory = ids(&n["memory_nodes"]);
            assert_eq!(memory.contains(&cpu), local, "{what}: {name}: {n}");
        }
    }
    assert!(v["ratio"].as_f64().unwrap() > 0.0, "{what}: {v}");
}

fn check_strategies(what: &str, v: &Value, instances: usize) {
    assert_eq!(v["consistent"], Value::Bool(true), "{what}: {v}");
    assert_eq!(
        v["instances"].as_array().unwrap().len(),
        instances,
        "{what}"
    );
    for o in v["outcomes"].as_array().unwrap() {
        assert_eq!(
            o["pages"]["pages"], o["pages"]["on_node"],
            "{what}: data where the strategy put it: {o}"
        );
    }
}

#[test]
fn the_probe_is_complete_and_placed_in_multi_node_guests() {
    let Some(run) = harness_or_skip() else {
        return;
    };
    let guests = [
        (
            Guest {
                nodes: 2,
                cpus: 4,
                distances: "flat",
            },
            2,
        ),
        (
            Guest {
                nodes: 4,
                cpus: 4,
                distances: "ring",
            },
            4,
        ),
        (
            Guest {
                nodes: 8,
                cpus: 8,
                distances: "2hop",
            },
            8,
        ),
    ];
    for (g, n) in &guests {
        let out = in_guest(&run, g, &[PROBE, KIEFER, STRATEGIES, ALL_REMOTE]);
        let all: Vec<u64> = (0..*n as u64).collect();
        let what = format!("{} nodes", g.nodes);
        check_matrices(&what, &json(&out[0]), &all, &all);
        check_kiefer(&what, &json(&out[1]));
        check_strategies(&what, &json(&out[2]), *n);
        check_all_remote(&what, &json(&out[3]), &all);
        eprintln!("guest with {} nodes: probe complete and placed", g.nodes);
    }
}

#[test]
fn the_probe_follows_gaps_in_node_ids_and_memory_only_nodes() {
    let Some(run) = harness_or_skip() else {
        return;
    };
    let g = Guest {
        nodes: 4,
        cpus: 4,
        distances: "flat",
    };
    // lmbench's walk: pages first touched by the linking thread, the
    // policy set before, so each still lands on its node.
    let gaps = format!("cpuset 1,3 numakit {PROBE} --chase-order page-rounds");
    let out = in_guest(&run, &g, &[&gaps]);
    check_matrices("nodes 1 and 3", &json(&out[0]), &[1, 3], &[1, 3]);
    let memory_only = Guest {
        nodes: 4,
        cpus: 2,
        distances: "flat",
    };
    let out = in_guest(&run, &memory_only, &[PROBE]);
    check_matrices("memory-only nodes", &json(&out[0]), &[0, 1], &[0, 1, 2, 3]);
}
