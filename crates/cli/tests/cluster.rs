//! `numakit cluster join` as users start it: `--local P`, a hostfile with
//! `--process` or SLURM_PROCID, results checked against the single-machine
//! join, result files, a receive budget's backpressure, clear one-line
//! errors, a peer that never connects, and a peer killed mid-join.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

mod command;
use command::{assert_error, json_of, numakit};

fn free_ports(n: usize) -> Vec<String> {
    let l: Vec<std::net::TcpListener> = (0..n)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    l.iter()
        .map(|l| l.local_addr().unwrap().to_string())
        .collect()
}

#[test]
fn local_runs_equal_the_single_machine_join() {
    for (p, extra) in [
        ("2", vec!["--right-keys", "fk:20000"]),
        (
            "3",
            vec!["--right-keys", "zipf:1.2:20000", "--order", "all-at-once"],
        ),
        // Chakraborty's generator: PQRS keys on both sides.
        (
            "2",
            vec![
                "--left-keys",
                "pqrs:0.4:0.1:0.2:40000",
                "--right-keys",
                "pqrs:0.3:0.2:0.2:40000",
            ],
        ),
        (
            "4",
            vec![
                "--predicate",
                "band:3",
                "--left-keys",
                "uniform:20000",
                "--right-keys",
                "uniform:20000",
                "--sink",
                "sample:5",
            ],
        ),
    ] {
        let mut args = vec![
            "cluster",
            "join",
            "--local",
            p,
            "--rows-r",
            "20K",
            "--rows-s",
            "60K",
            "--verify",
            "--json",
            "--threads",
            "1",
        ];
        args.extend(extra);
        let v = json_of(&args);
        assert_eq!(v["verified"], Value::Bool(true), "{args:?}: {v}");
        assert_eq!(v["processes"].as_u64(), Some(p.parse().unwrap()));
        let per = v["per_process"].as_array().unwrap();
        assert_eq!(per.len(), p.parse::<usize>().unwrap());
        let rows: u64 = per.iter().map(|m| m["result_rows"].as_u64().unwrap()).sum();
        assert_eq!(Some(rows), v["result"]["rows"].as_u64());
        for m in per {
            assert!(m["span_seconds"].as_f64().unwrap() > 0.0);
            assert!(m["intra_node_gain"].as_f64().unwrap() > 0.0);
            assert!(m["bytes_sent"].as_u64().unwrap() > 0);
        }
    }
}

#[test]
fn both_frame_modes_equal_the_single_machine_join() {
    let mut results = Vec::new();
    for frames in ["all-senders", "per-sender"] {
        let v = json_of(&[
            "cluster",
            "join",
            "--local",
            "3",
            "--rows-r",
            "20K",
            "--rows-s",
            "60K",
            "--left-keys",
            "uniform:5000",
            "--right-keys",
            "zipf:1.2:5000",
            "--frames",
            frames,
            "--verify",
            "--json",
            "--threads",
            "1",
        ]);
        assert_eq!(v["verified"], Value::Bool(true), "{frames}: {v}");
        let distribution = v["distribution"].as_str().unwrap_or_default();
        assert!(distribution.contains(frames), "{distribution}");
        results.push(v["result"].clone());
    }
    assert_eq!(results[0], results[1]);
    assert_error(
        &["cluster", "join", "--local", "2", "--frames", "both"],
        "unknown frame mode",
    );
}

#[test]
fn a_receive_budget_makes_senders_wait_and_bounds_what_each_process_holds() {
    let v = json_of(&[
        "cluster",
        "join",
        "--local",
        "3",
        "--rows-r",
        "20K",
        "--rows-s",
        "60K",
        "--buckets",
        "16",
        "--receive-budget",
        "64KiB",
        "--task-delay-ms",
        "1",
        "--verify",
        "--json",
        "--threads",
        "1",
    ]);
    assert_eq!(v["verified"], Value::Bool(true), "{v}");
    assert_eq!(v["receive_budget"], 65536, "{v}");
    let processes = v["per_process"].as_array().cloned().unwrap_or_default();
    assert_eq!(processes.len(), 3, "{v}");
    let waits: u64 = processes
        .iter()
        .map(|p| p["sender_waits"].as_u64().unwrap_or(0))
        .sum();
    assert!(waits > 0, "the input is many budgets: {v}");
    for p in &processes {
        let held = p["peak_held_bytes"].as_u64().unwrap_or(u64::MAX);
        assert!(held <= 65536, "{p}");
    }
    assert_error(
        &["cluster", "join", "--local", "2", "--receive-budget", "10%"],
        "not a percentage",
    );
    assert_error(
        &["cluster", "join", "--local", "2", "--receive-budget", "0"],
        "not a size of at least 1 byte",
    );
}

#[test]
fn a_sweep_reports_the_speedup_and_draws_it() {
    let dir = tempfile::tempdir().unwrap();
    let chart = dir.path().join("speedup.svg");
    let v = json_of(&[
        "cluster",
        "join",
        "--local",
        "2",
        "--sweep",
        "--rows-r",
        "5K",
        "--rows-s",
        "10K",
        "--json",
        "--chart",
        chart.to_str().unwrap(),
    ]);
    let points = v.as_array().expect("one point per process count");
    assert_eq!(points.len(), 2);
    assert_eq!(points[0]["speedup"].as_f64(), Some(1.0));
    assert!(points[1]["speedup"].as_f64().unwrap() > 0.0);
    for p in points {
        assert_eq!(
            p["reps"].as_u64(),
            Some(3),
            "a sweep's speedups are medians: {p}"
        );
        let (min, median, max) = (
            p["span_range"][0].as_f64().unwrap(),
            p["span_seconds"].as_f64().unwrap(),
            p["span_range"][1].as_f64().unwrap(),
        );
        assert!(min <= median && median <= max, "{p}");
    }
    assert_eq!(points[0]["last"]["result"], points[1]["last"]["result"]);
    assert!(std::fs::read_to_string(&chart).unwrap().starts_with("<svg"));
}

#[test]
fn both_orders_side_by_side_agree_and_files_are_written() {
    let v = json_of(&[
        "cluster",
        "join",
        "--local",
        "3",
        "--rows-r",
        "10K",
        "--rows-s",
        "30K",
        "--order",
        "ring,all-at-once",
        "--json",
        "--threads",
        "1",
    ]);
    let points = v.as_array().expect("one point per order");
    assert_eq!(points.len(), 2);
    assert_eq!(points[0]["last"]["result"], points[1]["last"]["result"]);
    let dir = tempfile::tempdir().unwrap();
    let sink = format!("files:{}", dir.path().display());
    let v = json_of(&[
        "cluster",
        "join",
        "--local",
        "2",
        "--rows-r",
        "5K",
        "--rows-s",
        "10K",
        "--sink",
        &sink,
        "--json",
        "--threads",
        "1",
    ]);
    let mut lines = 0;
    for p in v["per_process"].as_array().unwrap() {
        let file = p["files"][0].as_str().expect("a file per process");
        lines += std::fs::read_to_string(file).unwrap().lines().count() - 1;
    }
    assert_eq!(Some(lines as u64), v["result"]["rows"].as_u64());
}

/// Starts process `i` of a hostfile join.
fn start(hostfile: &str, i: usize, extra: &[&str], env: Option<(&str, &str)>) -> Child {
    let mut c = Command::new(env!("CARGO_BIN_EXE_numakit"));
    c.args(["cluster", "join", "--hostfile", hostfile, "--threads", "1"]);
    if env.is_none() {
        c.args(["--process", &i.to_string()]);
    }
    if let Some((k, v)) = env {
        c.env(k, v);
    }
    c.args(extra).stdout(Stdio::piped()).stderr(Stdio::piped());
    c.spawn().unwrap()
}

#[test]
fn hostfile_processes_with_process_or_slurm_procid() {
    let dir = tempfile::tempdir().unwrap();
    let hosts = dir.path().join("hosts");
    std::fs::write(&hosts, free_ports(2).join("\n")).unwrap();
    let h = hosts.to_str().unwrap();
    let extra = ["--rows-r", "4K", "--rows-s", "8K", "--json", "--verify"];
    let a = start(h, 0, &extra, Some(("SLURM_PROCID", "0")));
    let b = start(h, 1, &extra, Some(("SLURM_PROCID", "1")));
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    assert!(b.status.success(), "{}", String::from_utf8_lossy(&b.stderr));
    let sink: Value = serde_json::from_slice(&a.stdout).unwrap();
    assert_eq!(sink["verified"], Value::Bool(true));
    let own: Value = serde_json::from_slice(&b.stdout).unwrap();
    assert_eq!(own["process"].as_u64(), Some(1));
}

#[test]
fn bad_launches_are_one_line_errors() {
    assert_error(&["cluster", "join"], "--local P");
    let dir = tempfile::tempdir().unwrap();
    let hosts = dir.path().join("hosts");
    std::fs::write(&hosts, "127.0.0.1:1\n127.0.0.1:2\n").unwrap();
    let h = hosts.to_str().unwrap();
    assert_error(&["cluster", "join", "--hostfile", h], "--process");
    assert_error(
        &["cluster", "join", "--hostfile", h, "--process", "2"],
        "lists 2 processes",
    );
    assert_error(
        &[
            "cluster",
            "join",
            "--hostfile",
            "/nonexistent/hosts",
            "--process",
            "0",
        ],
        "cannot read hostfile",
    );
    std::fs::write(&hosts, "a:1\na:1\n").unwrap();
    assert_error(
        &["cluster", "join", "--hostfile", h, "--process", "0"],
        "twice",
    );
    assert_error(
        &["cluster", "join", "--local", "2", "--predicate", "gt"],
        "unknown predicate",
    );
    assert_error(
        &["cluster", "join", "--local", "2", "--sink", "nope"],
        "unknown --sink",
    );
    assert_error(
        &["cluster", "join", "--local", "2", "--order", "random"],
        "unknown send order",
    );
}

#[test]
fn a_peer_that_never_connects_is_named_within_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let hosts = dir.path().join("hosts");
    std::fs::write(&hosts, free_ports(2).join("\n")).unwrap();
    let start = Instant::now();
    let out = numakit(&[
        "cluster",
        "join",
        "--hostfile",
        hosts.to_str().unwrap(),
        "--process",
        "0",
        "--connect-timeout",
        "2",
        "--rows-r",
        "1K",
        "--rows-s",
        "1K",
        "-q",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("peer 1") && stderr.contains("did not connect"),
        "{stderr}"
    );
    assert!(start.elapsed() < Duration::from_secs(15));
}

/// Reads a child's stderr lines into a channel.
fn lines_of(child: &mut Child) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    let err = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    rx
}

#[test]
fn a_peer_killed_mid_join_stops_the_others_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let hosts = dir.path().join("hosts");
    std::fs::write(&hosts, free_ports(3).join("\n")).unwrap();
    let h = hosts.to_str().unwrap();
    // Slow on purpose: 64 buckets x 2 relations, 100 ms per task.
    let extra = [
        "--rows-r",
        "30K",
        "--rows-s",
        "60K",
        "--task-delay-ms",
        "100",
    ];
    let mut children: Vec<Child> = (0..3).map(|i| start(h, i, &extra, None)).collect();
    let logs: Vec<_> = children.iter_mut().map(lines_of).collect();
    let mut stderr: Vec<Vec<String>> = vec![Vec::new(); 3];
    for (i, log) in logs.iter().enumerate() {
        loop {
            let line = log
                .recv_timeout(Duration::from_secs(30))
                .expect("the process should start joining");
            let joining = line.contains("joining");
            stderr[i].push(line);
            if joining {
                break;
            }
        }
    }
    std::thread::sleep(Duration::from_millis(500));
    children[2].kill().unwrap();
    let killed = Instant::now();
    for i in 0..2 {
        let left = Duration::from_secs(30).saturating_sub(killed.elapsed());
        let status = command::wait_within(&mut children[i], left, &format!("process {i}"));
        while let Ok(line) = logs[i].recv_timeout(Duration::from_secs(2)) {
            stderr[i].push(line);
        }
        let text = stderr[i].join("\n");
        assert_eq!(status.code(), Some(1), "process {i}: {text}");
        assert!(
            text.contains("peer 2") && text.contains("lost"),
            "process {i}: {text}"
        );
        assert!(!text.contains("panicked"), "process {i}: {text}");
        eprintln!(
            "process {i} stopped {:.2} s after the kill: {}",
            killed.elapsed().as_secs_f64(),
            stderr[i].last().unwrap()
        );
    }
    let _ = children[2].wait();
}

#[test]
fn the_main_job_skips_the_distributed_join_without_loopback() {
    // A network namespace of its own, where loopback is down.
    let out = Command::new("unshare")
        .args([
            "-n",
            env!("CARGO_BIN_EXE_numakit"),
            "run",
            "--size-mib",
            "8",
            "--json",
        ])
        .output();
    let Ok(out) = out.map_err(|e| e.to_string()).and_then(|o| {
        if String::from_utf8_lossy(&o.stderr).contains("unshare failed") {
            Err("unshare is not permitted".to_string())
        } else {
            Ok(o)
        }
    }) else {
        assert!(std::env::var_os("CI").is_none(), "CI must run this test");
        eprintln!("skipped: unshare -n is not available");
        return;
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["cluster"].is_null());
    let why = v["cluster_skipped"].as_str().unwrap();
    assert!(why.contains("loopback"), "{why}");
}

#[test]
fn the_main_job_joins_across_two_processes() {
    let v = json_of(&["run", "--size-mib", "8", "--json"]);
    assert_eq!(
        v["cluster"]["verified"],
        Value::Bool(true),
        "{}",
        v["cluster_skipped"]
    );
    assert_eq!(v["cluster"]["processes"].as_u64(), Some(2));
}

#[test]
fn per_process_files_are_joined_and_verified() {
    let dir = tempfile::tempdir().unwrap();
    for p in 0..3u64 {
        let mut r = String::from("key,val\n");
        let mut s = String::from("key,val\n");
        for i in 0..400u64 {
            r.push_str(&format!("{},{}\n", (i * 7 + p) % 150, p * 1000 + i));
            s.push_str(&format!("{},{}\n", (i * 13 + p * 5) % 150, p * 1000 + i));
        }
        std::fs::write(dir.path().join(format!("r-{p}.csv")), r).unwrap();
        std::fs::write(dir.path().join(format!("s-{p}.csv")), s).unwrap();
    }
    let left = dir.path().join("r-{process}.csv");
    let right = dir.path().join("s-{process}.csv");
    for predicate in ["eq", "band:1"] {
        let v = json_of(&[
            "cluster",
            "join",
            "--local",
            "3",
            "--left",
            left.to_str().unwrap(),
            "--right",
            right.to_str().unwrap(),
            "--payload",
            "val",
            "--predicate",
            predicate,
            "--verify",
            "--json",
            "--threads",
            "1",
        ]);
        assert_eq!(v["verified"], Value::Bool(true), "{predicate}: {v}");
        assert_eq!(v["left_rows"].as_u64(), Some(1200));
        assert!(v["result"]["rows"].as_u64().unwrap() > 0);
    }
}

#[test]
fn a_process_bound_by_its_launcher_says_so() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let dir = tempfile::tempdir().unwrap();
    let hosts = dir.path().join("hosts");
    std::fs::write(&hosts, free_ports(1).join("\n")).unwrap();
    let out = Command::new("taskset")
        .args([
            "-c",
            "0",
            env!("CARGO_BIN_EXE_numakit"),
            "cluster",
            "join",
            "--hostfile",
        ])
        .arg(&hosts)
        .args(["--rows-r", "2K", "--rows-s", "4K"])
        .env("OMPI_COMM_WORLD_RANK", "0")
        .output();
    let Ok(out) = out else {
        eprintln!("skipped: no taskset");
        return;
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    if cpus > 1 {
        assert!(stderr.contains("--bind-to none"), "{stderr}");
    }
}
