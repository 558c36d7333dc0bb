//! Errors of the operators.

use numakit_placement::PlacementError;
use numakit_pool::PoolError;
use numakit_shuffle::ShuffleError;

/// Why an operator could not run.
#[derive(Debug, thiserror::Error)]
pub enum OpsError {
    /// An argument the operator cannot work with (a bad option, a column
    /// of the wrong type, a size too large to allocate), or a worker that
    /// failed inside the operator; the message says which.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    /// Input split for one number of workers (a relation's chunks, a list
    /// of segments per worker) given to a pool with another.
    #[error("the relation was made for {expected} workers but the pool has {actual}")]
    WorkerMismatch {
        /// Parts the input has: the workers of the pool it was made for.
        expected: usize,
        /// Workers of the pool it was given to.
        actual: usize,
    },

    /// A materialized join produced more rows than its row limit
    /// ([`JoinOptions::row_limit`](crate::join::JoinOptions::row_limit)).
    #[error("the result has more than {limit} rows, the most the memory limit allows ({rows} rows counted)")]
    ResultTooLarge {
        /// The row limit the join was given.
        limit: u64,
        /// Result rows counted, all of them (the join runs to the end).
        rows: u64,
    },

    /// An exact integer SUM left 128 bits.
    #[error("the SUM of aggregate {aggregate} overflows 128 bits")]
    SumOverflow {
        /// Index of the aggregate among the group-by's aggregates, from 0.
        aggregate: usize,
    },

    /// A result differs from the sequential reference; the message says how.
    #[error("result check failed: {0}")]
    WrongResult(String),

    /// A pool operation failed (a task panicked on a worker, a node unknown
    /// to the pool, a phase started from inside one of its tasks).
    #[error(transparent)]
    Pool(#[from] PoolError),

    /// Node-placed memory could not be allocated or bound to its node.
    #[error(transparent)]
    Placement(#[from] PlacementError),

    /// A shuffle between the workers failed.
    #[error(transparent)]
    Shuffle(#[from] ShuffleError),
}

/// Shorthand for results of this crate.
pub type Result<T, E = OpsError> = std::result::Result<T, E>;
