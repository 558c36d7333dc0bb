//! Li, Pandis, Mueller, Raman, Lohman: "NUMA-aware algorithms: the case of
//! data shuffling" (CIDR 2013): its eleven figures and one table.
//!
//! What is reproduced, and how:
//!
//! - the machines of Figure 1 and Table 1's bandwidths come from numakit's
//!   described-machine presets and the interconnect simulator's replay of
//!   Li's measurements (`numakit topo --machine`, `numakit simulate`); this
//!   machine's own local bandwidth and latency are measured beside them
//!   (`numakit probe`);
//! - Figures 3 to 5 print the first steps of the naive and ring schedules
//!   numakit really runs ([`numakit_shuffle::Schedule`]), with the memory
//!   channels and links each step uses;
//! - Figures 6, 7, 10 and 11 are predicted by the simulator on the
//!   paper's four- and eight-socket Nehalem-EX servers, where the paper's
//!   directions can show, and measured here as well (`numakit shuffle`,
//!   `numakit aggregate`);
//! - Figures 8 and 9 (the P-MPSM join with a naive or a ring merge
//!   exchange) are measured here (`numakit join --algorithm mpsm
//!   --merge-exchange naive,ring`).
//!
//! What it deliberately does not do: Figure 2 is a drawing of four read
//! flows (their bandwidths are Table 1); no item pretends that this
//! one-node machine shows a remote-memory effect. Where only several NUMA
//! nodes could show a claim, its verdict says so and the simulator's
//! figure on the paper's machine stands beside it. Every runner calls the
//! same library functions as the CLI command it names; none measures
//! anything itself.

mod aggregation;
mod join;
mod machines;
mod schedules;
mod shuffle;

use std::sync::Arc;

use numakit_placement::PlacementMode;
use numakit_pool::{Pool, PoolBuilder};
use numakit_shuffle::{Schedule, SyncMode};
use numakit_sim::{Calibration, SimOptions};
use numakit_topology::{presets, Topology};

use crate::catalog::Item;
use crate::context::Context;
use crate::error::RunResult;

/// The paper's four-socket server, fully connected (Figure 6 left, 7, 10, 11).
pub(crate) const FOUR_SOCKETS: &str = "nehalem-ex-4s";
/// Figure 2's four-socket server with two QPI links removed (Table 1).
pub(crate) const FOUR_LINKS: &str = "nehalem-ex-4s-4link";
/// The paper's eight-socket server (Figure 6 right, Figure 10).
pub(crate) const EIGHT_SOCKETS: &str = "nehalem-ex-8s";

/// Every item of the paper.
pub(crate) fn items() -> Vec<Item> {
    let mut all = vec![
        machines::figure_1(),
        machines::figure_2(),
        machines::table_1(),
    ];
    all.extend(schedules::items());
    all.extend(shuffle::items());
    all.extend(join::items());
    all.extend(aggregation::items());
    all
}

/// A described machine of the paper.
pub(crate) fn preset(name: &str) -> RunResult<Topology> {
    Ok(presets::topology(name)?)
}

/// The simulator's constants, fitted on Li's Table 1 and §2.
pub(crate) fn calibration() -> Calibration {
    Calibration::li_nehalem()
}

/// The simulated GB/s of `schedule` run tight on `topo`, with the
/// paper's calibration.
pub(crate) fn simulated_tight(topo: &Topology, schedule: &Schedule) -> RunResult<f64> {
    let report = numakit_sim::simulate(
        topo,
        schedule,
        SyncMode::Tight,
        &SimOptions::default(),
        &calibration(),
    )?;
    Ok(report.gbs)
}

/// CPUs this process may use (at least 1).
pub(crate) fn cpus(ctx: &Context<'_>) -> usize {
    ctx.topology.allowed.cpus.len().max(1)
}

/// NUMA nodes with CPUs this process may use (at least 1).
pub(crate) fn nodes(ctx: &Context<'_>) -> usize {
    ctx.topology.compute_nodes().len().max(1)
}

/// A pool of `threads` workers, spread evenly over the nodes, placed as the
/// CLI places them by default (best effort: containers may refuse pinning).
pub(crate) fn pool(ctx: &Context<'_>, threads: usize) -> RunResult<Pool> {
    let topology: Arc<Topology> = ctx.topology.clone();
    Ok(PoolBuilder::new(topology)
        .threads(threads.max(1))
        .placement(PlacementMode::BestEffort)
        .build()?)
}

/// Thread counts of a sweep on this machine: 1, then multiples of the node
/// count up to the CPUs (at most `most` points).
pub(crate) fn thread_counts(ctx: &Context<'_>, most: usize) -> Vec<usize> {
    let (nodes, cpus) = (nodes(ctx), cpus(ctx));
    let mut counts: Vec<usize> = (1..=cpus).filter(|&t| t == 1 || t % nodes == 0).collect();
    while counts.len() > most.max(2) {
        let last = counts.len() - 1;
        counts = counts
            .iter()
            .enumerate()
            .filter(|&(i, _)| i % 2 == 0 || i == last)
            .map(|(_, &t)| t)
            .collect();
    }
    counts
}

/// The median of `values` (0 when empty).
pub(crate) fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied().unwrap_or(0.0)
}

/// The reason a one-node machine cannot show a remote-memory claim.
pub(crate) fn one_node(what: &str, elsewhere: &str) -> String {
    format!("one NUMA node here: {what}; {elsewhere}")
}
