//! Flat combining (Hendler, Incze, Shavit and Tzafrir, SPAA 2010): a
//! thread publishes its operation in a slot; whichever thread holds the
//! combiner lock applies every published operation to the shared state,
//! one pass over the slots after another, and the others only wait for
//! their result. The state stays in the combiner's cache for a whole
//! round instead of travelling to every caller.
//!
//! Fairness: an operation published before a combining round begins is
//! applied in that round's first pass; a round makes at most
//! [`PASSES`] passes over the slots, so an operation waits for at most
//! `(PASSES + 1) * slots` operations of others. A thread that finds no
//! free slot waits for one (give at least as many slots as threads).
//!
//! No poisoning: an operation that panics is caught in the combiner, which
//! carries on, and the panic is resumed in the operation's own caller; the
//! state stays as the operation left it. No unsafe code: slots hand values over in
//! uncontended mutexes ordered by an atomic state. It does not pin threads.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::PoisonError;

use crossbeam_utils::CachePadded;

use crate::handoffs::{Handoffs, LockStats};
use crate::node::thread_node;
use crate::primitives::{thread_local, AtomicU8, AtomicUsize, Mutex, MutexGuard};
use crate::ticket::TicketLock;
use crate::wait;

/// Passes over the slots in one combining round at most.
pub const PASSES: usize = 3;

const FREE: u8 = 0;
const CLAIMED: u8 = 1;
const PENDING: u8 = 2;
const DONE: u8 = 3;
const PANICKED: u8 = 4;

/// One caller's slot: its operation in, its result out.
#[derive(Debug)]
struct Slot<Op, R> {
    state: AtomicU8,
    value: Mutex<Value<Op, R>>,
}

#[derive(Debug)]
enum Value<Op, R> {
    Empty,
    Request(Op),
    Result(R),
    Panic(Box<dyn std::any::Any + Send>),
}

/// What a combiner counted since it was made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct CombinerStats {
    /// Operations applied, and those applied on another node than the
    /// operation before (moves of the state between nodes).
    pub handoffs: LockStats,
    /// Combining rounds (acquisitions of the combiner lock).
    pub rounds: u64,
}

/// Shared state of type `T` changed only by operations of type `Op`, each
/// giving an `R`, applied by whichever caller is the combiner.
///
/// ```
/// use numakit_sync::FlatCombiner;
///
/// let counter = FlatCombiner::new(8, 0u64, |sum: &mut u64, add: u64| {
///     *sum += add;
///     *sum
/// });
/// std::thread::scope(|s| {
///     for _ in 0..4 {
///         s.spawn(|| counter.apply(1));
///     }
/// });
/// assert_eq!(counter.into_inner(), 4);
/// ```
pub struct FlatCombiner<T, Op, R> {
    state: TicketLock<T>,
    apply: ApplyFn<T, Op, R>,
    slots: Box<[CachePadded<Slot<Op, R>>]>,
    handoffs: CachePadded<Handoffs>,
}

/// The operation that changes the state.
type ApplyFn<T, Op, R> = Box<dyn Fn(&mut T, Op) -> R + Send + Sync>;

/// Where each thread starts looking for a free slot.
#[cfg(not(loom))]
static NEXT_HINT: AtomicUsize = AtomicUsize::new(0);

#[cfg(loom)]
loom::lazy_static! {
    /// Where each thread starts looking for a free slot (made anew for each
    /// execution loom explores, so that each one starts from 0).
    static ref NEXT_HINT: AtomicUsize = AtomicUsize::new(0);
}

thread_local! {
    static HINT: usize = NEXT_HINT.fetch_add(1, Ordering::Relaxed);
}

impl<T, Op, R> FlatCombiner<T, Op, R> {
    /// `state` changed by `apply`, with `slots` publication slots (at least
    /// one; as many as the threads that call at once is best).
    pub fn new(
        slots: usize,
        state: T,
        apply: impl Fn(&mut T, Op) -> R + Send + Sync + 'static,
    ) -> Self {
        FlatCombiner {
            state: TicketLock::new(state),
            apply: Box::new(apply),
            slots: (0..slots.max(1))
                .map(|_| {
                    CachePadded::new(Slot {
                        state: AtomicU8::new(FREE),
                        value: Mutex::new(Value::Empty),
                    })
                })
                .collect(),
            handoffs: CachePadded::new(Handoffs::new()),
        }
    }

    /// Applies `op` to the state (by this thread or by the combiner of the
    /// moment) and returns its result.
    pub fn apply(&self, op: Op) -> R {
        let slot = self.claim();
        *fill(&slot.value) = Value::Request(op);
        slot.state.store(PENDING, Ordering::Release);
        let mut spins = 0u32;
        while !matches!(slot.state.load(Ordering::Acquire), DONE | PANICKED) {
            if let Some(guard) = self.state.try_lock() {
                self.combine(guard);
                continue;
            }
            wait::pause(&mut spins);
        }
        let result = std::mem::replace(&mut *fill(&slot.value), Value::Empty);
        slot.state.store(FREE, Ordering::Release);
        match result {
            Value::Result(r) => r,
            Value::Panic(payload) => std::panic::resume_unwind(payload),
            // DONE and PANICKED are stored only after the value (`serve`).
            Value::Empty | Value::Request(_) => unreachable!("a served slot holds its outcome"),
        }
    }

    /// A free slot, claimed for this call.
    fn claim(&self) -> &Slot<Op, R> {
        let n = self.slots.len();
        let start = HINT.with(|h| *h) % n;
        let mut spins = 0u32;
        loop {
            for i in 0..n {
                let slot = &self.slots[(start + i) % n];
                if slot.state.load(Ordering::Relaxed) == FREE
                    && slot
                        .state
                        .compare_exchange(FREE, CLAIMED, Ordering::Acquire, Ordering::Relaxed)
                        .is_ok()
                {
                    return slot;
                }
            }
            wait::pause(&mut spins);
        }
    }

    /// One combining round: up to [`PASSES`] passes over the slots,
    /// stopping after a pass that found nothing.
    fn combine(&self, mut state: crate::guarded::LockGuard<'_, crate::RawTicket, T>) {
        let node = thread_node();
        for _ in 0..PASSES {
            let mut applied = 0usize;
            for slot in self.slots.iter() {
                if slot.state.load(Ordering::Acquire) == PENDING {
                    self.serve(slot, &mut state, node);
                    applied += 1;
                }
            }
            if applied == 0 {
                break;
            }
        }
    }

    /// Applies one published operation and publishes its result.
    fn serve(&self, slot: &Slot<Op, R>, state: &mut T, node: numakit_topology::NodeId) {
        let Value::Request(op) = std::mem::replace(&mut *fill(&slot.value), Value::Empty) else {
            unreachable!("a pending slot holds its operation");
        };
        self.handoffs.record(node);
        let outcome = catch_unwind(AssertUnwindSafe(|| (self.apply)(state, op)));
        let (value, done) = match outcome {
            Ok(result) => (Value::Result(result), DONE),
            Err(payload) => (Value::Panic(payload), PANICKED),
        };
        *fill(&slot.value) = value;
        slot.state.store(done, Ordering::Release);
    }

    /// Operations applied, moves of the state between nodes, and rounds.
    pub fn stats(&self) -> CombinerStats {
        CombinerStats {
            handoffs: self.handoffs.stats(),
            rounds: self.state.stats().acquisitions,
        }
    }

    /// The state, without combining: `&mut self` proves nobody else has it.
    pub fn get_mut(&mut self) -> &mut T {
        self.state.get_mut()
    }

    /// The state, taking the combiner apart.
    pub fn into_inner(self) -> T {
        self.state.into_inner()
    }
}

impl<T, Op, R> std::fmt::Debug for FlatCombiner<T, Op, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlatCombiner")
            .field("slots", &self.slots.len())
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

/// A slot's value; its mutex is held only while a value moves in or out,
/// never across user code, so it is never poisoned (and a poisoned one
/// would still hold a whole value).
fn fill<V>(value: &Mutex<V>) -> MutexGuard<'_, V> {
    value.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_operation_is_applied_once_and_gets_its_own_result() {
        let log = FlatCombiner::new(4, Vec::new(), |v: &mut Vec<u32>, x: u32| {
            v.push(x);
            v.len()
        });
        std::thread::scope(|s| {
            for t in 0..6u32 {
                let log = &log;
                s.spawn(move || {
                    for i in 0..500 {
                        let len = log.apply(t * 1000 + i);
                        assert!((1..=3000).contains(&len));
                    }
                });
            }
        });
        let stats = log.stats();
        assert_eq!(stats.handoffs.acquisitions, 3000);
        assert!(stats.rounds >= 1 && stats.rounds <= 3000);
        let mut all = log.into_inner();
        all.sort_unstable();
        let expected: Vec<u32> = (0..6)
            .flat_map(|t| (0..500).map(move |i| t * 1000 + i))
            .collect();
        assert_eq!(all, expected);
    }

    #[test]
    fn a_panicking_operation_panics_only_its_caller_and_leaves_the_state() {
        let c = FlatCombiner::new(2, 0u32, |s: &mut u32, x: u32| {
            assert!(x != 13, "unlucky");
            *s += x;
        });
        c.apply(1);
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| c.apply(13)));
        assert!(caught.is_err());
        c.apply(2);
        assert_eq!(c.stats().handoffs.acquisitions, 3);
        assert_eq!(c.into_inner(), 3);
    }
}
