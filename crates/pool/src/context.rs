//! What a task knows about the worker running it.

use numakit_topology::{CpuId, NodeId};
use serde::Serialize;

/// The worker a task runs on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WorkerContext {
    /// Index of the worker in the pool (workers are numbered node by node).
    pub index: usize,
    /// The worker's NUMA node.
    pub node: NodeId,
    /// Position of that node among the pool's nodes.
    pub node_index: usize,
    /// Index of the worker among its node's workers.
    pub index_in_node: usize,
    /// The CPU the worker is pinned to (None when pinning is off).
    pub cpu: Option<CpuId>,
    /// Number of workers in the pool.
    pub workers: usize,
}
