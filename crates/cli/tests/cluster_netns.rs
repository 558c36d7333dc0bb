//! The distributed join across network namespaces: P namespaces, each
//! with one veth link to a bridge (in a namespace of its own, so the
//! host's network is never touched), private addresses 10.77.0.x only
//! inside the namespaces, every link shaped to 1 Gbit/s in both
//! directions with `tc ... tbf`. One `numakit cluster join --hostfile
//! --process K` runs in each namespace; the result must equal the
//! single-machine join, and pipelining must show: each process's join
//! span well below the sum of its computation and communication loads.
//! Everything is removed afterwards, also when the test fails.
//!
//! A second test cuts one namespace's link mid-join (no process dies, no
//! connection is closed: the peer just stops answering); the other
//! process must stop with an error naming that peer within 30 s.
//!
//! Needs root and `ip`/`tc`; otherwise it prints `skipped` (and fails
//! under CI). `NUMAKIT_NETNS_BIN` runs another binary (a release build,
//! for measurements); `NUMAKIT_NETNS_ROWS` sets R's rows (S has 4x),
//! `NUMAKIT_NETNS_ORDER` the send order (ring by default).

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Processes (and namespaces) by default; `NUMAKIT_NETNS_PROCESSES`
/// changes it. Two keep a 2-core test machine from starving them.
const PROCESSES: usize = 2;

fn processes() -> usize {
    std::env::var("NUMAKIT_NETNS_PROCESSES")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(PROCESSES)
}

fn skip_or_fail(why: &str) {
    assert!(
        std::env::var_os("CI").is_none(),
        "CI must run the network test, but {why}"
    );
    eprintln!("skipped: {why}");
}

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
        || Command::new(tool).arg("help").output().is_ok()
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// Namespaces made by this test; removed on drop.
struct Namespaces {
    names: Vec<String>,
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        for n in &self.names {
            let _ = Command::new("ip").args(["netns", "del", n]).status();
        }
    }
}

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Shapes egress of `dev` in namespace `ns` to 1 Gbit/s.
fn shape(ns: &str, dev: &str) -> Result<(), String> {
    ip(&[
        "netns", "exec", ns, "tc", "qdisc", "add", "dev", dev, "root", "tbf", "rate", "1gbit",
        "burst", "256kb", "latency", "50ms",
    ])
}

fn build(ns: &mut Namespaces, tag: &str, processes: usize) -> Result<Vec<String>, String> {
    let bridge = format!("nk{tag}b");
    ip(&["netns", "add", &bridge])?;
    ns.names.push(bridge.clone());
    ip(&["-n", &bridge, "link", "add", "br0", "type", "bridge"])?;
    ip(&["-n", &bridge, "link", "set", "br0", "up"])?;
    let mut addresses = Vec::new();
    for k in 0..processes {
        let name = format!("nk{tag}n{k}");
        ip(&["netns", "add", &name])?;
        ns.names.push(name.clone());
        let port = format!("v{k}");
        ip(&[
            "-n", &bridge, "link", "add", &port, "type", "veth", "peer", "name", "eth0", "netns",
            &name,
        ])?;
        ip(&["-n", &bridge, "link", "set", &port, "master", "br0"])?;
        ip(&["-n", &bridge, "link", "set", &port, "up"])?;
        let addr = format!("10.77.0.{}", k + 1);
        ip(&[
            "-n",
            &name,
            "addr",
            "add",
            &format!("{addr}/24"),
            "dev",
            "eth0",
        ])?;
        ip(&["-n", &name, "link", "set", "eth0", "up"])?;
        ip(&["-n", &name, "link", "set", "lo", "up"])?;
        shape(&name, "eth0")?;
        shape(&bridge, &port)?;
        addresses.push(format!("{addr}:7000"));
    }
    Ok(addresses)
}

struct Killer(Vec<Child>);

impl Drop for Killer {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

#[test]
fn the_join_across_namespaces_on_1_gbit_links_pipelines() {
    if !usable() {
        return;
    }
    let tag = format!("{}p", std::process::id() % 100_000);
    let mut ns = Namespaces { names: Vec::new() };
    let addresses = match build(&mut ns, &tag, processes()) {
        Ok(a) => a,
        Err(why) => return skip_or_fail(&format!("cannot build the namespaces: {why}")),
    };
    let sink = join_in_namespaces(&addresses, &tag);
    assert_eq!(sink["verified"], Value::Bool(true), "{sink}");
    print_and_check(&sink);
    drop(ns);
    let left = Command::new("ip").args(["netns", "list"]).output().unwrap();
    assert!(
        !String::from_utf8_lossy(&left.stdout).contains(&format!("nk{tag}")),
        "every namespace removed"
    );
}

/// Runs one process in each namespace; returns the sink's report.
fn join_in_namespaces(addresses: &[String], tag: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let hosts = dir.path().join("hosts");
    std::fs::write(&hosts, addresses.join("\n")).unwrap();
    let bin = std::env::var("NUMAKIT_NETNS_BIN")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_numakit").to_string());
    let rows = std::env::var("NUMAKIT_NETNS_ROWS").unwrap_or_else(|_| "500K".into());
    let rows_s = format!("{}", numakit_rows(&rows) * 4);
    let order = std::env::var("NUMAKIT_NETNS_ORDER").unwrap_or_else(|_| "ring".into());
    let mut children = Killer(Vec::new());
    for k in 0..processes() {
        let name = format!("nk{tag}n{k}");
        let mut c = Command::new("ip");
        c.args([
            "netns",
            "exec",
            &name,
            &bin,
            "cluster",
            "join",
            "--hostfile",
        ])
        .arg(&hosts)
        .args([
            "--process",
            &k.to_string(),
            "--rows-r",
            &rows,
            "--rows-s",
            &rows_s,
        ])
        .args(["--json", "-q", "--threads", "2", "--order", &order]);
        if k == 0 {
            c.arg("--verify");
        }
        children.0.push(
            c.stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
        );
    }
    let start = Instant::now();
    let mut outputs = Vec::new();
    while !children.0.is_empty() {
        // Taken one at a time: the rest are still killed if this fails.
        let out = children.0.remove(0).wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        outputs.push(out);
    }
    assert!(start.elapsed() < Duration::from_secs(120));
    serde_json::from_slice(&outputs[0].stdout).unwrap()
}

/// Prints the per-process table and checks that every process used its
/// links and that loads overlapped: over all processes, the spans add up
/// to well below the computation and communication loads (each process's
/// own ratio is noisy on a small machine that runs all of them).
fn print_and_check(sink: &Value) {
    eprintln!("process  compute s  send s  receive s  span s  gain  sent MB");
    let (mut loads, mut spans) = (0.0, 0.0);
    for p in sink["per_process"].as_array().unwrap() {
        let f = |k: &str| p[k].as_f64().unwrap();
        eprintln!(
            "{}        {:.3}      {:.3}   {:.3}      {:.3}   {:.2}  {:.1}",
            p["process"],
            f("compute_seconds"),
            f("send_seconds"),
            f("receive_seconds"),
            f("span_seconds"),
            f("intra_node_gain"),
            f("bytes_sent") / 1e6
        );
        assert!(f("send_seconds") > 0.0 && f("receive_seconds") > 0.0, "{p}");
        assert!(f("intra_node_gain") > 1.0, "no overlap at all: {p}");
        loads += f("compute_seconds") + f("send_seconds") + f("receive_seconds");
        spans += f("span_seconds");
    }
    eprintln!(
        "system join span {:.3} s; loads / spans over all processes {:.2}",
        sink["span_seconds"].as_f64().unwrap(),
        loads / spans
    );
    assert!(
        loads / spans > 1.15,
        "loads hardly overlap: {loads:.3} s of loads in {spans:.3} s of spans"
    );
}

fn numakit_rows(text: &str) -> u64 {
    let t = text.trim();
    let (digits, mult) = match t.chars().last() {
        Some('K' | 'k') => (&t[..t.len() - 1], 1_000),
        Some('M' | 'm') => (&t[..t.len() - 1], 1_000_000),
        _ => (t, 1),
    };
    digits.parse::<u64>().expect("rows") * mult
}

/// Whether this machine can run the tests here; says why not.
fn usable() -> bool {
    if !is_root() {
        skip_or_fail("not root (network namespaces need it)");
        return false;
    }
    if !have("ip") || !have("tc") {
        skip_or_fail("`ip` or `tc` is missing");
        return false;
    }
    true
}

#[test]
fn a_peer_cut_off_mid_join_is_named_within_30_seconds() {
    if !usable() {
        return;
    }
    let tag = format!("{}c", std::process::id() % 100_000);
    let mut ns = Namespaces { names: Vec::new() };
    let addresses = match build(&mut ns, &tag, 2) {
        Ok(a) => a,
        Err(why) => return skip_or_fail(&format!("cannot build the namespaces: {why}")),
    };
    let dir = tempfile::tempdir().unwrap();
    let hosts = dir.path().join("hosts");
    std::fs::write(&hosts, addresses.join("\n")).unwrap();
    let mut children = Killer(Vec::new());
    let mut logs = Vec::new();
    for k in 0..2 {
        let name = format!("nk{tag}n{k}");
        let mut c = Command::new("ip")
            .args([
                "netns",
                "exec",
                &name,
                env!("CARGO_BIN_EXE_numakit"),
                "cluster",
                "join",
                "--hostfile",
            ])
            .arg(&hosts)
            .args([
                "--process",
                &k.to_string(),
                "--rows-r",
                "30K",
                "--rows-s",
                "60K",
            ])
            .args(["--threads", "1", "--task-delay-ms", "100"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        logs.push(lines_of(&mut c));
        children.0.push(c);
    }
    for log in &logs {
        wait_for_line(log, "joining");
    }
    std::thread::sleep(Duration::from_secs(1));
    ip(&["-n", &format!("nk{tag}n1"), "link", "set", "eth0", "down"]).unwrap();
    let cut = Instant::now();
    let status = loop {
        if let Some(s) = children.0[0].try_wait().unwrap() {
            break s;
        }
        assert!(
            cut.elapsed() < Duration::from_secs(30),
            "process 0 still runs 30 s after the cut"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let text: Vec<String> = logs[0].try_iter().collect();
    let text = text.join("\n");
    eprintln!(
        "process 0 stopped {:.1} s after the cut: {text}",
        cut.elapsed().as_secs_f64()
    );
    assert_eq!(status.code(), Some(1), "{text}");
    assert!(text.contains("peer 1"), "{text}");
}

fn lines_of(child: &mut Child) -> std::sync::mpsc::Receiver<String> {
    use std::io::BufRead;
    let (tx, rx) = std::sync::mpsc::channel();
    let err = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(err).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    rx
}

fn wait_for_line(log: &std::sync::mpsc::Receiver<String>, needle: &str) {
    loop {
        let line = log
            .recv_timeout(Duration::from_secs(30))
            .expect("the process should start joining");
        if line.contains(needle) {
            return;
        }
    }
}
