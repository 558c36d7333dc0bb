//! A team of measuring threads: one scoped thread per seat (a CPU of a
//! node), each pinned before it starts, all released together, each
//! reporting where the kernel really ran it.
//!
//! A team lives for one measurement, so that every measurement starts
//! from threads placed exactly as it says; starting a few threads costs
//! microseconds against measurements of tens of milliseconds. The team
//! times the work from the common start to the last thread's end and
//! checks placement with `getcpu` before and after the work. It does not
//! queue tasks or balance load: that is the pool's job, and a benchmark
//! needs the opposite, a fixed thread per CPU doing a fixed share.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use numakit_placement::{current_cpu, Placer};
use numakit_topology::{CpuId, NodeId};
use serde::Serialize;

use crate::error::{ProbeError, Result};

/// Where one thread of a team is asked to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Seat {
    /// The CPU the thread is pinned to.
    pub cpu: CpuId,
    /// The node of `cpu`: where the thread is checked to run.
    pub node: NodeId,
}

/// How many threads the kernel was seen running on the node they were
/// asked for, before and after their work.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ThreadCheck {
    /// Checks made: two per thread of a team (`getcpu` before and after
    /// its work), one per move of a migrating thread.
    pub threads: usize,
    /// Of `threads`, the checks that found the thread on its seat's node.
    pub on_node: usize,
}

impl ThreadCheck {
    /// Every thread ran where it was asked to.
    pub fn all_placed(&self) -> bool {
        self.threads == self.on_node
    }

    /// Both checks together.
    pub fn merge(self, other: Self) -> Self {
        Self {
            threads: self.threads + other.threads,
            on_node: self.on_node + other.on_node,
        }
    }
}

/// What a team's run gives back.
#[derive(Debug)]
pub struct TeamRun<R> {
    /// Each thread's result, in seat order.
    pub results: Vec<R>,
    /// From the common start to the end of the last thread's work.
    pub wall: Duration,
    /// Where the threads ran, before and after their work.
    pub check: ThreadCheck,
}

/// `seats.len()` seats on `node`, its allowed CPUs taken in order (and
/// round-robin when there are more seats than CPUs).
pub fn seats_on_node(placer: &Placer, node: NodeId, threads: usize) -> Result<Vec<Seat>> {
    if threads == 0 {
        return Err(ProbeError::Zero { what: "threads" });
    }
    let cpus: Vec<CpuId> = placer.cpus_of_node(node)?.iter().collect();
    Ok((0..threads)
        .map(|i| Seat {
            cpu: cpus[i % cpus.len()],
            node,
        })
        .collect())
}

/// Pins the calling thread to `seat` and says whether the kernel then
/// runs it on the seat's node.
pub fn take_seat(placer: &Placer, seat: Seat) -> Result<bool> {
    placer.pin_to_cpu(seat.cpu)?;
    on_node(seat.node)
}

fn on_node(node: NodeId) -> Result<bool> {
    Ok(current_cpu()?.1 == node)
}

/// Runs `work(i)` on a thread pinned to `seats[i]`, all threads starting
/// together; `wall` runs from the start to the last thread's end.
pub fn run<R, F>(placer: &Placer, seats: &[Seat], work: F) -> Result<TeamRun<R>>
where
    R: Send,
    F: Fn(usize) -> R + Sync,
{
    run_with_cue(placer, seats, || {}, work)
}

/// Like [`run`], calling `cue` once every thread is seated and just
/// before they start (to start a clock, or to wait for cross traffic).
pub fn run_with_cue<R, F, C>(placer: &Placer, seats: &[Seat], cue: C, work: F) -> Result<TeamRun<R>>
where
    R: Send,
    F: Fn(usize) -> R + Sync,
    C: FnOnce(),
{
    if seats.is_empty() {
        return Err(ProbeError::Zero { what: "threads" });
    }
    let start_line = Barrier::new(seats.len() + 1);
    let outcomes = std::thread::scope(|scope| {
        let handles: Vec<_> = seats
            .iter()
            .enumerate()
            .map(|(i, &seat)| {
                let (work, start_line) = (&work, &start_line);
                scope.spawn(move || seated(placer, seat, start_line, || work(i)))
            })
            .collect();
        start_line.wait();
        cue();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .map_err(|p| ProbeError::ThreadPanicked(panic_text(&p)))
            })
            .collect::<Vec<_>>()
    });
    collect(outcomes)
}

/// What one seated thread reports.
struct Seated<R> {
    result: R,
    started: Instant,
    ended: Instant,
    placed: [bool; 2],
}

fn seated<R>(
    placer: &Placer,
    seat: Seat,
    start_line: &Barrier,
    work: impl FnOnce() -> R,
) -> Result<Seated<R>> {
    // Every thread reaches the barrier, even one whose pin failed, so the
    // others are never left waiting.
    let before = take_seat(placer, seat);
    start_line.wait();
    let before = before?;
    let started = Instant::now();
    let result = work();
    let ended = Instant::now();
    Ok(Seated {
        result,
        started,
        ended,
        placed: [before, on_node(seat.node)?],
    })
}

fn collect<R>(outcomes: Vec<Result<Result<Seated<R>>>>) -> Result<TeamRun<R>> {
    let mut seated = Vec::with_capacity(outcomes.len());
    for outcome in outcomes {
        seated.push(outcome??);
    }
    let first = seated.iter().map(|s| s.started).min();
    let last = seated.iter().map(|s| s.ended).max();
    let wall = match (first, last) {
        (Some(a), Some(b)) => b.saturating_duration_since(a),
        _ => Duration::ZERO,
    };
    let check = ThreadCheck {
        threads: 2 * seated.len(),
        on_node: seated
            .iter()
            .map(|s| s.placed.iter().filter(|&&p| p).count())
            .sum(),
    };
    Ok(TeamRun {
        results: seated.into_iter().map(|s| s.result).collect(),
        wall,
        check,
    })
}

/// A flag that background work polls, and a count of threads under way.
#[derive(Debug, Default)]
pub struct Background {
    stop: AtomicBool,
    running: AtomicUsize,
}

impl Background {
    /// Whether the work should end.
    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Tells the work to end.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Called by each background thread once it has started its work.
    pub fn started(&self) {
        self.running.fetch_add(1, Ordering::Release);
    }

    /// Waits (yielding) until `threads` threads have started, the work
    /// was told to end, or `gave_up` says it never will start (its team
    /// failed before the work began).
    pub fn wait_started(&self, threads: usize, gave_up: impl Fn() -> bool) {
        while self.running.load(Ordering::Acquire) < threads && !self.stopping() && !gave_up() {
            std::thread::yield_now();
        }
    }
}

pub(crate) fn panic_text(payload: &Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use numakit_placement::PlacementMode;

    use super::*;

    fn placer() -> Placer {
        let topo = Arc::new(numakit_topology::discover().unwrap());
        Placer::new(topo, PlacementMode::BestEffort)
    }

    #[test]
    fn every_thread_runs_once_and_is_seen_on_its_node() {
        let placer = placer();
        let node = placer.topology().compute_nodes()[0];
        let seats = seats_on_node(&placer, node, 3).unwrap();
        let run = run(&placer, &seats, |i| i * 10).unwrap();
        assert_eq!(run.results, vec![0, 10, 20]);
        assert_eq!(run.check.threads, 6);
        assert!(run.check.all_placed(), "{:?}", run.check);
    }

    #[test]
    fn zero_threads_and_panics_are_errors() {
        let placer = placer();
        let node = placer.topology().compute_nodes()[0];
        assert!(matches!(
            seats_on_node(&placer, node, 0),
            Err(ProbeError::Zero { .. })
        ));
        let seats = seats_on_node(&placer, node, 2).unwrap();
        let err = run(&placer, &seats, |i| {
            assert!(i == 0, "thread {i} fails");
        })
        .unwrap_err();
        assert!(err.to_string().contains("thread 1 fails"), "{err}");
    }

    #[test]
    fn a_node_that_does_not_exist_is_refused() {
        let placer = placer();
        assert!(seats_on_node(&placer, 999, 1).is_err());
    }
}
