//! Errors of the worker pool.

use numakit_placement::PlacementError;
use numakit_topology::NodeId;

/// Why a pool could not be built or a phase did not complete.
#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    #[error("a task panicked on worker {worker} (node {node}): {message}")]
    TaskPanicked {
        worker: usize,
        node: NodeId,
        message: String,
    },

    #[error("node {node} is not a node of this pool's topology (nodes: {known})")]
    UnknownNode { node: NodeId, known: String },

    #[error("the pool has no workers: no allowed CPU on any allowed node")]
    NoWorkers,

    #[error("a pool must have at least one thread; {0} was asked for")]
    BadThreadCount(usize),

    #[error(
        "{asked} threads is more than {max} ({per_cpu} per CPU this process may use, of {cpus}); \
         ask for fewer (--threads)"
    )]
    TooManyThreads {
        asked: usize,
        cpus: usize,
        per_cpu: usize,
        max: usize,
    },

    #[error(
        "broadcast and lock-step phases cannot be started from inside a task of the same pool"
    )]
    NestedBroadcast,

    #[error("cannot start worker thread: {0}")]
    Spawn(#[source] std::io::Error),

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
