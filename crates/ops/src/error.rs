//! Errors of the operators.

use numakit_placement::PlacementError;
use numakit_pool::PoolError;
use numakit_shuffle::ShuffleError;

/// Why an operator could not run.
#[derive(Debug, thiserror::Error)]
pub enum OpsError {
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    #[error("the relation was made for {expected} workers but the pool has {actual}")]
    WorkerMismatch { expected: usize, actual: usize },

    #[error("the result has more than {limit} rows, the most the memory limit allows ({rows} rows counted)")]
    ResultTooLarge { limit: u64, rows: u64 },

    #[error("the SUM of aggregate {aggregate} overflows 128 bits")]
    SumOverflow { aggregate: usize },

    #[error("result check failed: {0}")]
    WrongResult(String),

    #[error(transparent)]
    Pool(#[from] PoolError),

    #[error(transparent)]
    Placement(#[from] PlacementError),

    #[error(transparent)]
    Shuffle(#[from] ShuffleError),
}

/// Shorthand for results of this crate.
pub type Result<T, E = OpsError> = std::result::Result<T, E>;
