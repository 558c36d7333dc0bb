//! The latency of one (CPU node, memory node) pair: one thread on the
//! CPU node chases a random cycle through a buffer on the memory node.
//!
//! The buffer is built once per memory node and chased from every CPU
//! node in turn; each measurement is the median of a few repetitions.
//! The chasing thread's hardware counters, where the kernel offers them,
//! cover all its repetitions (warm loads included, and counted as loads),
//! so that LLC misses per load stand beside the nanoseconds.
//! This module measures pairs; choosing them and assembling the matrix is
//! [`crate::matrix`]'s.

use numakit_placement::counters::Counts;
use numakit_placement::Placer;
use numakit_topology::NodeId;
use serde::Serialize;

use crate::chase::ChaseBuffer;
use crate::clock::Clock;
use crate::error::Result;
use crate::team::{self, ThreadCheck};

/// How much of a buffer lies on the node it was put on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PageCheck {
    /// Resident base pages of the buffer(s), as the kernel's page-location
    /// query (`move_pages`) found them; a huge page counts as its base pages.
    pub pages: usize,
    /// Of `pages`, how many were on the node they were placed on.
    pub on_node: usize,
}

impl PageCheck {
    /// How many of the pages of `per_node` are on `node`.
    pub fn of(per_node: &std::collections::BTreeMap<NodeId, usize>, node: NodeId) -> Self {
        Self {
            pages: per_node.values().sum(),
            on_node: per_node.get(&node).copied().unwrap_or(0),
        }
    }

    /// Every page is on its node (and there are pages).
    pub fn all_placed(&self) -> bool {
        self.pages > 0 && self.pages == self.on_node
    }
}

/// Dependent loads per measurement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ChaseLength {
    /// Untimed loads first.
    pub warm: u64,
    /// Timed loads.
    pub loads: u64,
    /// Repetitions (the median is reported).
    pub reps: usize,
}

/// One pair's latency.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Latency {
    /// The node whose CPU ran the chasing thread.
    pub cpu_node: NodeId,
    /// The node the chase buffer was placed on.
    pub memory_node: NodeId,
    /// Median over the repetitions of nanoseconds per dependent load
    /// (load-to-use latency of a random pointer chase, wall clock).
    pub ns: f64,
    /// Fastest repetition, in nanoseconds per dependent load.
    pub min_ns: f64,
    /// Slowest repetition, in nanoseconds per dependent load.
    pub max_ns: f64,
    /// `ns` in cycles of the reported clock, when there is one.
    pub cycles: Option<f64>,
    /// Where the chase buffer's pages were, against `memory_node`.
    pub buffer: PageCheck,
    /// Where the chasing thread ran (`getcpu` before and after its
    /// loads), against `cpu_node`.
    pub threads: ThreadCheck,
    /// The chasing thread's hardware counts over every repetition, per
    /// `load` (warm and timed); `None` where the kernel offers no counters.
    pub counters: Option<Counts>,
}

/// The latency from `cpu_node` to `buffer` (which lies on `memory_node`).
///
/// # Examples
///
/// The local latency of this machine's first node, on a 1 MiB chase (small
/// enough to stay in cache: a real probe's buffers are far larger).
///
/// ```
/// use std::sync::Arc;
///
/// use numakit_placement::{HugePages, Placement, PlacementMode, Placer};
/// use numakit_probe::chase::ChaseBuffer;
/// use numakit_probe::latency::{self, ChaseLength};
///
/// let topology = Arc::new(numakit_topology::discover()?);
/// let placer = Placer::new(topology.clone(), PlacementMode::BestEffort);
/// let node = topology.compute_nodes()[0];
/// let buffer = ChaseBuffer::new(&placer, 1 << 20, Placement::OnNode(node), HugePages::Never, 7)?;
/// let length = ChaseLength { warm: 1_000, loads: 10_000, reps: 3 };
///
/// let l = latency::measure(&placer, node, node, &buffer, length, None)?;
/// assert!(l.ns.is_finite() && l.ns > 0.0);
/// assert!(l.min_ns <= l.ns && l.ns <= l.max_ns);
/// assert_eq!(l.cycles, None, "no clock given");
/// assert_eq!(l.buffer.pages, l.buffer.on_node, "every page on the node");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn measure(
    placer: &Placer,
    cpu_node: NodeId,
    memory_node: NodeId,
    buffer: &ChaseBuffer,
    length: ChaseLength,
    clock: Option<Clock>,
) -> Result<Latency> {
    let seats = team::seats_on_node(placer, cpu_node, 1)?;
    let reps = length.reps.max(1);
    let run = team::run_counted(placer, &seats, |_| {
        (0..reps)
            .map(|_| buffer.ns_per_load(length.warm, length.loads))
            .collect::<Vec<f64>>()
    })?;
    let loads = (length.warm + length.loads.max(1)) * reps as u64;
    let counters = run
        .total_counts()
        .map(|c| c.with_work(loads as f64, "load"));
    let mut samples = run.results.into_iter().next().unwrap_or_default();
    samples.sort_by(f64::total_cmp);
    let ns = samples.get(samples.len() / 2).copied().unwrap_or(0.0);
    Ok(Latency {
        cpu_node,
        memory_node,
        ns,
        min_ns: samples.first().copied().unwrap_or(0.0),
        max_ns: samples.last().copied().unwrap_or(0.0),
        cycles: clock.map(|c| c.cycles(ns)),
        buffer: PageCheck::of(&buffer.pages_per_node()?, memory_node),
        threads: run.check,
        counters,
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use numakit_placement::{HugePages, Placement, PlacementMode};

    use super::*;

    #[test]
    fn a_local_pair_is_measured_and_checked() {
        let topo = Arc::new(numakit_topology::discover().unwrap());
        let placer = Placer::new(topo.clone(), PlacementMode::BestEffort);
        let node = topo.compute_nodes()[0];
        let buffer = ChaseBuffer::new(
            &placer,
            4 << 20,
            Placement::OnNode(node),
            HugePages::Never,
            9,
        )
        .unwrap();
        let length = ChaseLength {
            warm: 1000,
            loads: 20_000,
            reps: 3,
        };
        let clock = Some(Clock {
            ghz: 2.0,
            source: "test",
        });
        let l = measure(&placer, node, node, &buffer, length, clock).unwrap();
        assert!(l.min_ns <= l.ns && l.ns <= l.max_ns && l.ns > 0.0);
        assert_eq!(l.cycles, Some(l.ns * 2.0));
        assert_eq!(
            l.buffer.pages,
            (4 << 20) / numakit_placement::sys::page_size()
        );
        assert_eq!(l.threads.threads, 2);
        // Counts where the kernel gives them, and then per load.
        let available = numakit_placement::counters::CounterGroup::hardware().is_ok();
        assert_eq!(l.counters.is_some(), available, "{:?}", l.counters);
        if let Some(c) = l.counters {
            assert_eq!(c.work.map(|w| w.units), Some(3.0 * 21_000.0));
            assert!(c.instructions.or(c.cycles).unwrap() > 0, "{c:?}");
        }
        let json = serde_json::to_value(&l).unwrap();
        assert!(json.get("counters").is_some(), "{json}");
    }

    #[test]
    fn counts_serialize_with_their_ratios() {
        let c = Counts {
            cycles: Some(400),
            instructions: Some(100),
            llc_references: Some(20),
            llc_misses: Some(10),
            enabled_ns: 10,
            running_ns: 5,
            ..Counts::default()
        }
        .with_work(5.0, "load");
        let v = serde_json::to_value(c).unwrap();
        assert_eq!(v["ipc"], 0.25);
        assert_eq!(v["llc_miss_rate"], 0.5);
        assert_eq!(v["llc_misses_per_unit"], 2.0);
        assert_eq!(v["work"]["unit"], "load");
        assert_eq!(v["multiplexed"], true);
        assert!(v["page_faults"].is_null(), "not counted is null, not 0");
    }
}
