//! Bandwidth between a CPU node and a memory node: the thread-count sweep
//! that finds where the pair saturates, the median at a given thread
//! count, and the same with cross traffic (Li et al.'s flow 3 beside flow
//! 4: a second node's threads reading the same memory at the same time).
//!
//! Each setting carries the streaming threads' hardware counters over
//! every repetition, per 64-byte line (where the kernel offers them).
//! This module measures pairs on buffers it is given; [`crate::matrix`]
//! decides which pairs, with how many threads, and owns the buffers.

use std::sync::Mutex;

use numakit_placement::counters::Counts;
use numakit_placement::Placer;
use numakit_topology::NodeId;
use serde::Serialize;

use crate::error::{ProbeError, Result};
use crate::stream::{self, Kernel, StreamBuffers, Streamed};
use crate::team::{self, Background, Seat, ThreadCheck};

/// A sweep point gaining less than this over the one before is flat.
const FLAT_GAIN: f64 = 1.03;
/// The sweep stops after this many flat points in a row.
const FLAT_POINTS: usize = 2;
/// Saturated: within this share of the best bandwidth of the sweep.
const SATURATED_SHARE: f64 = 0.95;

/// How long and how often each setting is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Effort {
    /// Passes over the buffer per measurement.
    pub passes: u32,
    /// Repetitions (the median is reported).
    pub reps: usize,
}

/// The median bandwidth of one setting and its spread.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Bandwidth {
    /// The node whose CPUs ran the streaming threads.
    pub cpu_node: NodeId,
    /// The node the buffers were placed on.
    pub memory_node: NodeId,
    /// What the threads did with the bytes.
    pub kernel: Kernel,
    /// Streaming threads, one per CPU of `cpu_node` (round-robin beyond
    /// its CPUs).
    pub threads: usize,
    /// Median over the repetitions, in GB/s (10^9 bytes per second, all
    /// threads together, from their common start to the last one's end).
    pub gbs: f64,
    /// Slowest repetition, in GB/s.
    pub min_gbs: f64,
    /// Fastest repetition, in GB/s.
    pub max_gbs: f64,
    /// Where the threads ran, over every repetition.
    pub thread_check: ThreadCheck,
    /// The streaming threads' hardware counts over every repetition, per
    /// 64-byte `line` streamed; `None` where the kernel offers no counters.
    pub counters: Option<Counts>,
}

/// Bandwidth as the thread count grows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Sweep {
    /// The node whose CPUs ran the threads.
    pub cpu_node: NodeId,
    /// The node the buffers were on.
    pub memory_node: NodeId,
    /// The kernel swept.
    pub kernel: Kernel,
    /// One measurement per thread count tried, fewest threads first (the
    /// sweep stops early once it stops gaining).
    pub points: Vec<Bandwidth>,
    /// The fewest threads within 5% of the best point.
    pub saturated_at: usize,
}

impl Sweep {
    /// The point with the highest median.
    pub fn best(&self) -> Option<&Bandwidth> {
        self.points.iter().max_by(|a, b| a.gbs.total_cmp(&b.gbs))
    }

    /// The point at the saturating thread count.
    pub fn saturated(&self) -> Option<&Bandwidth> {
        self.points.iter().find(|p| p.threads == self.saturated_at)
    }
}

/// Thread counts a sweep tries up to `max`: every count to 4, then steps
/// of half the count (6, 9, 13, 19, ...), and `max` itself.
pub fn sweep_counts(max: usize) -> Vec<usize> {
    let mut counts = Vec::new();
    let mut t = 1;
    while t < max {
        counts.push(t);
        t = if t < 4 { t + 1 } else { t + t / 2 };
    }
    if max > 0 {
        counts.push(max);
    }
    counts
}

/// `kernel` with `threads` threads of `cpu_node` over `buffers` (on
/// `memory_node`), `effort.reps` times.
///
/// # Examples
///
/// One thread of this machine's first node reading 1 MiB on that node
/// (small enough to stay in cache: a real probe's buffers are far larger).
///
/// ```
/// use std::sync::Arc;
///
/// use numakit_placement::{HugePages, Placement, PlacementMode, Placer};
/// use numakit_probe::bandwidth::{self, Effort};
/// use numakit_probe::stream::{Kernel, StreamBuffers};
///
/// let topology = Arc::new(numakit_topology::discover()?);
/// let placer = Placer::new(topology.clone(), PlacementMode::BestEffort);
/// let node = topology.compute_nodes()[0];
/// let mut buffers =
///     StreamBuffers::new(&placer, 1 << 20, Placement::OnNode(node), HugePages::Never)?;
/// let effort = Effort { passes: 2, reps: 3 };
///
/// let b = bandwidth::measure(&placer, (node, node), 1, &mut buffers, Kernel::Read, effort)?;
/// assert!(b.gbs.is_finite() && b.gbs > 0.0);
/// assert!(b.min_gbs <= b.gbs && b.gbs <= b.max_gbs);
/// // One thread, checked before and after each of the three repetitions.
/// assert_eq!(b.thread_check.threads, 6);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn measure(
    placer: &Placer,
    (cpu_node, memory_node): (NodeId, NodeId),
    threads: usize,
    buffers: &mut StreamBuffers,
    kernel: Kernel,
    effort: Effort,
) -> Result<Bandwidth> {
    let seats = team::seats_on_node(placer, cpu_node, threads)?;
    let mut runs = Vec::with_capacity(effort.reps.max(1));
    for _ in 0..effort.reps.max(1) {
        runs.push(stream::stream(
            placer,
            &seats,
            buffers,
            kernel,
            effort.passes,
        )?);
    }
    Ok(summarize((cpu_node, memory_node), kernel, threads, &runs))
}

fn summarize(
    (cpu_node, memory_node): (NodeId, NodeId),
    kernel: Kernel,
    threads: usize,
    runs: &[Streamed],
) -> Bandwidth {
    let mut gbs: Vec<f64> = runs.iter().map(Streamed::gbs).collect();
    gbs.sort_by(f64::total_cmp);
    Bandwidth {
        cpu_node,
        memory_node,
        kernel,
        threads,
        gbs: gbs.get(gbs.len() / 2).copied().unwrap_or(0.0),
        min_gbs: gbs.first().copied().unwrap_or(0.0),
        max_gbs: gbs.last().copied().unwrap_or(0.0),
        thread_check: runs
            .iter()
            .fold(ThreadCheck::default(), |acc, r| acc.merge(r.check)),
        counters: Counts::sum(runs.iter().map(|r| r.counts)),
    }
}

/// Sweeps the thread count up to `max_threads`, stopping once two
/// points in a row gain less than 3%.
pub fn sweep(
    placer: &Placer,
    pair: (NodeId, NodeId),
    max_threads: usize,
    buffers: &mut StreamBuffers,
    kernel: Kernel,
    effort: Effort,
) -> Result<Sweep> {
    if max_threads == 0 {
        return Err(ProbeError::Zero { what: "threads" });
    }
    let mut points: Vec<Bandwidth> = Vec::new();
    let mut flat = 0;
    for threads in sweep_counts(max_threads) {
        let point = measure(placer, pair, threads, buffers, kernel, effort)?;
        let gained = points
            .last()
            .is_none_or(|last| point.gbs >= last.gbs * FLAT_GAIN);
        flat = if gained { 0 } else { flat + 1 };
        points.push(point);
        if flat >= FLAT_POINTS {
            break;
        }
    }
    let best = points.iter().map(|p| p.gbs).fold(0.0, f64::max);
    let saturated_at = points
        .iter()
        .find(|p| p.gbs >= best * SATURATED_SHARE)
        .map_or(max_threads, |p| p.threads);
    Ok(Sweep {
        cpu_node: pair.0,
        memory_node: pair.1,
        kernel,
        points,
        saturated_at,
    })
}

/// One pair's read bandwidth alone and beside cross traffic.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CrossTraffic {
    /// The node whose threads make the measured flow.
    pub cpu_node: NodeId,
    /// The node both flows read.
    pub memory_node: NodeId,
    /// The node whose threads read `memory_node` at the same time.
    pub cross_node: NodeId,
    /// Threads of the measured flow.
    pub threads: usize,
    /// Threads of the cross flow.
    pub cross_threads: usize,
    /// The measured flow's read bandwidth without cross traffic, in GB/s
    /// (as the caller measured it: the pair's read-matrix entry).
    pub alone_gbs: f64,
    /// This pair's read bandwidth while the cross flow runs, in GB/s
    /// (median over the repetitions).
    pub with_cross_gbs: f64,
    /// What the cross flow read meanwhile, in GB/s: its bytes over the
    /// time from its start until it was told to stop (median over the
    /// repetitions).
    pub cross_gbs: f64,
    /// Where both flows' threads ran.
    pub thread_check: ThreadCheck,
}

/// The second flow of a cross-traffic measurement.
pub struct CrossFlow<'a> {
    /// One thread per seat reads, all on the cross node.
    pub seats: Vec<Seat>,
    /// What the cross flow reads (its own buffers, on the measured
    /// pair's memory node), each thread its share, over and over.
    pub buffers: &'a StreamBuffers,
}

/// Reads `memory_node` from `cpu_node` with `threads` threads (over
/// `buffers`) while `cross` reads it too; `alone_gbs` is the same pair's
/// bandwidth measured without it.
pub fn with_cross_traffic(
    placer: &Placer,
    pair: (NodeId, NodeId),
    threads: usize,
    buffers: &mut StreamBuffers,
    cross: CrossFlow<'_>,
    effort: Effort,
    alone_gbs: f64,
) -> Result<CrossTraffic> {
    let seats = team::seats_on_node(placer, pair.0, threads)?;
    let cross_node = cross.seats.first().map_or(pair.1, |s| s.node);
    let mut runs = Vec::with_capacity(effort.reps.max(1));
    let mut cross_runs = Vec::with_capacity(effort.reps.max(1));
    for _ in 0..effort.reps.max(1) {
        let (run, cross_run) = beside(placer, &cross, || {
            stream::stream(placer, &seats, buffers, Kernel::Read, effort.passes)
        })?;
        runs.push(run);
        cross_runs.push(cross_run);
    }
    let main = summarize(pair, Kernel::Read, threads, &runs);
    let cross_summary = summarize(
        (cross_node, pair.1),
        Kernel::Read,
        cross.seats.len(),
        &cross_runs,
    );
    Ok(CrossTraffic {
        cpu_node: pair.0,
        memory_node: pair.1,
        cross_node,
        threads,
        cross_threads: cross.seats.len(),
        alone_gbs,
        with_cross_gbs: main.gbs,
        cross_gbs: cross_summary.gbs,
        thread_check: main.thread_check.merge(cross_summary.thread_check),
    })
}

/// Runs `measured` while the cross flow reads its buffers over and over;
/// returns both flows' figures.
fn beside(
    placer: &Placer,
    cross: &CrossFlow<'_>,
    measured: impl FnOnce() -> Result<Streamed>,
) -> Result<(Streamed, Streamed)> {
    let background = Background::default();
    let source = cross.buffers.source_words();
    let share = source.len().div_ceil(cross.seats.len().max(1)).max(1);
    let shares: Vec<&[u64]> = source.chunks(share).collect();
    let bytes_read = Mutex::new(0u64);
    std::thread::scope(|scope| {
        let flow = scope.spawn(|| {
            team::run(placer, &cross.seats, |i| {
                background.started();
                let mut bytes = 0u64;
                let mine = shares.get(i).copied().unwrap_or(&[]);
                while !background.stopping() && !mine.is_empty() {
                    std::hint::black_box(stream::read(mine));
                    bytes += 8 * mine.len() as u64;
                }
                if let Ok(mut total) = bytes_read.lock() {
                    *total += bytes;
                }
            })
        });
        background.wait_started(cross.seats.len(), || flow.is_finished());
        let result = measured();
        background.stop();
        let cross_run = flow
            .join()
            .map_err(|p| ProbeError::ThreadPanicked(team::panic_text(&p)))??;
        let bytes = bytes_read.lock().map(|b| *b).unwrap_or(0);
        Ok((
            result?,
            Streamed {
                bytes,
                seconds: cross_run.wall.as_secs_f64(),
                check: cross_run.check,
                counts: None,
            },
        ))
    })
}

/// The node whose threads make cross traffic for `(cpu, memory)`: the
/// compute node nearest to `cpu` other than `cpu` and `memory` (its reads
/// of `memory` share a route with the pair's, as Li's flow 4 shares a link
/// with flow 3), or `memory` itself when no third node has CPUs.
pub fn cross_node(
    topology: &numakit_topology::Topology,
    compute: &[NodeId],
    (cpu, memory): (NodeId, NodeId),
) -> Option<NodeId> {
    let by_distance = topology.nodes_by_distance(cpu).ok()?;
    by_distance
        .into_iter()
        .find(|n| *n != cpu && *n != memory && compute.contains(n))
        .or_else(|| (memory != cpu && compute.contains(&memory)).then_some(memory))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use numakit_placement::{HugePages, Placement, PlacementMode};

    use super::*;

    #[test]
    fn sweeps_try_every_small_count_then_growing_steps() {
        assert_eq!(sweep_counts(1), vec![1]);
        assert_eq!(sweep_counts(2), vec![1, 2]);
        assert_eq!(sweep_counts(12), vec![1, 2, 3, 4, 6, 9, 12]);
        assert_eq!(sweep_counts(0), Vec::<usize>::new());
    }

    #[test]
    fn a_sweep_reports_its_points_and_where_it_saturates() {
        let topo = Arc::new(numakit_topology::discover().unwrap());
        let placer = Placer::new(topo.clone(), PlacementMode::BestEffort);
        let node = topo.compute_nodes()[0];
        let cpus = placer.cpus_of_node(node).unwrap().len();
        let mut buffers =
            StreamBuffers::new(&placer, 1 << 20, Placement::OnNode(node), HugePages::Never)
                .unwrap();
        let effort = Effort { passes: 2, reps: 3 };
        let s = sweep(
            &placer,
            (node, node),
            cpus,
            &mut buffers,
            Kernel::Read,
            effort,
        )
        .unwrap();
        assert!(!s.points.is_empty());
        assert_eq!(s.points[0].threads, 1);
        assert!(s
            .points
            .iter()
            .all(|p| p.min_gbs <= p.gbs && p.gbs <= p.max_gbs));
        assert!(s.saturated().is_some());
        assert!(s.best().unwrap().gbs >= s.saturated().unwrap().gbs);
    }

    #[test]
    fn cross_traffic_runs_both_flows() {
        let topo = Arc::new(numakit_topology::discover().unwrap());
        let placer = Placer::new(topo.clone(), PlacementMode::BestEffort);
        let node = topo.compute_nodes()[0];
        let place = Placement::OnNode(node);
        let mut mine =
            StreamBuffers::new(&placer, 1 << 20, place.clone(), HugePages::Never).unwrap();
        let theirs = StreamBuffers::new(&placer, 1 << 20, place, HugePages::Never).unwrap();
        let cross = CrossFlow {
            seats: team::seats_on_node(&placer, node, 1).unwrap(),
            buffers: &theirs,
        };
        let effort = Effort { passes: 4, reps: 1 };
        let c =
            with_cross_traffic(&placer, (node, node), 1, &mut mine, cross, effort, 1.0).unwrap();
        assert!(c.with_cross_gbs > 0.0 && c.cross_gbs > 0.0, "{c:?}");
        assert_eq!(c.thread_check.threads, 4);
    }

    #[test]
    fn the_cross_node_is_a_third_node_or_the_memory_node() {
        let four = numakit_topology::load("nehalem-ex-4s-4link").unwrap();
        let compute = four.compute_nodes();
        // Li's flow 3 (socket 0 reading socket 3 through socket 1): the
        // cross flow comes from socket 0's nearest other socket.
        let c = cross_node(&four, &compute, (0, 3)).unwrap();
        assert!(c != 0 && c != 3);
        let two = numakit_topology::load("opteron-istanbul-2s").unwrap();
        assert_eq!(cross_node(&two, &two.compute_nodes(), (0, 1)), Some(1));
        assert_eq!(cross_node(&two, &two.compute_nodes(), (0, 0)), Some(1));
        let one = numakit_topology::discover().unwrap();
        if one.compute_nodes().len() == 1 {
            let n = one.compute_nodes()[0];
            assert_eq!(cross_node(&one, &one.compute_nodes(), (n, n)), None);
        }
    }
}
