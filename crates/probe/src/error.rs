//! The probe's typed errors: what the user asked for that cannot be
//! measured here, and what the layers below refused.

use numakit_topology::NodeId;
use thiserror::Error;

/// Why a probe could not run.
#[derive(Debug, Error)]
pub enum ProbeError {
    /// The topology layer failed: discovering the machine, or an unknown
    /// node or CPU.
    #[error(transparent)]
    Topology(#[from] numakit_topology::TopologyError),
    /// The placement layer refused: pinning a thread, binding or
    /// querying a buffer's pages.
    #[error(transparent)]
    Placement(#[from] numakit_placement::PlacementError),
    /// The worker pool of a strategy instance could not be built or run.
    #[error(transparent)]
    Pool(#[from] numakit_pool::PoolError),
    /// One of numakit's operators (data generation, scan, aggregation,
    /// join) failed in a strategy's workload.
    #[error(transparent)]
    Ops(#[from] numakit_ops::OpsError),
    /// A count that must be positive was zero.
    #[error("{what} must be at least 1")]
    Zero {
        /// What was zero, as the message names it (`threads`,
        /// `repetitions`, ...).
        what: &'static str,
    },
    /// More threads on a node than it has CPUs this process may use.
    #[error("{threads} threads on node {node}, which has only {cpus} CPU(s) this process may use")]
    TooManyThreads {
        /// The node asked for.
        node: NodeId,
        /// Threads (or instances) asked for on it.
        threads: usize,
        /// CPUs of the node this process may use.
        cpus: usize,
    },
    /// A node that does not exist or that this process may not use.
    #[error("node {node} cannot be probed: {why}")]
    BadNode {
        /// The node asked for.
        node: NodeId,
        /// Why the placement layer refused it, in words.
        why: String,
    },
    /// Nothing to probe: no allowed node with CPUs, or an empty selection.
    #[error("nothing to probe: {0}")]
    Nothing(String),
    /// A buffer that does not fit in the memory left.
    #[error("{what} needs {need} but only {left} is available{place}")]
    DoesNotFit {
        /// The buffer, as the message names it (`the latency buffer`, ...).
        what: String,
        /// Its size, human-readable (`2 GiB`).
        need: String,
        /// Free memory the kernel reports where it would go,
        /// human-readable (a probe may take at most 90% of it).
        left: String,
        /// Where, as a suffix of the message (` on node 3`), or empty.
        place: String,
    },
    /// A buffer that would take the process past its memory limit.
    #[error(transparent)]
    MemoryLimit(#[from] numakit_placement::LimitExceeded),
    /// A size or count no measurement can use: too small to measure what
    /// is asked, or too large for this machine or process.
    #[error("{0}")]
    BadSize(String),
    /// A measuring thread panicked (a bug: the message says where).
    #[error("a measuring thread panicked: {0}")]
    ThreadPanicked(String),
}

/// The probe's result type.
pub type Result<T> = std::result::Result<T, ProbeError>;
