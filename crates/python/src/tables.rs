//! Arrow in and out without copies. Input is any object with the Arrow
//! PyCapsule stream interface (`__arrow_c_stream__`: pyarrow Tables and
//! RecordBatchReaders, Polars DataFrames, DuckDB results); its batches are
//! imported through the C data interface, so numakit reads the producer's
//! own buffers. Results leave the same way, as a `pyarrow.Table` over
//! numakit's buffers.
//!
//! It does not convert pandas objects (the Python half hands them to
//! pyarrow first) and does not place the caller's memory on nodes: a table
//! from Python stays where Python allocated it, and its parts are shared
//! out among the workers by rows.

use arrow_array::{Array, RecordBatch};
use arrow_pyarrow::{FromPyArrow, IntoPyArrow, Table as PyArrowTable};
use numakit_frame::Table;
use pyo3::prelude::*;

use crate::errors::{frame_error, raise, ErrorKind};

/// Rows per part a table from Python is cut into at most (zero-copy
/// slices), so that its rows can be shared out among the workers.
const PART_ROWS: usize = 1 << 20;

/// The batches of an Arrow stream, imported without copying.
fn batches(py: Python<'_>, what: &str, obj: &Bound<'_, PyAny>) -> PyResult<PyArrowTable> {
    PyArrowTable::from_pyarrow_bound(obj).map_err(|e| {
        raise(
            py,
            ErrorKind::BadInput,
            &format!(
                "{what} is not an Arrow table (no usable __arrow_c_stream__): {}",
                e.value(py)
            ),
        )
    })
}

/// `obj` as a table of the table layer, named `name` in messages, its
/// parts shared among `workers`.
pub(crate) fn table_from_py(
    py: Python<'_>,
    name: &str,
    obj: &Bound<'_, PyAny>,
    workers: usize,
) -> PyResult<Table> {
    let (batches, schema) = batches(py, name, obj)?.into_inner();
    let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
    let part_rows = rows.div_ceil(workers.max(1) * 4).clamp(1, PART_ROWS);
    let parts = Table::split_for(batches, part_rows);
    Table::from_batches(name, schema, parts, workers).map_err(|e| frame_error(py, e))
}

/// A result table as a `pyarrow.Table` over numakit's buffers.
pub(crate) fn table_to_py(py: Python<'_>, table: &Table) -> PyResult<Py<PyAny>> {
    let schema = table.schema().clone();
    let batches: Vec<RecordBatch> = table
        .batches()
        .into_iter()
        .map(|b| {
            // Batches made by different steps may differ in field metadata
            // only; the table's schema names them all.
            RecordBatch::try_new(schema.clone(), b.columns().to_vec())
        })
        .collect::<Result<_, _>>()
        .map_err(|e| raise(py, ErrorKind::Other, &format!("building the result: {e}")))?;
    let out = PyArrowTable::try_new(batches, schema)
        .map_err(|e| raise(py, ErrorKind::Other, &format!("building the result: {e}")))?;
    Ok(out.into_pyarrow(py)?.unbind())
}

/// The addresses of the data buffers numakit sees in `obj`'s columns, in
/// column order, batch by batch (for tests that input is not copied).
#[pyfunction]
pub(crate) fn buffer_addresses(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
    let (batches, _) = batches(py, "the input", obj)?.into_inner();
    let mut out = Vec::new();
    for batch in &batches {
        for column in batch.columns() {
            let data = column.to_data();
            out.extend(data.buffers().iter().map(|b| b.as_ptr() as usize));
        }
    }
    Ok(out)
}
