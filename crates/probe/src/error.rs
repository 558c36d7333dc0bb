//! The probe's typed errors: what the user asked for that cannot be
//! measured here, and what the layers below refused.

use numakit_topology::NodeId;
use thiserror::Error;

/// Why a probe could not run.
#[derive(Debug, Error)]
pub enum ProbeError {
    #[error(transparent)]
    Topology(#[from] numakit_topology::TopologyError),
    #[error(transparent)]
    Placement(#[from] numakit_placement::PlacementError),
    #[error(transparent)]
    Pool(#[from] numakit_pool::PoolError),
    #[error(transparent)]
    Ops(#[from] numakit_ops::OpsError),
    /// A count that must be positive was zero.
    #[error("{what} must be at least 1")]
    Zero { what: &'static str },
    /// More threads on a node than it has CPUs this process may use.
    #[error("{threads} threads on node {node}, which has only {cpus} CPU(s) this process may use")]
    TooManyThreads {
        node: NodeId,
        threads: usize,
        cpus: usize,
    },
    /// A node that does not exist or that this process may not use.
    #[error("node {node} cannot be probed: {why}")]
    BadNode { node: NodeId, why: String },
    /// Nothing to probe: no allowed node with CPUs, or an empty selection.
    #[error("nothing to probe: {0}")]
    Nothing(String),
    /// A buffer that does not fit in the memory left.
    #[error("{what} needs {need} but only {left} is available{place}")]
    DoesNotFit {
        what: String,
        need: String,
        left: String,
        place: String,
    },
    /// A buffer that would take the process past its memory limit.
    #[error(transparent)]
    MemoryLimit(#[from] numakit_placement::LimitExceeded),
    /// A size that is too small to measure what is asked.
    #[error("{0}")]
    BadSize(String),
    /// A measuring thread panicked (a bug: the message says where).
    #[error("a measuring thread panicked: {0}")]
    ThreadPanicked(String),
}

/// The probe's result type.
pub type Result<T> = std::result::Result<T, ProbeError>;
