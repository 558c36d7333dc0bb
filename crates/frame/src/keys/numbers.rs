//! Fixed-width key columns as exact numbers: integers of every width and
//! signedness, decimals, booleans, dates, times, timestamps and durations
//! are read as `i128` in the units of their common [`Family`] (scaled by
//! [`multiplier`]); floats as their total-order bit pattern, with -0.0 made
//! 0.0 and every NaN one NaN that sorts after +infinity.
//!
//! A column's codes are its values minus the smallest value of the range
//! both sides can share (`lo..=hi`), so they are order-preserving and as
//! narrow as the data: a key between 1 and 6,000,000 needs 23 bits, which
//! makes composite keys pack into one word. Values outside the range (or
//! that overflow when scaled) can match nothing and get no code.
//!
//! This module does not handle strings (`bytes`, `dictionary`).

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, ArrowPrimitiveType};
use arrow_buffer::ScalarBuffer;
use arrow_schema::{DataType, TimeUnit};

use numakit_pool::Pool;

use crate::error::{FrameError, Result};
use crate::keys::family::{multiplier, Family};
use crate::keys::PartCodes;
use crate::par::try_per_part;
use crate::table::Table;

/// The total-order code of a float: -0.0 as 0.0, one NaN after +inf.
pub(crate) use numakit_ops::sort::f64_to_ordered_u64 as float_order;

#[inline(always)]
fn scaled(value: i128, multiplier: i128) -> Option<i128> {
    if multiplier == 1 {
        Some(value)
    } else {
        value.checked_mul(multiplier)
    }
}

fn each_primitive<T: ArrowPrimitiveType>(
    array: &dyn Array,
    convert: impl Fn(T::Native) -> i128,
    multiplier: i128,
    f: &mut impl FnMut(usize, Option<i128>),
) {
    let array = array.as_primitive::<T>();
    let values = array.values();
    match array.nulls().filter(|n| n.null_count() > 0) {
        None => {
            for (row, &v) in values.iter().enumerate() {
                f(row, scaled(convert(v), multiplier));
            }
        }
        Some(nulls) => {
            for (row, &v) in values.iter().enumerate() {
                let value = nulls
                    .is_valid(row)
                    .then(|| scaled(convert(v), multiplier))
                    .flatten();
                f(row, value);
            }
        }
    }
}

/// Calls `f(row, value)` for every row of `array`: the value in common
/// units, or `None` for a null (or a value that overflows when scaled).
pub(crate) fn each_number(
    array: &dyn Array,
    multiplier: i128,
    mut f: impl FnMut(usize, Option<i128>),
) -> Result<()> {
    if let DataType::Dictionary(_, values) = array.data_type() {
        let plain = arrow_cast::cast(array, values)
            .map_err(|e| FrameError::arrow("unpacking a dictionary-encoded key", e))?;
        return each_plain_number(plain.as_ref(), multiplier, &mut f);
    }
    each_plain_number(array, multiplier, &mut f)
}

fn each_plain_number(
    array: &dyn Array,
    multiplier: i128,
    f: &mut impl FnMut(usize, Option<i128>),
) -> Result<()> {
    use DataType::*;
    let m = multiplier;
    match array.data_type() {
        Int8 => each_primitive::<Int8Type>(array, i128::from, m, f),
        Int16 => each_primitive::<Int16Type>(array, i128::from, m, f),
        Int32 => each_primitive::<Int32Type>(array, i128::from, m, f),
        Int64 => each_primitive::<Int64Type>(array, i128::from, m, f),
        UInt8 => each_primitive::<UInt8Type>(array, i128::from, m, f),
        UInt16 => each_primitive::<UInt16Type>(array, i128::from, m, f),
        UInt32 => each_primitive::<UInt32Type>(array, i128::from, m, f),
        UInt64 => each_primitive::<UInt64Type>(array, i128::from, m, f),
        Decimal32(..) => each_primitive::<Decimal32Type>(array, i128::from, m, f),
        Decimal64(..) => each_primitive::<Decimal64Type>(array, i128::from, m, f),
        Decimal128(..) => each_primitive::<Decimal128Type>(array, |v| v, m, f),
        Date32 => each_primitive::<Date32Type>(array, i128::from, m, f),
        Date64 => each_primitive::<Date64Type>(array, i128::from, m, f),
        Timestamp(TimeUnit::Second, _) => {
            each_primitive::<TimestampSecondType>(array, i128::from, m, f)
        }
        Timestamp(TimeUnit::Millisecond, _) => {
            each_primitive::<TimestampMillisecondType>(array, i128::from, m, f)
        }
        Timestamp(TimeUnit::Microsecond, _) => {
            each_primitive::<TimestampMicrosecondType>(array, i128::from, m, f)
        }
        Timestamp(TimeUnit::Nanosecond, _) => {
            each_primitive::<TimestampNanosecondType>(array, i128::from, m, f)
        }
        Time32(TimeUnit::Second) => each_primitive::<Time32SecondType>(array, i128::from, m, f),
        Time32(_) => each_primitive::<Time32MillisecondType>(array, i128::from, m, f),
        Time64(TimeUnit::Microsecond) => {
            each_primitive::<Time64MicrosecondType>(array, i128::from, m, f)
        }
        Time64(_) => each_primitive::<Time64NanosecondType>(array, i128::from, m, f),
        Duration(TimeUnit::Second) => each_primitive::<DurationSecondType>(array, i128::from, m, f),
        Duration(TimeUnit::Millisecond) => {
            each_primitive::<DurationMillisecondType>(array, i128::from, m, f)
        }
        Duration(TimeUnit::Microsecond) => {
            each_primitive::<DurationMicrosecondType>(array, i128::from, m, f)
        }
        Duration(TimeUnit::Nanosecond) => {
            each_primitive::<DurationNanosecondType>(array, i128::from, m, f)
        }
        Float16 => each_primitive::<Float16Type>(
            array,
            |v| i128::from(float_order(f64::from(v.to_f32()))),
            1,
            f,
        ),
        Float32 => {
            each_primitive::<Float32Type>(array, |v| i128::from(float_order(f64::from(v))), 1, f)
        }
        Float64 => each_primitive::<Float64Type>(array, |v| i128::from(float_order(v)), 1, f),
        Boolean => {
            let array = array.as_boolean();
            for row in 0..array.len() {
                let value = array.is_valid(row).then(|| i128::from(array.value(row)));
                f(row, value);
            }
        }
        other => {
            return Err(FrameError::InvalidRequest(format!(
                "{other} values are not numbers"
            )))
        }
    }
    Ok(())
}

/// A column's values in their physical layout, when that is 32 or 64-bit
/// integers (integers, dates, times, timestamps, durations, decimals up to
/// 64 bits).
pub(crate) enum Physical<'a> {
    I64(&'a [i64]),
    U64(&'a [u64]),
    I32(&'a [i32]),
}

macro_rules! physical_of {
    ($array:expr, $($t:ty => $variant:ident),+ $(,)?) => {{
        let dt = $array.data_type();
        $(if dt == &<$t>::DATA_TYPE || std::mem::discriminant(dt) == std::mem::discriminant(&<$t>::DATA_TYPE) && same_kind::<$t>(dt) {
            return Some(Physical::$variant($array.as_primitive::<$t>().values()));
        })+
        None
    }};
}

/// Whether `dt` is the type `T` stands for (decimals and time zones aside).
fn same_kind<T: ArrowPrimitiveType>(dt: &DataType) -> bool {
    match (dt, &T::DATA_TYPE) {
        (DataType::Timestamp(a, _), DataType::Timestamp(b, _)) => a == b,
        (DataType::Decimal32(..), DataType::Decimal32(..))
        | (DataType::Decimal64(..), DataType::Decimal64(..)) => true,
        (a, b) => a == b,
    }
}

/// The physical values of `array`, if they are 32 or 64-bit integers.
pub(crate) fn physical(array: &dyn Array) -> Option<Physical<'_>> {
    physical_of!(array,
        Int64Type => I64,
        Date64Type => I64,
        Time64MicrosecondType => I64,
        Time64NanosecondType => I64,
        TimestampSecondType => I64,
        TimestampMillisecondType => I64,
        TimestampMicrosecondType => I64,
        TimestampNanosecondType => I64,
        DurationSecondType => I64,
        DurationMillisecondType => I64,
        DurationMicrosecondType => I64,
        DurationNanosecondType => I64,
        Decimal64Type => I64,
        UInt64Type => U64,
        Int32Type => I32,
        Date32Type => I32,
        Time32SecondType => I32,
        Time32MillisecondType => I32,
        Decimal32Type => I32,
    )
}

/// Codes equal to the values (signed ones sign-extended to 64 bits), for
/// columns [`physical`] reads; 64-bit columns lend their memory, nothing is
/// copied. Nulls get no code.
pub(crate) fn raw_codes(array: &ArrayRef) -> Option<PartCodes> {
    let invalid = null_rows(array.as_ref());
    match physical(array.as_ref())? {
        Physical::I64(_) | Physical::U64(_) => {
            let data = array.to_data();
            let codes =
                ScalarBuffer::<u64>::new(data.buffers()[0].clone(), data.offset(), data.len());
            Some(PartCodes { codes, invalid })
        }
        Physical::I32(v) => Some(PartCodes::new(
            v.iter().map(|&x| i64::from(x) as u64).collect(),
            invalid,
        )),
    }
}

/// Whether [`raw_codes`] of `data_type` are sign-extended values (else
/// unsigned ones); `None` when the type has no raw codes.
pub(crate) fn raw_signed(data_type: &DataType) -> Option<bool> {
    let empty = arrow_array::new_empty_array(data_type);
    match physical(empty.as_ref())? {
        Physical::U64(_) => Some(false),
        _ => Some(true),
    }
}

/// The rows of `array` that are null, in order.
pub(crate) fn null_rows(array: &dyn Array) -> Vec<u32> {
    match array.logical_nulls().filter(|n| n.null_count() > 0) {
        None => Vec::new(),
        Some(nulls) => (0..array.len())
            .filter(|&i| nulls.is_null(i))
            .map(|i| i as u32)
            .collect(),
    }
}

/// Smallest and largest valid value of a physical slice.
fn physical_range(values: &Physical<'_>, nulls: &[u32]) -> Option<(i128, i128)> {
    fn bounds<T: Copy + Ord + Into<i128>>(v: &[T], nulls: &[u32]) -> Option<(i128, i128)> {
        if nulls.is_empty() {
            let lo = v.iter().copied().min()?;
            let hi = v.iter().copied().max()?;
            return Some((lo.into(), hi.into()));
        }
        let mut skip = nulls.iter().peekable();
        let mut out: Option<(T, T)> = None;
        for (row, &x) in v.iter().enumerate() {
            if skip.peek() == Some(&&(row as u32)) {
                skip.next();
                continue;
            }
            out = Some(out.map_or((x, x), |(lo, hi)| (lo.min(x), hi.max(x))));
        }
        out.map(|(lo, hi)| (lo.into(), hi.into()))
    }
    match values {
        Physical::I64(v) => bounds(v, nulls),
        Physical::U64(v) => bounds(v, nulls),
        Physical::I32(v) => bounds(v, nulls),
    }
}

/// `value - lo` for values in `lo..=hi`; others and nulls get no code.
fn physical_offsets(values: &Physical<'_>, nulls: &[u32], (lo, hi): (i128, i128)) -> PartCodes {
    fn offsets<T: Copy + Into<i128>>(v: &[T], nulls: &[u32], lo: i128, hi: i128) -> PartCodes {
        let mut codes = Vec::with_capacity(v.len());
        let mut invalid = Vec::new();
        let mut skip = nulls.iter().peekable();
        for (row, &x) in v.iter().enumerate() {
            let x: i128 = x.into();
            if skip.peek() == Some(&&(row as u32)) {
                skip.next();
                codes.push(0);
                invalid.push(row as u32);
            } else if x >= lo && x <= hi {
                codes.push((x - lo) as u64);
            } else {
                codes.push(0);
                invalid.push(row as u32);
            }
        }
        PartCodes::new(codes, invalid)
    }
    match values {
        Physical::I64(v) => {
            // The common case, without 128-bit arithmetic: every value of
            // an i64 column whose range is within lo..=hi.
            if let (Ok(l), Ok(h)) = (i64::try_from(lo), i64::try_from(hi)) {
                let mut codes = Vec::with_capacity(v.len());
                let mut invalid = Vec::new();
                let mut skip = nulls.iter().peekable();
                for (row, &x) in v.iter().enumerate() {
                    let null = skip.peek() == Some(&&(row as u32));
                    if null {
                        skip.next();
                    }
                    if null || x < l || x > h {
                        codes.push(0);
                        invalid.push(row as u32);
                    } else {
                        codes.push(x.wrapping_sub(l) as u64);
                    }
                }
                return PartCodes::new(codes, invalid);
            }
            offsets(v, nulls, lo, hi)
        }
        Physical::U64(v) => offsets(v, nulls, lo, hi),
        Physical::I32(v) => offsets(v, nulls, lo, hi),
    }
}

/// The smallest and largest value of column `column` (in `common` units),
/// or `None` when it has no values.
pub(crate) fn range(
    pool: &Pool,
    table: &Table,
    column: usize,
    common: Family,
) -> Result<Option<(i128, i128)>> {
    let m = multiplier(table.schema().field(column).data_type(), common);
    let parts = table.parts();
    let per_part = try_per_part(
        pool,
        parts.len(),
        |p| parts[p].worker,
        |p| {
            let array = parts[p].batch.column(column).as_ref();
            if m == 1 {
                if let Some(values) = physical(array) {
                    return Ok(physical_range(&values, &null_rows(array)));
                }
            }
            let mut bounds: Option<(i128, i128)> = None;
            each_number(array, m, |_, v| {
                if let Some(v) = v {
                    bounds = Some(match bounds {
                        None => (v, v),
                        Some((lo, hi)) => (lo.min(v), hi.max(v)),
                    });
                }
            })?;
            Ok(bounds)
        },
    )?;
    Ok(per_part
        .into_iter()
        .flatten()
        .reduce(|(a, b), (c, d)| (a.min(c), b.max(d))))
}

/// The codes `value - lo` of column `column` (in `common` units); values
/// outside `lo..=hi` and nulls get none. `hi - lo` must fit in 64 bits.
pub(crate) fn offset_codes(
    pool: &Pool,
    table: &Table,
    column: usize,
    common: Family,
    (lo, hi): (i128, i128),
) -> Result<Vec<PartCodes>> {
    let m = multiplier(table.schema().field(column).data_type(), common);
    let parts = table.parts();
    try_per_part(
        pool,
        parts.len(),
        |p| parts[p].worker,
        |p| {
            let array = parts[p].batch.column(column);
            if m == 1 {
                if let Some(values) = physical(array.as_ref()) {
                    let nulls = null_rows(array.as_ref());
                    return Ok(physical_offsets(&values, &nulls, (lo, hi)));
                }
            }
            let mut codes = Vec::with_capacity(array.len());
            let mut invalid = Vec::new();
            each_number(array.as_ref(), m, |row, v| match v {
                Some(v) if v >= lo && v <= hi => codes.push((v - lo) as u64),
                _ => {
                    codes.push(0);
                    invalid.push(row as u32);
                }
            })?;
            Ok(PartCodes::new(codes, invalid))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_order_totally_with_nan_last_and_zeros_equal() {
        let ordered = [
            f64::NEG_INFINITY,
            -1e300,
            -1.0,
            -f64::MIN_POSITIVE,
            0.0,
            f64::MIN_POSITIVE,
            1.0,
            f64::INFINITY,
            f64::NAN,
        ];
        for pair in ordered.windows(2) {
            assert!(float_order(pair[0]) < float_order(pair[1]), "{pair:?}");
        }
        assert_eq!(float_order(-0.0), float_order(0.0));
        assert_eq!(float_order(f64::NAN), float_order(-f64::NAN));
    }
}
