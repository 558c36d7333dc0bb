//! The pool itself: worker threads grouped by node, their queues, and the
//! loop each worker runs.
//!
//! Every compute node has one task queue; every worker also has a private
//! queue for work addressed to it alone (broadcasts). A worker looks in its
//! private queue, then its node's queue, then steals from the other nodes'
//! queues, nearest node first by SLIT distance. Idle workers spin briefly
//! and then sleep. Submitting work and waiting for it is the scope's job
//! (`scope.rs`); building the pool is the builder's (`builder.rs`); the
//! layers' per-pool state is kept by `state.rs`, to which the pool's
//! `state` methods delegate.

use std::any::Any;
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use crossbeam_deque::{Injector, Steal};
use crossbeam_utils::CachePadded;

use numakit_placement::Placer;
use numakit_topology::{NodeId, Topology};

use crate::context::WorkerContext;
use crate::error::{PoolError, Result};
use crate::job::Job;
use crate::sleep::Sleep;
use crate::state::StateMap;
use crate::stats::{Counters, WorkerStats};

/// Busy spins, then yields (letting a submitting thread on the same CPU
/// run), before an idle worker goes to sleep: waking a sleeper costs a
/// futex call, far more than a task.
const SPINS_BEFORE_YIELD: usize = 64;
const YIELDS_BEFORE_SLEEP: usize = 32;

thread_local! {
    /// (pool identity, worker index) of the current thread, if it is a worker.
    static CURRENT: Cell<Option<(usize, usize)>> = const { Cell::new(None) };
}

pub(crate) struct NodeQueue {
    pub(crate) id: NodeId,
    pub(crate) queue: Injector<Job>,
    /// Other node indices, nearest first.
    pub(crate) steal_order: Vec<usize>,
}

pub(crate) struct WorkerSlot {
    pub(crate) ctx: WorkerContext,
    pub(crate) private: Injector<Job>,
    pub(crate) counters: CachePadded<Counters>,
}

pub(crate) struct Shared {
    pub(crate) placer: Placer,
    pub(crate) nodes: Vec<NodeQueue>,
    pub(crate) workers: Vec<WorkerSlot>,
    pub(crate) sleep: Sleep,
    pub(crate) shutdown: AtomicBool,
    pub(crate) next_node: AtomicUsize,
    /// Broadcasts take turns: two interleaved lock-step phases would each
    /// hold some workers at their own barrier and wait forever for the rest.
    pub(crate) broadcast_turn: std::sync::Mutex<()>,
}

/// A NUMA-aware pool of pinned worker threads. Build it once with
/// [`crate::PoolBuilder`] and reuse it across phases and jobs.
///
/// # Examples
///
/// A pool for a described two-node machine, with pinning off so that the
/// example runs the same on any machine (on a real one, build it from
/// `numakit_topology::discover()` and keep the default strict placement).
/// Tasks borrow from the caller and are queued at their data's home node;
/// the scope returns when all of them have run.
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use std::sync::Arc;
///
/// use numakit_placement::PlacementMode;
/// use numakit_pool::PoolBuilder;
/// use numakit_topology::MachineDescription;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let machine = r#"{"name": "two", "description": "", "source": "example",
///     "nodes": [{"id": 0, "socket": 0, "cores": 2, "threads_per_core": 1},
///               {"id": 1, "socket": 1, "cores": 2, "threads_per_core": 1}]}"#;
/// let topology = Arc::new(MachineDescription::from_json(machine, "example")?.to_topology());
/// let pool = PoolBuilder::new(topology)
///     .placement(PlacementMode::Off)
///     .build()?;
/// assert_eq!(pool.workers(), 4);
///
/// let data: Vec<u64> = (1..=1000).collect();
/// let sum = AtomicU64::new(0);
/// pool.scope(|scope| -> numakit_pool::Result<()> {
///     for (i, chunk) in data.chunks(100).enumerate() {
///         let sum = &sum;
///         // Say chunk i lives on node i % 2: node i % 2's workers take it first.
///         scope.spawn_on(i as u32 % 2, move |_worker| {
///             sum.fetch_add(chunk.iter().sum::<u64>(), Ordering::Relaxed);
///         })?;
///     }
///     Ok(())
/// })??;
/// assert_eq!(sum.into_inner(), 500_500);
///
/// // The same pool runs the next job: here one call on every worker.
/// let nodes = pool.broadcast(|worker| worker.node)?;
/// assert_eq!(nodes, [0, 0, 1, 1]);
/// # Ok(())
/// # }
/// ```
pub struct Pool {
    pub(crate) shared: Arc<Shared>,
    handles: Vec<JoinHandle<()>>,
    /// Runtime state of the layers above, dropped after the workers stop.
    pub(crate) state: StateMap,
}

impl Shared {
    fn identity(self: &Arc<Self>) -> usize {
        Arc::as_ptr(self) as usize
    }

    /// Index of the queue for tasks whose data lives on `node`: the node
    /// itself, or the nearest node with workers for memory-only nodes.
    pub(crate) fn route(&self, node: NodeId) -> Result<usize> {
        if let Some(i) = self.nodes.iter().position(|q| q.id == node) {
            return Ok(i);
        }
        let topo = self.placer.topology();
        let nearest = topo
            .nodes_by_distance(node)
            .map_err(|_| PoolError::UnknownNode {
                node,
                known: topo.node_ids().to_list_string(),
            })?;
        nearest
            .iter()
            .find_map(|n| self.nodes.iter().position(|q| q.id == *n))
            .ok_or(PoolError::NoWorkers)
    }

    /// A node index for tasks without a home: round-robin.
    pub(crate) fn any_node(&self) -> usize {
        self.next_node.fetch_add(1, Ordering::Relaxed) % self.nodes.len()
    }

    pub(crate) fn push_node(&self, node_index: usize, job: Job) {
        self.nodes[node_index].queue.push(job);
        self.sleep.notify();
    }

    pub(crate) fn push_worker(&self, worker: usize, job: Job) {
        self.workers[worker].private.push(job);
        self.sleep.notify();
    }

    /// The next job for `worker`, and whether it was stolen from another node.
    pub(crate) fn find_job(&self, worker: usize) -> Option<(Job, bool)> {
        let slot = &self.workers[worker];
        if let Some(job) = take(&slot.private) {
            return Some((job, false));
        }
        let home = &self.nodes[slot.ctx.node_index];
        if let Some(job) = take(&home.queue) {
            return Some((job, false));
        }
        home.steal_order
            .iter()
            .find_map(|&other| take(&self.nodes[other].queue))
            .map(|job| (job, true))
    }

    pub(crate) fn execute(&self, worker: usize, job: Job, stolen: bool) {
        let slot = &self.workers[worker];
        let start = Instant::now();
        let Job { run, scope } = job;
        run(&slot.ctx);
        slot.counters
            .record(stolen, start.elapsed().as_nanos() as u64);
        scope.finish_one();
    }

    /// The worker index of the calling thread if it belongs to this pool.
    pub(crate) fn current_worker(self: &Arc<Self>) -> Option<usize> {
        let me = self.identity();
        CURRENT
            .with(|c| c.get())
            .and_then(|(pool, w)| (pool == me).then_some(w))
    }
}

fn take(queue: &Injector<Job>) -> Option<Job> {
    loop {
        match queue.steal() {
            Steal::Success(job) => return Some(job),
            Steal::Empty => return None,
            Steal::Retry => std::hint::spin_loop(),
        }
    }
}

/// The loop of one worker thread.
pub(crate) fn worker_main(shared: Arc<Shared>, index: usize) {
    CURRENT.with(|c| c.set(Some((shared.identity(), index))));
    loop {
        let epoch = shared.sleep.epoch();
        if let Some((job, stolen)) = shared.find_job(index) {
            shared.execute(index, job, stolen);
            continue;
        }
        if shared.shutdown.load(Ordering::SeqCst) {
            break;
        }
        let woke = (0..SPINS_BEFORE_YIELD).any(|_| {
            std::hint::spin_loop();
            shared.sleep.epoch() != epoch
        }) || (0..YIELDS_BEFORE_SLEEP).any(|_| {
            std::thread::yield_now();
            shared.sleep.epoch() != epoch
        });
        if !woke {
            shared.sleep.wait(epoch, &shared.shutdown);
        }
    }
}

impl Pool {
    pub(crate) fn from_parts(shared: Arc<Shared>, handles: Vec<JoinHandle<()>>) -> Self {
        Self {
            shared,
            handles,
            state: StateMap::default(),
        }
    }

    /// Number of workers.
    pub fn workers(&self) -> usize {
        self.shared.workers.len()
    }

    /// The nodes that have workers, in pool order.
    pub fn nodes(&self) -> Vec<NodeId> {
        self.shared.nodes.iter().map(|q| q.id).collect()
    }

    /// The context of every worker, in index order.
    pub fn worker_contexts(&self) -> Vec<WorkerContext> {
        self.shared.workers.iter().map(|w| w.ctx.clone()).collect()
    }

    /// The topology the pool was built for.
    pub fn topology(&self) -> &Arc<Topology> {
        self.shared.placer.topology()
    }

    /// The placer the workers were pinned with (for placing buffers to
    /// match the pool).
    pub fn placer(&self) -> &Placer {
        &self.shared.placer
    }

    /// A snapshot of every worker's counters.
    pub fn stats(&self) -> Vec<WorkerStats> {
        self.shared
            .workers
            .iter()
            .map(|w| WorkerStats::read(w.ctx.index, w.ctx.node, w.ctx.cpu, &w.counters))
            .collect()
    }

    /// Zeroes every worker's counters.
    pub fn reset_stats(&self) {
        self.shared.workers.iter().for_each(|w| w.counters.reset());
    }

    /// This pool's value of type `T`, made with `T::default()` on first
    /// use (see [`Pool::state_or_init`]).
    pub fn state<T: Any + Send + Sync + Default>(&self) -> Arc<T> {
        self.state_or_init(T::default)
    }

    /// This pool's value of type `T`, made by `init` on first use.
    ///
    /// The pool keeps one value per type for layers above it that need
    /// runtime state per pool rather than per process (a cache of buffers
    /// its workers reuse, a measurement made once for its workers): the
    /// type is the key, so a crate keys its state by a type of its own
    /// (private, or public when others may look). Every later call, from
    /// any thread, gets the same value; it is dropped when the pool is
    /// dropped and nothing else holds an `Arc` of it (a value whose `Drop`
    /// frees resources frees them then). Interior mutability is the
    /// value's own business.
    ///
    /// `init` runs once, on the first caller's thread, outside the pool's
    /// lock: callers of other types go on meanwhile, callers of the same
    /// type wait for it. If `init` panics, the next call tries again.
    /// `init` must not ask for its own type (that waits forever).
    ///
    /// This is not a store for per-task or per-job data, and values are
    /// never removed or replaced.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// use std::sync::Arc;
    ///
    /// use numakit_placement::PlacementMode;
    /// use numakit_pool::PoolBuilder;
    ///
    /// /// Rows this pool has seen (a layer above the pool owns the type).
    /// #[derive(Default)]
    /// struct RowsSeen(AtomicU64);
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let topology = Arc::new(numakit_topology::discover()?);
    /// let pool = PoolBuilder::new(topology)
    ///     .threads(1)
    ///     .placement(PlacementMode::Off)
    ///     .build()?;
    /// pool.state::<RowsSeen>().0.fetch_add(10, Ordering::Relaxed);
    /// pool.state::<RowsSeen>().0.fetch_add(5, Ordering::Relaxed);
    /// assert_eq!(pool.state::<RowsSeen>().0.load(Ordering::Relaxed), 15);
    ///
    /// // A value that needs the pool to be made: init runs once.
    /// let nodes = pool.state_or_init(|| pool.nodes().len());
    /// assert_eq!(*nodes, 1);
    /// assert_eq!(*pool.state_or_init(|| 99usize), 1);
    /// # Ok(())
    /// # }
    /// ```
    pub fn state_or_init<T, F>(&self, init: F) -> Arc<T>
    where
        T: Any + Send + Sync,
        F: FnOnce() -> T,
    {
        self.state.get_or_init(init)
    }

    /// This pool's value of type `T` if one was made, without making one.
    pub fn state_if_made<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        self.state.get::<T>()
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.shared.shutdown.store(true, Ordering::SeqCst);
        self.shared.sleep.notify();
        for handle in self.handles.drain(..) {
            if handle.join().is_err() {
                log::error!("a numakit worker thread panicked outside any task");
            }
        }
    }
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("workers", &self.workers())
            .field("nodes", &self.nodes())
            .finish()
    }
}
