//! Kiefer, Schlegel, Lehner: "Experimental Evaluation of NUMA Effects on
//! Database Management Systems": its eight figures and two tables.
//!
//! What is reproduced, and how:
//!
//! - Table 1 (the synthetic benchmark's four experiments) and Figure 2b's
//!   execution times against the number of migrations are measured here by
//!   numakit's own benchmark ([`numakit_probe::kiefer`], the library
//!   behind `numakit probe kiefer` and `numakit probe cache-migration`);
//!   the multi-node guests of the CLI's test suite run the same
//!   experiments with real remote nodes;
//! - Figures 5 and 6 (throughput of the placement strategies, normalized
//!   to `default`) are measured here by numakit's scan, aggregation and
//!   join under the same four strategies ([`numakit_probe::strategies`],
//!   behind `numakit probe strategies`), and the strategies' reads are
//!   replayed as steady flows by the interconnect simulator on the paper's
//!   two machines, where the remote-memory direction can show;
//! - Figure 4 (the strategies' thread and memory assignment) is printed
//!   from the placements numakit's strategies compute, on the paper's
//!   machines;
//! - Figure 1 and Table 2 (the machines) are printed from numakit's
//!   described-machine presets `westmere-ex-4s` and `opteron-istanbul-2s`.
//!
//! What it deliberately does not do: MySQL and TPC-H are not run (numakit's
//! own operators stand in for the queries); the LLC hit rates, cache-line
//! states and QPI link counts of Figures 2 and 7 need Intel PCM's hardware
//! counters, which numakit's experiments do not read and this kind of
//! virtual machine does not have; Figures 3 and 8 are drawings. No item
//! pretends that a one-node machine shows a remote-memory effect: those
//! verdicts say so and the simulator's figure stands beside them.

mod machines;
mod strategies;
mod synthetic;

use std::sync::Arc;

use numakit_placement::{PlacementMode, Placer};
use numakit_topology::Topology;

use crate::catalog::{Item, ItemId, Paper, Reproduction};
use crate::outcome::Row;

/// The paper's Intel machine (Table 2, Figures 1, 6 and 7).
pub(crate) const INTEL: &str = "westmere-ex-4s";
/// The paper's AMD machine (Table 2, Figure 5).
pub(crate) const AMD: &str = "opteron-istanbul-2s";

/// What the one-node verdicts point to instead.
pub(crate) const GUESTS: &str = "the guest test crates/cli/tests/numa_vm/probe.rs runs the same command in 2-, 4- and 8-node guests (for completeness and placement: emulated nodes have no remote penalty)";

/// Every item of the paper.
pub(crate) fn items() -> Vec<Item> {
    let mut all = figures_1_to_4();
    all.extend(figures_5_to_8_and_tables());
    all
}

fn figures_1_to_4() -> Vec<Item> {
    use Reproduction::{Described, MeasuredInGuests, NotReproducible};
    vec![
        Item::new(
            Paper::Kiefer,
            ItemId::Figure(1),
            "Overview of a NUMA system (Intel Westmere architecture)",
            Described,
            "numakit topo --machine westmere-ex-4s",
            "a drawing, printed as numakit's described westmere-ex-4s (sockets, caches, QPI links, hops), not measured; this machine has one node",
            Some(machines::figure_1),
        ),
        Item::new(
            Paper::Kiefer,
            ItemId::Figure(2),
            "LLC rates for experiments with context switches (hit rate, relative execution time vs migrations)",
            MeasuredInGuests,
            "numakit probe cache-migration --small-mib 1 --large-mib 1 --accesses 1000000 --migrations 3; numakit probe cache-migration --small-mib 1 --large-mib 1 --accesses 1000000 --migrations 25; numakit probe cache-migration --small-mib 1 --large-mib 1 --accesses 1000000 --migrations 100; numakit probe cache-migration --small-mib 1 --large-mib 1 --accesses 1000000 --migrations 200",
            "execution times only: the LLC hit rates need PCM counters the experiments do not read; here the threads move between two CPUs of one node (private caches cold, one shared LLC), with a 1 MiB array near this machine's private L2 instead of 16 MB in a 24 MB LLC",
            Some(synthetic::figure_2),
        ),
        Item::new(
            Paper::Kiefer,
            ItemId::Figure(3),
            "Cache concurrency effect for four groups of threads (data layout in the LLCs)",
            NotReproducible,
            "",
            "a drawing of what each socket's LLC holds; the two layouts it draws are measured as Table 1's experiment 4 (co-located vs round-robin)",
            None,
        ),
        Item::new(
            Paper::Kiefer,
            ItemId::Figure(4),
            "Thread and memory assignment strategies (aligned, 1-ahead, interleave)",
            Described,
            "numakit probe strategies --json",
            "a drawing, printed from the seats and memory placements numakit's strategies compute on the paper's two machines (presets; nothing runs); here the command shows one instance on one node",
            Some(strategies::figure_4),
        ),
    ]
}

fn figures_5_to_8_and_tables() -> Vec<Item> {
    use Reproduction::{Described, MeasuredInGuests, NotReproducible};
    vec![
        Item::new(
            Paper::Kiefer,
            ItemId::Figure(5),
            "Normalized query throughput on the AMD machine",
            MeasuredInGuests,
            "numakit probe strategies",
            "numakit's scan, aggregation and join per instance instead of MySQL's TPC-H queries; one instance on one node here (2 sockets, 6 connections per instance in the paper); the simulator's rows replay the strategies' reads on opteron-istanbul-2s (no CLI command prints them)",
            Some(strategies::figure_5),
        ),
        Item::new(
            Paper::Kiefer,
            ItemId::Figure(6),
            "Normalized query throughput on the Intel machine",
            MeasuredInGuests,
            "numakit probe strategies",
            "numakit's scan, aggregation and join per instance instead of MySQL's TPC-H queries; one instance on one node here (4 sockets, 16 connections per instance in the paper); the simulator's rows replay the strategies' reads and link loads on westmere-ex-4s (no CLI command prints them)",
            Some(strategies::figure_6),
        ),
        Item::new(
            Paper::Kiefer,
            ItemId::Figure(7),
            "L3-cache usage and QPI link utilization",
            NotReproducible,
            "",
            "LLC hit rates, MESIF cache-line states and QPI link traffic are Intel PCM uncore counters of the paper's machine; numakit reads no uncore events, and VMs like this one show no PMU (the simulator's link loads of aligned, 1-ahead and interleave stand beside Figure 6)",
            None,
        ),
        Item::new(
            Paper::Kiefer,
            ItemId::Figure(8),
            "Architecture of a NUMA-aware DBMS",
            NotReproducible,
            "",
            "an architecture diagram of proposed future work: nothing to measure",
            None,
        ),
        Item::new(
            Paper::Kiefer,
            ItemId::Table(1),
            "Synthetic benchmark results (four experiments, ns per access)",
            MeasuredInGuests,
            "numakit probe kiefer --small-mib 1 --accesses 1000000",
            "one node here: no remote column (experiments 1, 4); threads move between two CPUs sharing one LLC (2, 3); 2 threads in experiment 3, and experiment 4's 16 threads share 2 CPUs (their time per access includes waiting); a 1 MiB 'small' array near the private L2; 1M accesses per thread, not 4 billion; a 2-CPU AMD EPYC KVM guest, not the 4-socket Westmere-EX",
            Some(synthetic::table_1),
        ),
        Item::new(
            Paper::Kiefer,
            ItemId::Table(2),
            "Machines used for experiments",
            Described,
            "numakit topo --machine opteron-istanbul-2s; numakit topo --machine westmere-ex-4s",
            "printed from numakit's described-machine presets of the two machines (the simulator's input), not measured; this machine is noted beside them",
            Some(machines::table_2),
        ),
    ]
}

/// A placer as the CLI builds one by default (`--placement best-effort`).
pub(crate) fn placer(topology: &Arc<Topology>) -> Placer {
    Placer::new(topology.clone(), PlacementMode::BestEffort)
}

/// A row with both figures.
pub(crate) fn row(label: impl Into<String>, unit: &str, ours: f64, published: Option<f64>) -> Row {
    Row::new(label, unit, Some(ours), published)
}

/// Geometric mean of positive figures (`None` when there are none).
pub(crate) fn geomean(values: &[f64]) -> Option<f64> {
    let positive: Vec<f64> = values.iter().copied().filter(|v| *v > 0.0).collect();
    if positive.is_empty() {
        return None;
    }
    Some((positive.iter().map(|v| v.ln()).sum::<f64>() / positive.len() as f64).exp())
}
