//! Errors of topology discovery and machine descriptions.

use std::path::PathBuf;

/// Why a topology could not be discovered, loaded or queried.
#[derive(Debug, thiserror::Error)]
pub enum TopologyError {
    /// A CPU or node list (`0-3,8`) or mask (`ff,0f`) could not be parsed.
    #[error("bad id list `{text}`: {why}")]
    BadIdList { text: String, why: String },

    /// A file of the sysfs/procfs tree could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A file of the sysfs/procfs tree held something unexpected.
    #[error("unexpected content in {path}: {why}")]
    Malformed { path: PathBuf, why: String },

    /// A machine description is not valid JSON or misses a field.
    #[error("machine description {origin}: {why}")]
    BadDescription { origin: String, why: String },

    /// No preset of that name exists.
    #[error("unknown machine preset `{name}` (known presets: {known})")]
    UnknownPreset { name: String, known: String },

    /// A node id that the topology does not have.
    #[error("node {node} does not exist (nodes: {known})")]
    UnknownNode { node: u32, known: String },
}

/// Shorthand for results of this crate.
pub type Result<T, E = TopologyError> = std::result::Result<T, E>;
