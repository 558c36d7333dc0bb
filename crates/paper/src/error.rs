//! Why a paper's item could not be rerun.

/// A rerun's failure, in one line.
#[derive(Debug, thiserror::Error)]
pub enum PaperError {
    /// No paper by that name.
    #[error("unknown paper {0:?}: choose LI, KIEFER, CHAKRABORTY or PHOENIX")]
    UnknownPaper(String),
    /// The paper has no such figure or table.
    #[error("{paper} has no {item} (`numakit paper --list` shows what it offers)")]
    UnknownItem {
        /// The paper asked for.
        paper: String,
        /// The figure or table asked for.
        item: String,
    },
    /// A table number that is neither arabic nor roman.
    #[error("{0:?} is not a figure or table number (6, or IV)")]
    BadNumber(String),
    /// The item is listed but cannot be reproduced by a program.
    #[error("{item} cannot be reproduced: {why}")]
    NotReproducible {
        /// The item, e.g. "Li Figure 3".
        item: String,
        /// Why not.
        why: String,
    },
    /// The numakit commands underneath failed.
    #[error("{item}: {source}")]
    Run {
        /// The item, e.g. "Li Figure 6".
        item: String,
        /// What failed underneath.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// The result of this crate's functions.
pub type Result<T, E = PaperError> = std::result::Result<T, E>;

/// What an item's runner returns: any failure of the crates underneath.
pub(crate) type RunResult<T> = std::result::Result<T, Box<dyn std::error::Error + Send + Sync>>;
