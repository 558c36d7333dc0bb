//! Errors of the shuffle primitive.

use numakit_placement::PlacementError;
use numakit_pool::PoolError;

/// Why a shuffle could not be set up or run.
#[derive(Debug, thiserror::Error)]
pub enum ShuffleError {
    #[error("the shuffle needs the same number of workers on every node, but nodes have {0:?}")]
    UnevenWorkers(Vec<usize>),

    #[error("the data layout was made for {expected} threads but the pool has {actual} workers")]
    LayoutMismatch { expected: usize, actual: usize },

    #[error("consumer {consumer} got sum {got} over {got_count} values; the reference is {want} over {want_count}")]
    WrongResult {
        consumer: usize,
        got: u64,
        got_count: u64,
        want: u64,
        want_count: u64,
    },

    #[error("bad skew `{0}` (uniform, or zipf:THETA with THETA >= 0)")]
    BadSkew(String),

    #[error(transparent)]
    Pool(#[from] PoolError),

    #[error(transparent)]
    Placement(#[from] PlacementError),
}

/// Shorthand for results of this crate.
pub type Result<T, E = ShuffleError> = std::result::Result<T, E>;
