//! numakit's errors as Python exceptions of the `numakit.errors`
//! hierarchy: `NumakitError`, with `BadInputError` (also a `ValueError`),
//! `MemoryLimitError` (also a `MemoryError`) and `PlacementError` (also an
//! `OSError`) below it. The classes are defined in Python, so that they
//! can derive from Python's own; each carries numakit's one-line message,
//! with the CLI's option names replaced by the Python keywords.
//!
//! It does not decide what a failure means beyond that classification.

use numakit_frame::FrameError;
use numakit_pool::PoolError;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyType;

/// Which exception class a failure raises.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ErrorKind {
    /// The input or the request is wrong (a column, a type, an option).
    BadInput,
    /// The work would exceed the memory limit.
    MemoryLimit,
    /// Threads or memory could not be placed as asked.
    Placement,
    /// Anything else numakit reports.
    Other,
}

impl ErrorKind {
    fn class_name(self) -> &'static str {
        match self {
            ErrorKind::BadInput => "BadInputError",
            ErrorKind::MemoryLimit => "MemoryLimitError",
            ErrorKind::Placement => "PlacementError",
            ErrorKind::Other => "NumakitError",
        }
    }
}

/// The message in Python's words: options become keyword arguments.
fn pythonic(message: &str) -> String {
    message
        .replace("--memory-limit", "memory_limit=")
        .replace("--threads", "threads=")
        .replace("--nodes", "nodes=")
}

/// An exception of `kind` with `message`.
pub(crate) fn raise(py: Python<'_>, kind: ErrorKind, message: &str) -> PyErr {
    let message = pythonic(message);
    let class = py
        .import("numakit.errors")
        .and_then(|module| module.getattr(kind.class_name()))
        .and_then(|class| class.cast_into::<PyType>().map_err(PyErr::from));
    match class {
        Ok(class) => PyErr::from_type(class, message),
        // The package's Python half is missing (the extension imported
        // on its own): still one clear line.
        Err(_) => PyRuntimeError::new_err(message),
    }
}

/// The class of a table-layer failure.
pub(crate) fn frame_kind(error: &FrameError) -> ErrorKind {
    match error {
        FrameError::ColumnNotFound { .. }
        | FrameError::UnsupportedType { .. }
        | FrameError::KeyMismatch { .. }
        | FrameError::InvalidRequest(_)
        | FrameError::Overflow(_)
        | FrameError::Arrow { .. } => ErrorKind::BadInput,
        FrameError::MemoryLimit { .. } => ErrorKind::MemoryLimit,
        FrameError::Pool(error) => pool_kind(error),
        FrameError::Io(_) | FrameError::Ops(_) => ErrorKind::Other,
    }
}

/// The class of a pool failure: bad thread counts and nodes are the
/// caller's; the rest is placement.
pub(crate) fn pool_kind(error: &PoolError) -> ErrorKind {
    match error {
        PoolError::BadThreadCount(_)
        | PoolError::TooManyThreads { .. }
        | PoolError::UnknownNode { .. }
        | PoolError::NoWorkers => ErrorKind::BadInput,
        _ => ErrorKind::Placement,
    }
}

/// A table-layer failure as its exception.
pub(crate) fn frame_error(py: Python<'_>, error: FrameError) -> PyErr {
    raise(py, frame_kind(&error), &error.to_string())
}
