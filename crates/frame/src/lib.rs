//! # numakit-frame
//!
//! numakit's table layer: real tables (Arrow arrays of every common type,
//! with nulls and names) through the NUMA-aware operators, from a file or
//! from memory to a result table.
//!
//! It sits between the I/O layer (which decodes files into Arrow record
//! batches) and the operators (which work on 64-bit keys and payloads):
//! - [`load`] decodes a file's units (Parquet row groups, CSV byte ranges,
//!   IPC batches) on the pool's workers, each part landing on the node of
//!   the worker that decoded it;
//! - [`keys`] turns key columns of any type into 64-bit codes (by value,
//!   or through an exact dictionary), so the kernels never see a string;
//! - [`join`], [`aggregate`] and [`sort`] take a request, run the kernels
//!   on (code, row) tuples and gather the result's columns by row;
//! - [`memory`] holds the memory limit every step checks before it
//!   allocates.
//!
//! It prints nothing and parses no command lines: the CLI and the Python
//! package render its reports.

// No unsafe code here: what needs it (syscalls, raw buffers) lives in the
// placement and pool crates behind safe wrappers.
#![forbid(unsafe_code)]

pub mod aggregate;
pub mod error;
pub mod input;
pub mod join;
pub mod keys;
pub mod load;
pub mod memory;
mod par;
pub mod reference;
mod relation;
mod request;
pub mod sample;
pub mod sink;
pub mod sort;
mod sort_keys_only;
pub mod table;
#[cfg(test)]
mod testing;

pub use error::{FrameError, Result};

/// How a request from its inputs is run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunOptions {
    /// Times the operator runs on the loaded inputs (results must agree).
    pub reps: usize,
    /// Check the result against the plain reference ([`mod@reference`]).
    pub verify: bool,
    /// Inputs with more rows than this are not verified (an error).
    pub verify_limit_rows: usize,
    /// Run an operator that can while its file is read (else the file is
    /// read whole first, and operator times exclude reading).
    pub stream: bool,
    /// Decoded bytes of a streamed input read at a time (a join's right
    /// side); at least one unit per worker is read.
    pub piece_bytes: u64,
    /// Rows a sort gathers and hands on at a time when its result goes to
    /// a sink (`None`: about a million per worker).
    pub window_rows: Option<usize>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            reps: 1,
            verify: false,
            verify_limit_rows: 50_000_000,
            stream: true,
            piece_bytes: join::PIECE_BYTES,
            window_rows: None,
        }
    }
}

impl RunOptions {
    pub(crate) fn check_verify_size(&self, rows: usize) -> Result<()> {
        if self.verify && rows > self.verify_limit_rows {
            return Err(FrameError::InvalidRequest(format!(
                "--verify is limited to {} input rows (the reference is sequential); this run has {rows}",
                self.verify_limit_rows
            )));
        }
        Ok(())
    }
}
pub use input::Input;
pub use memory::MemoryLimit;
pub use table::{Part, RowRef, Table};
