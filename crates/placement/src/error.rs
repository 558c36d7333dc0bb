//! Errors of pinning and memory placement.

use std::io;

use numakit_topology::{NodeId, TopologyError};

/// Why a thread could not be pinned or memory could not be placed.
#[derive(Debug, thiserror::Error)]
pub enum PlacementError {
    /// A node id the topology does not have (or an empty node set).
    #[error("node {node} does not exist (nodes: {known})")]
    UnknownNode {
        /// The id asked for (`u32::MAX` when an empty node set was given).
        node: NodeId,
        /// The topology's node ids as a list string (`0-3`).
        known: String,
    },

    /// A node that exists but that this process may not allocate on.
    #[error("node {node} is not allowed for this process (allowed nodes: {allowed}); a cpuset, numactl or the container restricts it")]
    DisallowedNode {
        /// The node that exists but is outside `Mems_allowed`.
        node: NodeId,
        /// The nodes this process may use, as a list string.
        allowed: String,
    },

    /// Pinning to a node that is memory-only or whose CPUs are all outside
    /// the affinity mask.
    #[error("node {node} has no CPU this process may use")]
    NoCpusOnNode {
        /// The node a thread was to be pinned to.
        node: NodeId,
    },

    /// Memory was asked for on a CPU-only node (its size is known to be 0).
    #[error("node {node} has no memory")]
    NoMemoryOnNode {
        /// The node memory was to be placed on.
        node: NodeId,
    },

    /// A thread was to be pinned to no CPU at all.
    #[error("empty CPU set: a thread must be allowed to run somewhere")]
    EmptyCpuSet,

    /// Pinning to CPUs outside this process's affinity mask or cpuset.
    #[error("CPUs {cpus} are not allowed for this process (allowed: {allowed})")]
    DisallowedCpus {
        /// The requested CPUs outside the allowed set, as a list string.
        cpus: String,
        /// The CPUs this process may run on, as a list string.
        allowed: String,
    },

    /// The kernel refused the call (EPERM or EACCES), as containers often do.
    #[error("{call} is not permitted here (EPERM); containers often forbid it, try --placement best-effort")]
    NotPermitted {
        /// The system call that was refused (`mbind`, `sched_setaffinity`, ...).
        call: &'static str,
    },

    /// The kernel does not have the call (ENOSYS), e.g. built without NUMA.
    #[error("{call} is not supported by this kernel (ENOSYS); try --placement best-effort")]
    NotSupported {
        /// The system call the kernel lacks.
        call: &'static str,
    },

    /// The kernel had no memory for the request (ENOMEM), the node is known
    /// to be too small for it, or a buffer was asked to outgrow its capacity.
    #[error("out of memory placing {bytes} bytes{}", node.map(|n| format!(" on node {n}")).unwrap_or_default())]
    OutOfMemory {
        /// The node the memory was for; `None` when no single node was asked for.
        node: Option<NodeId>,
        /// The size asked for in bytes (`usize::MAX` when the size overflowed).
        bytes: usize,
    },

    /// A `HugePages::Reserved` mapping failed: the hugetlbfs pool is empty or too small.
    #[error("no reserved huge pages for {bytes} bytes: reserve some in /proc/sys/vm/nr_hugepages, or use transparent huge pages")]
    NoReservedHugePages {
        /// The size of the mapping asked for, in bytes.
        bytes: usize,
    },

    /// Any other failure of a system call, with its errno.
    #[error("{call} failed: {source}")]
    Os {
        /// The system call that failed.
        call: &'static str,
        /// The error the call returned (its `raw_os_error` is the errno).
        #[source]
        source: io::Error,
    },

    /// The topology could not answer a query (e.g. an unknown node).
    #[error(transparent)]
    Topology(#[from] TopologyError),
}

impl PlacementError {
    /// Maps an errno from `call` to the matching variant.
    pub fn from_os(
        call: &'static str,
        source: io::Error,
        node: Option<NodeId>,
        bytes: usize,
    ) -> Self {
        match source.raw_os_error() {
            Some(libc::EPERM) | Some(libc::EACCES) => Self::NotPermitted { call },
            Some(libc::ENOSYS) => Self::NotSupported { call },
            Some(libc::ENOMEM) => Self::OutOfMemory { node, bytes },
            _ => Self::Os { call, source },
        }
    }

    /// Whether this is the system refusing NUMA control (as opposed to a
    /// mistake in the request): the errors best-effort mode tolerates.
    pub fn is_refusal(&self) -> bool {
        match self {
            Self::NotPermitted { .. } | Self::NotSupported { .. } => true,
            Self::Os { source, .. } => source.raw_os_error() == Some(libc::EINVAL),
            _ => false,
        }
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = PlacementError> = std::result::Result<T, E>;
