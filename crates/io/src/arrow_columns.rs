//! Conversion between Arrow record batches and [`Table`] columns, shared by
//! the Parquet and Arrow IPC code: which Arrow types are accepted, appending
//! a batch's integer arrays into the `Vec<u64>` columns (refusing nulls), and
//! cutting a table into record batches for writing.
//!
//! It deliberately accepts only the eight integer types. Dates, timestamps,
//! durations, decimals, dictionaries and everything else are refused by
//! name, even though some are integers underneath: silently reading a date as
//! its day number would be a surprise, and the user can cast explicitly.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    ArrowPrimitiveType, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type,
    UInt64Type, UInt8Type,
};
use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch, UInt64Array};
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use crate::error::{IoError, Result, ACCEPTED_TYPES};
use crate::table::{Column, IntKind, Table};

/// The kind an Arrow type widens to, or `None` when it is not accepted.
pub(crate) fn int_kind_of(data_type: &DataType) -> Option<IntKind> {
    match data_type {
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => {
            Some(IntKind::Signed)
        }
        DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::UInt64 => {
            Some(IntKind::Unsigned)
        }
        _ => None,
    }
}

fn unsupported(column: &str, data_type: &DataType) -> IoError {
    IoError::UnsupportedType {
        column: column.to_string(),
        found: data_type.to_string(),
        accepted: ACCEPTED_TYPES,
    }
}

/// The names of a schema's top-level fields.
pub(crate) fn field_names(schema: &Schema) -> Vec<String> {
    schema
        .fields()
        .iter()
        .map(|field| field.name().clone())
        .collect()
}

/// Collects the chosen columns of a stream of record batches into a table.
pub(crate) struct BatchCollector {
    columns: Vec<Column>,
    rows_seen: u64,
}

impl BatchCollector {
    /// Checks the types of the columns at `indices` of `schema` and prepares
    /// empty columns for them, reserving `expected_rows` values each when that
    /// much memory can be had (a hint; growth still works without it).
    pub(crate) fn new(schema: &Schema, indices: &[usize], expected_rows: usize) -> Result<Self> {
        let columns = indices
            .iter()
            .map(|&index| {
                let field = schema.field(index);
                let kind = int_kind_of(field.data_type())
                    .ok_or_else(|| unsupported(field.name(), field.data_type()))?;
                let mut values = Vec::new();
                // A failed reservation only means the column grows as it goes.
                let _ = values.try_reserve_exact(expected_rows);
                Ok(Column::from_raw(field.name().clone(), kind, values))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(BatchCollector {
            columns,
            rows_seen: 0,
        })
    }

    /// Appends one batch that holds (at least) the chosen columns, found by name.
    pub(crate) fn append(&mut self, batch: &RecordBatch) -> Result<()> {
        for column in &mut self.columns {
            let array =
                batch
                    .column_by_name(&column.name)
                    .ok_or_else(|| IoError::ColumnNotFound {
                        column: column.name.clone(),
                        available: field_names(&batch.schema()),
                    })?;
            refuse_nulls(array.as_ref(), &column.name, self.rows_seen)?;
            append_values(array.as_ref(), &column.name, &mut column.values)?;
        }
        self.rows_seen += batch.num_rows() as u64;
        Ok(())
    }

    /// The collected table.
    pub(crate) fn finish(self) -> Table {
        Table::new(self.columns)
    }
}

fn refuse_nulls(array: &dyn Array, column: &str, rows_before: u64) -> Result<()> {
    if array.null_count() == 0 {
        return Ok(());
    }
    let first_null = (0..array.len())
        .find(|&row| array.is_null(row))
        .unwrap_or(0);
    Err(IoError::Null {
        column: column.to_string(),
        row: rows_before + first_null as u64 + 1,
    })
}

fn append_values(array: &dyn Array, column: &str, out: &mut Vec<u64>) -> Result<()> {
    match array.data_type() {
        DataType::Int8 => extend::<Int8Type>(array, column, out, |v| v as i64 as u64),
        DataType::Int16 => extend::<Int16Type>(array, column, out, |v| v as i64 as u64),
        DataType::Int32 => extend::<Int32Type>(array, column, out, |v| v as i64 as u64),
        DataType::Int64 => extend::<Int64Type>(array, column, out, |v| v as u64),
        DataType::UInt8 => extend::<UInt8Type>(array, column, out, u64::from),
        DataType::UInt16 => extend::<UInt16Type>(array, column, out, u64::from),
        DataType::UInt32 => extend::<UInt32Type>(array, column, out, u64::from),
        DataType::UInt64 => extend::<UInt64Type>(array, column, out, |v| v),
        other => Err(unsupported(column, other)),
    }
}

fn extend<T: ArrowPrimitiveType>(
    array: &dyn Array,
    column: &str,
    out: &mut Vec<u64>,
    widen: impl Fn(T::Native) -> u64,
) -> Result<()> {
    let primitive = array
        .as_primitive_opt::<T>()
        .ok_or_else(|| unsupported(column, array.data_type()))?;
    out.extend(primitive.values().iter().map(|&value| widen(value)));
    Ok(())
}

/// The Arrow schema of a table: non-nullable Int64 or UInt64 fields.
pub(crate) fn schema_of(table: &Table) -> SchemaRef {
    let fields: Vec<Field> = table
        .columns
        .iter()
        .map(|column| {
            let data_type = match column.kind {
                IntKind::Signed => DataType::Int64,
                IntKind::Unsigned => DataType::UInt64,
            };
            Field::new(column.name.clone(), data_type, false)
        })
        .collect();
    Arc::new(Schema::new(fields))
}

/// The rows `start..end` of a (validated) table as a record batch; copies
/// the values into Arrow buffers.
pub(crate) fn batch_of(
    table: &Table,
    schema: &SchemaRef,
    start: usize,
    end: usize,
) -> Result<RecordBatch> {
    let arrays: Vec<ArrayRef> = table
        .columns
        .iter()
        .map(|column| {
            let values = &column.values[start..end];
            let array: ArrayRef = match column.kind {
                IntKind::Signed => Arc::new(Int64Array::from_iter_values(
                    values.iter().map(|&v| v as i64),
                )),
                IntKind::Unsigned => {
                    Arc::new(UInt64Array::from_iter_values(values.iter().copied()))
                }
            };
            array
        })
        .collect();
    RecordBatch::try_new(schema.clone(), arrays)
        .map_err(|error| IoError::InvalidTable(error.to_string()))
}

/// Start and end rows of the batches a table of `rows` rows is cut into.
pub(crate) fn batch_ranges(rows: usize, batch_rows: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..rows)
        .step_by(batch_rows.max(1))
        .map(move |start| (start, rows.min(start + batch_rows.max(1))))
}
