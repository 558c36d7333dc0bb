//! Errors of the shuffle primitive.

use numakit_placement::PlacementError;
use numakit_pool::PoolError;

/// Why a shuffle could not be set up or run.
#[derive(Debug, thiserror::Error)]
pub enum ShuffleError {
    /// The pool's nodes have different worker counts (in pool node order),
    /// so it has no S x P layout.
    #[error("the shuffle needs the same number of workers on every node, but nodes have {0:?}")]
    UnevenWorkers(Vec<usize>),

    /// Data or states made for another pool: the layouts (or the numbers
    /// of states and workers) differ.
    #[error("the data layout was made for {expected} threads but the pool has {actual} workers")]
    LayoutMismatch {
        /// Threads (N) the data or the consumer states were made for.
        expected: usize,
        /// Workers of the pool the shuffle was asked to run on.
        actual: usize,
    },

    /// A consumer's (sum, count) differs from the sequential reference.
    #[error("consumer {consumer} got sum {got} over {got_count} values; the reference is {want} over {want_count}")]
    WrongResult {
        /// The consumer (worker index) whose result is wrong.
        consumer: usize,
        /// Sum of the values it consumed.
        got: u64,
        /// Number of values it consumed.
        got_count: u64,
        /// Sum the reference expects.
        want: u64,
        /// Number of values the reference expects.
        want_count: u64,
    },

    /// A skew spec that is neither `uniform` nor `zipf:THETA` with a finite THETA >= 0.
    #[error("bad skew `{0}` (uniform, or zipf:THETA with THETA >= 0)")]
    BadSkew(String),

    /// The pool failed to run a phase (a task panicked, a nested broadcast, ...).
    #[error(transparent)]
    Pool(#[from] PoolError),

    /// Placing a buffer or pinning a migrating consumer failed.
    #[error(transparent)]
    Placement(#[from] PlacementError),
}

/// Shorthand for results of this crate.
pub type Result<T, E = ShuffleError> = std::result::Result<T, E>;
