//! The topology, the doctor, both shuffles and the main job in guests of
//! 2, 4 and 8 nodes (ring and two-hop distances, memory-only nodes), and
//! an inherited affinity mask under `taskset`.

use std::path::PathBuf;

use serde_json::Value;

use crate::guest::{expected_cpus, harness_or_skip, in_guest, json, Guest};

/// The distance the harness gives between nodes i and j.
fn expected_distance(g: &Guest, i: usize, j: usize) -> u64 {
    if i == j {
        return 10;
    }
    match g.distances {
        "flat" => 21,
        "ring" => {
            let hops = (i as i64 - j as i64)
                .unsigned_abs()
                .min((g.nodes - (i as i64 - j as i64).unsigned_abs() as usize) as u64);
            11 + 10 * hops
        }
        "2hop" => {
            if (i < g.nodes / 2) == (j < g.nodes / 2) {
                21
            } else {
                31
            }
        }
        other => panic!("no expectation for distances {other}"),
    }
}

fn check_topology(g: &Guest, topo: &Value) {
    let nodes = topo["nodes"].as_array().expect("nodes");
    assert_eq!(nodes.len(), g.nodes, "node count");
    for (i, node) in nodes.iter().enumerate() {
        assert_eq!(node["id"].as_u64(), Some(i as u64));
        let cpus: Vec<u64> = node["cpus"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_u64().unwrap())
            .collect();
        assert_eq!(cpus, expected_cpus(g, i), "CPUs of node {i}");
        assert!(
            node["memory_bytes"].as_u64().unwrap() > 0,
            "node {i} has memory"
        );
    }
    assert_eq!(topo["cpus"].as_array().unwrap().len(), g.cpus);
    assert_eq!(topo["distances_reported"], Value::Bool(true));
    for i in 0..g.nodes {
        for j in 0..g.nodes {
            assert_eq!(
                topo["distances"][i][j].as_u64(),
                Some(expected_distance(g, i, j)),
                "distance {i}->{j}"
            );
        }
    }
}

fn check_doctor(g: &Guest, doctor: &Value) {
    let report = &doctor["report"];
    let checks = report["checks"].as_array().unwrap();
    // What the guest's virtual CPU offers, not numakit, decides these: a
    // guest shows no hardware counters and no resctrl. They must still
    // be reported, with a reason.
    let hardware = [
        "hardware_counters",
        "cache_partitioning",
        "bandwidth_partitioning",
    ];
    for c in checks {
        if hardware.contains(&c["name"].as_str().unwrap_or("")) {
            assert!(
                c["status"] == "pass" || c["status"] == "unavailable",
                "guest with {} nodes: check {} failed: {}",
                g.nodes,
                c["name"],
                c["detail"]
            );
            assert!(!c["detail"].as_str().unwrap_or("").is_empty());
            continue;
        }
        assert_eq!(
            c["status"], "pass",
            "guest with {} nodes: check {} did not pass: {}",
            g.nodes, c["name"], c["detail"]
        );
    }
    let names: Vec<&str> = checks.iter().map(|c| c["name"].as_str().unwrap()).collect();
    for n in 0..g.nodes {
        assert!(
            names.contains(&format!("place_on_node_{n}").as_str()),
            "bound buffer checked on node {n}"
        );
    }
    for n in 0..g.nodes.min(g.cpus) {
        for prefix in [
            "pin_to_node_",
            "pool_workers_node_",
            "pool_first_touch_node_",
        ] {
            assert!(
                names.contains(&format!("{prefix}{n}").as_str()),
                "{prefix}{n} checked"
            );
        }
    }
    assert!(names.contains(&"interleave") && names.contains(&"pool_local_first"));
}

fn check_main_job(g: &Guest, run: &Value, morsel_kib: u64) {
    eprintln!(
        "guest with {} nodes: main job seconds per section: {}",
        g.nodes, run["section_seconds"]
    );
    assert_eq!(
        run["operators"]["verified"],
        Value::Bool(true),
        "the main job's operators: {}",
        run["operators_skipped"]
    );
    assert_eq!(
        run["mapreduce"]["verified"],
        Value::Bool(true),
        "the main job's MapReduce section: {}",
        run["mapreduce_skipped"]
    );
    assert_eq!(
        run["probe"]["placement_verified"],
        Value::Bool(true),
        "the main job's probe section: {}",
        run["probe_skipped"]
    );
    // The distributed join (two processes over the guest's loopback) ran
    // and matched the single-machine join, or said why it could not run.
    match run["cluster"]["verified"].as_bool() {
        Some(verified) => assert!(verified, "the distributed join: {}", run["cluster"]),
        None => {
            let why = run["cluster_skipped"].as_str();
            assert!(
                why.is_some(),
                "the distributed join neither ran nor said why"
            );
            eprintln!(
                "guest with {} nodes: distributed join skipped: {}",
                g.nodes,
                why.unwrap_or_default()
            );
        }
    }
    let pairs = g.nodes.min(g.cpus) * g.nodes;
    assert_eq!(
        run["probe"]["pairs"].as_array().map(Vec::len),
        Some(pairs),
        "every (CPU node, memory node) pair"
    );
    let r = &run["reduction"];
    assert_eq!(r["verified"], Value::Bool(true));
    let parts = r["parts"].as_array().unwrap();
    assert_eq!(
        parts.len(),
        g.nodes.min(g.cpus),
        "one part per node with workers"
    );
    for p in parts {
        assert_eq!(
            p["pages_on_node"], p["pages"],
            "every page of a part on its node: {p}"
        );
        assert_eq!(p["worker_node"], p["memory_node"]);
    }
    // Every morsel ran exactly once, and morsels ran on their home node.
    // How many were stolen is not checked here: the guest's vCPUs are
    // time-sliced on a small host, so a node whose vCPU waits its turn is
    // rightly helped by the others. The pool's unit tests prove the order
    // (local first, then by distance) deterministically.
    let sum = |key: &str| {
        r["per_node"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n[key].as_u64().unwrap())
            .sum::<u64>()
    };
    let (local, stolen) = (sum("tasks_local"), sum("tasks_stolen"));
    let morsels = r["bytes"].as_u64().unwrap() / (morsel_kib * 1024);
    assert_eq!(local + stolen, morsels, "every morsel ran once");
    assert!(local > 0, "morsels ran on their home node");
}

/// Every schedule ran, was verified against the reference, and found its
/// partitions on the nodes it assumed.
fn check_shuffle(g: &Guest, report: &Value, runs: usize) {
    assert_eq!(report["verified"], Value::Bool(true));
    assert_eq!(
        report["placed"],
        Value::Bool(true),
        "partitions on their nodes: {}",
        report["placement"]
    );
    assert_eq!(report["sockets"].as_u64(), Some(g.nodes.min(g.cpus) as u64));
    assert_eq!(report["results"].as_array().unwrap().len(), runs);
    for r in report["results"].as_array().unwrap() {
        assert_eq!(
            r["misplaced_steps"].as_u64(),
            Some(0),
            "every consumer ran where the schedule put it (migration moved it): {r}"
        );
    }
    for p in report["placement"].as_array().unwrap() {
        assert!(
            p[2].as_u64().unwrap() > 0,
            "a partition with resident pages: {p}"
        );
    }
}

/// The main job (about 40 s in an emulated guest) runs where it shows
/// most: eight nodes at two hops, and memory-only nodes. Two and four
/// nodes run it under a narrower affinity ([`inherited_affinity_is_respected`]),
/// and their operators and MapReduce in `operators`.
const MAIN_JOB: &str = "run --json --placement strict --size-mib 16 --morsel-kib 64";

#[test]
fn numa_paths_hold_in_two_and_four_node_guests() {
    let Some(run) = harness_or_skip() else {
        return;
    };
    let two = Guest {
        nodes: 2,
        cpus: 4,
        distances: "flat",
    };
    let ring = Guest {
        nodes: 4,
        cpus: 4,
        distances: "ring",
    };
    for g in [&two, &ring] {
        numa_paths_hold(&run, g, false);
    }
    inherited_affinity_is_respected(&run);
}

#[test]
fn numa_paths_and_the_main_job_hold_with_eight_nodes_and_memory_only_nodes() {
    let Some(run) = harness_or_skip() else {
        return;
    };
    let eight = Guest {
        nodes: 8,
        cpus: 8,
        distances: "2hop",
    };
    let memory_only = Guest {
        nodes: 4,
        cpus: 2,
        distances: "flat",
    };
    for g in [&eight, &memory_only] {
        numa_paths_hold(&run, g, true);
    }
}

/// Topology, doctor and both shuffles in guest `g`, and the main job when
/// `main_job`.
fn numa_paths_hold(run: &PathBuf, g: &Guest, main_job: bool) {
    let mut commands = vec![
        "topo --json",
        "doctor --json",
        "shuffle --json --quiet --placement strict --size-mib 16 --reps 1",
        "shuffle --json --quiet --placement strict --size-mib 8 --reps 1 --form push --skew zipf:1.5 --schedules ring,migration-copy",
    ];
    if main_job {
        commands.push(MAIN_JOB);
    }
    let out = in_guest(run, g, &commands);
    assert_eq!(out.len(), commands.len(), "an output per command");
    let topo = json(&out[0]);
    check_topology(g, &topo);
    let doctor = json(&out[1]);
    check_topology(g, &doctor["topology"]);
    check_doctor(g, &doctor);
    check_shuffle(g, &json(&out[2]), 10);
    check_shuffle(g, &json(&out[3]), 4);
    if main_job {
        check_main_job(g, &json(&out[4]), 64);
    }
    eprintln!(
        "guest with {} nodes, {} CPUs, {} distances: all checks pass",
        g.nodes, g.cpus, g.distances
    );
}

/// Under `taskset`, topo reports only the allowed CPUs, and the pool puts
/// workers (and so data) only on the nodes those CPUs belong to.
fn inherited_affinity_is_respected(run: &PathBuf) {
    let g = Guest {
        nodes: 4,
        cpus: 4,
        distances: "flat",
    };
    let out = in_guest(
        run,
        &g,
        &[
            "taskset -c 2-3 numakit topo --json",
            "taskset -c 2-3 numakit run --json --placement strict --size-mib 8 --morsel-kib 64",
        ],
    );
    let topo = json(&out[0]);
    let allowed: Vec<u64> = topo["allowed"]["cpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap())
        .collect();
    assert_eq!(
        allowed,
        vec![2, 3],
        "the affinity mask narrows the allowed CPUs"
    );
    let run = json(&out[1]);
    let nodes: Vec<u64> = run["reduction"]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["worker_node"].as_u64().unwrap())
        .collect();
    assert_eq!(
        nodes,
        vec![2, 3],
        "workers and data only on the allowed CPUs' nodes"
    );
    assert_eq!(run["reduction"]["workers"].as_u64(), Some(2));
    assert_eq!(run["reduction"]["verified"], Value::Bool(true));
}
