//! The locks under test behind one interface: a critical section as a
//! thread on a node, and the counts afterwards (the lock's own, and those
//! seen from inside). `std::sync::Mutex` counts nothing itself, so its
//! handoffs are the ones seen from inside. It does not time anything.

use std::sync::{Mutex, PoisonError};

use numakit_topology::NodeId;

use crate::bench::work::Shared;
use crate::bench::LockKind;
use crate::{CohortLock, FlatCombiner, LockStats, TicketLock};

/// One lock of the benchmark, protecting a [`Shared`].
pub(crate) enum Subject {
    Std(Mutex<Shared>),
    Ticket(TicketLock<Shared>),
    Cohort(CohortLock<Shared>),
    Combining(FlatCombiner<Shared, (NodeId, u64), ()>),
}

/// A finished run's counts.
pub(crate) struct Counts {
    /// Critical sections that reached the shared data.
    pub(crate) inside: u64,
    /// Handoffs between nodes seen from inside.
    pub(crate) inside_remote: u64,
    /// The lock's own count (None for std's Mutex).
    pub(crate) own: Option<LockStats>,
}

impl Subject {
    /// A fresh lock of `kind`: per-node locks for ids `0..nodes`, the cohort
    /// `bound`, and `slots` combining slots.
    pub(crate) fn new(kind: LockKind, nodes: usize, bound: u32, slots: usize) -> Self {
        match kind {
            LockKind::StdMutex => Subject::Std(Mutex::new(Shared::new())),
            LockKind::Ticket => Subject::Ticket(TicketLock::new(Shared::new())),
            LockKind::Cohort => {
                Subject::Cohort(CohortLock::with_nodes(nodes, bound, Shared::new()))
            }
            LockKind::FlatCombining => Subject::Combining(FlatCombiner::new(
                slots,
                Shared::new(),
                // The combiner's node: the state is where the combiner runs.
                |s: &mut Shared, (_caller, steps): (NodeId, u64)| {
                    s.critical(crate::node::thread_node(), steps)
                },
            )),
        }
    }

    /// One critical section of `steps` busy steps, as a thread on `node`.
    #[inline]
    pub(crate) fn critical(&self, node: NodeId, steps: u64) {
        match self {
            Subject::Std(m) => m
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .critical(node, steps),
            Subject::Ticket(l) => l.lock_on(node).critical(node, steps),
            Subject::Cohort(l) => l.lock_on(node).critical(node, steps),
            Subject::Combining(c) => c.apply((node, steps)),
        }
    }

    /// The cheapest critical section through the public API (`lock()`,
    /// the thread's own node): the uncontended cost.
    #[inline]
    pub(crate) fn increment(&self) {
        match self {
            Subject::Std(m) => m.lock().unwrap_or_else(PoisonError::into_inner).count += 1,
            Subject::Ticket(l) => l.lock().count += 1,
            Subject::Cohort(l) => l.lock().count += 1,
            Subject::Combining(c) => c.apply((0, 0)),
        }
    }

    /// The counts, once every thread is done.
    pub(crate) fn counts(self) -> Counts {
        let (own, shared) = match self {
            Subject::Std(m) => (None, m.into_inner().unwrap_or_else(PoisonError::into_inner)),
            Subject::Ticket(l) => (Some(l.stats()), l.into_inner()),
            Subject::Cohort(l) => (Some(l.stats()), l.into_inner()),
            Subject::Combining(c) => (Some(c.stats().handoffs), c.into_inner()),
        };
        Counts {
            inside: shared.count,
            inside_remote: shared.remote,
            own,
        }
    }
}
