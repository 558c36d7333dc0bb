//! Cells of a table as plain values, compared the way SQL compares them:
//! numbers by value whatever their width, signedness or decimal scale;
//! floats in total order with -0.0 equal to 0.0 and NaN equal to itself and
//! above every number; dates in milliseconds, timestamps, times and
//! durations in nanoseconds; strings and binaries by their bytes.
//!
//! It is deliberately simple (one enum, no vectors of typed slices): the
//! reference is meant to be obviously right, not fast.

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::Array;
use arrow_schema::{DataType, TimeUnit};

use crate::error::{FrameError, Result};

/// One cell.
#[derive(Clone, Debug)]
pub enum Value {
    /// A null cell, below every value.
    Null,
    /// A boolean, false below true.
    Bool(bool),
    /// An exact number: `unscaled / 10^scale`.
    Number {
        /// The digits, as an integer.
        unscaled: i128,
        /// Power of ten the digits are divided by (0 for integers, dates and times).
        scale: i8,
    },
    /// A float, in total order (-0.0 equal to 0.0, NaN above every number).
    Float(f64),
    /// A string's or a binary's bytes, compared bytewise.
    Bytes(Vec<u8>),
}

impl Value {
    /// An integer.
    pub fn int(v: i128) -> Self {
        Value::Number {
            unscaled: v,
            scale: 0,
        }
    }

    /// The canonical form of a number (no trailing decimal zeros).
    pub(crate) fn canonical(&self) -> Self {
        match *self {
            Value::Number {
                mut unscaled,
                mut scale,
            } => {
                while scale > 0 && unscaled % 10 == 0 {
                    unscaled /= 10;
                    scale -= 1;
                }
                if unscaled == 0 {
                    scale = 0;
                }
                Value::Number { unscaled, scale }
            }
            // -0.0 matches too: one zero.
            Value::Float(0.0) => Value::Float(0.0),
            Value::Float(f) if f.is_nan() => Value::Float(f64::NAN),
            ref other => other.clone(),
        }
    }

    /// Whether the cell is null.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The value as a float (numbers, floats, and booleans as 0 or 1);
    /// `None` for nulls and bytes.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::Number { unscaled, scale } => Some(unscaled as f64 / 10f64.powi(scale.into())),
            Value::Float(f) => Some(f),
            Value::Bool(b) => Some(f64::from(u8::from(b))),
            _ => None,
        }
    }

    fn rank(&self) -> u8 {
        match self {
            Value::Null => 0,
            Value::Bool(_) => 1,
            Value::Number { .. } => 2,
            Value::Float(_) => 3,
            Value::Bytes(_) => 4,
        }
    }
}

fn float_key(f: f64) -> u64 {
    crate::keys::numbers::float_order(f)
}

fn compare_numbers((a, sa): (i128, i8), (b, sb): (i128, i8)) -> Ordering {
    let (sa, sb) = (i32::from(sa), i32::from(sb));
    let scale = |v: i128, by: i32| v.checked_mul(10i128.checked_pow(by as u32)?);
    match (scale(a, sb.max(sa) - sa), scale(b, sb.max(sa) - sb)) {
        (Some(x), Some(y)) => x.cmp(&y),
        _ => (a as f64 / 10f64.powi(sa)).total_cmp(&(b as f64 / 10f64.powi(sb))),
    }
}

impl Ord for Value {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self.canonical(), other.canonical()) {
            (Value::Bool(a), Value::Bool(b)) => a.cmp(&b),
            (
                Value::Number {
                    unscaled: a,
                    scale: sa,
                },
                Value::Number {
                    unscaled: b,
                    scale: sb,
                },
            ) => compare_numbers((a, sa), (b, sb)),
            (Value::Float(a), Value::Float(b)) => float_key(a).cmp(&float_key(b)),
            (Value::Bytes(a), Value::Bytes(b)) => a.cmp(&b),
            (a, b) => a.rank().cmp(&b.rank()),
        }
    }
}

impl PartialOrd for Value {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Value {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Value {}

impl Hash for Value {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match self.canonical() {
            Value::Null => 0u8.hash(state),
            Value::Bool(b) => b.hash(state),
            Value::Number { unscaled, scale } => (unscaled, scale).hash(state),
            Value::Float(f) => float_key(f).hash(state),
            Value::Bytes(b) => b.hash(state),
        }
    }
}

fn nanos(unit: TimeUnit) -> i128 {
    1_000_000_000 / crate::keys::family::per_second(unit)
}

fn primitive<T: ArrowPrimitiveType>(
    array: &dyn Array,
    f: impl Fn(T::Native) -> Value,
) -> Vec<Value> {
    let array = array.as_primitive::<T>();
    (0..array.len())
        .map(|i| {
            if array.is_null(i) {
                Value::Null
            } else {
                f(array.value(i))
            }
        })
        .collect()
}

fn bytes<'a>(array: &'a dyn Array, value: impl Fn(usize) -> &'a [u8]) -> Vec<Value> {
    (0..array.len())
        .map(|i| {
            if array.is_null(i) {
                Value::Null
            } else {
                Value::Bytes(value(i).to_vec())
            }
        })
        .collect()
}

/// The cells of `array`.
pub fn cells(array: &dyn Array) -> Result<Vec<Value>> {
    use DataType::*;
    let int = |v: i128| Value::int(v);
    Ok(match array.data_type() {
        Boolean => {
            let a = array.as_boolean();
            (0..a.len())
                .map(|i| {
                    if a.is_null(i) {
                        Value::Null
                    } else {
                        Value::Bool(a.value(i))
                    }
                })
                .collect()
        }
        Int8 => primitive::<Int8Type>(array, |v| int(v.into())),
        Int16 => primitive::<Int16Type>(array, |v| int(v.into())),
        Int32 => primitive::<Int32Type>(array, |v| int(v.into())),
        Int64 => primitive::<Int64Type>(array, |v| int(v.into())),
        UInt8 => primitive::<UInt8Type>(array, |v| int(v.into())),
        UInt16 => primitive::<UInt16Type>(array, |v| int(v.into())),
        UInt32 => primitive::<UInt32Type>(array, |v| int(v.into())),
        UInt64 => primitive::<UInt64Type>(array, |v| int(v.into())),
        Decimal32(_, s) => primitive::<Decimal32Type>(array, |v| Value::Number {
            unscaled: v.into(),
            scale: *s,
        }),
        Decimal64(_, s) => primitive::<Decimal64Type>(array, |v| Value::Number {
            unscaled: v.into(),
            scale: *s,
        }),
        Decimal128(_, s) => primitive::<Decimal128Type>(array, |v| Value::Number {
            unscaled: v,
            scale: *s,
        }),
        Float16 => primitive::<Float16Type>(array, |v| Value::Float(v.to_f64())),
        Float32 => primitive::<Float32Type>(array, |v| Value::Float(v.into())),
        Float64 => primitive::<Float64Type>(array, Value::Float),
        Date32 => primitive::<Date32Type>(array, |v| int(i128::from(v) * 86_400_000)),
        Date64 => primitive::<Date64Type>(array, |v| int(v.into())),
        Timestamp(unit, _) => {
            let plain = arrow_cast::cast(array, &Int64)
                .map_err(|e| FrameError::arrow("reading timestamps", e))?;
            let n = nanos(*unit);
            primitive::<Int64Type>(plain.as_ref(), |v| int(i128::from(v) * n))
        }
        Time32(unit) | Time64(unit) | Duration(unit) => {
            let plain = arrow_cast::cast(array, &Int64)
                .map_err(|e| FrameError::arrow("reading times", e))?;
            let n = nanos(*unit);
            primitive::<Int64Type>(plain.as_ref(), |v| int(i128::from(v) * n))
        }
        Utf8 => bytes(array, |i| array.as_string::<i32>().value(i).as_bytes()),
        LargeUtf8 => bytes(array, |i| array.as_string::<i64>().value(i).as_bytes()),
        Utf8View => bytes(array, |i| array.as_string_view().value(i).as_bytes()),
        Binary => bytes(array, |i| array.as_binary::<i32>().value(i)),
        LargeBinary => bytes(array, |i| array.as_binary::<i64>().value(i)),
        BinaryView => bytes(array, |i| array.as_binary_view().value(i)),
        FixedSizeBinary(_) => bytes(array, |i| array.as_fixed_size_binary().value(i)),
        Dictionary(_, values) => {
            let plain = arrow_cast::cast(array, values)
                .map_err(|e| FrameError::arrow("reading a dictionary", e))?;
            return cells(plain.as_ref());
        }
        other => {
            return Err(FrameError::InvalidRequest(format!(
                "the reference does not read {other} columns"
            )))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_compare_as_sql_does() {
        let dec = |u, s| Value::Number {
            unscaled: u,
            scale: s,
        };
        assert_eq!(dec(100, 2), Value::int(1));
        assert!(dec(-1, 0) < Value::int(u64::MAX.into()));
        assert_ne!(Value::int(-1), Value::int(u64::MAX.into()));
        assert_eq!(Value::Float(-0.0), Value::Float(0.0));
        assert_eq!(Value::Float(f64::NAN), Value::Float(-f64::NAN));
        assert!(Value::Float(f64::INFINITY) < Value::Float(f64::NAN));
        assert!(Value::Bytes(b"ab".to_vec()) < Value::Bytes(b"b".to_vec()));
        let hash = |v: &Value| {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            v.hash(&mut h);
            h.finish()
        };
        assert_eq!(hash(&dec(1500, 3)), hash(&dec(15, 1)));
    }
}
