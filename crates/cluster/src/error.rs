//! Errors of the distributed join.
//!
//! A peer that never connects, does not resolve, disconnects, goes silent
//! or sends garbage is an error that names the peer (its index and
//! address), so that an operator can tell which machine to look at.

use numakit_ops::OpsError;
use numakit_pool::PoolError;

/// Why the distributed join could not complete.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    #[error("cannot listen on {address} (process {process}): {source}")]
    Listen {
        process: usize,
        address: String,
        #[source]
        source: std::io::Error,
    },

    #[error("peer {peer}'s address `{address}` does not resolve: {why}")]
    Unresolvable {
        peer: usize,
        address: String,
        why: String,
    },

    #[error("peer {peer} ({address}) did not connect within {seconds:.0} s")]
    ConnectTimeout {
        peer: usize,
        address: String,
        seconds: f64,
    },

    #[error("peer {peer} ({address}) is not part of this join: {why}")]
    Handshake {
        peer: usize,
        address: String,
        why: String,
    },

    #[error("peer {peer} ({address}) was lost mid-join: {why}")]
    PeerLost {
        peer: usize,
        address: String,
        why: String,
    },

    #[error("process {process} could not deliver its part of the result: {why}")]
    Part { process: usize, why: String },

    #[error("the communication layer stopped: {0}")]
    Transport(String),

    #[error("network I/O: {0}")]
    Io(#[from] std::io::Error),

    #[error(transparent)]
    Ops(#[from] OpsError),

    #[error(transparent)]
    Pool(#[from] PoolError),
}

/// Shorthand for results of this crate.
pub type Result<T, E = ClusterError> = std::result::Result<T, E>;
