//! Value columns as the slices the aggregation kernels read: 64-bit
//! integers (integers, decimals up to 18 digits, dates, times, timestamps,
//! durations, booleans), 128-bit integers (wider decimals, unsigned values
//! beyond int64), 64-bit floats, or, for MIN and MAX of strings, their
//! ranks in byte order. Arrays already in one of these layouts are read in
//! place; others are widened once, part by part on the pool.
//!
//! Values keep their column's own units (a Date32 is days), so results go
//! back to the column's type unchanged. Validity bitmaps are Arrow's.

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef};
use arrow_buffer::NullBuffer;
use arrow_data::ArrayData;
use arrow_schema::DataType;

use numakit_ops::aggregate::columns::{Validity, ValueColumn, Values};
use numakit_pool::Pool;

use crate::error::{FrameError, Result};
use crate::keys::{column_codes, Meaning, PartCodes};
use crate::par::try_per_part;
use crate::table::{RowRef, Table};

/// How a column is laid out for the kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LaneKind {
    Int,
    Wide,
    Float,
    /// Ranks of strings or binaries in byte order.
    Rank,
    /// Validity only (COUNT of a column of any type).
    Presence,
}

impl LaneKind {
    pub(crate) fn is_float(self) -> bool {
        self == LaneKind::Float
    }
}

enum Owned {
    None,
    I64(Vec<i64>),
    I128(Vec<i128>),
    F64(Vec<f64>),
}

/// One part of a value column.
pub(crate) struct PartLane {
    data: ArrayData,
    owned: Owned,
    nulls: Option<NullBuffer>,
    /// A validity bitmap made here (ranks), when `nulls` is not the array's.
    own_bits: Option<Vec<u8>>,
}

/// A value column, part by part.
pub(crate) struct Lane {
    pub(crate) kind: LaneKind,
    pub(crate) parts: Vec<PartLane>,
    /// For ranks: `representatives[rank]` holds that value.
    pub(crate) representatives: Vec<RowRef>,
}

impl PartLane {
    pub(crate) fn in_place(array: &ArrayRef) -> Self {
        PartLane {
            data: array.to_data(),
            owned: Owned::None,
            nulls: array.logical_nulls().filter(|n| n.null_count() > 0),
            own_bits: None,
        }
    }

    fn widened(array: &ArrayRef, owned: Owned) -> Self {
        PartLane {
            owned,
            ..Self::in_place(array)
        }
    }

    /// Whether any value is null.
    pub(crate) fn has_nulls(&self) -> bool {
        self.nulls.is_some() || self.own_bits.is_some()
    }

    /// The slice view the kernels read.
    pub(crate) fn column(&self, kind: LaneKind) -> ValueColumn<'_> {
        let values = match (&self.owned, kind) {
            (Owned::I64(v), _) => Values::I64(v),
            (Owned::I128(v), _) => Values::I128(v),
            (Owned::F64(v), _) => Values::F64(v),
            (Owned::None, LaneKind::Int) => Values::I64(self.data.buffer::<i64>(0)),
            (Owned::None, LaneKind::Wide) => Values::I128(self.data.buffer::<i128>(0)),
            (Owned::None, LaneKind::Float) => Values::F64(self.data.buffer::<f64>(0)),
            (Owned::None, _) => Values::None,
        };
        let valid = match (&self.own_bits, &self.nulls) {
            (Some(bits), _) => Some(Validity::new(bits, 0)),
            (None, Some(nulls)) => Some(Validity::new(nulls.validity(), nulls.offset())),
            (None, None) => None,
        };
        ValueColumn { values, valid }
    }
}

fn widen_ints<T: ArrowPrimitiveType>(array: &dyn Array, f: impl Fn(T::Native) -> i64) -> Owned {
    Owned::I64(
        array
            .as_primitive::<T>()
            .values()
            .iter()
            .map(|&v| f(v))
            .collect(),
    )
}

fn widen_floats<T: ArrowPrimitiveType>(array: &dyn Array, f: impl Fn(T::Native) -> f64) -> Owned {
    Owned::F64(
        array
            .as_primitive::<T>()
            .values()
            .iter()
            .map(|&v| f(v))
            .collect(),
    )
}

/// The lane of one part of an integer-like or float column.
pub(crate) fn number_part(array: &ArrayRef, wide_unsigned: bool) -> Result<(LaneKind, PartLane)> {
    use DataType::*;
    let a = array.as_ref();
    let (kind, owned) = match array.data_type() {
        Int64 | Date64 | Time64(_) | Timestamp(..) | Duration(_) | Decimal64(..) => {
            (LaneKind::Int, Owned::None)
        }
        UInt64 if !wide_unsigned => (LaneKind::Int, Owned::None),
        UInt64 => (
            LaneKind::Wide,
            Owned::I128(
                a.as_primitive::<UInt64Type>()
                    .values()
                    .iter()
                    .map(|&v| i128::from(v))
                    .collect(),
            ),
        ),
        // Up to 18 digits fit in 64 bits, whose sums need no overflow checks.
        Decimal128(p, _) if *p <= 18 => {
            (LaneKind::Int, widen_ints::<Decimal128Type>(a, |v| v as i64))
        }
        Decimal128(..) => (LaneKind::Wide, Owned::None),
        Int8 => (LaneKind::Int, widen_ints::<Int8Type>(a, i64::from)),
        Int16 => (LaneKind::Int, widen_ints::<Int16Type>(a, i64::from)),
        Int32 => (LaneKind::Int, widen_ints::<Int32Type>(a, i64::from)),
        UInt8 => (LaneKind::Int, widen_ints::<UInt8Type>(a, i64::from)),
        UInt16 => (LaneKind::Int, widen_ints::<UInt16Type>(a, i64::from)),
        UInt32 => (LaneKind::Int, widen_ints::<UInt32Type>(a, i64::from)),
        Date32 => (LaneKind::Int, widen_ints::<Date32Type>(a, i64::from)),
        Time32(arrow_schema::TimeUnit::Second) => {
            (LaneKind::Int, widen_ints::<Time32SecondType>(a, i64::from))
        }
        Time32(_) => (
            LaneKind::Int,
            widen_ints::<Time32MillisecondType>(a, i64::from),
        ),
        Decimal32(..) => (LaneKind::Int, widen_ints::<Decimal32Type>(a, i64::from)),
        Boolean => (
            LaneKind::Int,
            Owned::I64(a.as_boolean().values().iter().map(i64::from).collect()),
        ),
        Float64 => (LaneKind::Float, Owned::None),
        Float32 => (LaneKind::Float, widen_floats::<Float32Type>(a, f64::from)),
        Float16 => (
            LaneKind::Float,
            widen_floats::<Float16Type>(a, |v| f64::from(v.to_f32())),
        ),
        other => {
            return Err(FrameError::InvalidRequest(format!(
                "{other} values are not numbers"
            )))
        }
    };
    Ok((kind, PartLane::widened(array, owned)))
}

/// Whether a UInt64 column holds a value above `i64::MAX`.
fn unsigned_beyond_i64(pool: &Pool, table: &Table, column: usize) -> Result<bool> {
    let parts = table.parts();
    let any = try_per_part(
        pool,
        parts.len(),
        |p| parts[p].worker,
        |p| {
            let array = parts[p].batch.column(column);
            Ok(array
                .as_primitive::<UInt64Type>()
                .iter()
                .flatten()
                .any(|v| v > i64::MAX as u64))
        },
    )?;
    Ok(any.into_iter().any(|b| b))
}

/// A plain (not dictionary-encoded) copy of each part's column, when the
/// column is a dictionary of numbers.
fn plain_arrays(table: &Table, column: usize) -> Result<Vec<ArrayRef>> {
    table
        .parts()
        .iter()
        .map(|p| {
            let array = p.batch.column(column);
            match array.data_type() {
                DataType::Dictionary(_, values) => arrow_cast::cast(array, values)
                    .map_err(|e| FrameError::arrow("unpacking a dictionary-encoded column", e)),
                _ => Ok(array.clone()),
            }
        })
        .collect()
}

fn bitmap_without(rows: usize, invalid: &[u32]) -> Option<Vec<u8>> {
    if invalid.is_empty() {
        return None;
    }
    let mut bits = vec![0xFFu8; rows.div_ceil(8).max(1)];
    for &r in invalid {
        bits[r as usize / 8] &= !(1 << (r % 8));
    }
    Some(bits)
}

/// The lane of column `column`, for the functions in `needs_order`
/// (MIN/MAX need an order; COUNT alone only validity).
pub(crate) fn lane(pool: &Pool, table: &Table, column: usize, needs_values: bool) -> Result<Lane> {
    let data_type = table.schema().field(column).data_type().clone();
    let kind = crate::request::aggregate::spec::value_type(&data_type);
    use crate::request::aggregate::spec::ValueType;
    if !needs_values || kind == ValueType::Other {
        let parts = table
            .parts()
            .iter()
            .map(|p| PartLane::in_place(p.batch.column(column)))
            .collect();
        return Ok(Lane {
            kind: LaneKind::Presence,
            parts,
            representatives: Vec::new(),
        });
    }
    if kind == ValueType::Bytes {
        let coded = column_codes(pool, table, column, true)?;
        let Meaning::Rows { representatives } = coded.meaning else {
            return Err(FrameError::InvalidRequest(
                "string ranks without rows".into(),
            ));
        };
        let parts = table
            .parts()
            .iter()
            .zip(coded.parts)
            .map(|(p, PartCodes { codes, invalid })| {
                let own_bits = bitmap_without(codes.len(), &invalid);
                PartLane {
                    data: p.batch.column(column).to_data(),
                    owned: Owned::I64(codes.iter().map(|&c| c as i64).collect()),
                    nulls: None,
                    own_bits,
                }
            })
            .collect();
        return Ok(Lane {
            kind: LaneKind::Rank,
            parts,
            representatives,
        });
    }
    let arrays = plain_arrays(table, column)?;
    let wide_unsigned = matches!(
        arrays.first().map(|a| a.data_type()),
        Some(DataType::UInt64)
    ) && unsigned_beyond_i64(pool, table, column)?;
    let parts = table.parts();
    let built = try_per_part(
        pool,
        parts.len(),
        |p| parts[p].worker,
        |p| number_part(&arrays[p], wide_unsigned),
    )?;
    let kind = built
        .first()
        .map_or_else(|| number_kind_of(&data_type, wide_unsigned), |(k, _)| *k);
    Ok(Lane {
        kind,
        parts: built.into_iter().map(|(_, lane)| lane).collect(),
        representatives: Vec::new(),
    })
}

/// The lane kind of an empty column of `data_type`.
fn number_kind_of(data_type: &DataType, wide_unsigned: bool) -> LaneKind {
    match data_type {
        DataType::Float16 | DataType::Float32 | DataType::Float64 => LaneKind::Float,
        DataType::Decimal128(p, _) if *p > 18 => LaneKind::Wide,
        DataType::UInt64 if wide_unsigned => LaneKind::Wide,
        DataType::Dictionary(_, values) => number_kind_of(values, wide_unsigned),
        _ => LaneKind::Int,
    }
}
