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
use arrow_array::{Array, ArrowPrimitiveType};
use arrow_schema::{DataType, TimeUnit};

use numakit_pool::Pool;

use crate::error::{FrameError, Result};
use crate::keys::family::{multiplier, Family};
use crate::keys::PartCodes;
use crate::par::try_per_part;
use crate::table::Table;

/// The total-order code of a float: -0.0 as 0.0, one NaN after +inf.
#[inline]
pub(crate) fn float_order(value: f64) -> u64 {
    let value = if value == 0.0 {
        0.0
    } else if value.is_nan() {
        f64::NAN
    } else {
        value
    };
    let bits = value.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

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
            let mut bounds: Option<(i128, i128)> = None;
            each_number(parts[p].batch.column(column).as_ref(), m, |_, v| {
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
            let mut codes = Vec::with_capacity(array.len());
            let mut invalid = Vec::new();
            each_number(array.as_ref(), m, |row, v| match v {
                Some(v) if v >= lo && v <= hi => codes.push((v - lo) as u64),
                _ => {
                    codes.push(0);
                    invalid.push(row as u32);
                }
            })?;
            Ok(PartCodes { codes, invalid })
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
