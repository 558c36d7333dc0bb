//! Errors of the table layer: each one names the column, type, option or
//! limit involved, in one line.

use numakit_io::IoError;
use numakit_ops::OpsError;
use numakit_pool::PoolError;

/// Why a request could not be carried out.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// Reading or writing a file failed.
    #[error(transparent)]
    Io(#[from] IoError),

    /// An operator failed.
    #[error(transparent)]
    Ops(OpsError),

    /// The worker pool failed.
    #[error(transparent)]
    Pool(#[from] PoolError),

    /// A column was named that the table does not have.
    #[error("column {column:?} not found in {table}; available columns: {available}")]
    ColumnNotFound {
        /// The name asked for.
        column: String,
        /// Which table was searched: its name, or words such as "the left
        /// table".
        table: String,
        /// The table's column names, comma-separated, in schema order.
        available: String,
    },

    /// A column's type cannot play the role asked of it.
    #[error("column {column:?} has type {data_type}, which cannot be {role}{why}")]
    UnsupportedType {
        /// The column's name.
        column: String,
        /// Its Arrow type, as Arrow prints it (`Utf8View`, `Decimal128(38, 2)`).
        data_type: String,
        /// What it was asked to be: "a key", "a group-by key", "aggregated"...
        role: &'static str,
        /// The rest of the message, starting with its own separator
        /// (": ..." or " with SUM: ..."); may be empty.
        why: String,
    },

    /// Two key columns that are to be compared have incompatible types.
    #[error(
        "join key {left:?} ({left_type}) cannot be compared with {right:?} ({right_type}): {why}"
    )]
    KeyMismatch {
        /// The left table's key column.
        left: String,
        /// Its Arrow type, as Arrow prints it.
        left_type: String,
        /// The right table's key column paired with it.
        right: String,
        /// Its Arrow type, as Arrow prints it.
        right_type: String,
        /// Why the two types cannot be compared.
        why: String,
    },

    /// The request is malformed (bad aggregate list, clashing names...).
    #[error("{0}")]
    InvalidRequest(String),

    /// The work would need more memory than the limit allows.
    #[error(
        "{}",
        numakit_placement::memory_limit::limit_message(
            (what, need),
            (limit, in_use),
            "use less input or fewer columns"
        )
    )]
    MemoryLimit {
        /// The step that was refused, naming the option that sized it
        /// where one did.
        what: String,
        /// What the step would allocate, as a human size (`1.5 GiB`).
        need: String,
        /// The limit, as a human size.
        limit: String,
        /// The process's resident size when the check was made, as a
        /// human size.
        in_use: String,
    },

    /// An aggregate does not fit its result type.
    #[error("{0}")]
    Overflow(String),

    /// An Arrow kernel refused its input.
    #[error("{context}: {message}")]
    Arrow {
        /// What numakit was doing ("building MIN/MAX", ...).
        context: String,
        /// Arrow's own error message.
        message: String,
    },
}

impl From<OpsError> for FrameError {
    fn from(error: OpsError) -> Self {
        FrameError::Ops(error)
    }
}

impl FrameError {
    /// `column` is not among `schema`'s columns (of `table`).
    pub fn column_not_found(schema: &arrow_schema::Schema, column: &str, table: String) -> Self {
        FrameError::ColumnNotFound {
            column: column.to_string(),
            table,
            available: schema
                .fields()
                .iter()
                .map(|f| f.name().as_str())
                .collect::<Vec<_>>()
                .join(", "),
        }
    }

    pub(crate) fn arrow(context: impl Into<String>, error: arrow_schema::ArrowError) -> Self {
        FrameError::Arrow {
            context: context.into(),
            message: error.to_string(),
        }
    }
}

/// The result of the table layer's functions.
pub type Result<T, E = FrameError> = std::result::Result<T, E>;
