//! Counting handoffs between nodes: an acquisition whose previous holder
//! ran on another node (the protected data then crosses the interconnect).
//!
//! The counters are written only by the holder of the lock they belong to,
//! so they are plain loads and stores (no atomic read-modify-write on the
//! hot path); the lock's own acquire and release order them. They can be
//! read at any time; read while others hold the lock, they may lag by the
//! acquisitions in flight. This module counts; it does not lock.

use std::sync::atomic::Ordering::Relaxed;

use numakit_topology::NodeId;
use serde::Serialize;

use crate::primitives::{AtomicU32, AtomicU64};

/// No acquisition yet.
const NO_NODE: NodeId = NodeId::MAX;

/// What a lock counted since it was made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LockStats {
    /// Acquisitions (for [`FlatCombiner`](crate::FlatCombiner): operations
    /// applied).
    pub acquisitions: u64,
    /// Acquisitions whose previous holder ran on another node (for a
    /// combiner: operations applied on another node than the one before,
    /// that is moves of the protected state).
    pub remote_handoffs: u64,
}

impl LockStats {
    /// Handoffs between nodes per 1,000 acquisitions (0 with none).
    pub fn remote_per_1000(&self) -> f64 {
        if self.acquisitions == 0 {
            0.0
        } else {
            self.remote_handoffs as f64 * 1000.0 / self.acquisitions as f64
        }
    }
}

/// The counters of one lock.
#[derive(Debug)]
pub(crate) struct Handoffs {
    last: AtomicU32,
    acquisitions: AtomicU64,
    remote: AtomicU64,
}

impl Default for Handoffs {
    fn default() -> Self {
        Self::new()
    }
}

impl Handoffs {
    #[cfg(not(loom))]
    pub(crate) const fn new() -> Self {
        Handoffs {
            last: AtomicU32::new(NO_NODE),
            acquisitions: AtomicU64::new(0),
            remote: AtomicU64::new(0),
        }
    }

    /// Not `const` under loom, whose atomics are made at run time.
    #[cfg(loom)]
    pub(crate) fn new() -> Self {
        Handoffs {
            last: AtomicU32::new(NO_NODE),
            acquisitions: AtomicU64::new(0),
            remote: AtomicU64::new(0),
        }
    }

    /// Counts one acquisition on `node`. Only the holder calls it.
    #[inline]
    pub(crate) fn record(&self, node: NodeId) {
        let last = self.last.load(Relaxed);
        if last != node {
            if last != NO_NODE {
                self.remote.store(self.remote.load(Relaxed) + 1, Relaxed);
            }
            self.last.store(node, Relaxed);
        }
        self.acquisitions
            .store(self.acquisitions.load(Relaxed) + 1, Relaxed);
    }

    pub(crate) fn stats(&self) -> LockStats {
        LockStats {
            acquisitions: self.acquisitions.load(Relaxed),
            remote_handoffs: self.remote.load(Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_change_of_node_is_a_remote_handoff() {
        let h = Handoffs::new();
        for node in [0, 0, 1, 1, 1, 0, 2] {
            h.record(node);
        }
        let stats = h.stats();
        assert_eq!(stats.acquisitions, 7);
        assert_eq!(stats.remote_handoffs, 3, "0->1, 1->0, 0->2");
        assert!((stats.remote_per_1000() - 3000.0 / 7.0).abs() < 1e-9);
        assert_eq!(LockStats::default().remote_per_1000(), 0.0);
    }
}
