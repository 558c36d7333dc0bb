//! The main job's locks section: a short `numakit bench locks` over every
//! lock (std's `Mutex`, the ticket lock, the cohort lock, flat combining):
//! each one's uncontended cost, and the lock passed between all allowed
//! CPUs with the handoffs between nodes counted. `numakit bench locks` is
//! the real measurement; this shows what it does.

use std::time::Duration;

use anyhow::Result;
use numakit_placement::Placer;
use numakit_sync::bench::{LockBenchRequest, LockKind};
use serde::Serialize;

/// What the section measured.
#[derive(Serialize)]
pub struct LocksSummary {
    /// Nodes the threads were spread over.
    pub nodes: usize,
    /// Threads of the contended run (one per allowed CPU, at most 16).
    pub threads: usize,
    /// (lock, uncontended ns per acquisition, median)
    pub uncontended: Vec<(LockKind, f64)>,
    /// (lock, acquisitions per second, handoffs between nodes per 1,000)
    pub contended: Vec<(LockKind, f64, f64)>,
}

/// Runs the short benchmark on `placer`'s machine.
pub fn locks(placer: &Placer) -> Result<LocksSummary> {
    let nodes = placer.topology().compute_nodes();
    let threads = placer.topology().allowed.cpus.len().clamp(1, 16);
    let request = LockBenchRequest {
        locks: LockKind::ALL.to_vec(),
        threads: vec![threads],
        nodes: nodes.clone(),
        critical_ns: 100,
        outside_ns: 100,
        duration: Duration::from_millis(30),
        reps: 1,
        cohort_bound: numakit_sync::DEFAULT_COHORT_BOUND,
        uncontended_pairs: 200_000,
    };
    let report = numakit_sync::bench::run(placer, &request, &|_| {})?;
    Ok(LocksSummary {
        nodes: nodes.len(),
        threads,
        uncontended: report
            .uncontended
            .iter()
            .map(|u| (u.lock, u.ns.median))
            .collect(),
        contended: report
            .contended
            .iter()
            .map(|c| {
                (
                    c.lock,
                    c.acquisitions_per_s.median,
                    c.remote_per_1000.median,
                )
            })
            .collect(),
    })
}

/// The section's lines.
pub fn lines(s: &LocksSummary) -> Vec<String> {
    let cost: Vec<String> = s
        .uncontended
        .iter()
        .map(|(lock, ns)| format!("{lock} {ns:.1} ns"))
        .collect();
    let contended: Vec<String> = s
        .contended
        .iter()
        .map(|(lock, rate, remote)| {
            format!("{lock} {:.2} M/s, {remote:.0} between nodes", rate / 1e6)
        })
        .collect();
    vec![
        format!("10. locks: uncontended acquire-release {}", cost.join(" | ")),
        format!(
            "   {} threads over {} node(s), per 1,000 acquisitions: {}",
            s.threads,
            s.nodes,
            contended.join(" | ")
        ),
        "   (numakit bench locks for thread sweeps, critical sections, charts; the cohort lock keeps the lock on a node)".into(),
    ]
}
