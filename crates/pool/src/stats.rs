//! Per-worker counters: tasks run locally and stolen, time spent busy.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use numakit_topology::{CpuId, NodeId};
use serde::Serialize;

#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) local: AtomicU64,
    pub(crate) stolen: AtomicU64,
    pub(crate) busy_ns: AtomicU64,
}

impl Counters {
    pub(crate) fn record(&self, stolen: bool, busy_ns: u64) {
        let counter = if stolen { &self.stolen } else { &self.local };
        counter.fetch_add(1, Relaxed);
        self.busy_ns.fetch_add(busy_ns, Relaxed);
    }

    pub(crate) fn reset(&self) {
        self.local.store(0, Relaxed);
        self.stolen.store(0, Relaxed);
        self.busy_ns.store(0, Relaxed);
    }
}

/// A snapshot of one worker's counters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WorkerStats {
    /// Index of the worker in the pool.
    pub worker: usize,
    /// The worker's NUMA node.
    pub node: NodeId,
    /// The CPU the worker was pinned to; `None` when placement is off.
    pub cpu: Option<CpuId>,
    /// Tasks taken from the worker's own node queue (or addressed to it).
    pub tasks_local: u64,
    /// Tasks stolen from other nodes' queues.
    pub tasks_stolen: u64,
    /// Time spent running tasks, in nanoseconds.
    pub busy_ns: u64,
}

impl WorkerStats {
    pub(crate) fn read(worker: usize, node: NodeId, cpu: Option<CpuId>, c: &Counters) -> Self {
        Self {
            worker,
            node,
            cpu,
            tasks_local: c.local.load(Relaxed),
            tasks_stolen: c.stolen.load(Relaxed),
            busy_ns: c.busy_ns.load(Relaxed),
        }
    }
}

/// Sums of a set of worker snapshots, per node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NodeStats {
    /// The NUMA node these sums are for.
    pub node: NodeId,
    /// Number of worker snapshots summed (the node's workers).
    pub workers: usize,
    /// Tasks the node's workers took from their own queues.
    pub tasks_local: u64,
    /// Tasks the node's workers stole from other nodes' queues.
    pub tasks_stolen: u64,
    /// Time the node's workers spent running tasks, in nanoseconds (summed
    /// over workers, so it can exceed wall-clock time).
    pub busy_ns: u64,
}

/// Groups worker snapshots by node, in node order of first appearance.
pub fn per_node(stats: &[WorkerStats]) -> Vec<NodeStats> {
    let mut out: Vec<NodeStats> = Vec::new();
    for s in stats {
        let index = match out.iter().position(|n| n.node == s.node) {
            Some(i) => i,
            None => {
                out.push(NodeStats {
                    node: s.node,
                    workers: 0,
                    tasks_local: 0,
                    tasks_stolen: 0,
                    busy_ns: 0,
                });
                out.len() - 1
            }
        };
        let entry = &mut out[index];
        entry.workers += 1;
        entry.tasks_local += s.tasks_local;
        entry.tasks_stolen += s.tasks_stolen;
        entry.busy_ns += s.busy_ns;
    }
    out
}
