//! Stress tests of the locks through their public API: mutual exclusion
//! and no lost updates under contention (more threads than this machine's
//! CPUs, nodes simulated with `lock_on` and `set_thread_node`), no
//! poisoning after a panic, and the cohort lock's point: far fewer
//! handoffs between nodes than the ticket lock at the same contention.

use std::sync::atomic::{AtomicUsize, Ordering};

use numakit_sync::{set_thread_node, CohortLock, FlatCombiner, LockStats, TicketLock};

const THREADS: u32 = 8;
const NODES: u32 = 4;
const ROUNDS: u64 = 4_000;

/// Data that notices a second thread inside: each critical section reads
/// the counter, yields now and then, and writes it back plus one.
#[derive(Default)]
struct Checked {
    count: u64,
}

fn critical(inside: &AtomicUsize, data: &mut Checked, round: u64) {
    assert_eq!(
        inside.fetch_add(1, Ordering::SeqCst),
        0,
        "two threads inside"
    );
    let seen = data.count;
    if round % 64 == 0 {
        std::thread::yield_now();
    }
    data.count = seen + 1;
    inside.fetch_sub(1, Ordering::SeqCst);
}

/// `THREADS` threads, thread i on simulated node i % NODES, each entering
/// `enter` ROUNDS times.
fn hammer(enter: impl Fn(u32, u64) + Sync) {
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let enter = &enter;
            s.spawn(move || {
                set_thread_node(Some(t % NODES));
                for round in 0..ROUNDS {
                    enter(t % NODES, round);
                }
            });
        }
    });
}

fn total() -> u64 {
    u64::from(THREADS) * ROUNDS
}

fn ticket_stats() -> LockStats {
    let lock = TicketLock::new(Checked::default());
    let inside = AtomicUsize::new(0);
    hammer(|node, round| critical(&inside, &mut lock.lock_on(node), round));
    let stats = lock.stats();
    assert_eq!(lock.into_inner().count, total(), "no update lost");
    assert_eq!(stats.acquisitions, total());
    stats
}

fn cohort_stats(bound: u32) -> LockStats {
    let lock = CohortLock::with_nodes(NODES as usize, bound, Checked::default());
    let inside = AtomicUsize::new(0);
    // `lock()`: the node set for the thread.
    hammer(|_, round| critical(&inside, &mut lock.lock(), round));
    let stats = lock.stats();
    assert_eq!(lock.into_inner().count, total(), "no update lost");
    assert_eq!(stats.acquisitions, total());
    stats
}

#[test]
fn the_ticket_lock_excludes_and_loses_nothing() {
    let stats = ticket_stats();
    assert!(stats.remote_handoffs > 0);
}

#[test]
fn the_cohort_lock_excludes_and_loses_nothing_at_any_bound() {
    for bound in [0, 1, 64] {
        cohort_stats(bound);
    }
}

#[test]
fn the_cohort_lock_keeps_the_lock_on_a_node() {
    let ticket = ticket_stats().remote_per_1000();
    let cohort = cohort_stats(64).remote_per_1000();
    eprintln!("remote handoffs per 1,000: ticket {ticket:.1}, cohort {cohort:.1}");
    assert!(
        cohort * 2.0 < ticket,
        "cohort {cohort:.1} vs ticket {ticket:.1} per 1,000"
    );
}

#[test]
fn flat_combining_applies_every_operation_once() {
    let inside = AtomicUsize::new(0);
    let combiner = FlatCombiner::new(THREADS as usize, Checked::default(), move |d, round| {
        critical(&inside, d, round);
        d.count
    });
    hammer(|_, round| {
        combiner.apply(round);
    });
    let stats = combiner.stats();
    assert_eq!(stats.handoffs.acquisitions, total());
    assert!(stats.rounds <= total());
    assert_eq!(combiner.into_inner().count, total());
}

#[test]
fn a_panic_inside_releases_the_lock_without_poisoning() {
    let ticket = TicketLock::new(1);
    let cohort = CohortLock::with_nodes(2, 4, 1);
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut t = ticket.lock();
        let mut c = cohort.lock_on(1);
        *t += 1;
        *c += 1;
        panic!("inside");
    }));
    assert!(panicked.is_err());
    assert_eq!(*ticket.try_lock().expect("released"), 2);
    assert_eq!(*cohort.try_lock_on(0).expect("released"), 2);
}

#[test]
fn guards_cross_threads_and_unpinned_threads_ask_the_kernel() {
    let lock = CohortLock::for_topology(&numakit_topology::discover().expect("topology"), 0u64);
    let guard = lock.lock();
    std::thread::scope(|s| {
        s.spawn(move || {
            let mut guard = guard;
            *guard += 1;
        });
    });
    *lock.lock() += 1;
    assert_eq!(lock.stats().acquisitions, 2);
    assert_eq!(lock.into_inner(), 2);
}
