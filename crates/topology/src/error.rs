//! Errors of topology discovery and machine descriptions.

use std::path::PathBuf;

/// Why a topology could not be discovered, loaded or queried.
#[derive(Debug, thiserror::Error)]
pub enum TopologyError {
    /// A CPU or node list (`0-3,8`) or mask (`ff,0f`) could not be parsed.
    #[error("bad id list `{text}`: {why}")]
    BadIdList {
        /// The list or mask as given (trimmed).
        text: String,
        /// What is wrong with it: the group or id that is not a number, or too large.
        why: String,
    },

    /// A file of the sysfs/procfs tree could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file that could not be read (under the discovery root).
        path: PathBuf,
        /// The I/O error the read returned.
        #[source]
        source: std::io::Error,
    },

    /// A file of the sysfs/procfs tree held something unexpected.
    #[error("unexpected content in {path}: {why}")]
    Malformed {
        /// The file or directory whose content is wrong.
        path: PathBuf,
        /// What was found there instead of what was expected.
        why: String,
    },

    /// A machine description is not valid JSON or misses a field.
    #[error("machine description {origin}: {why}")]
    BadDescription {
        /// Where the description came from: a file path or `preset <name>`.
        origin: String,
        /// The JSON parser's message, or the rule the description breaks.
        why: String,
    },

    /// No preset of that name exists.
    #[error("unknown machine preset `{name}` (known presets: {known})")]
    UnknownPreset {
        /// The name that was asked for.
        name: String,
        /// The names of all built-in presets, comma-separated.
        known: String,
    },

    /// A node id that the topology does not have.
    #[error("node {node} does not exist (nodes: {known})")]
    UnknownNode {
        /// The node id that was asked for.
        node: u32,
        /// The topology's node ids as a list string (`0-3`).
        known: String,
    },
}

/// Shorthand for results of this crate.
pub type Result<T, E = TopologyError> = std::result::Result<T, E>;
