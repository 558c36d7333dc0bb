//! What a job run measured: the wall-clock time of each phase (split,
//! map, reduce and merge, as Phoenix times them), where each phase's
//! worker time went (user, system, idle: Phoenix's Figure 10, from
//! `getrusage` at the phase boundaries) and where its map tasks ran.

use std::time::Instant;

use numakit_pool::WorkerStats;
use numakit_topology::NodeId;
use serde::Serialize;

/// The phases of one run, in seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct PhaseSeconds {
    /// Cutting the input and locating the splits.
    pub split: f64,
    /// Running the map tasks, each folding into its worker's container.
    pub map: f64,
    /// Cutting containers into partitions, merging each partition's
    /// states across workers, and reducing them.
    pub reduce: f64,
    /// Joining (and ordering) the reduced partitions into one output.
    pub merge: f64,
}

impl PhaseSeconds {
    /// The four phases together, in seconds.
    pub fn total(&self) -> f64 {
        self.split + self.map + self.reduce + self.merge
    }

    /// Adds another run's phases (iterative jobs report the sum).
    pub fn add(&mut self, other: &PhaseSeconds) {
        self.split += other.split;
        self.map += other.map;
        self.reduce += other.reduce;
        self.merge += other.merge;
    }
}

/// Where one phase's worker time went, in seconds: CPU time in user and
/// in system mode (the whole process's, so the calling thread's share of
/// the work counts too), and the rest of the workers' wall time, idle
/// (`wall x workers - user - system`, at least 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct CpuSplit {
    /// CPU time in user mode.
    pub user: f64,
    /// CPU time in the kernel (page faults, system calls).
    pub system: f64,
    /// Worker time spent neither: waiting for tasks, the phase's end, or
    /// the CPU.
    pub idle: f64,
}

/// [`CpuSplit`] of each phase (Phoenix's Figure 10).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct PhaseCpu {
    /// Cutting the input and locating the splits.
    pub split: CpuSplit,
    /// The map tasks.
    pub map: CpuSplit,
    /// Partitioning, merging and reducing.
    pub reduce: CpuSplit,
    /// Joining the reduced partitions.
    pub merge: CpuSplit,
}

/// A point in wall-clock and process CPU time; `None` CPU time where
/// `getrusage` fails (then no split is reported).
#[derive(Clone, Copy, Debug)]
pub(crate) struct CpuMark {
    wall: Instant,
    cpu: Option<(f64, f64)>,
}

impl CpuMark {
    /// Now.
    pub(crate) fn now() -> Self {
        CpuMark {
            wall: Instant::now(),
            cpu: numakit_placement::sys::process_cpu_seconds().ok(),
        }
    }

    /// The split of the time from `self` to `later` over `workers`.
    pub(crate) fn until(&self, later: &CpuMark, workers: usize) -> Option<CpuSplit> {
        let ((u0, s0), (u1, s1)) = (self.cpu?, later.cpu?);
        let (user, system) = ((u1 - u0).max(0.0), (s1 - s0).max(0.0));
        let wall = later.wall.duration_since(self.wall).as_secs_f64();
        Some(CpuSplit {
            user,
            system,
            idle: (wall * workers as f64 - user - system).max(0.0),
        })
    }
}

/// Map tasks of one node: run by its own workers, or stolen by others.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct NodeTasks {
    /// The node (one entry per node of the pool's workers).
    pub node: NodeId,
    /// Map tasks whose data was on this node (per the kernel).
    pub homed: u64,
    /// Tasks this node's workers ran from their own node's queue.
    pub local: u64,
    /// Tasks this node's workers took from another node's queue.
    pub stolen: u64,
}

/// What one run measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct JobStats {
    /// Wall-clock time of each phase.
    pub seconds: PhaseSeconds,
    /// Map tasks run: the splits the job cut its input into.
    pub map_tasks: usize,
    /// Reduce partitions (reduce tasks), as asked or four per worker.
    pub reduce_partitions: usize,
    /// Every split's node was known from the kernel (always on one node).
    pub splits_located: bool,
    /// Map tasks per node, in the order the nodes' workers come in the pool.
    pub per_node: Vec<NodeTasks>,
    /// User, system and idle time of each phase; `None` where the
    /// process's CPU time cannot be read.
    pub cpu: Option<PhaseCpu>,
}

/// The map phase's task counts per node: the pool's counters after the
/// phase minus before.
pub(crate) fn per_node_tasks(
    before: &[WorkerStats],
    after: &[WorkerStats],
    homed: &[(NodeId, u64)],
) -> Vec<NodeTasks> {
    let mut out: Vec<NodeTasks> = Vec::new();
    for (b, a) in before.iter().zip(after) {
        let i = match out.iter().position(|n| n.node == a.node) {
            Some(i) => i,
            None => {
                out.push(NodeTasks {
                    node: a.node,
                    ..NodeTasks::default()
                });
                out.len() - 1
            }
        };
        let entry = &mut out[i];
        entry.local += a.tasks_local.saturating_sub(b.tasks_local);
        entry.stolen += a.tasks_stolen.saturating_sub(b.tasks_stolen);
    }
    for n in &mut out {
        n.homed = homed.iter().find(|h| h.0 == n.node).map_or(0, |h| h.1);
    }
    out
}
