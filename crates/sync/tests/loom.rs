//! Model checks of the locks with loom: each model runs 2 or 3 threads a
//! few acquisitions each, and loom runs it under the interleavings of
//! their atomic operations (and the values each relaxed load may see),
//! checking each access to the data behind a guard against the others
//! (two unordered accesses fail the model: that is mutual exclusion and
//! the release/acquire chain from one holder to the next).
//!
//! On top, each model checks that no update is lost, that the lock's own
//! handoff counters equal those of the holders seen inside, that a
//! combined operation is applied once with its result going to its own
//! caller, and that a guard dropped by a panic releases the lock. Nodes
//! are simulated: each thread sets its node with `set_thread_node` (a
//! loom thread-local) and locks with `lock()`.
//!
//! Run with (release: loom runs each model thousands of times):
//!
//! ```text
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test -p numakit-sync --release --test loom
//! ```
//!
//! Two bounds keep each model within seconds. The models with three
//! threads bound the preemptions (the times loom stops a thread that could
//! go on, to run another): 2 or 3, noted on each. And in every model, a
//! waiter that has yielded once ends the exploration of other
//! interleavings for the rest of that execution (`src/wait.rs`: loom's
//! scheduler cannot otherwise get past two threads spinning on a third).
//! Every bug planted in the locks to try these models (a missing or late
//! cohort flag, a pass without a waiter, relaxed ticket orderings, a
//! counter updated outside the lock, a result published before its
//! value, a `try_lock` that keeps the node lock) failed at least one.

#![cfg(loom)]

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::Once;

use loom::model::Builder;
use loom::sync::Arc;
use loom::thread;
use numakit_sync::{
    set_thread_node, thread_node, CohortLock, FlatCombiner, Lock, LockStats, RawLock, TicketLock,
};

/// Explores `f` with no preemption bound.
fn exhaustive(f: impl Fn() + Sync + Send + 'static) {
    explore(None, f);
}

/// Explores `f` with at most `preemptions` preemptions per execution (a
/// preemption: loom stops a thread that could go on and runs another).
/// Used where the full state space takes minutes; bugs of these locks
/// need one or two preemptions to show.
fn bounded(preemptions: usize, f: impl Fn() + Sync + Send + 'static) {
    explore(Some(preemptions), f);
}

/// Runs loom on `f` and says how many executions it explored (shown with
/// `--nocapture`); a model that explores a single one checks nothing.
fn explore(preemptions: Option<usize>, f: impl Fn() + Sync + Send + 'static) {
    let executions = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = executions.clone();
    let mut builder = Builder::new();
    builder.preemption_bound = preemptions;
    builder.check(move || {
        counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        f();
    });
    let executions = executions.load(std::sync::atomic::Ordering::Relaxed);
    let name = std::thread::current().name().unwrap_or("model").to_owned();
    println!("{name}: {executions} executions (preemption bound {preemptions:?})");
    assert!(executions > 1, "the model explored a single execution");
}

/// The handoff counts a lock should report for holders on `nodes`, in the
/// order they held it.
fn expected_stats(nodes: &[u32]) -> LockStats {
    LockStats {
        acquisitions: nodes.len() as u64,
        remote_handoffs: nodes.windows(2).filter(|w| w[0] != w[1]).count() as u64,
    }
}

/// Enters the lock `times` times as a thread on `node` (set as the thread's
/// node, so `lock()` asks the thread-local), logging the node seen inside.
fn enter<R: RawLock>(lock: &Lock<R, Vec<u32>>, node: u32, times: usize) {
    set_thread_node(Some(node));
    for _ in 0..times {
        let mut holders = lock.lock();
        assert_eq!(thread_node(), node, "each loom thread has its own node");
        holders.push(node);
    }
}

/// Runs `enter(lock, node, times)` on a thread for each `(node, times)`,
/// joins them, and checks that every acquisition is in the log once and
/// the lock counted the handoffs the log shows.
fn run_holders<R: RawLock + 'static>(lock: Arc<Lock<R, Vec<u32>>>, threads: &[(u32, usize)]) {
    let handles: Vec<_> = threads
        .iter()
        .map(|&(node, times)| {
            let lock = lock.clone();
            thread::spawn(move || enter(&lock, node, times))
        })
        .collect();
    for handle in handles {
        handle.join().expect("no thread panicked");
    }
    let stats = lock.stats();
    let log = lock.lock_on(0).clone();
    let total: usize = threads.iter().map(|&(_, times)| times).sum();
    assert_eq!(log.len(), total, "no acquisition lost");
    for &(node, _) in threads {
        let mine: usize = threads.iter().filter(|t| t.0 == node).map(|t| t.1).sum();
        assert_eq!(log.iter().filter(|&&n| n == node).count(), mine);
    }
    assert_eq!(stats, expected_stats(&log), "holders {log:?}");
}

/// What a planned panic carries, so that the hook stays quiet about it.
struct Planned;

/// Keeps the panic hook from printing the planned panics (loom runs each
/// model thousands of times); every other panic is printed as before.
fn quiet_planned_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !info.payload().is::<Planned>() {
                default(info);
            }
        }));
    });
}

/// Runs `f`, which must panic with [`Planned`]; any other panic (loom's
/// own included) goes on.
fn expect_planned_panic(f: impl FnOnce()) {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(()) => panic!("the planned panic did not happen"),
        Err(payload) if payload.is::<Planned>() => {}
        Err(other) => resume_unwind(other),
    }
}

#[test]
fn ticket_two_threads_exclude_each_other_and_count_handoffs() {
    exhaustive(|| {
        let lock = Arc::new(TicketLock::new(Vec::new()));
        run_holders(lock, &[(0, 2), (1, 1)]);
    });
}

#[test]
fn ticket_three_threads_exclude_each_other() {
    // Three threads: preemption bound 3 (without: 700,000 executions, 90 s).
    bounded(3, || {
        let lock = Arc::new(TicketLock::new(Vec::new()));
        run_holders(lock, &[(0, 1), (1, 1), (0, 1)]);
    });
}

#[test]
fn ticket_try_lock_takes_only_a_free_lock() {
    exhaustive(|| {
        let lock = Arc::new(TicketLock::new(0u32));
        let other = lock.clone();
        let t = thread::spawn(move || {
            *other.lock_on(0) += 1;
        });
        let took = match lock.try_lock_on(1) {
            Some(mut guard) => {
                *guard += 1;
                1
            }
            None => 0,
        };
        t.join().expect("no thread panicked");
        assert_eq!(*lock.lock_on(0), 1 + took);
        assert_eq!(lock.stats().acquisitions, 2 + u64::from(took));
    });
}

/// Two threads on node 0 (one of them twice) and one on node 1, cohort
/// bound 1: node 0's lock is passed on with the global lock once, then the
/// bound is reached and the global lock is released; node 1's thread may
/// come in between. Both paths of the release are explored.
#[test]
fn cohort_passes_within_a_node_up_to_the_bound() {
    // Three threads, four acquisitions: preemption bound 2 (16,000
    // executions; 3 explores 117,000 in 16 s and found nothing more).
    bounded(2, || {
        let lock = Arc::new(CohortLock::with_nodes(2, 1, Vec::new()));
        run_holders(lock, &[(0, 2), (0, 1), (1, 1)]);
    });
}

/// One thread per node, two acquisitions each, bound 1, no preemption
/// bound: each batch is cut short by the bound or by the other node's arrival.
#[test]
fn cohort_two_nodes_in_full() {
    exhaustive(|| {
        let lock = Arc::new(CohortLock::with_nodes(2, 1, Vec::new()));
        run_holders(lock, &[(0, 2), (1, 2)]);
    });
}

/// Two threads on one node, bound 2: the node lock passes the global lock
/// back and forth without releasing it.
#[test]
fn cohort_same_node_passes_the_global_lock() {
    exhaustive(|| {
        let lock = Arc::new(CohortLock::with_nodes(2, 2, Vec::new()));
        run_holders(lock, &[(1, 2), (1, 1)]);
    });
}

/// `try_lock` against a holder on the same node and on the other: it takes
/// only a free lock, and gives the node lock back when the global one is
/// taken.
#[test]
fn cohort_try_lock_gives_back_the_node_lock() {
    exhaustive(|| {
        let lock = Arc::new(CohortLock::with_nodes(2, 1, 0u32));
        let other = lock.clone();
        let t = thread::spawn(move || {
            *other.lock_on(0) += 1;
            *other.lock_on(0) += 1;
        });
        let mut took = 0;
        for node in [1, 0] {
            if let Some(mut guard) = lock.try_lock_on(node) {
                *guard += 1;
                took += 1;
            }
        }
        t.join().expect("no thread panicked");
        // Both locks are free again: a blocking lock on either node enters.
        *lock.lock_on(1) += 1;
        *lock.lock_on(0) += 1;
        assert_eq!(*lock.lock_on(0), 4 + took);
    });
}

/// Each caller applies `ops` to a log behind a combiner with `slots`
/// slots, from its own node; every operation must be applied exactly once
/// and its result (where it landed in the log) must come back to its own
/// caller; the handoff count must follow the combiners' nodes.
fn combine(slots: usize, callers: &[(u32, &'static [u32])]) {
    let combiner = Arc::new(FlatCombiner::new(
        slots,
        Vec::<(u32, u32)>::new(),
        |log: &mut Vec<(u32, u32)>, op: u32| {
            log.push((op, thread_node()));
            (op, log.len() - 1)
        },
    ));
    let handles: Vec<_> = callers
        .iter()
        .map(|&(node, ops)| {
            let combiner = combiner.clone();
            thread::spawn(move || {
                set_thread_node(Some(node));
                ops.iter()
                    .map(|&op| {
                        let (applied, at) = combiner.apply(op);
                        assert_eq!(applied, op, "a result went to another caller");
                        at
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let positions: Vec<Vec<usize>> = handles
        .into_iter()
        .map(|h| h.join().expect("no thread panicked"))
        .collect();
    let stats = combiner.stats();
    let combiner = Arc::try_unwrap(combiner).unwrap_or_else(|_| panic!("threads joined"));
    let log = combiner.into_inner();
    for (&(_, ops), at) in callers.iter().zip(&positions) {
        for (&op, &i) in ops.iter().zip(at) {
            assert_eq!(log[i].0, op, "the result names the operation's place");
        }
    }
    let mut applied: Vec<u32> = log.iter().map(|&(op, _)| op).collect();
    applied.sort_unstable();
    let mut asked: Vec<u32> = callers.iter().flat_map(|c| c.1.iter().copied()).collect();
    asked.sort_unstable();
    assert_eq!(applied, asked, "each operation applied exactly once");
    let nodes: Vec<u32> = log.iter().map(|&(_, node)| node).collect();
    assert_eq!(stats.handoffs, expected_stats(&nodes));
    assert!(stats.rounds >= 1 && stats.rounds <= log.len() as u64);
}

#[test]
fn combiner_applies_each_operation_once_for_its_caller() {
    // A combining round is some forty atomic steps: preemption bound 3
    // (without, it takes minutes).
    bounded(3, || combine(2, &[(0, &[1, 2]), (1, &[3])]));
}

#[test]
fn combiner_with_one_slot_makes_callers_wait_for_it() {
    exhaustive(|| combine(1, &[(0, &[1]), (1, &[2])]));
}

#[test]
fn combiner_three_callers() {
    // Three threads: preemption bound 2 (3 takes minutes).
    bounded(2, || combine(3, &[(0, &[1]), (1, &[2]), (0, &[3])]));
}

/// A guard dropped while its thread unwinds releases the lock: the other
/// thread (same node, so a cohort lock passes to it) still enters.
fn guard_dropped_by_a_panic_releases<R: RawLock + 'static>(make: fn() -> Lock<R, u32>) {
    quiet_planned_panics();
    exhaustive(move || {
        let lock = Arc::new(make());
        let other = lock.clone();
        let t = thread::spawn(move || {
            *other.lock_on(0) += 1;
        });
        expect_planned_panic(|| {
            let mut guard = lock.lock_on(0);
            *guard += 1;
            std::panic::panic_any(Planned);
        });
        t.join().expect("no thread panicked");
        let guard = lock.try_lock_on(1).expect("the lock is free");
        assert_eq!(*guard, 2);
        drop(guard);
        assert_eq!(lock.stats().acquisitions, 3);
    });
}

#[test]
fn ticket_guard_dropped_by_a_panic_releases() {
    guard_dropped_by_a_panic_releases(|| TicketLock::new(0));
}

#[test]
fn cohort_guard_dropped_by_a_panic_releases() {
    guard_dropped_by_a_panic_releases(|| CohortLock::with_nodes(2, 1, 0));
}

/// An operation that panics in whichever thread combines panics only its
/// own caller; the other operation is applied and answered.
#[test]
fn combiner_panic_reaches_only_its_caller() {
    quiet_planned_panics();
    exhaustive(|| {
        let combiner = Arc::new(FlatCombiner::new(2, 0u32, |sum: &mut u32, op: u32| {
            if op == 13 {
                std::panic::panic_any(Planned);
            }
            *sum += op;
            *sum
        }));
        let other = combiner.clone();
        let t = thread::spawn(move || other.apply(1));
        expect_planned_panic(|| {
            combiner.apply(13);
        });
        assert_eq!(t.join().expect("no thread panicked"), 1);
        assert_eq!(combiner.stats().handoffs.acquisitions, 2);
        assert_eq!(combiner.apply(2), 3);
    });
}
