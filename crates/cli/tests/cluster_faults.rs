//! `numakit cluster join` when processes misbehave: result files of an
//! earlier run never mix into a later one, a process that fails to write
//! its part leaves the earlier result as it was, a stopped peer is named
//! within `--peer-timeout`, `--local`'s processes die with their parent
//! (and leave no hostfile), and a host that does not resolve is reported
//! at once with its line.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

mod command;
use command::{json_of, numakit};

fn free_ports(n: usize) -> Vec<String> {
    let l: Vec<std::net::TcpListener> = (0..n)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    l.iter()
        .map(|l| l.local_addr().unwrap().to_string())
        .collect()
}

/// Names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Every file of `dir` and its bytes.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    names(dir)
        .into_iter()
        .map(|n| {
            let bytes = std::fs::read(dir.join(&n)).unwrap();
            (n, bytes)
        })
        .collect()
}

/// `--local P` into `--sink files:DIR`; the raw output.
fn local_into(dir: &Path, p: &str, extra: &[&str]) -> std::process::Output {
    let sink = format!("files:{}", dir.display());
    let mut args = vec![
        "cluster",
        "join",
        "--local",
        p,
        "--rows-r",
        "2K",
        "--rows-s",
        "4K",
        "--sink",
        &sink,
        "--json",
        "--threads",
        "1",
    ];
    args.extend(extra);
    numakit(&args)
}

#[test]
fn stale_parts_of_an_earlier_run_never_mix_in() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("out");
    let first = local_into(&dir, "3", &["--verify"]);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    assert_eq!(
        names(&dir),
        ["MANIFEST.json", "part-0.csv", "part-1.csv", "part-2.csv"]
    );
    let out = local_into(&dir, "2", &["--verify"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["verified"], Value::Bool(true), "{v}");
    let rows = v["result"]["rows"].as_u64().unwrap();
    assert_eq!(rows, 4000);
    assert_eq!(names(&dir), ["MANIFEST.json", "part-0.csv", "part-1.csv"]);
    let mut on_disk = 0;
    for name in names(&dir).iter().filter(|n| n.ends_with(".csv")) {
        on_disk += std::fs::read_to_string(dir.join(name))
            .unwrap()
            .lines()
            .count()
            - 1;
    }
    assert_eq!(on_disk as u64, rows, "rows in {}", dir.display());
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(dir.join("MANIFEST.json")).unwrap()).unwrap();
    assert_eq!(manifest["processes"].as_u64(), Some(2));
    assert_eq!(manifest["rows"].as_u64(), Some(rows));
    let parts = manifest["parts"].as_array().unwrap();
    let listed: u64 = parts.iter().map(|p| p["rows"].as_u64().unwrap()).sum();
    assert_eq!(listed, rows);
    for p in parts {
        let file = dir.join(p["file"].as_str().unwrap());
        assert_eq!(
            p["bytes"].as_u64(),
            Some(std::fs::metadata(file).unwrap().len())
        );
    }
    // The reports name the published files; nothing is left beside DIR.
    for p in v["per_process"].as_array().unwrap() {
        assert!(Path::new(p["files"][0].as_str().unwrap()).starts_with(&dir));
    }
    assert_eq!(names(root.path()), ["out"]);
}

#[test]
fn a_failing_writer_leaves_the_earlier_result_intact() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("out");
    let first = local_into(&dir, "2", &[]);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let before = snapshot(&dir);
    let started = Instant::now();
    let out = local_into(&dir, "3", &["--fail-part-write", "1"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("process 1 could not deliver its part") && stderr.contains("injected"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(snapshot(&dir), before, "the earlier result changed");
    assert_eq!(names(root.path()), ["out"], "a staging directory was left");
    // A directory that is not a numakit result is refused, untouched.
    let mine = root.path().join("mine");
    std::fs::create_dir(&mine).unwrap();
    std::fs::write(mine.join("notes.txt"), "keep").unwrap();
    let out = local_into(&mine, "2", &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("only its own results"), "{stderr}");
    assert_eq!(names(&mine), ["notes.txt"]);
    assert_eq!(names(root.path()), ["mine", "out"]);
}

/// Starts process `i` of a hostfile join.
fn start(hostfile: &Path, i: usize, extra: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_numakit"))
        .args([
            "cluster",
            "join",
            "--threads",
            "1",
            "--process",
            &i.to_string(),
        ])
        .arg("--hostfile")
        .arg(hostfile)
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// A child's stderr lines, as they come.
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

fn signal(pid: u32, name: &str) {
    let ok = Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -{name} {pid}");
}

#[test]
fn a_stopped_peer_is_named_within_the_peer_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let hosts = dir.path().join("hosts");
    std::fs::write(&hosts, free_ports(3).join("\n")).unwrap();
    // Slow on purpose (100 ms per task), with a 3 s peer timeout.
    let extra = [
        "--rows-r",
        "30K",
        "--rows-s",
        "60K",
        "--task-delay-ms",
        "100",
        "--peer-timeout",
        "3",
    ];
    let mut children: Vec<Child> = (0..3).map(|i| start(&hosts, i, &extra)).collect();
    let logs: Vec<_> = children.iter_mut().map(lines_of).collect();
    for log in &logs {
        while !log
            .recv_timeout(Duration::from_secs(30))
            .expect("the process should start joining")
            .contains("joining")
        {}
    }
    std::thread::sleep(Duration::from_millis(500));
    signal(children[1].id(), "STOP");
    let stopped = Instant::now();
    for i in [0, 2] {
        let left = Duration::from_secs(8).saturating_sub(stopped.elapsed());
        let status = command::wait_within(&mut children[i], left, &format!("process {i}"));
        let text: Vec<String> = logs[i].try_iter().collect();
        let text = text.join("\n");
        eprintln!(
            "process {i} stopped {:.2} s after its peer: {text}",
            stopped.elapsed().as_secs_f64()
        );
        assert!(!status.success(), "process {i}: {text}");
        assert!(
            text.contains("peer 1 (") && text.contains("sent nothing for 3"),
            "process {i} should name peer 1: {text}"
        );
        assert!(
            !text.contains("peer 0 (") && !text.contains("peer 2 ("),
            "{text}"
        );
    }
    assert!(
        stopped.elapsed() >= Duration::from_secs(2),
        "detected before the timeout"
    );
    let _ = children[1].kill();
    let _ = children[1].wait();
}

/// The processes whose parent is `pid`.
fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
        let ppid = after.split_whitespace().nth(1).and_then(|p| p.parse().ok());
        if ppid == Some(pid) {
            out.push(child);
        }
    }
    out
}

/// Whether `pid` still runs (a zombie has ended).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat
            .rsplit_once(')')
            .and_then(|(_, r)| r.split_whitespace().next());
        state != Some("Z") && state != Some("X")
    })
}

#[test]
fn a_killed_local_parent_takes_its_processes_with_it() {
    for how in ["KILL", "TERM"] {
        let tmp = tempfile::tempdir().unwrap();
        let mut parent = Command::new(env!("CARGO_BIN_EXE_numakit"))
            .args(["cluster", "join", "--local", "3", "--threads", "1"])
            .args([
                "--rows-r",
                "30K",
                "--rows-s",
                "60K",
                "--task-delay-ms",
                "100",
            ])
            .env("TMPDIR", tmp.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let started = Instant::now();
        let kids = loop {
            let kids = children_of(parent.id());
            if kids.len() == 3 {
                break kids;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "no 3 processes: {kids:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        std::thread::sleep(Duration::from_millis(300));
        signal(parent.id(), how);
        let status = parent.wait().unwrap();
        assert!(!status.success());
        let killed = Instant::now();
        while kids.iter().any(|&k| alive(k)) {
            assert!(
                killed.elapsed() < Duration::from_secs(5),
                "SIG{how}: processes {:?} outlived their parent",
                kids.iter().filter(|&&k| alive(k)).collect::<Vec<_>>()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(
            names(tmp.path()).is_empty(),
            "SIG{how} left {:?}",
            names(tmp.path())
        );
    }
}

#[test]
fn an_unresolvable_host_is_reported_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let hosts = dir.path().join("hosts");
    let mine = &free_ports(1)[0];
    std::fs::write(
        &hosts,
        format!("# two processes\n{mine}\nno-such-host.invalid:7001\n"),
    )
    .unwrap();
    let started = Instant::now();
    let out = numakit(&[
        "cluster",
        "join",
        "--hostfile",
        hosts.to_str().unwrap(),
        "--process",
        "0",
        "--connect-timeout",
        "60",
        "-q",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("line 3")
            && stderr.contains("`no-such-host.invalid`")
            && stderr.contains("does not resolve"),
        "{stderr}"
    );
    assert!(!stderr.contains("did not connect"), "{stderr}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn the_peer_timeout_is_documented_and_checked() {
    let out = numakit(&["cluster", "join", "--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("--peer-timeout"), "{help}");
    let out = numakit(&["cluster", "join", "--local", "2", "--peer-timeout", "0"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("--peer-timeout"),
        "{stderr}"
    );
    let v = json_of(&[
        "cluster",
        "join",
        "--local",
        "2",
        "--rows-r",
        "2K",
        "--rows-s",
        "4K",
        "--peer-timeout",
        "1",
        "--json",
        "--threads",
        "1",
    ]);
    assert_eq!(v["result"]["rows"].as_u64(), Some(4000));
}
