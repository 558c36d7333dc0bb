//! The runtime's errors: what can go wrong running a job, in one type.

use thiserror::Error;

/// An error a job's own map or reduce code returns.
pub type JobError = Box<dyn std::error::Error + Send + Sync>;

/// Why a job did not finish.
#[derive(Debug, Error)]
pub enum MapReduceError {
    /// The job's map or reduce code returned an error.
    #[error("{phase}: {source}")]
    Job {
        /// The phase whose job code failed: "map" or "reduce".
        phase: &'static str,
        /// The error the job returned.
        #[source]
        source: JobError,
    },
    /// A task panicked; the pool is still usable.
    #[error("{phase}: a task panicked: {message}")]
    Panicked {
        /// The phase the task belonged to: "map", "reduce" or "merge".
        phase: &'static str,
        /// The panic's message, as the pool caught it.
        message: String,
    },
    /// The options or the input are not usable.
    #[error("{0}")]
    InvalidInput(String),
    /// Reading or mapping an input file failed.
    #[error("cannot read {path}")]
    Io {
        /// The file, as given (or "generated input" for
        /// [`Input::place`](crate::Input::place)).
        path: String,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// The pool could not run a phase's tasks (other than by a panic,
    /// which is [`MapReduceError::Panicked`]).
    #[error(transparent)]
    Pool(#[from] numakit_pool::PoolError),
    /// Input memory could not be allocated or placed on the pool's nodes.
    #[error(transparent)]
    Placement(#[from] numakit_placement::error::PlacementError),
}

/// Shorthand for results of the runtime.
pub type Result<T> = std::result::Result<T, MapReduceError>;
