//! The error type of numakit-io: one variant per way reading or writing a
//! table can fail, each with a message a user can act on (which file, which
//! column, which line or row, what was expected).
//!
//! It deliberately does not try to recover or guess: a file that is not what
//! it claims to be is reported, never silently patched.

use std::path::PathBuf;

/// Result alias used throughout numakit-io.
pub type Result<T, E = IoError> = std::result::Result<T, E>;

/// What the integer columns of a table may be; quoted in type errors.
pub const ACCEPTED_TYPES: &str =
    "Int8, Int16, Int32, Int64 (read as signed 64-bit) or UInt8, UInt16, UInt32, UInt64 \
     (read as unsigned 64-bit), without nulls";

/// Everything that can go wrong while reading or writing a table.
#[derive(Debug, thiserror::Error)]
pub enum IoError {
    /// The format could not be told from the file name or from its name.
    #[error(
        "unknown table format {given:?}: expected csv, parquet (.parquet, .pq) or arrow \
         (.arrow, .ipc, .feather); name the format with --format if the extension is unusual"
    )]
    UnknownFormat {
        /// The extension or name that was not recognised.
        given: String,
    },

    /// A file could not be opened, created, read or renamed.
    #[error("cannot {action} {path:?}: {source}")]
    File {
        /// What was being done ("open", "create a temporary file beside", ...).
        action: &'static str,
        /// The file concerned.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },

    /// A requested column is not in the file or table.
    #[error("column {column:?} not found; {}", describe_available(.available))]
    ColumnNotFound {
        /// The name that was asked for.
        column: String,
        /// The columns that do exist, in order.
        available: Vec<String>,
    },

    /// A column name occurs twice where it must be unique.
    #[error("column {column:?} {context}")]
    DuplicateColumn {
        /// The repeated name.
        column: String,
        /// Where the repetition was found ("is requested twice", ...).
        context: &'static str,
    },

    /// A requested column holds something other than integers.
    #[error("column {column:?} has type {found}; only integer columns are accepted: {accepted}")]
    UnsupportedType {
        /// The column's name.
        column: String,
        /// Its type as the file declares it.
        found: String,
        /// What would have been accepted ([`ACCEPTED_TYPES`]).
        accepted: &'static str,
    },

    /// A requested column holds a null (or, in CSV, an empty field).
    #[error("column {column:?} contains a null at row {row} (data rows counted from 1); nulls are not supported")]
    Null {
        /// The column's name.
        column: String,
        /// The first row holding a null, counted from 1.
        row: u64,
    },

    /// A CSV field that should be an integer is not one.
    #[error("{path:?}, line {line}, column {column:?}: {field:?} is {reason}")]
    CsvValue {
        /// The CSV file.
        path: PathBuf,
        /// The line the record starts on, counted from 1 (the header is line 1).
        line: u64,
        /// The column's name.
        column: String,
        /// The offending text (shortened when very long).
        field: String,
        /// Why it was refused ("not an integer", "out of the 64-bit range").
        reason: &'static str,
    },

    /// A CSV record has more or fewer fields than the header.
    #[error(
        "{path:?}, line {line}: the record has {found} field(s) but the header has {expected} \
         (a field is missing or extra)"
    )]
    CsvFieldCount {
        /// The CSV file.
        path: PathBuf,
        /// The line the record starts on, counted from 1.
        line: u64,
        /// How many fields the record has.
        found: usize,
        /// How many the header has.
        expected: usize,
    },

    /// The first row of a CSV file looks like data rather than column names.
    #[error(
        "{path:?}: the first line holds only numbers ({first_line}); a header row naming the \
         columns is required"
    )]
    CsvMissingHeader {
        /// The CSV file.
        path: PathBuf,
        /// The first line as read, shortened.
        first_line: String,
    },

    /// A CSV column holds negative values and values above i64::MAX, which
    /// no single 64-bit integer type can hold.
    #[error(
        "{path:?}, column {column:?}: it holds a negative value (line {negative_line}) and a \
         value above {} (line {large_line}); no 64-bit integer type holds both",
        i64::MAX
    )]
    CsvMixedSign {
        /// The CSV file.
        path: PathBuf,
        /// The column's name.
        column: String,
        /// A line holding a negative value.
        negative_line: u64,
        /// A line holding a value above i64::MAX.
        large_line: u64,
    },

    /// The CSV reader or writer failed (I/O, quoting, encoding).
    #[error("CSV file {path:?}: {source}")]
    Csv {
        /// The CSV file.
        path: PathBuf,
        /// The csv crate's error.
        source: csv::Error,
    },

    /// The Parquet library refused the file (corrupt, truncated, unsupported).
    #[error("Parquet file {path:?}: {source} (is the file complete and really Parquet?)")]
    Parquet {
        /// The Parquet file.
        path: PathBuf,
        /// The parquet crate's error.
        source: parquet::errors::ParquetError,
    },

    /// The Arrow library refused the file or the data.
    #[error("Arrow IPC file {path:?}: {source} (is the file complete and really Arrow IPC?)")]
    Arrow {
        /// The Arrow IPC file.
        path: PathBuf,
        /// The arrow crate's error.
        source: arrow_schema::ArrowError,
    },

    /// Decoding part of a file into batches failed (a value that does not
    /// fit the inferred or declared column type, a corrupt row group or batch).
    #[error("{format} file {path:?}: {message}")]
    Decode {
        /// The file's format as named in the message (`CSV`, `Parquet`, `csv`, ...).
        format: &'static str,
        /// The file being read.
        path: PathBuf,
        /// The library's error, with the line and inferred types for CSV.
        message: String,
    },

    /// A batch writer could not create its encoder, write a batch or finish the file.
    #[error("cannot write {format} file {path:?}: {message}")]
    Encode {
        /// The output format's name (`csv`, `parquet`, `arrow`).
        format: &'static str,
        /// The file being written (its final path, not the temporary one).
        path: PathBuf,
        /// The encoder's error.
        message: String,
    },

    /// A table handed to a writer is not well formed (no columns, columns of
    /// different lengths or with a repeated name).
    #[error("cannot write the table: {0}")]
    InvalidTable(String),

    /// Options that cannot work together or at all.
    #[error("invalid option: {0}")]
    InvalidOption(String),
}

fn describe_available(available: &[String]) -> String {
    if available.is_empty() {
        "the table has no columns".to_string()
    } else {
        format!("available columns: {}", available.join(", "))
    }
}

impl IoError {
    /// A [`IoError::File`] error for `path`.
    pub(crate) fn file(
        action: &'static str,
        path: &std::path::Path,
        source: std::io::Error,
    ) -> Self {
        IoError::File {
            action,
            path: path.to_path_buf(),
            source,
        }
    }
}
