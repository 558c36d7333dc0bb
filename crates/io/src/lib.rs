//! numakit-io reads and writes users' tables (CSV, Parquet, Arrow IPC) as
//! [`Table`]s of 64-bit integer columns, the form numakit's operators take.
//!
//! ```no_run
//! use numakit_io::{read, write, Format};
//! # fn main() -> numakit_io::Result<()> {
//! let wanted = ["key".to_string(), "payload".to_string()];
//! let table = read("orders.parquet", None, Some(&wanted))?;
//! let keys: &[u64] = table.column("key")?.as_u64();
//! # let _ = keys;
//! write("orders.csv", &table, Some(Format::Csv))?;
//! # Ok(())
//! # }
//! ```
//!
//! What is read:
//! - Only the requested columns are read (projection pushdown), so other
//!   columns may hold strings or anything else. Every requested column must
//!   be an integer column (Int8..Int64 widen to signed, UInt8..UInt64 to
//!   unsigned 64-bit) without nulls; dates, timestamps, decimals, floats,
//!   strings and dictionaries are refused by name rather than reinterpreted.
//! - CSV needs a header row; a requested column is unsigned when it holds a
//!   value above `i64::MAX` and signed otherwise.
//! - Parquet and Arrow IPC files are read record batch by record batch,
//!   straight into the columns' `Vec<u64>`; Parquet's footer row count is
//!   reserved up front, so the values take their own size in memory and
//!   little more (a 256M-row two-column file needs 4 GiB).
//!
//! What is written: [`write()`] produces the file next to its destination
//! under a temporary name and renames it into place on success, so a
//! failure never leaves a partial file. Parquet is compressed with Zstandard
//! level 1 by default ([`ParquetCompression`]); Arrow IPC is written in the
//! file format, uncompressed.
//!
//! This crate deliberately knows nothing of NUMA placement or of the other
//! numakit crates: the caller moves the values where they are needed.

// No unsafe code here: what needs it (syscalls, raw buffers) lives in the
// placement and pool crates behind safe wrappers.
#![forbid(unsafe_code)]

mod arrow_columns;
mod atomic;
mod batch_write;
mod csv_read;
mod csv_write;
mod dictionary_choice;
mod error;
mod format;
mod ipc;
mod options;
mod parquet_io;
mod parquet_write;
mod projection;
mod source;
mod table;
mod temporaries;

use std::path::Path;

pub use atomic::{check_writable, write_file_atomically};
pub use batch_write::{write_batches, BatchWriter};
pub use error::{IoError, Result, ACCEPTED_TYPES};
pub use format::Format;
pub use options::{CsvOptions, ParquetCompression, ReadOptions, WriteOptions};
pub use source::{Projection, Source, SourceOptions, CSV_SAMPLE_ROWS};
pub use table::{Column, IntKind, Table};
pub use temporaries::remove_pending_temporaries;

/// The Arrow types read and written, re-exported so that callers use the
/// same versions.
pub use arrow_array::{self, RecordBatch};
pub use arrow_schema::{self, DataType, Field, Schema, SchemaRef};

/// Reads the table at `path` in `format` (from the extension when `None`),
/// keeping only the `columns` named, in that order (all when `None`).
///
/// CSV is read with a comma delimiter; see [`read_with`] for other options.
pub fn read(
    path: impl AsRef<Path>,
    format: Option<Format>,
    columns: Option<&[String]>,
) -> Result<Table> {
    let options = ReadOptions {
        format,
        columns: columns.map(<[String]>::to_vec),
        ..ReadOptions::default()
    };
    read_with(path, &options)
}

/// Reads the table at `path` as `options` say.
pub fn read_with(path: impl AsRef<Path>, options: &ReadOptions) -> Result<Table> {
    let path = path.as_ref();
    let columns = options.columns.as_deref();
    match Format::resolve(options.format, path)? {
        Format::Csv => csv_read::read(path, columns, &options.csv),
        Format::Parquet => parquet_io::read(path, columns),
        Format::ArrowIpc => ipc::read(path, columns),
    }
}

/// Writes `table` to `path` in `format` (from the extension when `None`),
/// replacing any file there only once the whole table is written.
///
/// CSV gets a comma delimiter and Parquet Zstandard compression; see
/// [`write_with`] for other options.
pub fn write(path: impl AsRef<Path>, table: &Table, format: Option<Format>) -> Result<()> {
    let options = WriteOptions {
        format,
        ..WriteOptions::default()
    };
    write_with(path, table, &options)
}

/// Writes `table` to `path` as `options` say, replacing any file there only
/// once the whole table is written.
pub fn write_with(path: impl AsRef<Path>, table: &Table, options: &WriteOptions) -> Result<()> {
    let path = path.as_ref();
    let format = Format::resolve(options.format, path)?;
    table.validate()?;
    options.csv.validate()?;
    atomic::write_atomically(path, |file| match format {
        Format::Csv => csv_write::write(file, path, table, &options.csv),
        Format::Parquet => parquet_io::write(file, path, table, options.parquet_compression),
        Format::ArrowIpc => ipc::write(file, path, table),
    })
}
