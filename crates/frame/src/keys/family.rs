//! Which Arrow types can be keys, and how two key columns are compared.
//!
//! Every key column belongs to a [`Family`]. Values of one family compare
//! by value once brought to a common unit: integers of any width and
//! signedness and decimals of any scale are exact numbers (-1 never equals
//! 2^64-1; 1 equals 1.00); dates are compared in milliseconds, so Date32
//! and Date64 meet; timestamps, times and durations in the finer of the two
//! units (timestamps with a time zone are instants and only meet other
//! instants); floats (16, 32 and 64 bits) as 64-bit floats; strings with
//! strings and binaries with binaries, by their bytes, whatever their
//! layout (Utf8, LargeUtf8, Utf8View, dictionary-encoded). Families never
//! mix: a string key does not meet an integer key, as in SQL without an
//! explicit cast.
//!
//! Nested types (lists, structs, maps) and intervals cannot be keys.

use arrow_schema::{DataType, TimeUnit};

/// How a key column's values compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Family {
    /// Integers and decimals: exact numbers at a decimal scale.
    Number {
        scale: i8,
    },
    Boolean,
    /// Dates, in milliseconds since the epoch.
    Date,
    Timestamp {
        unit: TimeUnit,
        zoned: bool,
    },
    Time {
        unit: TimeUnit,
    },
    Duration {
        unit: TimeUnit,
    },
    Float,
    Bytes {
        text: bool,
    },
}

/// The family of `data_type`, or why it cannot be a key.
pub(crate) fn family_of(data_type: &DataType) -> Result<Family, String> {
    use DataType::*;
    Ok(match data_type {
        Int8 | Int16 | Int32 | Int64 | UInt8 | UInt16 | UInt32 | UInt64 => {
            Family::Number { scale: 0 }
        }
        Decimal32(_, s) | Decimal64(_, s) | Decimal128(_, s) => Family::Number { scale: *s },
        Boolean => Family::Boolean,
        Date32 | Date64 => Family::Date,
        Timestamp(unit, tz) => Family::Timestamp {
            unit: *unit,
            zoned: tz.is_some(),
        },
        Time32(unit) | Time64(unit) => Family::Time { unit: *unit },
        Duration(unit) => Family::Duration { unit: *unit },
        Float16 | Float32 | Float64 => Family::Float,
        Utf8 | LargeUtf8 | Utf8View => Family::Bytes { text: true },
        Binary | LargeBinary | BinaryView | FixedSizeBinary(_) => Family::Bytes { text: false },
        Dictionary(_, values) => family_of(values)?,
        Decimal256(..) => return Err("256-bit decimals are not supported as keys".into()),
        Null => return Err("a column of only nulls has no values to compare".into()),
        other => {
            return Err(format!(
                "{other} values have no key order or equality here (nested, interval or \
                 other types); use a column of numbers, strings, dates or times"
            ))
        }
    })
}

/// The family both sides are compared in, or why they cannot be.
pub(crate) fn common_family(left: Family, right: Family) -> Result<Family, String> {
    use Family::*;
    match (left, right) {
        (Number { scale: a }, Number { scale: b }) => Ok(Number { scale: a.max(b) }),
        (Timestamp { unit: a, zoned: za }, Timestamp { unit: b, zoned: zb }) => {
            if za != zb {
                Err(
                    "a timestamp with a time zone (an instant) cannot be compared with one \
                     without (a local time)"
                        .into(),
                )
            } else {
                Ok(Timestamp {
                    unit: finer(a, b),
                    zoned: za,
                })
            }
        }
        (Time { unit: a }, Time { unit: b }) => Ok(Time { unit: finer(a, b) }),
        (Duration { unit: a }, Duration { unit: b }) => Ok(Duration { unit: finer(a, b) }),
        (Bytes { text: a }, Bytes { text: b }) if a != b => {
            Err("strings and binary values are not compared without a cast".into())
        }
        (a, b) if a == b => Ok(a),
        _ => Err(
            "the types belong to different families (numbers, dates, times, floats, \
                  strings); cast one side first"
                .into(),
        ),
    }
}

fn finer(a: TimeUnit, b: TimeUnit) -> TimeUnit {
    if per_second(a) >= per_second(b) {
        a
    } else {
        b
    }
}

/// Ticks of `unit` per second.
pub(crate) fn per_second(unit: TimeUnit) -> i128 {
    match unit {
        TimeUnit::Second => 1,
        TimeUnit::Millisecond => 1_000,
        TimeUnit::Microsecond => 1_000_000,
        TimeUnit::Nanosecond => 1_000_000_000,
    }
}

/// The factor that brings values of `data_type` to the units of `common`
/// (decimal scale, milliseconds of dates, time unit).
pub(crate) fn multiplier(data_type: &DataType, common: Family) -> i128 {
    let own = match data_type {
        DataType::Dictionary(_, values) => values.as_ref(),
        other => other,
    };
    match (own, common) {
        (
            DataType::Decimal32(_, s) | DataType::Decimal64(_, s) | DataType::Decimal128(_, s),
            Family::Number { scale },
        ) => 10i128.pow((scale - s).max(0) as u32),
        (_, Family::Number { scale }) => 10i128.pow(scale.max(0) as u32),
        (DataType::Date32, Family::Date) => 86_400_000,
        (DataType::Timestamp(unit, _), Family::Timestamp { unit: to, .. })
        | (DataType::Time32(unit) | DataType::Time64(unit), Family::Time { unit: to })
        | (DataType::Duration(unit), Family::Duration { unit: to }) => {
            per_second(to) / per_second(*unit)
        }
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_meet_only_their_own_kind() {
        let int = family_of(&DataType::Int32).unwrap();
        let uint = family_of(&DataType::UInt64).unwrap();
        let dec = family_of(&DataType::Decimal128(12, 2)).unwrap();
        assert_eq!(common_family(int, uint), Ok(Family::Number { scale: 0 }));
        assert_eq!(common_family(int, dec), Ok(Family::Number { scale: 2 }));
        assert_eq!(
            multiplier(&DataType::Int32, Family::Number { scale: 2 }),
            100
        );
        let text = family_of(&DataType::Utf8View).unwrap();
        let dict = family_of(&DataType::Dictionary(
            Box::new(DataType::Int32),
            Box::new(DataType::LargeUtf8),
        ))
        .unwrap();
        assert_eq!(common_family(text, dict), Ok(text));
        assert!(common_family(text, int).is_err());
        assert!(common_family(text, family_of(&DataType::Binary).unwrap()).is_err());
        let local = family_of(&DataType::Timestamp(TimeUnit::Second, None)).unwrap();
        let zoned = family_of(&DataType::Timestamp(
            TimeUnit::Millisecond,
            Some("UTC".into()),
        ))
        .unwrap();
        assert!(common_family(local, zoned).is_err());
        assert!(family_of(&DataType::new_list(DataType::Int64, true)).is_err());
        assert_eq!(multiplier(&DataType::Date32, Family::Date), 86_400_000);
        let micro = Family::Timestamp {
            unit: TimeUnit::Microsecond,
            zoned: false,
        };
        assert_eq!(
            multiplier(&DataType::Timestamp(TimeUnit::Second, None), micro),
            1_000_000
        );
    }
}
