//! Errors of pinning and memory placement.

use std::io;

use numakit_topology::{NodeId, TopologyError};

/// Why a thread could not be pinned or memory could not be placed.
#[derive(Debug, thiserror::Error)]
pub enum PlacementError {
    #[error("node {node} does not exist (nodes: {known})")]
    UnknownNode { node: NodeId, known: String },

    #[error("node {node} is not allowed for this process (allowed nodes: {allowed}); a cpuset, numactl or the container restricts it")]
    DisallowedNode { node: NodeId, allowed: String },

    #[error("node {node} has no CPU this process may use")]
    NoCpusOnNode { node: NodeId },

    #[error("node {node} has no memory")]
    NoMemoryOnNode { node: NodeId },

    #[error("empty CPU set: a thread must be allowed to run somewhere")]
    EmptyCpuSet,

    #[error("CPUs {cpus} are not allowed for this process (allowed: {allowed})")]
    DisallowedCpus { cpus: String, allowed: String },

    #[error("{call} is not permitted here (EPERM); containers often forbid it, try --placement best-effort")]
    NotPermitted { call: &'static str },

    #[error("{call} is not supported by this kernel (ENOSYS); try --placement best-effort")]
    NotSupported { call: &'static str },

    #[error("out of memory placing {bytes} bytes{}", node.map(|n| format!(" on node {n}")).unwrap_or_default())]
    OutOfMemory { node: Option<NodeId>, bytes: usize },

    #[error("no reserved huge pages for {bytes} bytes: reserve some in /proc/sys/vm/nr_hugepages, or use transparent huge pages")]
    NoReservedHugePages { bytes: usize },

    #[error("{call} failed: {source}")]
    Os {
        call: &'static str,
        #[source]
        source: io::Error,
    },

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
