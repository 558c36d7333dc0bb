//! The ticket lock: take a number, wait until it is served. Strict FIFO,
//! one atomic read-modify-write to acquire and a plain store to release.
//! It is the baseline the cohort lock is measured against, and its
//! [`TicketCore`] is the cohort lock's global and per-node lock.
//!
//! Fairness: FIFO. A waiter enters after exactly the waiters that took a
//! ticket before it, whatever their node, so under contention the lock
//! goes from node to node as often as arrivals interleave. It does not
//! park threads ([`crate::wait`] spins, then yields).

use std::sync::atomic::Ordering;

use crossbeam_utils::CachePadded;
use numakit_topology::NodeId;

use crate::guarded::{Lock, RawLock};
use crate::handoffs::{Handoffs, LockStats};
use crate::primitives::AtomicU32;
use crate::wait;

/// A ticket lock's two counters, each on its own cache line. The release
/// is a store: only the holder writes `serving`. It is thread-oblivious:
/// any thread may release what another acquired (the cohort lock needs
/// that for its global lock).
#[derive(Debug, Default)]
pub(crate) struct TicketCore {
    next: CachePadded<AtomicU32>,
    serving: CachePadded<AtomicU32>,
}

impl TicketCore {
    /// Takes a ticket and waits for it; returns the ticket.
    #[inline]
    pub(crate) fn lock(&self) -> u32 {
        let ticket = self.next.fetch_add(1, Ordering::Relaxed);
        if self.serving.load(Ordering::Acquire) != ticket {
            wait::until(|| self.serving.load(Ordering::Acquire) == ticket);
        }
        ticket
    }

    /// Takes the lock if nobody holds or waits for it.
    #[inline]
    pub(crate) fn try_lock(&self) -> Option<u32> {
        let serving = self.serving.load(Ordering::Acquire);
        self.next
            .compare_exchange(
                serving,
                serving.wrapping_add(1),
                Ordering::Acquire,
                Ordering::Relaxed,
            )
            .ok()
    }

    /// Releases ticket `ticket` (the one being served).
    #[inline]
    pub(crate) fn unlock(&self, ticket: u32) {
        self.serving
            .store(ticket.wrapping_add(1), Ordering::Release);
    }

    /// Releases the lock without knowing the ticket (the cohort lock's
    /// global lock, released by another thread than the one that took it).
    #[inline]
    pub(crate) fn unlock_current(&self) {
        let serving = self.serving.load(Ordering::Relaxed);
        self.unlock(serving);
    }

    /// Whether a thread holds a ticket after `ticket` (someone waits).
    #[inline]
    pub(crate) fn has_waiters_after(&self, ticket: u32) -> bool {
        self.next.load(Ordering::Relaxed) != ticket.wrapping_add(1)
    }
}

/// The raw ticket lock with its handoff counters.
#[derive(Debug, Default)]
pub struct RawTicket {
    core: TicketCore,
    handoffs: CachePadded<Handoffs>,
}

impl RawTicket {
    /// A free ticket lock.
    pub fn new() -> Self {
        Self::default()
    }
}

/// Ticket of the holder.
#[derive(Clone, Copy, Debug)]
pub struct TicketToken(u32);

// SAFETY: a ticket is served only after the previous ticket's release
// (a Release store of `serving`, read with Acquire by the next holder);
// `try_lock` takes the ticket being served only when no one else has it.
unsafe impl RawLock for RawTicket {
    type Token = TicketToken;

    #[inline]
    fn lock(&self, node: NodeId) -> TicketToken {
        let ticket = self.core.lock();
        self.handoffs.record(node);
        TicketToken(ticket)
    }

    #[inline]
    fn try_lock(&self, node: NodeId) -> Option<TicketToken> {
        let ticket = self.core.try_lock()?;
        self.handoffs.record(node);
        Some(TicketToken(ticket))
    }

    #[inline]
    fn unlock(&self, token: TicketToken) {
        self.core.unlock(token.0);
    }

    fn stats(&self) -> LockStats {
        self.handoffs.stats()
    }
}

/// Data behind a FIFO ticket lock.
///
/// ```
/// use numakit_sync::TicketLock;
///
/// let lock = TicketLock::new(0u64);
/// *lock.lock() += 1;
/// *lock.lock_on(1) += 1; // as a thread on node 1
/// assert_eq!(*lock.lock(), 2);
/// assert_eq!(lock.stats().acquisitions, 3);
/// ```
pub type TicketLock<T> = Lock<RawTicket, T>;

impl<T> Lock<RawTicket, T> {
    /// `value` behind a free ticket lock.
    pub fn new(value: T) -> Self {
        Lock::from_raw(RawTicket::new(), value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn try_lock_fails_while_held_and_succeeds_after() {
        let lock = TicketLock::new(5);
        let guard = lock.lock_on(0);
        assert!(lock.try_lock_on(0).is_none());
        drop(guard);
        let mut again = lock.try_lock_on(1).expect("free");
        *again += 1;
        drop(again);
        assert_eq!(lock.into_inner(), 6);
    }

    #[test]
    fn handoffs_follow_the_nodes_of_the_holders() {
        let lock = TicketLock::new(());
        for node in [0, 1, 1, 0] {
            drop(lock.lock_on(node));
        }
        let stats = lock.stats();
        assert_eq!((stats.acquisitions, stats.remote_handoffs), (4, 2));
    }

    #[test]
    fn tickets_wrap_around() {
        let core = TicketCore::default();
        core.next.store(u32::MAX, Ordering::Relaxed);
        core.serving.store(u32::MAX, Ordering::Relaxed);
        for _ in 0..3 {
            let t = core.lock();
            assert!(!core.has_waiters_after(t));
            core.unlock(t);
        }
        assert_eq!(core.try_lock(), Some(2));
    }
}
