//! Parking idle workers without losing wake-ups.
//!
//! An epoch counter is bumped after every submission; a worker reads it
//! before looking for work and sleeps only while it is unchanged, so a job
//! pushed between "found nothing" and "went to sleep" always wakes it. The
//! mutex is touched only when someone actually sleeps.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::Duration;

#[derive(Default)]
pub(crate) struct Sleep {
    epoch: AtomicU64,
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    wake: Condvar,
}

impl Sleep {
    /// The epoch to pass to [`Sleep::wait`] after searching for work.
    pub(crate) fn epoch(&self) -> u64 {
        self.epoch.load(SeqCst)
    }

    /// Announces new work (or shutdown).
    pub(crate) fn notify(&self) {
        self.epoch.fetch_add(1, SeqCst);
        if self.sleepers.load(SeqCst) > 0 {
            let _guard = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
            self.wake.notify_all();
        }
    }

    /// Sleeps until the epoch moves past `seen` or `stop` is set. A timeout
    /// bounds the damage of any missed notification to a short delay.
    pub(crate) fn wait(&self, seen: u64, stop: &AtomicBool) {
        let mut guard = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        self.sleepers.fetch_add(1, SeqCst);
        while self.epoch.load(SeqCst) == seen && !stop.load(SeqCst) {
            let (g, _) = self
                .wake
                .wait_timeout(guard, Duration::from_millis(100))
                .unwrap_or_else(PoisonError::into_inner);
            guard = g;
        }
        self.sleepers.fetch_sub(1, SeqCst);
    }
}
