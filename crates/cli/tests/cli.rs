//! The `numakit` binary as users call it: outputs, JSON, and one clear
//! error line with a non-zero exit for bad input.

mod command;

use std::process::{Command, Output};

use command::{assert_error, numakit};
use serde_json::Value;

fn json_of(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON on stdout")
}

#[test]
fn bad_input_gives_one_clear_line() {
    assert_error(
        &["topo", "--machine", "cray-1"],
        "unknown machine preset `cray-1`",
    );
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r#"{"name": "x", "nodes": [}"#).unwrap();
    assert_error(&["topo", "--machine", bad.to_str().unwrap()], "bad.json");
    let no_links = dir.path().join("dangling.json");
    std::fs::write(
        &no_links,
        r#"{"name":"x","description":"","source":"","nodes":[{"id":0,"socket":0,"cores":1,"threads_per_core":1}],"links":[{"a":0,"b":4,"bandwidth_gbs":1}]}"#,
    )
    .unwrap();
    assert_error(
        &["topo", "--machine", no_links.to_str().unwrap()],
        "link 0-4",
    );
    assert_error(
        &["topo", "--machine", "/no/such/file.json"],
        "/no/such/file.json",
    );
    assert_error(&["run", "--nodes", "7", "--size-mib", "1"], "node 7");
    assert_error(&["run", "--cpus", "", "--size-mib", "1"], "empty CPU set");
    assert_error(&["run", "--cpus", "4000", "--size-mib", "1"], "not allowed");
    assert_error(
        &["run", "--threads", "0", "--size-mib", "1"],
        "--threads must be at least 1",
    );
    assert_error(&["run", "--size-mib", "0"], "size-mib");
    assert_error(&["run", "--cpus", "3-1"], "invalid value");
    assert_error(&["run", "--placement", "sideways"], "invalid value");
    assert_error(&["run", "--morsel-kib", "0"], "invalid value");
    assert_error(&["run", "--huge-pages", "giant"], "invalid value");
}

#[test]
fn topo_shows_this_machine_and_presets() {
    let topo = json_of(&numakit(&["topo", "--json"]));
    assert!(!topo["nodes"].as_array().unwrap().is_empty());
    assert!(!topo["allowed"]["cpus"].as_array().unwrap().is_empty());
    let text = String::from_utf8(numakit(&["topo"]).stdout).unwrap();
    assert!(
        text.contains("distances") && text.contains("allowed"),
        "{text}"
    );

    let li = json_of(&numakit(&["topo", "--machine", "nehalem-ex-4s", "--json"]));
    assert_eq!(li["nodes"].as_array().unwrap().len(), 4);
    assert_eq!(li["links"].as_array().unwrap().len(), 6);
    let presets = json_of(&numakit(&["topo", "--list-presets", "--json"]));
    let names: Vec<&str> = presets
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    for required in [
        "nehalem-ex-4s",
        "nehalem-ex-4s-4link",
        "nehalem-ex-8s",
        "opteron-istanbul-2s",
        "westmere-ex-4s",
        "ultrasparc-t2plus-4c",
    ] {
        assert!(names.contains(&required), "preset {required} missing");
    }
}

#[test]
fn doctor_reports_every_check() {
    let out = numakit(&["doctor", "--json"]);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("doctor JSON");
    let failed = doc["report"]["failed"].as_u64().unwrap();
    assert_eq!(
        out.status.success(),
        failed == 0,
        "exit status follows the failed count"
    );
    for c in doc["report"]["checks"].as_array().unwrap() {
        assert!(["pass", "fail", "unavailable"].contains(&c["status"].as_str().unwrap()));
        assert!(
            !c["detail"].as_str().unwrap().is_empty(),
            "every check says why: {c}"
        );
    }
}

#[test]
fn main_job_verifies_its_result() {
    let run = json_of(&numakit(&["run", "--json", "--size-mib", "8"]));
    assert_eq!(run["reduction"]["verified"], Value::Bool(true));
    assert_eq!(run["reduction"]["bytes"].as_u64(), Some(8 << 20));
    let off = json_of(&numakit(&[
        "run",
        "--json",
        "--size-mib",
        "8",
        "--placement",
        "off",
        "--threads",
        "3",
        "--oversubscribe",
    ]));
    assert_eq!(off["reduction"]["workers"].as_u64(), Some(3));
    assert_eq!(off["reduction"]["verified"], Value::Bool(true));
    let thp = json_of(&numakit(&[
        "run",
        "--json",
        "--size-mib",
        "8",
        "--huge-pages",
        "transparent",
        "--morsel-kib",
        "64",
    ]));
    assert_eq!(thp["reduction"]["verified"], Value::Bool(true));
    let text = String::from_utf8(numakit(&["run", "--size-mib", "4"]).stdout).unwrap();
    assert!(text.contains("(verified)"), "{text}");
    assert!(
        text.contains("4. shuffle") && text.contains("5. simulated"),
        "{text}"
    );
    assert_eq!(run["shuffle"]["verified"], Value::Bool(true));
    assert_eq!(run["simulated"]["predictions"].as_array().unwrap().len(), 3);
    // Every section's wall time, in the order the sections ran.
    let sections: Vec<&str> = run["section_seconds"]
        .as_array()
        .expect("section_seconds")
        .iter()
        .map(|s| {
            assert!(s[1].as_f64().is_some_and(|t| t >= 0.0), "{s}");
            s[0].as_str().unwrap()
        })
        .collect();
    assert_eq!(sections.first(), Some(&"topology and doctor"));
    for name in ["operators", "MapReduce", "distributed join", "papers"] {
        assert!(sections.contains(&name), "{sections:?}");
    }
}

#[test]
fn pool_bench_runs_small() {
    let bench = json_of(&numakit(&[
        "bench",
        "pool",
        "--json",
        "--quiet",
        "--size-mib",
        "8",
        "--reps",
        "2",
        "--tasks",
        "2000",
    ]));
    assert!(bench["ratio"].as_f64().unwrap() > 0.0);
    assert!(bench["dispatch_ns_per_task"]["median"].as_f64().unwrap() > 0.0);
    assert_eq!(bench["reps"].as_u64(), Some(2));
}

#[test]
fn help_teaches_the_commands() {
    let help = String::from_utf8(numakit(&["--help"]).stdout).unwrap();
    for cmd in ["run", "topo", "doctor", "bench"] {
        assert!(help.contains(cmd), "--help lists {cmd}");
    }
}

#[test]
fn shuffle_measures_every_schedule_and_refuses_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let chart = dir.path().join("fig6.svg");
    let report = json_of(&numakit(&[
        "shuffle",
        "--json",
        "--quiet",
        "--size-mib",
        "8",
        "--reps",
        "2",
        "--sweep",
        "--chart",
        chart.to_str().unwrap(),
    ]));
    assert_eq!(report["verified"], Value::Bool(true));
    assert_eq!(report["placed"], Value::Bool(true));
    assert_eq!(
        report["results"].as_array().unwrap().len(),
        10,
        "5 schedules x tight/loose"
    );
    assert!(report["plain_read_gbs"]["median"].as_f64().unwrap() > 0.0);
    assert!(!report["sweep"].as_array().unwrap().is_empty());
    let svg = std::fs::read_to_string(&chart).unwrap();
    assert!(svg.contains("<svg") && svg.contains("ring (tight)"));
    assert!(dir.path().join("fig6-sweep.svg").exists());
    let push = json_of(&numakit(&[
        "shuffle",
        "--json",
        "--quiet",
        "--size-mib",
        "4",
        "--reps",
        "1",
        "--form",
        "push",
        "--skew",
        "zipf:1.2",
        "--schedules",
        "migration-copy,random",
        "--sync",
        "loose",
    ]));
    assert_eq!(push["results"].as_array().unwrap().len(), 2);

    assert_error(&["shuffle", "--threads", "0"], "at least 1");
    assert_error(&["shuffle", "--threads", "4096"], "--oversubscribe");
    assert_error(&["shuffle", "--size-mib", "100000000"], "--size-mib");
    assert_error(
        &["shuffle", "--schedules", "ring,zigzag"],
        "unknown schedule `zigzag`",
    );
    assert_error(
        &["shuffle", "--sync", "sometimes"],
        "unknown synchronization",
    );
    assert_error(&["shuffle", "--skew", "pareto"], "bad skew");
    assert_error(&["shuffle", "--form", "throw"], "unknown form");
}

#[test]
fn simulate_predicts_every_preset_and_plans() {
    let four = json_of(&numakit(&[
        "simulate",
        "--machine",
        "nehalem-ex-4s",
        "--json",
    ]));
    assert_eq!(four["rows"].as_array().unwrap().len(), 10);
    let ring = four["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["strategy"] == "ring" && r["sync"] == "tight")
        .unwrap();
    let ring_gbs = ring["gbs"].as_f64().unwrap();
    assert!(
        (ring_gbs / 70.0 - 1.0).abs() < 0.15,
        "ring {ring_gbs} vs Li's 70"
    );
    let all = json_of(&numakit(&["simulate", "--all-presets", "--json"]));
    assert_eq!(all.as_array().unwrap().len(), 7);
    let text = String::from_utf8(
        numakit(&[
            "simulate",
            "--machine",
            "opteron-istanbul-2s",
            "--threads",
            "4",
        ])
        .stdout,
    )
    .unwrap();
    assert!(
        text.contains("ring") && text.contains("thread sweep"),
        "{text}"
    );
    let plan = json_of(&numakit(&[
        "shuffle",
        "--plan",
        "--machine",
        "nehalem-ex-4s",
        "--json",
    ]));
    assert_eq!(plan["strategy"], "ring");
    assert!(!plan["why"].as_str().unwrap().is_empty());
    let here = json_of(&numakit(&["shuffle", "--plan", "--json"]));
    assert!(
        here["why"].as_str().unwrap().contains("one node") || here["predicted_gbs"].is_number()
    );

    assert_error(
        &["simulate", "--machine", "cray-1"],
        "unknown machine preset",
    );
    assert_error(
        &["simulate", "--machine", "nehalem-ex-4s", "--threads", "6"],
        "evenly",
    );
    assert_error(
        &["simulate", "--machine", "nehalem-ex-4s", "--threads", "0"],
        "at least 1",
    );
    assert_error(
        &["shuffle", "--plan", "--machine", "cray-1"],
        "unknown machine preset",
    );
}

#[test]
fn simulate_draws_figure_6_and_7() {
    let dir = tempfile::tempdir().unwrap();
    let chart = dir.path().join("li.svg");
    let out = numakit(&[
        "simulate",
        "--machine",
        "nehalem-ex-8s",
        "--chart",
        chart.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bars = std::fs::read_to_string(&chart).unwrap();
    assert!(bars.contains("nehalem-ex-8s") && bars.contains("migration-copy (loose)"));
    let sweep = std::fs::read_to_string(dir.path().join("li-sweep.svg")).unwrap();
    assert!(sweep.contains("<polyline"));
}

/// A reader that goes away (`numakit ... | head -1`) ends numakit quietly:
/// no panic, no backtrace.
#[test]
fn a_closed_stdout_ends_the_command_without_a_panic() {
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_numakit"))
        .args(["simulate", "--all-presets", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Close the read end before the command writes anything.
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_ne!(output.status.code(), Some(101), "{stderr}");
}

/// Every command that runs on a pool takes the same worker options and
/// keeps one rule: more threads than the chosen CPUs only with
/// `--oversubscribe`.
#[test]
fn every_pool_command_takes_the_same_worker_options() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let too_many = (cpus + 1).to_string();
    let commands: &[&[&str]] = &[
        &["run", "--size-mib", "1"],
        &["bench", "pool", "--size-mib", "1"],
        &["shuffle", "--size-mib", "1"],
        &["join", "--left-rows", "1000", "--right-rows", "1000"],
        &["aggregate", "--rows", "1000"],
        &["sort", "--rows", "1000"],
        &["mapreduce", "word-count", "--size-mib", "1"],
        &[
            "cluster",
            "join",
            "--local",
            "1",
            "--left-rows",
            "1000",
            "--right-rows",
            "1000",
        ],
    ];
    for command in commands {
        let mut refused = command.to_vec();
        refused.extend(["--threads", &too_many]);
        command::assert_usage_error(&refused, "--oversubscribe");
        let mut unknown_cpu = command.to_vec();
        unknown_cpu.extend(["--cpus", "4000"]);
        assert_error(&unknown_cpu, "not allowed");
    }
    let one_cpu = numakit(&[
        "join",
        "--json",
        "--left-rows",
        "1000",
        "--right-rows",
        "2000",
        "--cpus",
        "0",
        "--verify",
    ]);
    assert!(
        one_cpu.status.success(),
        "{}",
        String::from_utf8_lossy(&one_cpu.stderr)
    );
    let report = json_of(&one_cpu);
    assert_eq!(report["threads"].as_u64(), Some(1), "{report}");
}

/// numakit restarts itself once with glibc's huge pages for its large
/// allocations (`glibc.malloc.hugetlb=1` added to `GLIBC_TUNABLES`), also
/// when the user set other tunables, and leaves a user's own huge-page
/// setting be. Seen on the running process (the restart is an `exec`: the
/// same process): the marker in its environment, and its heap's mapping
/// flagged for huge pages (`hg` in smaps), which nothing else asks for in
/// this command. (glibc may rewrite `GLIBC_TUNABLES` in place once it has
/// read it, so the variable itself is not compared.)
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn numakit_runs_with_huge_pages_from_the_c_allocator() {
    if !std::path::Path::new("/sys/kernel/mm/transparent_hugepage").exists() {
        return;
    }
    // (restarted, mappings flagged for huge pages) of a running numakit.
    let seen_with = |tunables: Option<&str>| -> (bool, usize) {
        let mut command = Command::new(env!("CARGO_BIN_EXE_numakit"));
        command
            .args(["--quiet", "bench", "locks", "--json", "--locks", "ticket"])
            .args(["--threads", "1", "--ms", "3000", "--reps", "1"])
            .env_remove("NUMAKIT_ALLOCATOR_TUNED")
            .stdout(std::process::Stdio::null());
        match tunables {
            Some(t) => command.env("GLIBC_TUNABLES", t),
            None => command.env_remove("GLIBC_TUNABLES"),
        };
        let mut child = command.spawn().expect("numakit should start");
        let read = |file: &str| {
            std::fs::read(format!("/proc/{}/{file}", child.id()))
                .map(|b| String::from_utf8_lossy(&b).replace('\0', "\n"))
                .unwrap_or_default()
        };
        // Long enough for the restart and the first allocations.
        std::thread::sleep(std::time::Duration::from_millis(700));
        let restarted = read("environ")
            .lines()
            .any(|l| l == "NUMAKIT_ALLOCATOR_TUNED=1");
        let huge = read("smaps")
            .lines()
            .filter(|l| l.starts_with("VmFlags:") && l.split(' ').any(|f| f == "hg"))
            .count();
        let _ = child.kill();
        let _ = child.wait();
        (restarted, huge)
    };
    let (restarted, huge) = seen_with(None);
    assert!(
        restarted && huge > 0,
        "restarted {restarted}, {huge} huge-page mappings"
    );
    let (restarted, huge) = seen_with(Some("glibc.malloc.arena_max=4"));
    assert!(
        restarted && huge > 0,
        "restarted {restarted}, {huge} huge-page mappings"
    );
    let (restarted, huge) = seen_with(Some("glibc.malloc.hugetlb=0"));
    assert!(
        !restarted && huge == 0,
        "restarted {restarted}, {huge} huge-page mappings"
    );
}
