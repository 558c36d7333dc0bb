//! Errors of the distributed join.
//!
//! A peer that never connects, does not resolve, disconnects, goes silent
//! or sends garbage is an error that names the peer (its index and
//! address), so that an operator can tell which machine to look at. A
//! result directory that cannot be used or published is an error that
//! names the path (and, for a missing part, the process).

use std::path::PathBuf;

use numakit_io::IoError;
use numakit_ops::OpsError;
use numakit_pool::PoolError;

/// Why the distributed join could not complete.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// A request that cannot be carried out as given: a bad hostfile, a
    /// process index out of range, a spec with zero buckets, no loopback.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    /// This process could not listen on its own address.
    #[error("cannot listen on {address} (process {process}): {source}")]
    Listen {
        /// This process's index.
        process: usize,
        /// Its `host:port`, as the hostfile gives it.
        address: String,
        /// Why binding (or resolving) the address failed.
        #[source]
        source: std::io::Error,
    },

    /// A peer's address does not resolve to any socket address.
    #[error("peer {peer}'s address `{address}` does not resolve: {why}")]
    Unresolvable {
        /// The peer's process index.
        peer: usize,
        /// Its `host:port`, as the hostfile gives it.
        address: String,
        /// The resolver's answer, in words.
        why: String,
    },

    /// A peer did not connect (or could not be connected to) before the
    /// connect deadline.
    #[error("peer {peer} ({address}) did not connect within {seconds:.0} s")]
    ConnectTimeout {
        /// The peer still missing at the deadline (the first, if several).
        peer: usize,
        /// Its `host:port`.
        address: String,
        /// The connect timeout that ran out, in seconds.
        seconds: f64,
    },

    /// A peer connected but does not belong to this join: another number
    /// of processes, other join options, a duplicate index, or no answer
    /// to the greeting.
    #[error("peer {peer} ({address}) is not part of this join: {why}")]
    Handshake {
        /// The peer's process index (as it introduced itself, or as this
        /// process dialled it).
        peer: usize,
        /// Its `host:port`.
        address: String,
        /// What did not match, in words.
        why: String,
    },

    /// A connected peer was lost during the join: it went silent, its
    /// connections broke, or it gave up (the peer blamed by the verdict,
    /// not a bystander).
    #[error("peer {peer} ({address}) was lost mid-join: {why}")]
    PeerLost {
        /// The lost peer's process index.
        peer: usize,
        /// Its `host:port`.
        address: String,
        /// The evidence, in words (silent for how long, which connection
        /// ended, or whom another peer lost).
        why: String,
    },

    /// A process's part of the result (a file) failed or is missing, so
    /// the sink publishes nothing.
    #[error("process {process} could not deliver its part of the result: {why}")]
    Part {
        /// The process whose part failed.
        process: usize,
        /// Why, in words (as its delivery reported it).
        why: String,
    },

    /// The result directory cannot take this run's result and is left as
    /// it is: its path names no directory (`.`, `..`, `/`), it exists and
    /// is not a directory or cannot be inspected, or it holds files that
    /// are not an earlier numakit result (numakit replaces only its own
    /// results). See [`crate::result_dir`].
    #[error("result directory {}: {why}", dir.display())]
    ResultDirRefused {
        /// The result directory, as given.
        dir: PathBuf,
        /// Why it is refused, in words.
        why: String,
    },

    /// A process's reported part is not in the staging directory as the
    /// sink sees it: the processes do not share the result directory (it
    /// must be on one machine, or on a shared file system). Nothing is
    /// published.
    #[error(
        "process {process}'s {file} is not in {} here: the result directory must be one that every process sees (one machine, or a shared file system)",
        staging.display()
    )]
    PartNotVisible {
        /// The process whose part is missing.
        process: usize,
        /// The part's file name.
        file: String,
        /// The run's staging directory, as the sink sees it.
        staging: PathBuf,
    },

    /// The staging directory does not hold exactly the parts the
    /// processes reported (a part of another size, or a file no process
    /// reported), so nothing is published.
    #[error("{why}")]
    StagedMismatch {
        /// The run's staging directory.
        staging: PathBuf,
        /// What differs, in words (naming the file and the process).
        why: String,
    },

    /// A file or directory of the result could not be created, written,
    /// synced, listed or removed.
    #[error("cannot {action} {}: {source}", path.display())]
    ResultIo {
        /// What was attempted: `create`, `write`, `sync`, `list`, `read`
        /// or `remove`.
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },

    /// A process's part of the result could not be encoded and written
    /// (numakit's I/O layer failed).
    #[error("writing {}: {source}", path.display())]
    PartWrite {
        /// The part's path in the staging directory.
        path: PathBuf,
        /// What the I/O layer said.
        #[source]
        source: IoError,
    },

    /// The staging directory could not be put in the result directory's
    /// place; the previous result (if any) stays where it was.
    #[error("cannot publish {} as {}: {source}", staging.display(), dir.display())]
    Publish {
        /// The run's staging directory.
        staging: PathBuf,
        /// The result directory.
        dir: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },

    /// The exchange broke down inside this process: a peer broke the
    /// message protocol, timely's threads stopped, a join task panicked,
    /// or the connections did not close in time.
    #[error("the communication layer stopped: {0}")]
    Transport(String),

    /// A socket or process operation failed outside the cases above.
    #[error("network I/O: {0}")]
    Io(#[from] std::io::Error),

    /// One of numakit's operators failed (cutting, sorting, generating).
    #[error(transparent)]
    Ops(#[from] OpsError),

    /// The worker pool failed to build or to run the join's tasks.
    #[error(transparent)]
    Pool(#[from] PoolError),
}

/// Shorthand for results of this crate.
pub type Result<T, E = ClusterError> = std::result::Result<T, E>;
