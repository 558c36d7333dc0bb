//! Booting emulated multi-node guests with the shared numa-vm harness and
//! running `numakit` commands inside them, at most two guests at a time.
//! A command may start with `taskset -c LIST` (a narrower affinity mask)
//! or `cpuset LIST` (a cgroup whose CPUs and memory nodes are the CPUs of
//! those nodes and the nodes themselves: allowed node ids with gaps).

use std::path::PathBuf;
use std::process::Command;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use serde_json::Value;

/// The shape of an emulated guest machine.
pub(crate) struct Guest {
    /// NUMA nodes of the guest (the harness's `-n`).
    pub nodes: usize,
    /// Virtual CPUs, spread over the nodes as [`expected_cpus`] says (`-c`).
    pub cpus: usize,
    /// The harness's SLIT distance preset (`-d`): `flat`, `ring` or `2hop`.
    pub distances: &'static str,
}

/// The numa-vm harness's `run` script: `$NUMA_VM_RUN`, or
/// `shared/numa-vm/run` beside the workspace when it exists.
pub(crate) fn harness() -> Option<PathBuf> {
    if let Ok(path) = std::env::var("NUMA_VM_RUN") {
        return Some(PathBuf::from(path));
    }
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/numa-vm/run");
    path.exists().then_some(path)
}

/// The harness, or `None` after saying the test is skipped; under CI a
/// missing harness is a failure, since CI must prove the multi-node paths.
pub(crate) fn harness_or_skip() -> Option<PathBuf> {
    let run = harness();
    if run.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must run the multi-node tests, but ../shared/numa-vm/run is missing"
        );
        eprintln!("skipped: no numa-vm harness at ../shared/numa-vm/run (set NUMA_VM_RUN)");
    }
    run
}

/// Guests booted side by side. An emulated guest is CPU-bound, yet one at
/// a time left a 2-core host about 40% idle over these tests (vmstat:
/// boots, single-threaded phases, the serial console), so two guests
/// share the host. More would only slow each other down (and each takes
/// 2 GiB).
const SIDE_BY_SIDE: usize = 2;

/// Seats taken by running guests, of [`SIDE_BY_SIDE`].
static SEATS: Mutex<usize> = Mutex::new(0);
/// Signalled when a guest gives its seats back.
static SEAT_FREED: Condvar = Condvar::new();

/// Seats held until dropped.
struct Seats(usize);

impl Seats {
    /// Waits until `wanted` seats are free and takes them.
    fn take(wanted: usize) -> Seats {
        let mut taken = lock_seats();
        while *taken + wanted > SIDE_BY_SIDE {
            taken = SEAT_FREED
                .wait(taken)
                .unwrap_or_else(PoisonError::into_inner);
        }
        *taken += wanted;
        Seats(wanted)
    }
}

impl Drop for Seats {
    fn drop(&mut self) {
        *lock_seats() -= self.0;
        SEAT_FREED.notify_all();
    }
}

fn lock_seats() -> MutexGuard<'static, usize> {
    SEATS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// [`in_guest`] with the host to itself: for a test whose figures need
/// every host core (the cohort lock's contention between nodes).
pub(crate) fn in_guest_alone(run: &PathBuf, g: &Guest, commands: &[&str]) -> Vec<String> {
    let _all = Seats::take(SIDE_BY_SIDE);
    boot_and_split(run, g, commands)
}

/// Runs `numakit ARGS...` for each argument list inside one guest boot,
/// beside at most one other guest; returns the stdout of each. The guest
/// announces each command on stderr before it starts, so a failure or a
/// timeout shows where it stopped.
pub(crate) fn in_guest(run: &PathBuf, g: &Guest, commands: &[&str]) -> Vec<String> {
    let _one = Seats::take(1);
    boot_and_split(run, g, commands)
}

/// One boot of `g` running `commands`, once more if it never started;
/// the stdout of each command.
fn boot_and_split(run: &PathBuf, g: &Guest, commands: &[&str]) -> Vec<String> {
    let bin = env!("CARGO_BIN_EXE_numakit");
    let script = commands
        .iter()
        .map(|args| {
            let command = guest_command(bin, args, g);
            format!(
                "echo \"[guest] $(cut -d' ' -f1 /proc/uptime) s: numakit {args}\" >&2 && {command}"
            )
        })
        .collect::<Vec<_>>()
        .join(" && echo @@@ && ");
    let started = std::time::Instant::now();
    let mut output = boot(run, g, bin, &script);
    if never_started(&output) {
        // The emulator now and then hangs while the guest boots (no
        // command ever starts, and the harness times out): boot once more.
        eprintln!(
            "guest with {} nodes never started its first command; booting it again",
            g.nodes
        );
        output = boot(run, g, bin, &script);
    }
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    let stderr = String::from_utf8_lossy(&output.stderr);
    eprintln!(
        "guest with {} nodes, {} CPUs: {} command(s) in {:.1} s",
        g.nodes,
        g.cpus,
        commands.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        output.status.success(),
        "guest with {} nodes failed ({}):\nstdout:\n{stdout}\nstderr:\n{stderr}",
        g.nodes,
        output.status
    );
    stdout.split("@@@").map(str::to_string).collect()
}

/// One boot of the guest running `script`.
fn boot(run: &PathBuf, g: &Guest, bin: &str, script: &str) -> std::process::Output {
    Command::new(run)
        .args([
            // -v: the harness's own timings and QEMU's command line go to
            // stderr, which is shown only when the guest fails.
            "-v",
            // A guest's commands take 15-60 s here (opt-level 1 test
            // builds); a boot that hangs is given up after 300 s and
            // retried, rather than holding the run for 10 minutes.
            "--timeout",
            "300",
            "-n",
            &g.nodes.to_string(),
            "-c",
            &g.cpus.to_string(),
        ])
        .args([
            // 2 GiB: the guest keeps the (debug, 160 MiB) binary in RAM on
            // some nodes, and with 1 GiB over 8 nodes one node was left
            // with 8 MiB free, too little for bound operator buffers.
            "-m",
            "2048",
            "-d",
            g.distances,
            "--add",
            bin,
            "--",
            "sh",
            "-c",
            script,
        ])
        .output()
        .expect("the numa-vm harness should start")
}

/// Whether the harness timed out before the guest announced any command.
fn never_started(output: &std::process::Output) -> bool {
    output.status.code() == Some(124)
        && !String::from_utf8_lossy(&output.stderr).contains("[guest]")
}

/// The shell command for `args` (`[taskset -c LIST | cpuset LIST] numakit ...`).
fn guest_command(bin: &str, args: &str, g: &Guest) -> String {
    if let Some(rest) = args.strip_prefix("taskset ") {
        // `taskset -c LIST numakit ...`: run numakit under a narrower mask.
        let (mask, args) = rest
            .split_once(" numakit ")
            .expect("taskset ... numakit ...");
        return format!("taskset {mask} {bin} {args}");
    }
    if let Some(rest) = args.strip_prefix("cpuset ") {
        // `cpuset 1,3 numakit ...`: a cgroup of nodes 1 and 3 (their CPUs
        // and their memory), entered by the shell that execs numakit.
        let (nodes, args) = rest
            .split_once(" numakit ")
            .expect("cpuset ... numakit ...");
        let cpus: Vec<String> = nodes
            .split(',')
            .flat_map(|n| expected_cpus(g, n.parse().expect("a node id")))
            .map(|c| c.to_string())
            .collect();
        let dir = "/sys/fs/cgroup/numakit-test";
        return format!(
            "echo +cpuset > /sys/fs/cgroup/cgroup.subtree_control && mkdir -p {dir} && echo {} > {dir}/cpuset.cpus && echo {nodes} > {dir}/cpuset.mems && sh -c 'echo $$ > {dir}/cgroup.procs && exec {bin} {args}'",
            cpus.join(",")
        );
    }
    format!("{bin} {args}")
}

/// The CPUs the harness gives node `n`: contiguous blocks, the first
/// `cpus % nodes` nodes one more; with fewer CPUs than nodes, one each.
pub(crate) fn expected_cpus(g: &Guest, n: usize) -> Vec<u64> {
    if g.cpus < g.nodes {
        return if n < g.cpus { vec![n as u64] } else { vec![] };
    }
    let (base, extra) = (g.cpus / g.nodes, g.cpus % g.nodes);
    let start = n * base + n.min(extra);
    let len = base + usize::from(n < extra);
    (start as u64..(start + len) as u64).collect()
}

/// One command's stdout parsed as JSON; panics, showing the text, if it
/// is not.
pub(crate) fn json(text: &str) -> Value {
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}
