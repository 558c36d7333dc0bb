//! Why an interference measurement could not be made.

use numakit_ops::OpsError;
use numakit_placement::PlacementError;
use numakit_pool::PoolError;
use numakit_probe::ProbeError;

/// An interference measurement's failure, in one line.
#[derive(Debug, thiserror::Error)]
pub enum InterfereError {
    /// The request cannot be run as given.
    #[error("{0}")]
    BadRequest(String),
    /// The measuring threads could not be placed or run.
    #[error(transparent)]
    Probe(#[from] ProbeError),
    /// A workload's memory could not be placed.
    #[error(transparent)]
    Placement(#[from] PlacementError),
    /// A workload's pool could not be built.
    #[error(transparent)]
    Pool(#[from] PoolError),
    /// The join or the aggregation failed.
    #[error(transparent)]
    Ops(#[from] OpsError),
}

/// The result of this crate's functions.
pub type Result<T, E = InterfereError> = std::result::Result<T, E>;
