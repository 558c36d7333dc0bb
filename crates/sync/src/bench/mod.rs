//! The lock benchmark behind `numakit bench locks`: each lock (std's
//! Mutex, the ticket lock, the cohort lock, flat combining) under
//! contention, for each thread count, threads pinned round-robin over the
//! chosen nodes, critical sections of a chosen length; acquisitions per
//! second and handoffs between nodes per 1,000 acquisitions, medians of
//! repetitions in alternating order; and the uncontended cost of each,
//! side by side. Every run is checked: no update lost, and each lock's
//! own handoff count equal to the one seen inside its critical sections.
//!
//! It does not parse options or print (the CLI does), and it measures
//! only this process's threads.

mod subject;
mod threads;
mod work;

use std::time::Duration;

use numakit_placement::Placer;
use numakit_topology::NodeId;
use serde::Serialize;

use crate::error::SyncError;
use subject::{Counts, Subject};
use threads::{Run, Steps};

/// A lock the benchmark measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LockKind {
    /// `std::sync::Mutex`, the baseline every Rust program has.
    StdMutex,
    /// [`TicketLock`](crate::TicketLock): FIFO, NUMA-oblivious.
    Ticket,
    /// [`CohortLock`](crate::CohortLock): C-TKT-TKT.
    Cohort,
    /// [`FlatCombiner`](crate::FlatCombiner).
    FlatCombining,
}

impl LockKind {
    /// Every lock, in the order reports list them.
    pub const ALL: [LockKind; 4] = [
        LockKind::StdMutex,
        LockKind::Ticket,
        LockKind::Cohort,
        LockKind::FlatCombining,
    ];

    /// The name used in options and reports.
    pub fn name(self) -> &'static str {
        match self {
            LockKind::StdMutex => "std-mutex",
            LockKind::Ticket => "ticket",
            LockKind::Cohort => "cohort",
            LockKind::FlatCombining => "flat-combining",
        }
    }
}

impl std::fmt::Display for LockKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for LockKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "std-mutex" | "std" | "mutex" => Ok(LockKind::StdMutex),
            "ticket" => Ok(LockKind::Ticket),
            "cohort" => Ok(LockKind::Cohort),
            "flat-combining" | "fc" => Ok(LockKind::FlatCombining),
            other => Err(format!(
                "unknown lock `{other}` (std-mutex, ticket, cohort, flat-combining)"
            )),
        }
    }
}

/// What to measure.
#[derive(Clone, Debug)]
pub struct LockBenchRequest {
    /// The locks, measured side by side.
    pub locks: Vec<LockKind>,
    /// Thread counts, one contended run of every lock each.
    pub threads: Vec<usize>,
    /// The nodes the threads are spread over, round-robin.
    pub nodes: Vec<NodeId>,
    /// Busy work inside each critical section, in nanoseconds.
    pub critical_ns: u64,
    /// Busy work between two acquisitions of a thread, in nanoseconds.
    pub outside_ns: u64,
    /// How long each contended run lasts.
    pub duration: Duration,
    /// Repetitions of every run (lock order alternating); medians reported.
    pub reps: usize,
    /// The cohort lock's passes within a node in a row.
    pub cohort_bound: u32,
    /// Acquire-release pairs per uncontended timing (0: skip them).
    pub uncontended_pairs: u64,
}

/// Min, median and max of a sample.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Spread {
    /// The smallest value.
    pub min: f64,
    /// The middle value (the mean of the middle two).
    pub median: f64,
    /// The largest value.
    pub max: f64,
}

impl Spread {
    fn of(values: &[f64]) -> Spread {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = match n {
            0 => f64::NAN,
            _ if n % 2 == 1 => sorted[n / 2],
            _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
        };
        Spread {
            min: sorted.first().copied().unwrap_or(f64::NAN),
            median,
            max: sorted.last().copied().unwrap_or(f64::NAN),
        }
    }
}

/// One lock's uncontended cost: one thread, nobody else.
#[derive(Clone, Debug, Serialize)]
pub struct UncontendedCost {
    /// The lock.
    pub lock: LockKind,
    /// Nanoseconds per acquire, increment, release.
    pub ns: Spread,
    /// Median over std's Mutex's median (when std's Mutex was measured).
    pub vs_std_mutex: Option<f64>,
}

/// One lock at one thread count.
#[derive(Clone, Debug, Serialize)]
pub struct ContendedPoint {
    /// The lock.
    pub lock: LockKind,
    /// Threads contending.
    pub threads: usize,
    /// Acquisitions per second, over the repetitions.
    pub acquisitions_per_s: Spread,
    /// Handoffs between nodes per 1,000 acquisitions, over the repetitions
    /// (counted by the lock itself; for std's Mutex, inside its critical
    /// sections).
    pub remote_per_1000: Spread,
    /// Acquisitions in all repetitions together.
    pub acquisitions: u64,
    /// The fewest acquisitions of one thread over its run's mean (1.0:
    /// every thread got its share), median over the repetitions.
    pub min_share: f64,
}

/// What the benchmark measured.
#[derive(Clone, Debug, Serialize)]
pub struct LockBenchReport {
    /// The nodes the threads ran on.
    pub nodes: Vec<NodeId>,
    /// Whether every thread was pinned to its node (otherwise the nodes
    /// come from `getcpu`, and placement was off or refused).
    pub pinned: bool,
    /// Busy work inside each critical section, in nanoseconds.
    pub critical_ns: u64,
    /// Busy work between acquisitions, in nanoseconds.
    pub outside_ns: u64,
    /// Milliseconds of each contended run.
    pub run_ms: u64,
    /// Repetitions of every run.
    pub reps: usize,
    /// The cohort lock's bound.
    pub cohort_bound: u32,
    /// Acquire-release pairs per uncontended timing.
    pub uncontended_pairs: u64,
    /// Uncontended cost of each lock (empty when skipped).
    pub uncontended: Vec<UncontendedCost>,
    /// Every lock at every thread count.
    pub contended: Vec<ContendedPoint>,
}

/// Runs the benchmark; `progress` hears what runs now.
pub fn run(
    placer: &Placer,
    request: &LockBenchRequest,
    progress: &dyn Fn(String),
) -> Result<LockBenchReport, SyncError> {
    check(placer, request)?;
    let node_locks = placer
        .topology()
        .nodes
        .iter()
        .map(|n| n.id as usize + 1)
        .max()
        .unwrap_or(1);
    let fresh = |kind: LockKind, threads: usize| {
        Subject::new(kind, node_locks, request.cohort_bound, threads.max(1))
    };
    let (uncontended, mut pinned) = uncontended(placer, request, &fresh, progress)?;
    let ns_per_step = work::ns_per_step();
    let steps = Steps {
        inside: work::steps_for(request.critical_ns, ns_per_step),
        outside: work::steps_for(request.outside_ns, ns_per_step),
    };
    let mut contended = Vec::new();
    for &threads in &request.threads {
        let mut samples: Vec<Vec<Run>> = request.locks.iter().map(|_| Vec::new()).collect();
        for rep in 0..request.reps {
            for i in alternating(request.locks.len(), rep) {
                let kind = request.locks[i];
                progress(format!(
                    "{kind}, {threads} thread(s), repetition {}",
                    rep + 1
                ));
                let run = threads::contended(
                    placer,
                    fresh(kind, threads),
                    &request.nodes,
                    threads,
                    steps,
                    request.duration,
                )?;
                verify(kind, threads, &run)?;
                pinned &= run.pinned;
                samples[i].push(run);
            }
        }
        for (kind, runs) in request.locks.iter().zip(samples) {
            contended.push(summarise(*kind, threads, &runs));
        }
    }
    Ok(LockBenchReport {
        nodes: request.nodes.clone(),
        pinned,
        critical_ns: request.critical_ns,
        outside_ns: request.outside_ns,
        run_ms: request.duration.as_millis() as u64,
        reps: request.reps,
        cohort_bound: request.cohort_bound,
        uncontended_pairs: request.uncontended_pairs,
        uncontended,
        contended,
    })
}

/// Refuses a request that cannot run.
fn check(placer: &Placer, request: &LockBenchRequest) -> Result<(), SyncError> {
    let invalid = |what: &str| Err(SyncError::InvalidRequest(what.to_string()));
    if request.locks.is_empty() {
        return invalid("no lock to measure");
    }
    if request.threads.is_empty() || request.threads.contains(&0) {
        return invalid("thread counts must be at least 1");
    }
    if request.nodes.is_empty() {
        return invalid("no node to run on");
    }
    if request.reps == 0 {
        return invalid("repetitions must be at least 1");
    }
    if request.duration.is_zero() {
        return invalid("each run must last longer than 0 ms");
    }
    for &node in &request.nodes {
        placer
            .cpus_of_node(node)
            .map_err(|source| SyncError::Placement { node, source })?;
    }
    Ok(())
}

/// Indices `0..n`, reversed on odd repetitions.
fn alternating(n: usize, rep: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    if rep % 2 == 1 {
        order.reverse();
    }
    order
}

/// The uncontended cost of every lock, on one thread pinned to the first
/// node (a thread of its own: the caller stays unpinned); whether it was
/// pinned.
fn uncontended(
    placer: &Placer,
    request: &LockBenchRequest,
    fresh: &(dyn Fn(LockKind, usize) -> Subject + Sync),
    progress: &dyn Fn(String),
) -> Result<(Vec<UncontendedCost>, bool), SyncError> {
    if request.uncontended_pairs == 0 {
        return Ok((Vec::new(), true));
    }
    progress(format!(
        "uncontended cost, {} pairs per lock",
        request.uncontended_pairs
    ));
    let measured = std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("numakit-lock-uncontended".into())
            .spawn_scoped(s, || -> Result<_, SyncError> {
                let pinned = threads::pin(placer, request.nodes[0])?;
                let mut ns: Vec<Vec<f64>> = request.locks.iter().map(|_| Vec::new()).collect();
                // One untimed round first (page faults, frequency).
                for rep in 0..=request.reps {
                    for i in alternating(request.locks.len(), rep) {
                        let subject = fresh(request.locks[i], 1);
                        let cost = threads::uncontended_ns(&subject, request.uncontended_pairs);
                        if rep > 0 {
                            ns[i].push(cost);
                        }
                    }
                }
                Ok((ns, pinned))
            })?
            .join()
            .unwrap_or(Err(SyncError::ThreadPanicked))
    })?;
    let (ns, pinned) = measured;
    let spreads: Vec<Spread> = ns.iter().map(|v| Spread::of(v)).collect();
    let std_median = request
        .locks
        .iter()
        .position(|k| *k == LockKind::StdMutex)
        .map(|i| spreads[i].median);
    let costs = request
        .locks
        .iter()
        .zip(spreads)
        .map(|(&lock, ns)| UncontendedCost {
            lock,
            vs_std_mutex: std_median.map(|m| ns.median / m),
            ns,
        })
        .collect();
    Ok((costs, pinned))
}

/// Checks a run: every acquisition reached the data once, and the lock's
/// own count of handoffs equals the one seen from inside.
fn verify(kind: LockKind, threads: usize, run: &Run) -> Result<(), SyncError> {
    let fail = |what: String| {
        Err(SyncError::Verification {
            lock: kind.to_string(),
            threads,
            what,
        })
    };
    let Counts {
        inside,
        inside_remote,
        own,
    } = run.counts;
    let total: u64 = run.per_thread.iter().sum();
    if inside != total {
        return fail(format!(
            "{total} acquisitions but {inside} updates of the data"
        ));
    }
    if let Some(own) = own {
        if own.acquisitions != inside || own.remote_handoffs != inside_remote {
            return fail(format!(
                "the lock counted {} acquisitions and {} remote handoffs, the data saw {inside} and {inside_remote}",
                own.acquisitions, own.remote_handoffs
            ));
        }
    }
    Ok(())
}

/// One lock's point over its runs.
fn summarise(lock: LockKind, threads: usize, runs: &[Run]) -> ContendedPoint {
    let rate: Vec<f64> = runs
        .iter()
        .map(|r| r.counts.inside as f64 / r.seconds.max(1e-9))
        .collect();
    let remote: Vec<f64> = runs
        .iter()
        .map(|r| {
            let own = r.counts.own.unwrap_or(crate::LockStats {
                acquisitions: r.counts.inside,
                remote_handoffs: r.counts.inside_remote,
            });
            own.remote_per_1000()
        })
        .collect();
    let share: Vec<f64> = runs
        .iter()
        .map(|r| {
            let mean = r.counts.inside as f64 / r.per_thread.len().max(1) as f64;
            let least = r.per_thread.iter().copied().min().unwrap_or(0) as f64;
            if mean > 0.0 {
                least / mean
            } else {
                0.0
            }
        })
        .collect();
    ContendedPoint {
        lock,
        threads,
        acquisitions_per_s: Spread::of(&rate),
        remote_per_1000: Spread::of(&remote),
        acquisitions: runs.iter().map(|r| r.counts.inside).sum(),
        min_share: Spread::of(&share).median,
    }
}

#[cfg(test)]
mod tests;
