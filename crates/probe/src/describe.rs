//! A probed machine written down as a described machine (the topology
//! crate's JSON), so that `numakit simulate --machine FILE` and
//! `numakit shuffle --plan --machine FILE` reason about the user's real
//! machine with its measured figures.
//!
//! What it writes: the probed nodes with their cores, memory and measured
//! local read bandwidth, local latency and one thread's read bandwidth;
//! the caches sysfs reports; the SLIT distances; and one link per pair of
//! probed nodes, whose bandwidth is what one node's threads read from the
//! other's memory (the lower of the two directions) and whose latency is
//! the remote latency above the local one. What it cannot write: the
//! physical wiring (the probe sees node pairs, not links, so flows that
//! share a link in the machine do not share one in the description) and
//! the coherence traffic, which the simulator keeps from Li's calibration.

use numakit_topology::describe::{
    CacheDescription, LinkDescription, MachineDescription, NodeDescription, SharedBy,
};
use numakit_topology::{Cache, NodeId, Topology};

use crate::error::{ProbeError, Result};
use crate::matrix::MatrixReport;
use crate::stream::Kernel;

const GIB: f64 = (1u64 << 30) as f64;

/// The described machine of a probe's report.
pub fn describe(
    topology: &Topology,
    report: &MatrixReport,
    name: &str,
) -> Result<MachineDescription> {
    let nodes = probed_nodes(report);
    let node_descriptions = nodes
        .iter()
        .map(|&n| describe_node(topology, report, n))
        .collect::<Result<Vec<_>>>()?;
    let description = MachineDescription {
        name: name.to_string(),
        description: format!(
            "measured by numakit probe: {} node(s), {} CPU(s)",
            nodes.len(),
            topology.allowed.cpus.len()
        ),
        source: "numakit probe --save: dependent-load latency, sequential read bandwidth at saturation, one thread's read bandwidth".into(),
        clock_ghz: report.clock.map(|c| c.ghz),
        nodes: node_descriptions,
        caches: caches(topology),
        distances: Some(distances(topology, &nodes)?),
        links: links(report, &nodes),
        // The probe measures bandwidth and latency, not the protocol.
        coherence: None,
        notes: notes(report),
    };
    description
        .validate("the probe's description")
        .map_err(ProbeError::Topology)?;
    Ok(description)
}

/// CPU nodes then memory-only nodes, ascending.
fn probed_nodes(report: &MatrixReport) -> Vec<NodeId> {
    let mut nodes: Vec<NodeId> = report
        .cpu_nodes
        .iter()
        .chain(&report.memory_nodes)
        .copied()
        .collect();
    nodes.sort_unstable();
    nodes.dedup();
    nodes
}

fn describe_node(
    topology: &Topology,
    report: &MatrixReport,
    id: NodeId,
) -> Result<NodeDescription> {
    let node = topology.node(id)?;
    let cpus: Vec<_> = topology
        .cpus
        .iter()
        .filter(|c| c.node == Some(id) && topology.allowed.cpus.contains(c.id))
        .collect();
    let mut cores: Vec<(u32, u32)> = cpus.iter().map(|c| (c.socket, c.core)).collect();
    cores.sort_unstable();
    cores.dedup();
    let threads_per_core = if cores.is_empty() {
        1
    } else {
        (cpus.len() / cores.len()).max(1) as u32
    };
    let (bandwidth, latency) = local_figures(report, id);
    Ok(NodeDescription {
        id,
        socket: node
            .socket
            .or_else(|| cpus.first().map(|c| c.socket))
            .unwrap_or(id),
        cores: if cpus.is_empty() {
            0
        } else {
            (cpus.len() as u32) / threads_per_core
        },
        threads_per_core,
        memory_gib: node.memory_bytes.map(|b| b as f64 / GIB),
        memory_bandwidth_gbs: bandwidth,
        memory_latency_ns: latency,
        thread_bandwidth_gbs: one_thread_local(report, id),
    })
}

/// A node's own read bandwidth and latency: measured from its own CPUs,
/// or for a memory-only node the best any CPU node got from it.
fn local_figures(report: &MatrixReport, node: NodeId) -> (Option<f64>, Option<f64>) {
    let Some(col) = report.memory_nodes.iter().position(|&m| m == node) else {
        return (None, None);
    };
    if let Some(row) = report.cpu_nodes.iter().position(|&c| c == node) {
        let bandwidth = report.read.get(row).and_then(|r| r.get(col)).map(|b| b.gbs);
        let latency = report
            .latency
            .get(row)
            .and_then(|r| r.get(col))
            .map(|l| l.ns);
        return (bandwidth, latency);
    }
    let bandwidth = report
        .read
        .iter()
        .filter_map(|r| r.get(col))
        .map(|b| b.gbs)
        .reduce(f64::max);
    let latency = report
        .latency
        .iter()
        .filter_map(|r| r.get(col))
        .map(|l| l.ns)
        .reduce(f64::min);
    (bandwidth, latency)
}

/// One thread's read bandwidth of its node's memory: the first point of
/// the node's local read sweep.
fn one_thread_local(report: &MatrixReport, node: NodeId) -> Option<f64> {
    report
        .sweeps
        .iter()
        .filter(|s| s.kernel == Kernel::Read && s.cpu_node == node && s.memory_node == node)
        .filter_map(|s| s.points.iter().find(|p| p.threads == 1))
        .map(|p| p.gbs)
        .next()
}

/// The caches of the first allowed CPU, with what shares each.
fn caches(topology: &Topology) -> Vec<CacheDescription> {
    let Some(cpu) = topology.allowed.cpus.first() else {
        return Vec::new();
    };
    topology
        .caches
        .iter()
        .filter(|c| c.cpus.contains(cpu))
        .map(|c| CacheDescription {
            level: c.level,
            kind: c.kind,
            size_kib: c.size_bytes / 1024,
            shared_by: shared_by(topology, c),
        })
        .collect()
}

fn shared_by(topology: &Topology, cache: &Cache) -> SharedBy {
    let first = cache
        .cpus
        .first()
        .and_then(|id| topology.cpus.iter().find(|c| c.id == id));
    let Some(first) = first else {
        return SharedBy::Socket;
    };
    if cache.cpus.len() == 1 {
        return SharedBy::Thread;
    }
    if cache.cpus.is_subset(&first.siblings) {
        return SharedBy::Core;
    }
    let node_cpus = first
        .node
        .and_then(|n| topology.node(n).ok())
        .map(|n| &n.cpus);
    match node_cpus {
        Some(cpus) if cache.cpus == *cpus => SharedBy::Node,
        _ => SharedBy::Socket,
    }
}

/// The SLIT rows and columns of the probed nodes.
fn distances(topology: &Topology, nodes: &[NodeId]) -> Result<Vec<Vec<u32>>> {
    nodes
        .iter()
        .map(|&a| {
            nodes
                .iter()
                .map(|&b| Ok(topology.distance(a, b)?))
                .collect()
        })
        .collect()
}

/// One link per pair with a measurement in either direction.
fn links(report: &MatrixReport, nodes: &[NodeId]) -> Vec<LinkDescription> {
    let mut links = Vec::new();
    for (i, &a) in nodes.iter().enumerate() {
        for &b in &nodes[i + 1..] {
            let reads = [pair_read(report, a, b), pair_read(report, b, a)];
            let Some(bandwidth) = reads.iter().flatten().copied().reduce(f64::min) else {
                continue;
            };
            let extra = [extra_latency(report, a, b), extra_latency(report, b, a)];
            let extra: Vec<f64> = extra.iter().flatten().copied().collect();
            links.push(LinkDescription {
                a,
                b,
                bandwidth_gbs: bandwidth,
                latency_ns: (!extra.is_empty())
                    .then(|| (extra.iter().sum::<f64>() / extra.len() as f64).max(0.0)),
            });
        }
    }
    links
}

/// Read bandwidth of CPUs on `cpu` from memory on `memory`.
fn pair_read(report: &MatrixReport, cpu: NodeId, memory: NodeId) -> Option<f64> {
    let row = report.cpu_nodes.iter().position(|&c| c == cpu)?;
    let col = report.memory_nodes.iter().position(|&m| m == memory)?;
    report.read.get(row)?.get(col).map(|b| b.gbs)
}

/// Latency of `cpu` to `memory` above `cpu`'s own memory.
fn extra_latency(report: &MatrixReport, cpu: NodeId, memory: NodeId) -> Option<f64> {
    let row = report.cpu_nodes.iter().position(|&c| c == cpu)?;
    let col = report.memory_nodes.iter().position(|&m| m == memory)?;
    let local = report.memory_nodes.iter().position(|&m| m == cpu)?;
    let latencies = report.latency.get(row)?;
    Some(latencies.get(col)?.ns - latencies.get(local)?.ns)
}

fn notes(report: &MatrixReport) -> Vec<String> {
    let mut notes = vec![
        "memory_bandwidth_gbs: sequential read of the node's own memory by its CPUs at the thread count where it saturated".to_string(),
        "thread_bandwidth_gbs: one thread reading its node's memory; the simulator caps each thread at it".to_string(),
        "links: one per pair of nodes, the lower of the two directions' read bandwidth; the probe sees node pairs, not the wiring, so flows that share a physical link do not share one here".to_string(),
        "coherence traffic is not measured: the simulator keeps Li et al.'s Nehalem-EX coefficient".to_string(),
    ];
    if let Some(clock) = report.clock {
        notes.push(format!("clock_ghz: {} ({})", clock.ghz, clock.source));
    }
    notes
}
