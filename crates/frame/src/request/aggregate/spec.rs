//! The aggregates a group-by computes: parsed from `count,sum:x,avg:y`,
//! checked against the column types, named the way SQL engines name them
//! (`count`, `sum_x`), and typed: COUNT is Int64; SUM of signed integers
//! Int64, of unsigned ones UInt64, of decimals Decimal128(38, scale), of
//! floats Float64; AVG Float64; MIN and MAX keep the column's type.
//!
//! It does not compute anything.

use arrow_schema::{DataType, Field};
use serde::Serialize;

use crate::error::{FrameError, Result};

/// An aggregate function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AggFunc {
    /// COUNT(*): rows of the group.
    CountRows,
    /// COUNT(col): non-null values.
    Count,
    /// SUM(col) of the non-null values: exact for integers and decimals
    /// (an error when it leaves the result type), in Float64 for floats.
    Sum,
    /// MIN(col): the smallest non-null value, in the column's type.
    Min,
    /// MAX(col): the largest non-null value, in the column's type.
    Max,
    /// AVG(col): the mean of the non-null values, as Float64.
    Avg,
}

impl AggFunc {
    /// The lowercase name used in aggregate lists and result column names
    /// (`count` for both counts).
    pub fn name(self) -> &'static str {
        match self {
            AggFunc::CountRows | AggFunc::Count => "count",
            AggFunc::Sum => "sum",
            AggFunc::Min => "min",
            AggFunc::Max => "max",
            AggFunc::Avg => "avg",
        }
    }
}

/// One aggregate of a group-by.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Aggregate {
    /// The function.
    pub func: AggFunc,
    /// The column (none for COUNT(*)).
    pub column: Option<String>,
}

impl Aggregate {
    /// COUNT(*).
    pub fn count_rows() -> Self {
        Aggregate {
            func: AggFunc::CountRows,
            column: None,
        }
    }

    /// `func` of `column`.
    pub fn of(func: AggFunc, column: &str) -> Self {
        Aggregate {
            func,
            column: Some(column.to_string()),
        }
    }

    /// The result column's name: `count`, or `FUNC_COLUMN`.
    pub fn output_name(&self) -> String {
        match &self.column {
            None => "count".into(),
            Some(c) => format!("{}_{c}", self.func.name()),
        }
    }

    /// Parses a comma-separated list of `count` and `FUNC:COLUMN`, FUNC
    /// one of count, sum, min, max, avg.
    pub fn parse_list(list: &str) -> Result<Vec<Aggregate>> {
        let mut out = Vec::new();
        for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            out.push(Self::parse(item)?);
        }
        if out.is_empty() {
            return Err(FrameError::InvalidRequest(
                "--agg names no aggregate (e.g. count,sum:price,avg:qty)".into(),
            ));
        }
        Ok(out)
    }

    fn parse(item: &str) -> Result<Aggregate> {
        if item == "count" || item == "count(*)" {
            return Ok(Self::count_rows());
        }
        let bad = || {
            FrameError::InvalidRequest(format!(
                "aggregate `{item}` is not `count` or FUNC:COLUMN with FUNC one of count, sum, min, max, avg"
            ))
        };
        let (func, column) = item.split_once(':').ok_or_else(bad)?;
        let func = match func.trim() {
            "count" => AggFunc::Count,
            "sum" => AggFunc::Sum,
            "min" => AggFunc::Min,
            "max" => AggFunc::Max,
            "avg" | "mean" => AggFunc::Avg,
            _ => return Err(bad()),
        };
        let column = column.trim();
        if column.is_empty() {
            return Err(bad());
        }
        Ok(Self::of(func, column))
    }

    /// count, sum, min, max and avg of `column` (the `--value` shorthand).
    pub fn all_of(column: &str) -> Vec<Aggregate> {
        vec![
            Self::count_rows(),
            Self::of(AggFunc::Sum, column),
            Self::of(AggFunc::Min, column),
            Self::of(AggFunc::Max, column),
            Self::of(AggFunc::Avg, column),
        ]
    }
}

/// What a column's type allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ValueType {
    Signed,
    Unsigned,
    Decimal {
        scale: i8,
    },
    Float,
    /// Dates, times, timestamps, durations, booleans: ordered, not summed.
    Ordered,
    /// Strings and binaries: ordered by bytes.
    Bytes,
    /// Anything else: only counted.
    Other,
}

pub(crate) fn value_type(data_type: &DataType) -> ValueType {
    use DataType::*;
    match data_type {
        Int8 | Int16 | Int32 | Int64 => ValueType::Signed,
        UInt8 | UInt16 | UInt32 | UInt64 => ValueType::Unsigned,
        Decimal32(_, s) | Decimal64(_, s) | Decimal128(_, s) => ValueType::Decimal { scale: *s },
        Float16 | Float32 | Float64 => ValueType::Float,
        Date32 | Date64 | Time32(_) | Time64(_) | Timestamp(..) | Duration(_) | Boolean => {
            ValueType::Ordered
        }
        Utf8 | LargeUtf8 | Utf8View | Binary | LargeBinary | BinaryView | FixedSizeBinary(_) => {
            ValueType::Bytes
        }
        Dictionary(_, values) => value_type(values),
        _ => ValueType::Other,
    }
}

/// The result field of `aggregate` over a column of `field` (none for
/// COUNT(*)), or why the type does not allow it.
pub(crate) fn output_field(aggregate: &Aggregate, field: Option<&Field>) -> Result<Field> {
    let name = aggregate.output_name();
    let Some(field) = field else {
        return Ok(Field::new(name, DataType::Int64, false));
    };
    let data_type = field.data_type();
    let refuse = |what: &str| FrameError::UnsupportedType {
        column: field.name().clone(),
        data_type: data_type.to_string(),
        role: "aggregated",
        why: format!(" with {}: {what}", aggregate.func.name().to_uppercase()),
    };
    let kind = value_type(data_type);
    let out = match (aggregate.func, kind) {
        (AggFunc::CountRows | AggFunc::Count, _) => DataType::Int64,
        (AggFunc::Sum, ValueType::Signed) => DataType::Int64,
        (AggFunc::Sum, ValueType::Unsigned) => DataType::UInt64,
        (AggFunc::Sum, ValueType::Decimal { scale }) => DataType::Decimal128(38, scale),
        (AggFunc::Sum | AggFunc::Avg, ValueType::Float) => DataType::Float64,
        (AggFunc::Avg, ValueType::Signed | ValueType::Unsigned | ValueType::Decimal { .. }) => {
            DataType::Float64
        }
        (AggFunc::Sum | AggFunc::Avg, _) => {
            return Err(refuse(
                "only numbers (integers, decimals, floats) can be summed or averaged",
            ))
        }
        (AggFunc::Min | AggFunc::Max, ValueType::Other) => {
            return Err(refuse("the type has no order"))
        }
        (AggFunc::Min | AggFunc::Max, _) => data_type.clone(),
    };
    let nullable = !matches!(aggregate.func, AggFunc::Count | AggFunc::CountRows);
    Ok(Field::new(name, out, nullable))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse_and_name_their_columns() {
        let list = Aggregate::parse_list("count, sum:l_quantity,avg:p ,min:d,count:x").unwrap();
        let names: Vec<String> = list.iter().map(Aggregate::output_name).collect();
        assert_eq!(
            names,
            ["count", "sum_l_quantity", "avg_p", "min_d", "count_x"]
        );
        for bad in ["", "sum", "sum:", "median:x", "count:"] {
            assert!(Aggregate::parse_list(bad).is_err(), "{bad}");
        }
        assert_eq!(Aggregate::all_of("v").len(), 5);
    }

    #[test]
    fn result_types_follow_sql() {
        let f = |dt: DataType| Field::new("c", dt, true);
        let out = |func, dt| output_field(&Aggregate::of(func, "c"), Some(&f(dt)));
        assert_eq!(
            out(AggFunc::Sum, DataType::Int32).unwrap().data_type(),
            &DataType::Int64
        );
        assert_eq!(
            out(AggFunc::Sum, DataType::Decimal128(15, 2))
                .unwrap()
                .data_type(),
            &DataType::Decimal128(38, 2)
        );
        assert_eq!(
            out(AggFunc::Avg, DataType::UInt8).unwrap().data_type(),
            &DataType::Float64
        );
        assert_eq!(
            out(AggFunc::Max, DataType::Utf8).unwrap().data_type(),
            &DataType::Utf8
        );
        let message = out(AggFunc::Sum, DataType::Date32).unwrap_err().to_string();
        assert!(
            message.contains("\"c\" has type Date32") && message.contains("SUM"),
            "{message}"
        );
        assert!(out(AggFunc::Min, DataType::new_list(DataType::Int8, true)).is_err());
        assert!(out(AggFunc::Count, DataType::new_list(DataType::Int8, true)).is_ok());
    }
}
