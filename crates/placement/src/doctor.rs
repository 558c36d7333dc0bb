//! `doctor`: does this machine or container give us NUMA control?
//!
//! Each check reports pass, fail or unavailable with its reason. The
//! placement checks do not trust return codes alone: they place a small
//! buffer on every allowed node and ask the kernel where its pages landed,
//! and pin a thread to every node and ask where it runs. The doctor reads
//! and tries; it never changes system settings.

use std::sync::Arc;

use serde::Serialize;

use numakit_topology::{NodeId, NodeSet, Topology};

use crate::buffer::{BufferOptions, HugePages, NodeBuffer, HUGE_PAGE};
use crate::error::PlacementError;
use crate::pages::PageLocation;
use crate::placer::{current_affinity, current_cpu, PlacementMode, Placer};
use crate::policy::{MemPolicy, Placement};
use crate::resctrl::Resctrl;
use crate::sys;

/// The verdict of one check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// What the check needs works here (placements verified where pages are).
    Pass,
    /// The system accepted the request but did not carry it out, or an
    /// unexpected error came back.
    Fail,
    /// The system does not offer what the check needs (e.g. EPERM in a
    /// container, or a single-node machine for a multi-node check).
    Unavailable,
}

/// One check and its reason.
#[derive(Clone, Debug, Serialize)]
pub struct Check {
    /// Short snake_case name of what was checked (`mbind`, `place_on_node_2`, ...).
    pub name: String,
    /// The verdict.
    pub status: Status,
    /// One line of evidence or reason, for people.
    pub detail: String,
}

/// All checks.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Every check, in the order run.
    pub checks: Vec<Check>,
    /// How many checks have [`Status::Pass`].
    pub passed: usize,
    /// How many checks have [`Status::Fail`].
    pub failed: usize,
    /// How many checks have [`Status::Unavailable`].
    pub unavailable: usize,
}

impl Report {
    /// A report of these checks.
    pub fn from_checks(checks: Vec<Check>) -> Self {
        let count = |s| checks.iter().filter(|c| c.status == s).count();
        Self {
            passed: count(Status::Pass),
            failed: count(Status::Fail),
            unavailable: count(Status::Unavailable),
            checks,
        }
    }

    /// Adds more checks and recounts.
    pub fn extend(self, more: Vec<Check>) -> Self {
        let mut checks = self.checks;
        checks.extend(more);
        Self::from_checks(checks)
    }

    /// Whether no check failed.
    pub fn ok(&self) -> bool {
        self.failed == 0
    }
}

/// Bytes placed per node by the verification checks (a few pages).
const PROBE_BYTES: usize = 256 << 10;

/// Runs every check against `topology` (normally the discovered one).
pub fn run(topology: Arc<Topology>) -> Report {
    let placer = Placer::new(topology.clone(), PlacementMode::Strict);
    let mut checks = vec![
        nodes_check(&topology),
        thp_check(),
        balancing_check(),
        syscall_check("mbind", mbind_works(&placer)),
        syscall_check("set_mempolicy", set_mempolicy_works(&placer)),
        syscall_check("move_pages", move_pages_works()),
    ];
    for node in topology.memory_nodes() {
        checks.push(placed_buffer_check(&placer, node));
    }
    checks.push(interleave_check(&placer));
    checks.push(migrate_check(&placer));
    checks.push(huge_page_check(&placer));
    checks.extend(partitioning_checks());
    checks.push(hardware_counters_check());
    for node in topology.compute_nodes() {
        checks.push(pinning_check(&placer, node));
    }
    Report::from_checks(checks)
}

/// Builds a check (also used by higher layers that add their own checks).
pub fn check(name: impl Into<String>, status: Status, detail: impl Into<String>) -> Check {
    Check {
        name: name.into(),
        status,
        detail: detail.into(),
    }
}

fn nodes_check(topo: &Topology) -> Check {
    let detail = format!(
        "{} node(s) [{}], {} CPU(s); allowed CPUs {}, allowed memory nodes {}",
        topo.nodes.len(),
        topo.node_ids(),
        topo.cpus.len(),
        topo.allowed.cpus,
        topo.allowed.nodes
    );
    if topo.compute_nodes().is_empty() || topo.memory_nodes().is_empty() {
        return check("nodes", Status::Fail, format!("{detail}: nothing usable"));
    }
    check("nodes", Status::Pass, detail)
}

fn read_setting(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

fn thp_check() -> Check {
    match read_setting("/sys/kernel/mm/transparent_hugepage/enabled") {
        None => check(
            "transparent_huge_pages",
            Status::Unavailable,
            "THP not configured in this kernel",
        ),
        Some(text) => {
            let mode = text
                .split_whitespace()
                .find(|w| w.starts_with('['))
                .map(|w| w.trim_matches(|c| c == '[' || c == ']').to_string())
                .unwrap_or(text);
            let advice = match mode.as_str() {
                "always" => "numakit buffers opt out with MADV_NOHUGEPAGE unless huge pages are asked for, so a neighbour's 2 MiB fault cannot misplace them",
                "madvise" => "huge pages only where asked (numakit --huge-pages transparent)",
                _ => "huge pages unavailable; placement is per 4 KiB page",
            };
            check(
                "transparent_huge_pages",
                Status::Pass,
                format!("mode {mode}: {advice}"),
            )
        }
    }
}

fn balancing_check() -> Check {
    match read_setting("/proc/sys/kernel/numa_balancing").as_deref() {
        None => check("numa_balancing", Status::Unavailable, "kernel has no automatic NUMA balancing"),
        Some("0") => check("numa_balancing", Status::Pass, "off: pages stay where numakit puts them"),
        Some(v) => check(
            "numa_balancing",
            Status::Pass,
            format!("on ({v}): the kernel may migrate pages and tasks behind numakit's back; consider `sysctl kernel.numa_balancing=0` for measurements"),
        ),
    }
}

/// A check from the result of an operation: refusals are "unavailable".
pub fn syscall_check(name: &str, result: Result<String, PlacementError>) -> Check {
    match result {
        Ok(detail) => check(name, Status::Pass, detail),
        Err(e) if e.is_refusal() => check(name, Status::Unavailable, e.to_string()),
        Err(e) => check(name, Status::Fail, e.to_string()),
    }
}

fn first_memory_node(placer: &Placer) -> Result<NodeId, PlacementError> {
    placer
        .topology()
        .memory_nodes()
        .first()
        .copied()
        .ok_or(PlacementError::NoMemoryOnNode { node: 0 })
}

fn mbind_works(placer: &Placer) -> Result<String, PlacementError> {
    let node = first_memory_node(placer)?;
    let len = sys::page_size() * 4;
    let base = sys::map_anonymous(len, false)
        .map_err(|e| PlacementError::from_os("mmap", e, None, len))?;
    let result = sys::mbind(base, len, sys::MPOL_BIND, &NodeSet::single(node), 0)
        .map_err(|e| PlacementError::from_os("mbind", e, Some(node), len));
    // SAFETY: `base` is the mapping made above, never handed out.
    if let Err(e) = unsafe { sys::unmap(base, len) } {
        log::debug!("munmap failed: {e}");
    }
    result.map(|()| format!("bound a region to node {node}"))
}

fn set_mempolicy_works(placer: &Placer) -> Result<String, PlacementError> {
    let node = first_memory_node(placer)?;
    let placer = placer.clone();
    std::thread::spawn(move || {
        placer.set_thread_policy(&MemPolicy::Preferred(node))?;
        placer.set_thread_policy(&MemPolicy::Default)?;
        Ok(format!(
            "set and reset a thread policy (preferred node {node})"
        ))
    })
    .join()
    .unwrap_or(Err(PlacementError::EmptyCpuSet))
}

fn move_pages_works() -> Result<String, PlacementError> {
    let probe = vec![1u8; sys::page_size()];
    let locations = crate::pages::page_locations(probe.as_ptr(), probe.len())?;
    match locations.first() {
        Some(PageLocation::Node(n)) => Ok(format!("a heap page reports node {n}")),
        other => Err(PlacementError::Os {
            call: "move_pages",
            source: std::io::Error::other(format!("query returned {other:?}")),
        }),
    }
}

fn placed_buffer_check(placer: &Placer, node: NodeId) -> Check {
    let name = format!("place_on_node_{node}");
    let buffer = match NodeBuffer::<u8>::new(placer, PROBE_BYTES, Placement::OnNode(node)) {
        Ok(b) => b,
        Err(e) => return syscall_check(&name, Err(e)),
    };
    match buffer.page_locations() {
        Err(e) => syscall_check(&name, Err(e)),
        Ok(locs) => {
            let on_node = locs
                .iter()
                .filter(|l| **l == PageLocation::Node(node))
                .count();
            let status = if on_node == locs.len() {
                Status::Pass
            } else {
                Status::Fail
            };
            let detail = format!(
                "{on_node}/{} pages of a bound, first-touched buffer on node {node}; per node {:?}",
                locs.len(),
                buffer.pages_per_node().unwrap_or_default()
            );
            check(name, status, detail)
        }
    }
}

fn interleave_check(placer: &Placer) -> Check {
    let nodes: NodeSet = placer.topology().memory_nodes().into_iter().collect();
    if nodes.len() < 2 {
        return check(
            "interleave",
            Status::Unavailable,
            "one memory node: nothing to interleave over",
        );
    }
    let pages = nodes.len() * 8;
    let buffer = match NodeBuffer::<u8>::new(
        placer,
        pages * sys::page_size(),
        Placement::Interleave(nodes.clone()),
    ) {
        Ok(b) => b,
        Err(e) => return syscall_check("interleave", Err(e)),
    };
    let order: Vec<NodeId> = nodes.iter().collect();
    match buffer.page_locations() {
        Err(e) => syscall_check("interleave", Err(e)),
        Ok(locs) => {
            let on: Vec<Option<NodeId>> = locs
                .iter()
                .map(|l| match l {
                    PageLocation::Node(n) => Some(*n),
                    _ => None,
                })
                .collect();
            let next = |n: NodeId| {
                let i = order.iter().position(|&m| m == n).unwrap_or(0);
                order[(i + 1) % order.len()]
            };
            let round_robin = on.windows(2).all(|w| match (w[0], w[1]) {
                (Some(a), Some(b)) => b == next(a),
                _ => false,
            });
            let status = if round_robin {
                Status::Pass
            } else {
                Status::Fail
            };
            let shown: Vec<String> = on
                .iter()
                .map(|n| n.map_or("-".into(), |n| n.to_string()))
                .collect();
            check(
                "interleave",
                status,
                format!(
                    "{pages} pages over nodes {nodes}, page by page: {}",
                    shown.join(" ")
                ),
            )
        }
    }
}

fn pinning_check(placer: &Placer, node: NodeId) -> Check {
    let name = format!("pin_to_node_{node}");
    let expected = match placer.cpus_of_node(node) {
        Ok(c) => c,
        Err(e) => return check(name, Status::Fail, e.to_string()),
    };
    let worker = placer.clone();
    let observed = std::thread::spawn(move || {
        worker.pin_to_node(node)?;
        let mask = current_affinity()?;
        let mut seen = Vec::new();
        for _ in 0..20 {
            seen.push(current_cpu()?);
            std::thread::yield_now();
        }
        Ok::<_, PlacementError>((mask, seen))
    })
    .join()
    .unwrap_or(Err(PlacementError::EmptyCpuSet));
    match observed {
        Err(e) => syscall_check(&name, Err(e)),
        Ok((mask, seen)) => {
            let stray: Vec<_> = seen
                .iter()
                .filter(|(cpu, _)| !expected.contains(*cpu))
                .collect();
            let wrong_node = seen.iter().any(|(_, n)| *n != node);
            let status = if mask == expected && stray.is_empty() && !wrong_node {
                Status::Pass
            } else {
                Status::Fail
            };
            check(
                name,
                status,
                format!(
                    "affinity {mask} (expected {expected}); ran on CPUs {:?}",
                    seen.iter().map(|(c, _)| *c).collect::<Vec<_>>()
                ),
            )
        }
    }
}

fn migrate_check(placer: &Placer) -> Check {
    let nodes = placer.topology().memory_nodes();
    let (Some(&from), Some(&to)) = (nodes.first(), nodes.last()) else {
        return check("migrate", Status::Unavailable, "no memory node");
    };
    if from == to {
        return check(
            "migrate",
            Status::Unavailable,
            "one memory node: nowhere to migrate to",
        );
    }
    let mut buffer = match NodeBuffer::<u8>::new(placer, PROBE_BYTES, Placement::OnNode(from)) {
        Ok(b) => b,
        Err(e) => return syscall_check("migrate", Err(e)),
    };
    match buffer
        .migrate_to(placer, to)
        .and_then(|moved| Ok((moved, buffer.pages_per_node()?)))
    {
        Err(e) => syscall_check("migrate", Err(e)),
        Ok((moved, counts)) => {
            let all = counts.values().sum::<usize>();
            let status = if moved == all && counts.get(&to) == Some(&all) {
                Status::Pass
            } else {
                Status::Fail
            };
            check(
                "migrate",
                status,
                format!(
                    "moved a {} KiB buffer from node {from} to node {to}: per node {counts:?}",
                    PROBE_BYTES >> 10
                ),
            )
        }
    }
}

fn huge_page_check(placer: &Placer) -> Check {
    let Some(&node) = placer.topology().memory_nodes().last() else {
        return check("huge_page_placement", Status::Unavailable, "no memory node");
    };
    let mut options = BufferOptions::new(Placement::OnNode(node));
    options.huge_pages = HugePages::Transparent;
    let buffer = match NodeBuffer::<u8>::with_options(placer, 2 * HUGE_PAGE, options) {
        Ok(b) => b,
        Err(e) => return syscall_check("huge_page_placement", Err(e)),
    };
    match buffer.pages_per_node() {
        Err(e) => syscall_check("huge_page_placement", Err(e)),
        Ok(counts) => {
            let all = counts.values().sum::<usize>();
            let status = if all > 0 && counts.get(&node) == Some(&all) {
                Status::Pass
            } else {
                Status::Fail
            };
            check("huge_page_placement", status, format!("a 4 MiB transparent-huge-page buffer bound to node {node}: base pages per node {counts:?}"))
        }
    }
}

/// Cache (CAT, CDP) and memory-bandwidth (MBA) partitioning through
/// resctrl: what the machine offers, or the one reason it offers nothing.
/// Reads only; no group is made.
fn partitioning_checks() -> Vec<Check> {
    let (cache, bandwidth) = ("cache_partitioning", "bandwidth_partitioning");
    let resctrl = match Resctrl::system() {
        Ok(r) => r,
        Err(e) => {
            let status = if e.is_unavailable() {
                Status::Unavailable
            } else {
                Status::Fail
            };
            return vec![
                check(cache, status, e.to_string()),
                check(bandwidth, status, e.to_string()),
            ];
        }
    };
    let info = resctrl.info();
    let offered = |name, summary: Option<String>, missing| match summary {
        Some(detail) => check(name, Status::Pass, detail),
        None => check(name, Status::Unavailable, missing),
    };
    vec![
        offered(
            cache,
            info.cache_summary(),
            "resctrl is mounted but offers no cache allocation (no info/L3 or info/L2)",
        ),
        offered(
            bandwidth,
            info.bandwidth_summary(),
            "resctrl is mounted but offers no memory bandwidth allocation (no info/MB)",
        ),
    ]
}

/// Hardware performance counters for a thread (cycles, instructions, LLC
/// references and misses): the events that opened and what a short loop
/// counted, or the one reason there are none. Never a figure the kernel
/// did not give.
fn hardware_counters_check() -> Check {
    use crate::counters::{self, CounterError, CounterGroup};
    let name = "hardware_counters";
    let group = match CounterGroup::hardware() {
        Ok(group) => group,
        Err(e @ CounterError::Unavailable { .. }) => {
            let sources = counters::event_sources();
            let sources = if sources.is_empty() {
                "none listed".to_string()
            } else {
                sources.join(", ")
            };
            let detail = format!("{}; event sources here: {sources}", e.reason());
            return check(name, Status::Unavailable, detail);
        }
        Err(e) => return check(name, Status::Fail, e.to_string()),
    };
    let (_, counted) = group.around(|| {
        let mut x = std::hint::black_box(1u64);
        for i in 0..1_000_000u64 {
            x = std::hint::black_box(x.rotate_left(5) ^ i);
        }
        x
    });
    let opened: Vec<&str> = group.events().iter().map(|e| e.name()).collect();
    let mut detail = format!("opened {}", opened.join(", "));
    if let Some((_, why)) = group.missing().first() {
        let missing: Vec<&str> = group.missing().iter().map(|(e, _)| e.name()).collect();
        detail += &format!(" (not {}: {why})", missing.join(", "));
    }
    let counts = match counted {
        Ok(counts) => counts,
        Err(e) => return check(name, Status::Fail, format!("{detail}; {e}")),
    };
    if counts.running_ns == 0 {
        detail += ", but the kernel never scheduled the group (its counters are taken)";
        return check(name, Status::Unavailable, detail);
    }
    if counts.instructions == Some(0) || counts.cycles == Some(0) {
        detail += ", but a million-round loop counted 0 cycles or instructions";
        return check(name, Status::Fail, detail);
    }
    let figure = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
    let ipc = counts.ipc().map_or("-".to_string(), |v| format!("{v:.2}"));
    detail += &format!(
        "; a million-round loop: {} instructions, {} cycles, IPC {ipc}",
        figure(counts.instructions),
        figure(counts.cycles)
    );
    check(name, Status::Pass, detail)
}
