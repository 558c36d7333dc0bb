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
        phase: &'static str,
        #[source]
        source: JobError,
    },
    /// A task panicked; the pool is still usable.
    #[error("{phase}: a task panicked: {message}")]
    Panicked {
        phase: &'static str,
        message: String,
    },
    /// The options or the input are not usable.
    #[error("{0}")]
    InvalidInput(String),
    /// Reading or mapping an input file failed.
    #[error("cannot read {path}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Pool(#[from] numakit_pool::PoolError),
    #[error(transparent)]
    Placement(#[from] numakit_placement::error::PlacementError),
}

pub type Result<T> = std::result::Result<T, MapReduceError>;
