//! One timed run of one lock: threads pinned round-robin to the nodes,
//! started together, stopped after the run's time; and the single-thread
//! loop that measures the uncontended cost. It does not choose what to
//! run or summarise runs (`bench` does).

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use numakit_placement::{Outcome, Placer};
use numakit_topology::NodeId;

use crate::bench::subject::{Counts, Subject};
use crate::bench::work;
use crate::error::SyncError;
use crate::node::set_thread_node;

/// What one run gave.
pub(crate) struct Run {
    pub(crate) seconds: f64,
    pub(crate) per_thread: Vec<u64>,
    pub(crate) counts: Counts,
    /// Whether every thread was pinned to its node (and so knew it).
    pub(crate) pinned: bool,
}

/// The busy steps inside and outside the critical section.
#[derive(Clone, Copy)]
pub(crate) struct Steps {
    pub(crate) inside: u64,
    pub(crate) outside: u64,
}

/// Flags the threads share.
struct Signals {
    ready: AtomicUsize,
    go: AtomicBool,
    stop: AtomicBool,
}

/// Pins the calling thread to `node` and makes it the thread's node;
/// whether that was applied (placement off or refused in best-effort mode
/// leaves the thread unpinned, and its node to `getcpu`).
pub(crate) fn pin(placer: &Placer, node: NodeId) -> Result<bool, SyncError> {
    let outcome = placer
        .pin_to_node(node)
        .map_err(|source| SyncError::Placement { node, source })?;
    let pinned = outcome == Outcome::Applied;
    set_thread_node(pinned.then_some(node));
    Ok(pinned)
}

/// `threads` threads, thread i on `nodes[i % nodes.len()]`, entering
/// `subject`'s critical section for `duration`.
pub(crate) fn contended(
    placer: &Placer,
    subject: Subject,
    nodes: &[NodeId],
    threads: usize,
    steps: Steps,
    duration: Duration,
) -> Result<Run, SyncError> {
    let signals = Signals {
        ready: AtomicUsize::new(0),
        go: AtomicBool::new(false),
        stop: AtomicBool::new(false),
    };
    let (outcomes, seconds) = std::thread::scope(|s| {
        let mut handles = Vec::with_capacity(threads);
        for i in 0..threads {
            let (signals, subject, node) = (&signals, &subject, nodes[i % nodes.len()]);
            let spawned = std::thread::Builder::new()
                .name(format!("numakit-lock-{i}"))
                .spawn_scoped(s, move || worker(placer, node, subject, steps, signals));
            match spawned {
                Ok(handle) => handles.push(handle),
                Err(e) => {
                    signals.stop.store(true, Ordering::Relaxed);
                    signals.go.store(true, Ordering::Release);
                    return (vec![Err(SyncError::Spawn(e))], 0.0);
                }
            }
        }
        crate::wait::until(|| signals.ready.load(Ordering::Acquire) == threads);
        let start = Instant::now();
        signals.go.store(true, Ordering::Release);
        std::thread::sleep(duration);
        signals.stop.store(true, Ordering::Relaxed);
        let seconds = start.elapsed().as_secs_f64();
        let outcomes = handles
            .into_iter()
            .map(|h| h.join().unwrap_or(Err(SyncError::ThreadPanicked)))
            .collect::<Vec<_>>();
        (outcomes, seconds)
    });
    let mut per_thread = Vec::with_capacity(threads);
    let mut pinned = true;
    for outcome in outcomes {
        let (count, was_pinned) = outcome?;
        per_thread.push(count);
        pinned &= was_pinned;
    }
    Ok(Run {
        seconds,
        per_thread,
        counts: subject.counts(),
        pinned,
    })
}

/// One benchmark thread: pin, wait for the start, enter the critical
/// section until told to stop; its count and whether it was pinned.
fn worker(
    placer: &Placer,
    node: NodeId,
    subject: &Subject,
    steps: Steps,
    signals: &Signals,
) -> Result<(u64, bool), SyncError> {
    let pinned = pin(placer, node);
    signals.ready.fetch_add(1, Ordering::Release);
    crate::wait::until(|| signals.go.load(Ordering::Acquire));
    let pinned = pinned?;
    let mut count = 0u64;
    while !signals.stop.load(Ordering::Relaxed) {
        let node = crate::node::thread_node();
        subject.critical(node, steps.inside);
        count += 1;
        if steps.outside > 0 {
            black_box(work::spin(steps.outside));
        }
    }
    Ok((count, pinned))
}

/// Nanoseconds per uncontended acquire-and-release of `subject` by the
/// calling thread, over `pairs` of them.
pub(crate) fn uncontended_ns(subject: &Subject, pairs: u64) -> f64 {
    let subject = black_box(subject);
    let start = Instant::now();
    for _ in 0..pairs {
        subject.increment();
    }
    start.elapsed().as_secs_f64() * 1e9 / pairs.max(1) as f64
}
