//! The main job's memory-probe section: a short run of the probe's
//! matrices (latency and read bandwidth between every pair of nodes, with
//! small buffers) on the pool's placer, every page and thread checked.
//! `numakit probe` is the real measurement; this shows what it does.

use anyhow::Result;
use numakit_ops::timing::Silent;
use numakit_placement::Placer;
use numakit_probe::{matrix, MatrixOptions, MatrixReport};
use numakit_topology::NodeId;
use serde::Serialize;

use crate::render::format::bytes;

const MIB: u64 = 1 << 20;

/// What the section measured.
#[derive(Serialize)]
pub struct ProbeSummary {
    /// Bytes of the pointer chase the latency is measured over.
    pub latency_bytes: u64,
    /// Bytes of each read-bandwidth buffer.
    pub bandwidth_bytes: u64,
    /// (CPU node, memory node, ns per dependent load, read GB/s, threads)
    pub pairs: Vec<(NodeId, NodeId, f64, f64, usize)>,
    /// The CPU clock in GHz as the kernel reports it (to give latencies in
    /// cycles); `None` when it reports none.
    pub clock_ghz: Option<f64>,
    /// Whether every page and thread was found on the node it was put on.
    pub placement_verified: bool,
}

/// Probe options for a main job over `size_mib` MiB on a machine with
/// `pairs` (CPU node, memory node) pairs: a chase of a quarter of the size
/// and bandwidth buffers of half of it (at least 16 and 8 MiB), no huge
/// pages or cross traffic, three repetitions of each measurement, one
/// when there are many pairs (the section stays short on big machines).
pub fn options(size_mib: u64, pairs: usize) -> MatrixOptions {
    let mut o = MatrixOptions::quick();
    o.latency_bytes = (size_mib / 4).max(16) * MIB;
    o.bandwidth_bytes = (size_mib / 2).max(8) * MIB;
    o.pass_bytes = 2 * o.bandwidth_bytes;
    o.chase.loads = 100_000;
    o.chase.warm = 20_000;
    o.huge_pages = false;
    o.cross_traffic = false;
    if pairs > 4 {
        o.reps = 1;
        o.chase.reps = 1;
    }
    o
}

/// Runs the probe's matrices with [`options`] for `size_mib` over every
/// (CPU node, memory node) pair of `placer`'s machine.
pub fn probe(placer: &Placer, size_mib: u64) -> Result<ProbeSummary> {
    let topology = placer.topology();
    let pairs = topology.compute_nodes().len() * topology.memory_nodes().len();
    let report = matrix::run(placer, &options(size_mib, pairs), &Silent)?;
    Ok(summarize(&report))
}

fn summarize(report: &MatrixReport) -> ProbeSummary {
    let mut pairs = Vec::new();
    for (row, &c) in report.cpu_nodes.iter().enumerate() {
        for (col, &m) in report.memory_nodes.iter().enumerate() {
            let latency = report.latency[row][col].ns;
            let read = &report.read[row][col];
            pairs.push((c, m, latency, read.gbs, read.threads));
        }
    }
    ProbeSummary {
        latency_bytes: report.options.latency_bytes,
        bandwidth_bytes: report.options.bandwidth_bytes,
        pairs,
        clock_ghz: report.clock.map(|c| c.ghz),
        placement_verified: report.placement_verified(),
    }
}

/// The section's lines: one per CPU node, its latency and read bandwidth
/// to every memory node.
pub fn lines(p: &ProbeSummary) -> Vec<String> {
    let mut lines = vec![format!(
        "8. memory probe: dependent-load latency over {} and read bandwidth over {} between every pair of nodes; {}",
        bytes(p.latency_bytes),
        bytes(p.bandwidth_bytes),
        if p.placement_verified {
            "every page and thread where it was put (verified)"
        } else {
            "placement NOT verified"
        }
    )];
    let mut rows: Vec<NodeId> = p.pairs.iter().map(|q| q.0).collect();
    rows.dedup();
    for c in rows {
        let cells: Vec<String> = p
            .pairs
            .iter()
            .filter(|q| q.0 == c)
            .map(|&(_, m, ns, gbs, threads)| {
                let cycles = p
                    .clock_ghz
                    .map_or(String::new(), |g| format!(" ({:.0} cycles)", ns * g));
                format!("node {m} {ns:.0} ns{cycles}, {gbs:.1} GB/s with {threads} thread(s)")
            })
            .collect();
        lines.push(format!("   from node {c}: {}", cells.join(" | ")));
    }
    lines.push(
        "   (numakit probe for the full matrices, huge pages, write/copy, cross traffic, --save; probe kiefer, probe strategies)"
            .into(),
    );
    lines
}
