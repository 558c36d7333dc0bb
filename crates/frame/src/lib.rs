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

pub mod aggregate;
pub mod error;
pub mod join;
pub mod keys;
pub mod load;
pub mod memory;
mod par;
mod relation;
pub mod sort;
pub mod table;
#[cfg(test)]
mod testing;

pub use error::{FrameError, Result};
pub use memory::MemoryLimit;
pub use table::{Part, RowRef, Table};
