//! Where a request's tables come from: a file (read on the pool, only the
//! columns the request needs) or a table already in memory (a Python
//! caller's Arrow data). Requests name columns; [`Input::schema`] lets them
//! be checked before anything is read.

use std::path::PathBuf;

use arrow_schema::SchemaRef;
use numakit_io::{Source, SourceOptions};
use numakit_pool::Pool;

use crate::error::Result;
use crate::load::{load, LoadStats};
use crate::memory::MemoryLimit;
use crate::table::Table;

/// A table to read, or one in memory.
pub enum Input {
    /// A file, opened but not read: it is loaded on the pool, only the
    /// columns a request reads, when the request runs.
    File(Box<Source>),
    /// A table already in memory, used as it is.
    Table(Table),
}

impl Input {
    /// Opens the file at `path` (reads its schema, nothing else).
    pub fn file(path: impl Into<PathBuf>, options: &SourceOptions) -> Result<Self> {
        Ok(Input::File(Box::new(Source::open(path.into(), options)?)))
    }

    /// The input's full schema.
    pub fn schema(&self) -> SchemaRef {
        match self {
            Input::File(source) => source.schema(),
            Input::Table(table) => table.schema().clone(),
        }
    }

    /// The types the input declares (a file's own, before reading choices
    /// such as dictionary arrays for strings).
    pub fn declared_schema(&self) -> SchemaRef {
        match self {
            Input::File(source) => source.declared_schema(),
            Input::Table(table) => table.schema().clone(),
        }
    }

    /// What the input is called in messages.
    pub fn name(&self) -> String {
        match self {
            Input::File(source) => source.path().display().to_string(),
            Input::Table(table) => table.name().to_string(),
        }
    }

    /// The `columns` of the input as a table on `pool`: a file is decoded
    /// (with its load figures), a table in memory projected.
    pub fn columns(
        &self,
        pool: &Pool,
        columns: &[String],
        limit: &MemoryLimit,
    ) -> Result<(Table, Option<LoadStats>)> {
        let mut unique: Vec<String> = Vec::with_capacity(columns.len());
        for c in columns {
            if !unique.contains(c) {
                unique.push(c.clone());
            }
        }
        let columns = &unique[..];
        match self {
            Input::File(source) => {
                let projection = source.project(Some(columns))?;
                let (table, stats) = load(pool, source, &projection, limit)?;
                Ok((table, Some(stats)))
            }
            Input::Table(table) => {
                let indices = columns
                    .iter()
                    .map(|c| table.column_index(c))
                    .collect::<Result<Vec<_>>>()?;
                Ok((table.project(&indices)?, None))
            }
        }
    }
}

/// `table` with each column whose declared type differs because of a
/// reading choice (a dictionary for a string column, a 32- or 64-bit
/// decimal for a `Decimal128` one) cast back to it: `declared[i]` is the
/// type column i should have, if known.
pub(crate) fn restore_types(
    pool: &Pool,
    table: Table,
    declared: &[Option<arrow_schema::DataType>],
) -> Result<Table> {
    let schema = table.schema().clone();
    let casts: Vec<Option<arrow_schema::DataType>> = schema
        .fields()
        .iter()
        .zip(declared.iter().chain(std::iter::repeat(&None)))
        .map(|(f, want)| match want {
            Some(t) if t != f.data_type() && is_reading_choice(f.data_type()) => Some(t.clone()),
            _ => None,
        })
        .collect();
    if casts.iter().all(Option::is_none) {
        return Ok(table);
    }
    let fields: Vec<arrow_schema::Field> = schema
        .fields()
        .iter()
        .zip(&casts)
        .map(|(f, c)| match c {
            Some(t) => f.as_ref().clone().with_data_type(t.clone()),
            None => f.as_ref().clone(),
        })
        .collect();
    let restored = std::sync::Arc::new(arrow_schema::Schema::new(fields));
    let parts = table.parts();
    let parts = crate::par::try_per_part(
        pool,
        parts.len(),
        |i| parts[i].worker,
        |i| {
            let p = &parts[i];
            let columns = p
                .batch
                .columns()
                .iter()
                .zip(&casts)
                .map(|(a, c)| match c {
                    Some(t) => restore_column(a, t),
                    None => Ok(a.clone()),
                })
                .collect::<Result<Vec<_>>>()?;
            let batch = arrow_array::RecordBatch::try_new(restored.clone(), columns)
                .map_err(|e| crate::FrameError::arrow("restoring a column's type", e))?;
            Ok(crate::table::Part {
                batch,
                worker: p.worker,
            })
        },
    )?;
    Table::new(table.name().to_string(), restored, parts)
}

/// Whether a column of type `read` may differ from its declared type by a
/// choice of the reader.
fn is_reading_choice(read: &arrow_schema::DataType) -> bool {
    use arrow_schema::DataType::*;
    matches!(read, Dictionary(..) | Decimal32(..) | Decimal64(..))
}

/// `array` cast to `to`; a narrow decimal is widened value by value (no
/// overflow is possible, so nothing is checked).
fn restore_column(
    array: &arrow_array::ArrayRef,
    to: &arrow_schema::DataType,
) -> Result<arrow_array::ArrayRef> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Decimal128Type, Decimal32Type, Decimal64Type};
    use arrow_schema::DataType::{Decimal128, Decimal32, Decimal64};
    let error = |e| crate::FrameError::arrow("restoring a column's type", e);
    let widened = match (array.data_type(), to) {
        (Decimal64(..), Decimal128(p, s)) => array
            .as_primitive::<Decimal64Type>()
            .unary::<_, Decimal128Type>(i128::from)
            .with_precision_and_scale(*p, *s),
        (Decimal32(..), Decimal128(p, s)) => array
            .as_primitive::<Decimal32Type>()
            .unary::<_, Decimal128Type>(i128::from)
            .with_precision_and_scale(*p, *s),
        _ => return arrow_cast::cast(array, to).map_err(error),
    };
    Ok(std::sync::Arc::new(widened.map_err(error)?))
}
