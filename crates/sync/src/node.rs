//! The node a thread runs on, as the locks see it.
//!
//! A thread's node is either set explicitly with [`set_thread_node`] (a
//! thread pinned to a node, or a test that simulates several nodes on a
//! one-node machine) or asked of the kernel with `getcpu` through
//! numakit-placement. The kernel's answer is cached per thread and asked
//! again every [`REFRESH`] calls, so an unpinned thread that migrates is
//! seen on its new node after at most that many acquisitions, and the
//! system call costs almost nothing per acquisition.
//!
//! The node is a hint: the locks stay correct whatever it says; only their
//! handoff counts and the cohort lock's batching depend on it. Where the
//! kernel does not answer, node 0 is used. This module does not pin
//! threads (the placement layer does).
//!
//! Under loom the kernel is never asked (its answer would differ from one
//! explored execution to the next): a thread's node is the one set
//! explicitly, node 0 otherwise, and the thread-locals are loom's, one per
//! simulated thread.

use std::cell::Cell;

use numakit_topology::NodeId;

use crate::primitives::thread_local;

/// Calls to [`thread_node`] between two `getcpu` calls of an unpinned
/// thread.
pub const REFRESH: u32 = 256;

/// No node set explicitly.
const UNSET: NodeId = NodeId::MAX;

#[cfg(not(loom))]
thread_local! {
    /// The node set explicitly, or [`UNSET`].
    static EXPLICIT: Cell<NodeId> = const { Cell::new(UNSET) };
    /// The last node `getcpu` gave, and the calls left before asking again.
    static CACHED: Cell<(NodeId, u32)> = const { Cell::new((0, 0)) };
}

// Loom's thread-locals take no `const` initializer.
#[cfg(loom)]
thread_local! {
    /// The node set explicitly, or [`UNSET`].
    static EXPLICIT: Cell<NodeId> = Cell::new(UNSET);
}

/// Sets the calling thread's node for every lock (`None`: ask the kernel
/// again). Threads pinned to one node should set it: it is then exact and
/// costs no system call.
pub fn set_thread_node(node: Option<NodeId>) {
    EXPLICIT.with(|n| n.set(node.unwrap_or(UNSET)));
}

/// The calling thread's node: the one set with [`set_thread_node`], or the
/// kernel's answer (cached for [`REFRESH`] calls; node 0 where `getcpu`
/// fails, and always under loom).
pub fn thread_node() -> NodeId {
    let explicit = EXPLICIT.with(Cell::get);
    if explicit != UNSET {
        return explicit;
    }
    kernel_node()
}

/// Under loom: node 0, the kernel is not asked.
#[cfg(loom)]
fn kernel_node() -> NodeId {
    0
}

/// The kernel's node for the calling thread, cached for [`REFRESH`] calls.
#[cfg(not(loom))]
#[inline]
fn kernel_node() -> NodeId {
    CACHED.with(|cached| {
        let (node, left) = cached.get();
        if left > 0 {
            cached.set((node, left - 1));
            return node;
        }
        let node = numakit_placement::current_cpu().map_or(0, |(_, node)| node);
        cached.set((node, REFRESH - 1));
        node
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_explicit_node_wins_until_it_is_cleared() {
        std::thread::spawn(|| {
            let kernel = thread_node();
            set_thread_node(Some(7));
            assert_eq!(thread_node(), 7);
            set_thread_node(None);
            assert_eq!(thread_node(), kernel);
        })
        .join()
        .expect("the thread ran");
    }

    #[test]
    fn the_kernel_node_is_one_of_this_machines_nodes() {
        let topology = numakit_topology::discover().expect("topology");
        let node = thread_node();
        assert!(topology.node_ids().contains(node), "node {node}");
    }
}
