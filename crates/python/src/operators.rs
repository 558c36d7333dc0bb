//! The table operators as Python functions: join, aggregate and sort on
//! the table layer, each taking Arrow inputs and a pool and giving back a
//! `pyarrow.Table` and the operator's report (as JSON text the Python half
//! turns into a dict: the same content as the CLI's `--json`).
//!
//! It parses the Python arguments into the table layer's requests and
//! nothing more; the Python half (`numakit/__init__.py`) gives them their
//! documented, keyword-friendly form.

use numakit_frame::aggregate::{self as frame_aggregate, AggFunc, Aggregate, AggregateRequest};
use numakit_frame::join::{self as frame_join, JoinRequest};
use numakit_frame::sort::{self as frame_sort, SortColumn, SortRequest};
use numakit_frame::{Input, MemoryLimit, RunOptions};
use numakit_ops::aggregate::AggMethod;
use numakit_ops::join::{JoinAlgorithm, JoinKind};
use pyo3::prelude::*;
use serde::Serialize;

use crate::errors::{frame_error, raise, ErrorKind};
use crate::interrupt;
use crate::pool::Pool;
use crate::tables::{table_from_py, table_to_py};

/// A result table and its report as JSON text.
type Outcome = (Py<PyAny>, String);

/// The memory limit from `None` (the default share), a number of bytes
/// or a size or percentage such as `"8GiB"` or `"75%"`.
fn memory_limit(py: Python<'_>, limit: Option<&Bound<'_, PyAny>>) -> PyResult<MemoryLimit> {
    let Some(limit) = limit else {
        return Ok(MemoryLimit::default());
    };
    if let Ok(bytes) = limit.extract::<u64>() {
        return Ok(MemoryLimit::bytes(bytes));
    }
    let text: String = limit.extract().map_err(|_| {
        raise(
            py,
            ErrorKind::BadInput,
            "memory_limit= must be bytes (an int) or a size such as \"8GiB\" or \"75%\"",
        )
    })?;
    MemoryLimit::parse(&text).map_err(|e| {
        raise(
            py,
            ErrorKind::BadInput,
            &format!("memory_limit={text:?}: {e}"),
        )
    })
}

fn parsed<T: std::str::FromStr<Err = String>>(
    py: Python<'_>,
    what: &str,
    text: &str,
) -> PyResult<T> {
    text.parse()
        .map_err(|e: String| raise(py, ErrorKind::BadInput, &format!("{what}: {e}")))
}

fn json<T: Serialize>(py: Python<'_>, report: &T) -> PyResult<String> {
    serde_json::to_string(report)
        .map_err(|e| raise(py, ErrorKind::Other, &format!("writing the report: {e}")))
}

/// Joins `left` and `right` on `left_on` = `right_on`.
#[pyfunction]
#[pyo3(signature = (pool, left, right, left_on, right_on, how, algorithm, left_columns, right_columns, suffix, memory_limit, progress))]
#[allow(clippy::too_many_arguments)] // the Python function's keywords
pub(crate) fn join(
    py: Python<'_>,
    pool: &Pool,
    left: &Bound<'_, PyAny>,
    right: &Bound<'_, PyAny>,
    left_on: Vec<String>,
    right_on: Vec<String>,
    how: &str,
    algorithm: &str,
    left_columns: Option<Vec<String>>,
    right_columns: Option<Vec<String>>,
    suffix: String,
    memory_limit: Option<&Bound<'_, PyAny>>,
    progress: bool,
) -> PyResult<Outcome> {
    let request = JoinRequest {
        left_on,
        right_on,
        kind: parsed::<JoinKind>(py, "how=", how)?,
        algorithm: match algorithm {
            "auto" => None,
            other => Some(parsed::<JoinAlgorithm>(py, "algorithm=", other)?),
        },
        count_only: false,
        left_columns,
        right_columns,
        suffix,
        memory_limit: self::memory_limit(py, memory_limit)?,
    };
    let workers = pool.inner.workers();
    let left = Input::Table(table_from_py(py, "the left table", left, workers)?);
    let right = Input::Table(table_from_py(py, "the right table", right, workers)?);
    let options = RunOptions::default();
    let outcome = interrupt::run(py, "join", progress, |watch| {
        frame_join::join_inputs(&pool.inner, &left, &right, &request, &options, watch)
    })?
    .map_err(|e| frame_error(py, e))?;
    let report = outcome
        .runs
        .last()
        .ok_or_else(|| raise(py, ErrorKind::Other, "the join ran no repetition"))?;
    let table = outcome
        .table
        .ok_or_else(|| raise(py, ErrorKind::Other, "the join kept no result"))?;
    Ok((table_to_py(py, &table)?, json(py, report)?))
}

/// One aggregate from `(function, column)`; `("count", None)` counts rows.
fn aggregate_of(py: Python<'_>, func: &str, column: Option<String>) -> PyResult<Aggregate> {
    let bad = |why: &str| raise(py, ErrorKind::BadInput, why);
    let func = match (func, column.is_some()) {
        ("count", false) => return Ok(Aggregate::count_rows()),
        ("count", true) => AggFunc::Count,
        ("sum", true) => AggFunc::Sum,
        ("min", true) => AggFunc::Min,
        ("max", true) => AggFunc::Max,
        ("avg" | "mean", true) => AggFunc::Avg,
        (other, true) => {
            return Err(bad(&format!(
                "aggregate {other:?} is not one of count, sum, min, max, avg"
            )))
        }
        (other, false) => {
            return Err(bad(&format!(
                "aggregate {other:?} needs a column (only count counts rows)"
            )))
        }
    };
    let column = column.unwrap_or_default();
    Ok(Aggregate::of(func, &column))
}

/// Groups `table` by `by` and computes `aggs`, each `(function, column)`.
#[pyfunction]
#[pyo3(signature = (pool, table, by, aggs, method, memory_limit, progress))]
#[allow(clippy::too_many_arguments)] // the Python function's keywords
pub(crate) fn aggregate(
    py: Python<'_>,
    pool: &Pool,
    table: &Bound<'_, PyAny>,
    by: Vec<String>,
    aggs: Vec<(String, Option<String>)>,
    method: &str,
    memory_limit: Option<&Bound<'_, PyAny>>,
    progress: bool,
) -> PyResult<Outcome> {
    let aggregates = aggs
        .into_iter()
        .map(|(func, column)| aggregate_of(py, &func, column))
        .collect::<PyResult<Vec<_>>>()?;
    let request = AggregateRequest {
        keys: by,
        aggregates,
        method: match method {
            "auto" => None,
            other => Some(parsed::<AggMethod>(py, "method=", other)?),
        },
        memory_limit: self::memory_limit(py, memory_limit)?,
        cost_model: None,
    };
    let input = Input::Table(table_from_py(py, "the table", table, pool.inner.workers())?);
    let options = RunOptions::default();
    let outcome = interrupt::run(py, "aggregate", progress, |watch| {
        frame_aggregate::aggregate_input(&pool.inner, &input, &request, &options, watch)
    })?
    .map_err(|e| frame_error(py, e))?;
    let report = outcome
        .runs
        .last()
        .ok_or_else(|| raise(py, ErrorKind::Other, "the group-by ran no repetition"))?;
    Ok((table_to_py(py, &outcome.table)?, json(py, report)?))
}

/// Sorts `table` by `by`, each `(column, descending, nulls_first)`.
#[pyfunction]
#[pyo3(signature = (pool, table, by, columns, memory_limit, progress))]
pub(crate) fn sort(
    py: Python<'_>,
    pool: &Pool,
    table: &Bound<'_, PyAny>,
    by: Vec<(String, bool, bool)>,
    columns: Option<Vec<String>>,
    memory_limit: Option<&Bound<'_, PyAny>>,
    progress: bool,
) -> PyResult<Outcome> {
    let request = SortRequest {
        by: by
            .into_iter()
            .map(|(name, descending, nulls_first)| SortColumn {
                name,
                descending,
                nulls_first,
            })
            .collect(),
        columns,
        memory_limit: self::memory_limit(py, memory_limit)?,
    };
    let input = Input::Table(table_from_py(py, "the table", table, pool.inner.workers())?);
    let options = RunOptions::default();
    let outcome = interrupt::run(py, "sort", progress, |watch| {
        frame_sort::sort_input(&pool.inner, &input, &request, &options, watch)
    })?
    .map_err(|e| frame_error(py, e))?;
    let report = outcome
        .runs
        .last()
        .ok_or_else(|| raise(py, ErrorKind::Other, "the sort ran no repetition"))?;
    let table = outcome
        .table
        .ok_or_else(|| raise(py, ErrorKind::Other, "the sort kept no result"))?;
    Ok((table_to_py(py, &table)?, json(py, report)?))
}
