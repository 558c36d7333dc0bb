//! From codes back to columns: numbers rebuilt in their column's own Arrow
//! type, and any column gathered from the rows that hold its values.
//!
//! It does not know how codes were made; callers turn codes into numbers
//! (value codes) or rows (dictionary codes) first.

use std::sync::Arc;

use arrow_array::types::*;
use arrow_array::{
    make_array, new_null_array, Array, ArrayRef, BooleanArray, Float64Array, PrimitiveArray,
};
use arrow_schema::DataType;

use crate::error::{FrameError, Result};
use crate::table::{part_of, row_of, RowRef, Table};

/// The float whose total-order code is `code` (see `numbers::float_order`).
pub(crate) fn float_from_order(code: u64) -> f64 {
    let bits = if code >> 63 == 1 {
        code & !(1 << 63)
    } else {
        !code
    };
    f64::from_bits(bits)
}

macro_rules! primitive {
    ($t:ty, $native:ty, $values:expr) => {
        Arc::new(PrimitiveArray::<$t>::from_iter(
            $values.map(|v| v.map(|v| v as $native)),
        )) as ArrayRef
    };
}

/// Reinterprets an array as another type of the same physical layout.
pub(crate) fn retyped(array: ArrayRef, data_type: &DataType) -> Result<ArrayRef> {
    let data = array
        .to_data()
        .into_builder()
        .data_type(data_type.clone())
        .build()
        .map_err(|e| FrameError::arrow("rebuilding a key column", e))?;
    Ok(make_array(data))
}

/// An array of `data_type` holding `values` (numbers in the column's own
/// units; floats as total-order codes), `None` as null.
///
/// The values are taken one by one, straight into the array: a caller
/// passes an iterator over its groups, not a list of 16 bytes and a flag
/// per group (for 16M groups that list alone was half a gigabyte of fresh
/// pages to fault in and zero).
pub(crate) fn numbers_array(
    values: impl IntoIterator<Item = Option<i128>>,
    data_type: &DataType,
) -> Result<ArrayRef> {
    use DataType::*;
    let values = values.into_iter();
    Ok(match data_type {
        Int8 => primitive!(Int8Type, i8, values),
        Int16 => primitive!(Int16Type, i16, values),
        Int32 => primitive!(Int32Type, i32, values),
        Int64 => primitive!(Int64Type, i64, values),
        UInt8 => primitive!(UInt8Type, u8, values),
        UInt16 => primitive!(UInt16Type, u16, values),
        UInt32 => primitive!(UInt32Type, u32, values),
        UInt64 => primitive!(UInt64Type, u64, values),
        Date32 | Time32(_) => retyped(primitive!(Int32Type, i32, values), data_type)?,
        Date64 | Time64(_) | Timestamp(..) | Duration(_) => {
            retyped(primitive!(Int64Type, i64, values), data_type)?
        }
        Decimal32(p, s) => Arc::new(
            PrimitiveArray::<Decimal32Type>::from_iter(values.map(|v| v.map(|v| v as i32)))
                .with_precision_and_scale(*p, *s)
                .map_err(|e| FrameError::arrow("rebuilding a key column", e))?,
        ),
        Decimal64(p, s) => Arc::new(
            PrimitiveArray::<Decimal64Type>::from_iter(values.map(|v| v.map(|v| v as i64)))
                .with_precision_and_scale(*p, *s)
                .map_err(|e| FrameError::arrow("rebuilding a key column", e))?,
        ),
        Decimal128(p, s) => Arc::new(
            PrimitiveArray::<Decimal128Type>::from_iter(values)
                .with_precision_and_scale(*p, *s)
                .map_err(|e| FrameError::arrow("rebuilding a key column", e))?,
        ),
        Boolean => Arc::new(BooleanArray::from_iter(values.map(|v| v.map(|v| v != 0)))),
        Float16 | Float32 | Float64 => {
            let floats: ArrayRef = Arc::new(Float64Array::from_iter(
                values.map(|v| v.map(|v| float_from_order(v as u64))),
            ));
            if data_type == &Float64 {
                floats
            } else {
                arrow_cast::cast(&floats, data_type)
                    .map_err(|e| FrameError::arrow("rebuilding a key column", e))?
            }
        }
        Dictionary(_, value_type) => {
            let plain = numbers_array(values, value_type)?;
            arrow_cast::cast(&plain, data_type)
                .map_err(|e| FrameError::arrow("rebuilding a key column", e))?
        }
        other => {
            return Err(FrameError::InvalidRequest(format!(
                "cannot rebuild {other} values from numbers"
            )))
        }
    })
}

/// Rows gathered at a time: the index list stays small and cached, and
/// results come out as batches of this size.
pub(crate) const GATHER_ROWS: usize = 1 << 16;

/// Gathers chosen columns of a table by row references, a chunk of rows
/// at a time, reusing its index list.
pub(crate) struct Gatherer<'t> {
    /// Per column: the parts' arrays and, last, a one-row null array.
    sources: Vec<Vec<&'t dyn Array>>,
    _nulls: Vec<ArrayRef>,
    indices: Vec<(usize, usize)>,
}

impl<'t> Gatherer<'t> {
    pub(crate) fn new(table: &'t Table, columns: &[usize], nulls: &'t [ArrayRef]) -> Self {
        let sources = columns
            .iter()
            .zip(nulls)
            .map(|(&c, null)| {
                let mut s: Vec<&'t dyn Array> = table
                    .parts()
                    .iter()
                    .map(|p| p.batch.column(c).as_ref())
                    .collect();
                s.push(null.as_ref());
                s
            })
            .collect();
        Gatherer {
            sources,
            _nulls: Vec::new(),
            indices: Vec::with_capacity(GATHER_ROWS),
        }
    }

    /// One-row null arrays for `columns` of `table` (what `new` borrows).
    pub(crate) fn nulls(table: &Table, columns: &[usize]) -> Vec<ArrayRef> {
        columns
            .iter()
            .map(|&c| new_null_array(table.schema().field(c).data_type(), 1))
            .collect()
    }

    /// The columns at `rows` (`None` gives nulls).
    pub(crate) fn gather(
        &mut self,
        rows: impl Iterator<Item = Option<RowRef>>,
    ) -> Result<Vec<ArrayRef>> {
        let Some(first) = self.sources.first() else {
            return Ok(Vec::new());
        };
        let null_source = first.len() - 1;
        self.indices.clear();
        self.indices.extend(rows.map(|r| match r {
            Some(r) => (part_of(r), row_of(r)),
            None => (null_source, 0),
        }));
        self.sources
            .iter()
            .map(|sources| {
                arrow_select::interleave::interleave(sources, &self.indices)
                    .map_err(|e| FrameError::arrow("gathering result rows", e))
            })
            .collect()
    }
}

/// Column `column` of `table` at `rows` (`None` gives a null).
pub(crate) fn gather(table: &Table, column: usize, rows: &[Option<RowRef>]) -> Result<ArrayRef> {
    let data_type = table.schema().field(column).data_type();
    let null = new_null_array(data_type, 1);
    let mut sources: Vec<&dyn Array> = table
        .parts()
        .iter()
        .map(|p| p.batch.column(column).as_ref())
        .collect();
    let null_source = sources.len();
    sources.push(null.as_ref());
    let indices: Vec<(usize, usize)> = rows
        .iter()
        .map(|r| match r {
            Some(r) => (part_of(*r), row_of(*r)),
            None => (null_source, 0),
        })
        .collect();
    arrow_select::interleave::interleave(&sources, &indices)
        .map_err(|e| FrameError::arrow("gathering result rows", e))
}

#[cfg(test)]
mod tests {
    use arrow_array::cast::AsArray;
    use arrow_schema::TimeUnit;

    use super::*;
    use crate::keys::numbers::float_order;

    #[test]
    fn numbers_come_back_in_their_own_types() {
        let values = [Some(-3i128), None, Some(7)];
        for dt in [
            DataType::Int8,
            DataType::Int64,
            DataType::Date32,
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            DataType::Decimal128(10, 2),
        ] {
            let array = numbers_array(values.iter().copied(), &dt).unwrap();
            assert_eq!(array.data_type(), &dt);
            assert_eq!(array.len(), 3);
            assert!(array.is_null(1));
        }
        let floats = [
            Some(float_order(-2.5) as i128),
            Some(float_order(f64::NAN) as i128),
        ];
        let array = numbers_array(floats.iter().copied(), &DataType::Float32).unwrap();
        let array = array.as_primitive::<Float32Type>();
        assert_eq!(array.value(0), -2.5);
        assert!(array.value(1).is_nan());
    }
}
