//! The cohort lock of Dice, Marathe and Shavit ("Lock Cohorting", PPoPP
//! 2012) in its C-TKT-TKT form: a global ticket lock, and one ticket lock
//! per node. A thread takes its node's lock, then the global lock, unless
//! the previous holder on its node passed the global lock on with the
//! node's lock. A releasing thread passes both to the next waiter on its
//! node while one waits and fewer than `bound` passes were made in a row;
//! otherwise it releases the global lock, so that another node's cohort
//! gets its turn.
//!
//! Fairness: within a node FIFO, and between nodes FIFO by batches. A
//! waiter with `k` waiters ahead of it on its node enters after at most
//! `k + (k / (bound + 1) + 1) * (nodes - 1) * (bound + 1)` critical
//! sections of others: its node's queue, plus for each of its node's
//! batches until its own, at most one batch of `bound + 1` from every other
//! node. With `bound = 0` it is a two-level FIFO lock.
//!
//! Node ids index the per-node locks: [`CohortLock::for_topology`] sizes
//! them for every node id of a topology; a node id beyond the locks made
//! shares a lock by its id modulo their number (still correct, less local).
//! It does not pin threads or place memory.

use std::sync::atomic::Ordering::Relaxed;

use crossbeam_utils::CachePadded;
use numakit_topology::{NodeId, Topology};

use crate::guarded::{Lock, RawLock};
use crate::handoffs::{Handoffs, LockStats};
use crate::primitives::{AtomicBool, AtomicU32};
use crate::ticket::TicketCore;

/// Passes to the same node in a row before the global lock is released
/// (the paper's batches are of this order; larger keeps the lock local
/// longer, at the cost of other nodes' waiting).
pub const DEFAULT_COHORT_BOUND: u32 = 64;

/// One node's lock: a ticket lock, the flag that says the global lock
/// came with it, and the passes made in a row. The flag and the count are
/// written only by the node lock's holder.
#[derive(Debug, Default)]
struct NodeLock {
    ticket: TicketCore,
    global_passed: AtomicBool,
    passes: AtomicU32,
}

/// The raw C-TKT-TKT cohort lock with its handoff counters.
#[derive(Debug)]
pub struct RawCohort {
    global: TicketCore,
    nodes: Box<[CachePadded<NodeLock>]>,
    bound: u32,
    handoffs: CachePadded<Handoffs>,
}

impl RawCohort {
    /// A free cohort lock with per-node locks for node ids `0..nodes`
    /// (at least one) and at most `bound` passes within a node in a row.
    pub fn new(nodes: usize, bound: u32) -> Self {
        RawCohort {
            global: TicketCore::default(),
            nodes: (0..nodes.max(1)).map(|_| CachePadded::default()).collect(),
            bound,
            handoffs: CachePadded::new(Handoffs::new()),
        }
    }

    /// The passes within a node in a row before the global lock goes.
    pub fn bound(&self) -> u32 {
        self.bound
    }

    /// Per-node locks (node ids at or past it share by modulo).
    pub fn node_locks(&self) -> usize {
        self.nodes.len()
    }

    fn slot(&self, node: NodeId) -> u32 {
        node % self.nodes.len() as u32
    }

    /// Takes the global lock unless it came with the node lock.
    #[inline]
    fn take_global(&self, local: &NodeLock) {
        if local.global_passed.load(Relaxed) {
            local.global_passed.store(false, Relaxed);
        } else {
            self.global.lock();
        }
    }
}

/// The holder's per-node lock and ticket.
#[derive(Clone, Copy, Debug)]
pub struct CohortToken {
    slot: u32,
    ticket: u32,
}

// SAFETY: the data is protected by the global ticket lock, held from the
// first acquisition of a batch to the release that ends it; within a
// batch it passes only with the node's ticket lock, whose Release store of
// `serving` the next holder reads with Acquire (so the flag and the data
// written before it are seen). Between batches the global lock's own
// release and acquire order the data.
unsafe impl RawLock for RawCohort {
    type Token = CohortToken;

    #[inline]
    fn lock(&self, node: NodeId) -> CohortToken {
        let slot = self.slot(node);
        let local = &self.nodes[slot as usize];
        let ticket = local.ticket.lock();
        self.take_global(local);
        self.handoffs.record(node);
        CohortToken { slot, ticket }
    }

    fn try_lock(&self, node: NodeId) -> Option<CohortToken> {
        let slot = self.slot(node);
        let local = &self.nodes[slot as usize];
        let ticket = local.ticket.try_lock()?;
        // The node lock was free, so nobody passed the global lock with it.
        if local.global_passed.load(Relaxed) {
            local.global_passed.store(false, Relaxed);
        } else if self.global.try_lock().is_none() {
            local.ticket.unlock(ticket);
            return None;
        }
        self.handoffs.record(node);
        Some(CohortToken { slot, ticket })
    }

    #[inline]
    fn unlock(&self, token: CohortToken) {
        let local = &self.nodes[token.slot as usize];
        let passes = local.passes.load(Relaxed);
        if passes < self.bound && local.ticket.has_waiters_after(token.ticket) {
            local.passes.store(passes + 1, Relaxed);
            local.global_passed.store(true, Relaxed);
        } else {
            if passes != 0 {
                local.passes.store(0, Relaxed);
            }
            self.global.unlock_current();
        }
        local.ticket.unlock(token.ticket);
    }

    fn stats(&self) -> LockStats {
        self.handoffs.stats()
    }
}

/// Data behind a cohort lock (C-TKT-TKT): handed to waiters on the
/// holder's node up to a bound before it goes to another node.
///
/// ```
/// use numakit_sync::CohortLock;
///
/// let lock = CohortLock::with_nodes(2, 64, Vec::new());
/// lock.lock_on(0).push("from node 0");
/// lock.lock_on(1).push("from node 1");
/// assert_eq!(lock.lock_on(1).len(), 2);
/// assert_eq!(lock.stats().remote_handoffs, 1);
/// ```
pub type CohortLock<T> = Lock<RawCohort, T>;

impl<T> Lock<RawCohort, T> {
    /// `value` behind a cohort lock with a per-node lock for every node id
    /// of `topology` and the default bound.
    pub fn for_topology(topology: &Topology, value: T) -> Self {
        let nodes = topology.nodes.iter().map(|n| n.id as usize + 1).max();
        Self::with_nodes(nodes.unwrap_or(1), DEFAULT_COHORT_BOUND, value)
    }

    /// `value` behind a cohort lock for node ids `0..nodes` with at most
    /// `bound` passes within a node in a row.
    pub fn with_nodes(nodes: usize, bound: u32, value: T) -> Self {
        Lock::from_raw(RawCohort::new(nodes, bound), value)
    }

    /// The passes within a node in a row before the lock goes elsewhere.
    pub fn bound(&self) -> u32 {
        self.raw().bound()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;

    use super::*;

    #[test]
    fn try_lock_needs_both_locks_and_gives_back_the_node_lock() {
        let lock = CohortLock::with_nodes(2, 4, 0u32);
        let held = lock.lock_on(0);
        assert!(lock.try_lock_on(1).is_none(), "the global lock is held");
        assert!(lock.try_lock_on(0).is_none(), "node 0's lock is held");
        drop(held);
        *lock.try_lock_on(1).expect("free") += 1;
        *lock.lock_on(0) += 1;
        assert_eq!(lock.into_inner(), 2);
    }

    #[test]
    fn node_ids_past_the_locks_share_by_modulo() {
        let lock = CohortLock::with_nodes(2, 4, 0u32);
        *lock.lock_on(5) += 1;
        assert_eq!(lock.raw().node_locks(), 2);
        assert_eq!(*lock.lock_on(1), 1);
    }

    /// Two threads on node 0 and two on node 1 (simulated): batches of
    /// passes keep the lock on a node, so far fewer remote handoffs than
    /// acquisitions, and none of them lost.
    #[test]
    fn waiters_on_the_same_node_get_the_lock_first() {
        let lock = Arc::new(CohortLock::with_nodes(2, 16, 0u64));
        let inside = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..4u32)
            .map(|i| {
                let (lock, inside) = (lock.clone(), inside.clone());
                std::thread::spawn(move || {
                    for _ in 0..5_000 {
                        let mut g = lock.lock_on(i % 2);
                        assert_eq!(inside.fetch_add(1, Relaxed), 0, "mutual exclusion");
                        *g += 1;
                        inside.fetch_sub(1, Relaxed);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("no thread panicked");
        }
        let stats = lock.stats();
        assert_eq!(*lock.lock_on(0), 20_000);
        assert_eq!(stats.acquisitions, 20_000);
        // Each batch is at most 17 acquisitions, so at least 20000/17 - 1
        // batches could be remote; the bound caps nothing from below, but
        // the count can never exceed the acquisitions.
        assert!(stats.remote_handoffs < stats.acquisitions);
    }
}
