//! Errors of the worker pool.

use numakit_placement::PlacementError;
use numakit_topology::NodeId;

/// Why a pool could not be built or a phase did not complete.
#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    /// A task panicked; the scope waited for its other tasks and reports
    /// the first panic. The pool stays usable.
    #[error("a task panicked on worker {worker} (node {node}): {message}")]
    TaskPanicked {
        /// Index of the worker the task ran on.
        worker: usize,
        /// That worker's NUMA node.
        node: NodeId,
        /// The panic message (or `non-string panic payload`).
        message: String,
    },

    /// A node id (a task's home, or one given to the builder) that the
    /// topology does not have.
    #[error("node {node} is not a node of this pool's topology (nodes: {known})")]
    UnknownNode {
        /// The id asked for.
        node: NodeId,
        /// The topology's node ids as a list string (`0-3`).
        known: String,
    },

    /// No worker could be planned (no allowed CPU on the chosen nodes), no
    /// node with workers is reachable from a task's home, or a worker thread
    /// died before reporting its pinning.
    #[error("the pool has no workers: no allowed CPU on any allowed node")]
    NoWorkers,

    /// [`crate::PoolBuilder::threads`] was given 0.
    #[error("a pool must have at least one thread; {0} was asked for")]
    BadThreadCount(usize),

    /// More workers were asked for than [`crate::MAX_THREADS_PER_CPU`] per usable CPU.
    #[error(
        "{asked} threads is more than {max} ({per_cpu} per CPU this process may use, of {cpus}); \
         ask for fewer (--threads)"
    )]
    TooManyThreads {
        /// Workers asked for.
        asked: usize,
        /// CPUs the pool may use (allowed, on the chosen nodes and CPUs).
        cpus: usize,
        /// The oversubscription limit, [`crate::MAX_THREADS_PER_CPU`].
        per_cpu: usize,
        /// The most workers allowed: `cpus * per_cpu`.
        max: usize,
    },

    /// A broadcast, lock-step or loose phase was started from a task of the
    /// same pool (it would wait for a worker that is busy running it).
    #[error(
        "broadcast and lock-step phases cannot be started from inside a task of the same pool"
    )]
    NestedBroadcast,

    /// The operating system refused to start a worker thread.
    #[error("cannot start worker thread: {0}")]
    Spawn(#[source] std::io::Error),

    /// Pinning a worker failed (strict mode), or the builder's nodes or CPUs
    /// are not allowed, have no CPU, or are empty.
    #[error(transparent)]
    Placement(#[from] PlacementError),
}

/// Shorthand for results of this crate.
pub type Result<T, E = PoolError> = std::result::Result<T, E>;

/// The text of a panic payload.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}
