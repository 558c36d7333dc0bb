//! A barrier for lock-step phases that can be broken.
//!
//! `std::sync::Barrier` waits forever if one participant dies; in a pool
//! that would turn a panicking task into a deadlock. [`PhaseBarrier`] can be
//! broken (by a participant that unwinds), after which every waiter, present
//! and future, returns `Err(Broken)` at once.

use std::sync::{Condvar, Mutex, PoisonError};

/// The barrier was broken by a participant that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Broken;

#[derive(Default)]
struct State {
    arrived: usize,
    generation: u64,
    broken: bool,
}

/// A reusable barrier for `parties` threads.
pub struct PhaseBarrier {
    parties: usize,
    state: Mutex<State>,
    all_arrived: Condvar,
}

impl PhaseBarrier {
    /// A barrier that releases its waiters each time `parties` threads have
    /// called [`PhaseBarrier::wait`] (`parties` should be at least 1).
    pub fn new(parties: usize) -> Self {
        Self {
            parties,
            state: Mutex::default(),
            all_arrived: Condvar::new(),
        }
    }

    /// Waits until all parties arrive (Ok) or the barrier breaks (Err).
    pub fn wait(&self) -> Result<(), Broken> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.broken {
            return Err(Broken);
        }
        state.arrived += 1;
        if state.arrived == self.parties {
            state.arrived = 0;
            state.generation += 1;
            self.all_arrived.notify_all();
            return Ok(());
        }
        let generation = state.generation;
        while state.generation == generation && !state.broken {
            state = self
                .all_arrived
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        if state.generation == generation {
            Err(Broken)
        } else {
            Ok(())
        }
    }

    /// Breaks the barrier: every waiter returns `Err(Broken)`.
    pub fn break_barrier(&self) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.broken = true;
        self.all_arrived.notify_all();
    }
}

/// Breaks the barrier if dropped while its thread unwinds.
pub(crate) struct BreakOnUnwind<'a>(pub(crate) &'a PhaseBarrier);

impl Drop for BreakOnUnwind<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.break_barrier();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn releases_all_parties_each_generation() {
        let barrier = PhaseBarrier::new(3);
        let counter = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    for step in 0..50 {
                        counter.fetch_add(1, Ordering::SeqCst);
                        barrier.wait().unwrap();
                        assert!(counter.load(Ordering::SeqCst) >= 3 * (step + 1));
                        barrier.wait().unwrap();
                    }
                });
            }
        });
        assert_eq!(counter.load(Ordering::SeqCst), 150);
    }

    #[test]
    fn breaking_frees_waiters() {
        let barrier = PhaseBarrier::new(3);
        std::thread::scope(|s| {
            let a = s.spawn(|| barrier.wait());
            let b = s.spawn(|| barrier.wait());
            while barrier.state.lock().unwrap().arrived < 2 {
                std::thread::yield_now();
            }
            barrier.break_barrier();
            assert_eq!(a.join().unwrap(), Err(Broken));
            assert_eq!(b.join().unwrap(), Err(Broken));
        });
        assert_eq!(barrier.wait(), Err(Broken));
    }
}
