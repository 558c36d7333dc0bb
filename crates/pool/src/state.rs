//! Runtime state that higher layers keep per pool: the type-keyed map
//! behind [`Pool::state`](crate::Pool::state).
//!
//! Some state belongs to the pool it serves rather than to the process:
//! a cache of node-bound buffers taken and given back by that pool's
//! operators, or a measurement of what that pool's workers see of the
//! memory system. Keeping it in statics ties it to the process instead:
//! it outlives every pool, two pools share it, and nothing frees it. So
//! the pool keeps a small map from a type to one shared value of that
//! type, made on first use and dropped with the pool. The pool never
//! names those types (they live in the crates above it) and never looks
//! inside the values.
//!
//! This is not a general-purpose store: one value per type and pool, no
//! removal, no per-worker or per-job data (tasks hold that themselves).
//! The map knows nothing of the pool: the pool owns one and its public
//! methods (`state`, `state_or_init`, `state_if_made`) delegate to it.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// One value per type, each made once.
#[derive(Default)]
pub(crate) struct StateMap {
    /// Each type's slot is a `OnceLock<Arc<T>>` behind its own `Arc`, so
    /// that a value is made outside the map's lock: making one may take
    /// long (a measurement) or ask the pool for another type's value.
    slots: Mutex<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>,
}

impl StateMap {
    /// The value of type `T`, made by `init` if there is none yet.
    pub(crate) fn get_or_init<T, F>(&self, init: F) -> Arc<T>
    where
        T: Any + Send + Sync,
        F: FnOnce() -> T,
    {
        let slot = self.slot::<T>();
        Arc::clone(slot.get_or_init(|| Arc::new(init())))
    }

    /// The value of type `T`, if one was made.
    pub(crate) fn get<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        self.slot::<T>().get().cloned()
    }

    fn slot<T: Any + Send + Sync>(&self) -> Arc<OnceLock<Arc<T>>> {
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = slots
            .entry(TypeId::of::<T>())
            .or_insert_with(|| Arc::new(OnceLock::<Arc<T>>::new()));
        match Arc::clone(entry).downcast::<OnceLock<Arc<T>>>() {
            Ok(slot) => slot,
            Err(_) => {
                // Unreachable: the slot under T's type id is always made
                // as T's. Should it ever not be, T starts afresh.
                let slot = Arc::new(OnceLock::<Arc<T>>::new());
                *entry = Arc::clone(&slot) as Arc<dyn Any + Send + Sync>;
                slot
            }
        }
    }

    /// Number of types with a slot (made or being made).
    #[cfg(test)]
    fn types(&self) -> usize {
        self.slots
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Barrier;

    use numakit_placement::PlacementMode;

    use super::*;
    use crate::{Pool, PoolBuilder};

    fn pool() -> Pool {
        let topo = Arc::new(numakit_topology::discover().unwrap());
        PoolBuilder::new(topo)
            .threads(2)
            .placement(PlacementMode::Off)
            .build()
            .unwrap()
    }

    #[derive(Default)]
    struct Counter(AtomicUsize);

    /// Counts its drops in a shared counter.
    struct Tracked(Arc<AtomicUsize>);

    impl Drop for Tracked {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn one_value_per_type_and_pool() {
        let pool = pool();
        assert!(pool.state_if_made::<Counter>().is_none());
        pool.state::<Counter>().0.fetch_add(3, Ordering::SeqCst);
        assert_eq!(pool.state::<Counter>().0.load(Ordering::SeqCst), 3);
        assert!(Arc::ptr_eq(
            &pool.state::<Counter>(),
            &pool.state_if_made::<Counter>().unwrap()
        ));
        // Another type is another value.
        assert_eq!(*pool.state_or_init(|| 7u32), 7);
        assert_eq!(*pool.state_or_init(|| 8u32), 7, "made once");
        assert_eq!(pool.state.types(), 2);
        // Another pool has its own.
        let other = self::pool();
        assert_eq!(other.state::<Counter>().0.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn values_are_dropped_with_the_pool_unless_still_held() {
        let drops = Arc::new(AtomicUsize::new(0));
        let pool = pool();
        let _ = pool.state_or_init(|| Tracked(Arc::clone(&drops)));
        drop(pool);
        assert_eq!(drops.load(Ordering::SeqCst), 1);

        let pool = self::pool();
        let held = pool.state_or_init(|| Tracked(Arc::clone(&drops)));
        drop(pool);
        assert_eq!(drops.load(Ordering::SeqCst), 1, "still held");
        drop(held);
        assert_eq!(drops.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn init_runs_once_across_threads_and_may_ask_for_other_types() {
        let pool = pool();
        let inits = AtomicUsize::new(0);
        let start = Barrier::new(4);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    start.wait();
                    let value = pool.state_or_init(|| {
                        inits.fetch_add(1, Ordering::SeqCst);
                        // Asking for another type inside init is fine.
                        pool.state::<Counter>().0.fetch_add(1, Ordering::SeqCst);
                        std::thread::sleep(std::time::Duration::from_millis(20));
                        42u64
                    });
                    assert_eq!(*value, 42);
                });
            }
        });
        assert_eq!(inits.load(Ordering::SeqCst), 1);
        assert_eq!(pool.state::<Counter>().0.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_panicking_init_is_retried() {
        let pool = pool();
        let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pool.state_or_init::<u16, _>(|| panic!("no value"))
        }));
        assert!(failed.is_err());
        assert!(pool.state_if_made::<u16>().is_none());
        assert_eq!(*pool.state_or_init(|| 5u16), 5);
    }

    #[test]
    fn tasks_reach_the_state_through_the_pool() {
        let pool = pool();
        let seen = pool.broadcast(|_| {
            pool.state::<Counter>().0.fetch_add(1, Ordering::SeqCst);
        });
        assert!(seen.is_ok());
        assert_eq!(
            pool.state::<Counter>().0.load(Ordering::SeqCst),
            pool.workers()
        );
    }
}
