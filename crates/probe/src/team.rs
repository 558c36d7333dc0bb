//! A team of measuring threads: one scoped thread per seat (a CPU of a
//! node), each pinned before it starts, all released together, each
//! reporting where the kernel really ran it.
//!
//! A team lives for one measurement, so that every measurement starts
//! from threads placed exactly as it says; starting a few threads costs
//! microseconds against measurements of tens of milliseconds. The team
//! times the work from the common start to the last thread's end and
//! checks placement with `getcpu` before and after the work. A counted run
//! ([`run_counted`]) also opens each thread's hardware counters before the
//! start line and reads what its work cost (cycles, instructions, LLC
//! misses); where the kernel offers none, the counts are `None`. It does
//! not queue tasks or balance load: that is the pool's job, and a benchmark
//! needs the opposite, a fixed thread per CPU doing a fixed share.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use numakit_placement::counters::{CounterGroup, Counts};
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
    /// Each thread's hardware counts over its work, in seat order (empty
    /// unless the run was counted; `None` for a thread whose counters did
    /// not open).
    pub counts: Vec<Option<Counts>>,
}

impl<R> TeamRun<R> {
    /// Every thread's counts together; `None` unless every thread had them.
    pub fn total_counts(&self) -> Option<Counts> {
        Counts::sum(self.counts.iter().copied())
    }
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
    run_team(placer, seats, cue, false, work)
}

/// Like [`run`], each thread counting its own work with its hardware
/// counters ([`CounterGroup::hardware`], opened before the start line,
/// enabled just before the work and disabled just after it).
pub fn run_counted<R, F>(placer: &Placer, seats: &[Seat], work: F) -> Result<TeamRun<R>>
where
    R: Send,
    F: Fn(usize) -> R + Sync,
{
    run_team(placer, seats, || {}, true, work)
}

/// [`run_counted`] with [`run_with_cue`]'s cue.
pub fn run_counted_with_cue<R, F, C>(
    placer: &Placer,
    seats: &[Seat],
    cue: C,
    work: F,
) -> Result<TeamRun<R>>
where
    R: Send,
    F: Fn(usize) -> R + Sync,
    C: FnOnce(),
{
    run_team(placer, seats, cue, true, work)
}

fn run_team<R, F, C>(
    placer: &Placer,
    seats: &[Seat],
    cue: C,
    count: bool,
    work: F,
) -> Result<TeamRun<R>>
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
                scope.spawn(move || seated(placer, seat, start_line, count, || work(i)))
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
    collect(outcomes, count)
}

/// What one seated thread reports.
struct Seated<R> {
    result: R,
    started: Instant,
    ended: Instant,
    placed: [bool; 2],
    counts: Option<Counts>,
}

fn seated<R>(
    placer: &Placer,
    seat: Seat,
    start_line: &Barrier,
    count: bool,
    work: impl FnOnce() -> R,
) -> Result<Seated<R>> {
    // Every thread reaches the barrier, even one whose pin failed, so the
    // others are never left waiting. Counters are opened on the seat,
    // before the start, so that opening them is not timed.
    let before = take_seat(placer, seat);
    let group = count.then(|| CounterGroup::hardware().ok()).flatten();
    start_line.wait();
    let before = before?;
    let counting = group.as_ref().map(|g| g.enable().is_ok());
    let started = Instant::now();
    let result = work();
    let ended = Instant::now();
    let counts = match (&group, counting) {
        (Some(g), Some(true)) => g.disable().and_then(|()| g.read()).ok(),
        _ => None,
    };
    Ok(Seated {
        result,
        started,
        ended,
        placed: [before, on_node(seat.node)?],
        counts,
    })
}

fn collect<R>(outcomes: Vec<Result<Result<Seated<R>>>>, counted: bool) -> Result<TeamRun<R>> {
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
    let counts = if counted {
        seated.iter().map(|s| s.counts).collect()
    } else {
        Vec::new()
    };
    Ok(TeamRun {
        results: seated.into_iter().map(|s| s.result).collect(),
        wall,
        check,
        counts,
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

    /// A counted team either counts every thread's work or says, for
    /// the whole machine, why it cannot.
    #[test]
    fn a_counted_team_counts_each_thread_or_has_a_reason() {
        let placer = placer();
        let node = placer.topology().compute_nodes()[0];
        let seats = seats_on_node(&placer, node, 2).unwrap();
        let spin = |rounds: u64| {
            let mut x = std::hint::black_box(1u64);
            for i in 0..rounds {
                x = std::hint::black_box(x.rotate_left(3) ^ i);
            }
            x
        };
        let run = run_counted(&placer, &seats, |i| spin(1_000_000 * (i as u64 + 1))).unwrap();
        assert_eq!(run.counts.len(), 2);
        match CounterGroup::hardware() {
            Ok(_) => {
                let counts: Vec<Counts> = run.counts.iter().map(|c| c.unwrap()).collect();
                let work = |c: &Counts| c.instructions.or(c.cycles).unwrap();
                assert!(work(&counts[0]) > 0, "{counts:?}");
                assert!(work(&counts[1]) > work(&counts[0]), "{counts:?}");
                assert!(run.total_counts().is_some());
            }
            Err(e) => {
                assert!(run.counts.iter().all(Option::is_none));
                assert!(run.total_counts().is_none());
                assert!(!e.reason().contains('\n'), "{e}");
            }
        }
        let plain = run_with_cue(&placer, &seats, || {}, |i| i).unwrap();
        assert!(plain.counts.is_empty(), "not counted");
    }

    #[test]
    fn a_node_that_does_not_exist_is_refused() {
        let placer = placer();
        assert!(seats_on_node(&placer, 999, 1).is_err());
    }
}
