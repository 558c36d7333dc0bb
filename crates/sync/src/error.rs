//! Errors of the lock benchmark: a request that cannot be run as asked, a
//! thread that could not be placed or started, and a check that failed
//! (a lost update would be a broken lock, reported, never ignored).
//!
//! The locks themselves have no errors: they cannot fail.

use numakit_placement::PlacementError;

/// Why a lock benchmark could not run or did not verify.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// The request asks for something that cannot run (no locks, a thread
    /// count of 0, no nodes, ...); the text names the field.
    #[error("{0}")]
    InvalidRequest(String),

    /// A benchmark thread could not be pinned to its node.
    #[error("pinning a benchmark thread to node {node}: {source}")]
    Placement {
        /// The node the thread was to run on.
        node: u32,
        /// What placement said.
        #[source]
        source: PlacementError,
    },

    /// The system refused to start a thread.
    #[error("starting a benchmark thread: {0}")]
    Spawn(#[from] std::io::Error),

    /// A benchmark thread panicked.
    #[error("a benchmark thread panicked")]
    ThreadPanicked,

    /// A run's counts do not add up: a lost update, or a lock whose own
    /// handoff count differs from the one seen inside its critical sections.
    #[error("{lock} with {threads} thread(s) failed its check: {what}")]
    Verification {
        /// The lock's name.
        lock: String,
        /// Threads of the run.
        threads: usize,
        /// What did not add up.
        what: String,
    },
}
