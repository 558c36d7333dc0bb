//! [`Lock`]: data behind a raw lock, reached only through a [`LockGuard`]
//! that unlocks when dropped. This is the crate's unsafe module: the cell
//! that holds the data and the `Sync` it earns from a [`RawLock`]. The cell
//! is [`crate::primitives`]'s, so that under loom each access through a
//! guard is checked against the others.
//!
//! No poisoning: a panic while the guard is held unlocks as the guard
//! drops, and the data stays as the panicking code left it (as with
//! `parking_lot`). The raw locks' algorithms live in their own modules;
//! this one only ties a raw lock to its data.

use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};

use numakit_topology::NodeId;

use crate::handoffs::LockStats;
use crate::node::thread_node;
use crate::primitives::UnsafeCell;

/// A lock algorithm without data: acquire on a node, release with the
/// token the acquisition gave.
///
/// # Safety
///
/// Implementations must give mutual exclusion: after [`RawLock::lock`] or a
/// successful [`RawLock::try_lock`] returns a token, no other call returns
/// one until [`RawLock::unlock`] is called with it, and that unlock
/// happens-before the next acquisition returns (release/acquire).
pub unsafe trait RawLock: Send + Sync {
    /// What an acquisition gives back to its release (a ticket, a node).
    type Token: Copy;

    /// Acquires the lock for a thread on `node`, waiting as long as needed.
    fn lock(&self, node: NodeId) -> Self::Token;

    /// Acquires the lock for a thread on `node` if that needs no waiting.
    fn try_lock(&self, node: NodeId) -> Option<Self::Token>;

    /// Releases the lock acquired with `token`. Only the holder calls it,
    /// once per acquisition.
    fn unlock(&self, token: Self::Token);

    /// Acquisitions and handoffs between nodes so far.
    fn stats(&self) -> LockStats;
}

/// Data of type `T` protected by the raw lock `R` (see [`TicketLock`] and
/// [`CohortLock`]).
///
/// [`TicketLock`]: crate::TicketLock
/// [`CohortLock`]: crate::CohortLock
pub struct Lock<R, T: ?Sized> {
    raw: R,
    data: UnsafeCell<T>,
}

// SAFETY: the raw lock gives mutual exclusion (its trait's contract), so
// at most one thread reaches the data at a time, through a guard; that
// needs `T: Send` (the data moves between threads), as for std's Mutex.
unsafe impl<R: RawLock, T: ?Sized + Send> Sync for Lock<R, T> {}

impl<R: RawLock, T> Lock<R, T> {
    /// `value` behind the raw lock `raw`.
    #[cfg(not(loom))]
    pub const fn from_raw(raw: R, value: T) -> Self {
        Lock {
            raw,
            data: UnsafeCell::new(value),
        }
    }

    /// `value` behind the raw lock `raw` (not `const` under loom, whose
    /// cell is made at run time).
    #[cfg(loom)]
    pub fn from_raw(raw: R, value: T) -> Self {
        Lock {
            raw,
            data: UnsafeCell::new(value),
        }
    }

    /// The data, taking the lock apart.
    pub fn into_inner(self) -> T {
        self.data.into_inner()
    }
}

impl<R: RawLock, T: ?Sized> Lock<R, T> {
    /// Acquires the lock on the calling thread's node ([`thread_node`]).
    pub fn lock(&self) -> LockGuard<'_, R, T> {
        self.lock_on(thread_node())
    }

    /// Acquires the lock as a thread on `node` (tests simulate nodes so).
    pub fn lock_on(&self, node: NodeId) -> LockGuard<'_, R, T> {
        let token = self.raw.lock(node);
        LockGuard {
            lock: self,
            token,
            _data: PhantomData,
        }
    }

    /// Acquires the lock on the calling thread's node if that needs no
    /// waiting.
    pub fn try_lock(&self) -> Option<LockGuard<'_, R, T>> {
        self.try_lock_on(thread_node())
    }

    /// Acquires the lock as a thread on `node` if that needs no waiting.
    pub fn try_lock_on(&self, node: NodeId) -> Option<LockGuard<'_, R, T>> {
        let token = self.raw.try_lock(node)?;
        Some(LockGuard {
            lock: self,
            token,
            _data: PhantomData,
        })
    }

    /// The data, without locking: `&mut self` proves nobody else has it.
    pub fn get_mut(&mut self) -> &mut T {
        self.data.get_mut()
    }

    /// Acquisitions and handoffs between nodes so far.
    pub fn stats(&self) -> LockStats {
        self.raw.stats()
    }

    /// The raw lock, for its settings. Never public: whoever holds it could
    /// unlock what they do not hold.
    pub(crate) fn raw(&self) -> &R {
        &self.raw
    }
}

impl<R: RawLock + Default, T: Default> Default for Lock<R, T> {
    fn default() -> Self {
        Lock::from_raw(R::default(), T::default())
    }
}

impl<R: RawLock, T: ?Sized> std::fmt::Debug for Lock<R, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lock")
            .field("stats", &self.raw.stats())
            .finish_non_exhaustive()
    }
}

/// Access to a [`Lock`]'s data; the lock is released when it drops.
///
/// It is `Send` where `T` is (the raw locks here are released from any
/// thread) and `Sync` where `T` is `Sync`, as `&mut T` is.
#[must_use = "the lock is released as soon as the guard is dropped"]
pub struct LockGuard<'a, R: RawLock, T: ?Sized> {
    lock: &'a Lock<R, T>,
    token: R::Token,
    _data: PhantomData<&'a mut T>,
}

impl<R: RawLock, T: ?Sized> Deref for LockGuard<'_, R, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard holds the lock (mutual exclusion by RawLock's
        // contract) for as long as the reference can live.
        self.lock.data.with(|data| unsafe { &*data })
    }
}

impl<R: RawLock, T: ?Sized> DerefMut for LockGuard<'_, R, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`, and `&mut self` makes this the only
        // reference through the guard.
        self.lock.data.with_mut(|data| unsafe { &mut *data })
    }
}

impl<R: RawLock, T: ?Sized> Drop for LockGuard<'_, R, T> {
    fn drop(&mut self) {
        self.lock.raw.unlock(self.token);
    }
}

impl<R: RawLock, T: ?Sized + std::fmt::Debug> std::fmt::Debug for LockGuard<'_, R, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}
