//! From the kernels' per-group states to the result's columns, in the
//! types [`spec`](super::spec) promises: exact integer sums checked to fit
//! their result type (an overflow is one error naming the column, never a
//! wrapped number), decimal sums with their scale, averages as floats, MIN
//! and MAX back in the column's own type (strings through their rank's
//! row), nulls where a group had no value.

use std::sync::Arc;

use arrow_array::{ArrayRef, Decimal128Array, Float64Array, Int64Array, UInt64Array};
use arrow_schema::{DataType, Field};

use numakit_ops::aggregate::columns::{Groups, State, Tally};

use crate::aggregate::values::{Lane, LaneKind};
use crate::error::{FrameError, Result};
use crate::keys::decode::{gather, numbers_array};
use crate::request::aggregate::spec::{AggFunc, Aggregate};
use crate::table::Table;

/// Where an aggregate's inputs and state are.
pub(crate) struct Slot<'a> {
    pub(crate) aggregate: &'a Aggregate,
    pub(crate) field: Field,
    /// The input column (none for COUNT(*)).
    pub(crate) column: Option<usize>,
    pub(crate) lane: Option<&'a Lane>,
    /// The kernel state's index (none for COUNT(*), which is `rows`).
    pub(crate) state: Option<usize>,
    /// The input's decimal scale (0 unless a decimal column).
    pub(crate) input_scale: i32,
}

const DECIMAL_38_MAX: i128 = 99_999_999_999_999_999_999_999_999_999_999_999_999;

fn overflow(slot: &Slot<'_>, value: i128, limit: &str) -> FrameError {
    FrameError::Overflow(format!(
        "{} of column {:?} is {value} in some group, beyond {limit}; aggregate a wider or \
         decimal column instead",
        slot.aggregate.func.name().to_uppercase(),
        slot.aggregate.column.as_deref().unwrap_or("*"),
    ))
}

/// The result column of `slot` for `groups`, built in one pass over the
/// groups straight into the array (no per-group list on the way: with
/// 16M groups every such list was hundreds of megabytes of fresh pages).
pub(crate) fn column(table: &Table, groups: &Groups, slot: &Slot<'_>) -> Result<ArrayRef> {
    let Some(k) = slot.state else {
        return Ok(Arc::new(Int64Array::from_iter_values(
            groups.rows.iter().map(|&r| r as i64),
        )));
    };
    let state = &groups.states[k];
    let (rows, nulls) = (&groups.rows, state.nulls());
    let n = |i: usize| rows[i] - nulls.get(i);
    let present = |i: usize| rows[i] > nulls.get(i);
    let out: ArrayRef = match (slot.aggregate.func, state) {
        (AggFunc::Count | AggFunc::CountRows, _) => Arc::new(Int64Array::from_iter_values(
            (0..rows.len()).map(|i| n(i) as i64),
        )),
        (AggFunc::Sum, State::SumInt { sum, carry, .. }) => {
            int_sum(slot, exact_sums(slot, sum, carry, &present))?
        }
        (AggFunc::Sum, State::SumFloat { sum, .. }) => Arc::new(Float64Array::from_iter(
            sum.iter()
                .enumerate()
                .map(|(i, &s)| present(i).then_some(s)),
        )),
        (AggFunc::Avg, State::SumInt { sum, carry, .. }) => {
            let divisor = 10f64.powi(slot.input_scale);
            let wraps = 2f64.powi(128);
            Arc::new(Float64Array::from_iter(sum.iter().enumerate().map(
                |(i, &s)| {
                    let c = carry.get(i);
                    present(i).then(|| (c as f64 * wraps + s as f64) / divisor / n(i) as f64)
                },
            )))
        }
        (AggFunc::Avg, State::SumFloat { sum, .. }) => Arc::new(Float64Array::from_iter(
            sum.iter()
                .enumerate()
                .map(|(i, &s)| present(i).then(|| s / n(i) as f64)),
        )),
        (AggFunc::Min, State::MinInt { v, .. }) | (AggFunc::Max, State::MaxInt { v, .. }) => {
            extremes(table, slot, v, &present)?
        }
        (AggFunc::Min, State::MinFloat { v, .. }) | (AggFunc::Max, State::MaxFloat { v, .. }) => {
            let floats: ArrayRef = Arc::new(Float64Array::from_iter(
                v.iter().enumerate().map(|(i, &x)| present(i).then_some(x)),
            ));
            cast_to(floats, slot.field.data_type())?
        }
        _ => {
            return Err(FrameError::InvalidRequest(format!(
                "aggregate {} got a state of another kind",
                slot.aggregate.output_name()
            )))
        }
    };
    Ok(out)
}

/// Each group's exact sum (`None` for a group without values), one by
/// one; a sum that does not fit 128 bits is an error naming the column.
fn exact_sums<'s>(
    slot: &'s Slot<'_>,
    sum: &'s [i128],
    carry: &'s Tally<i64>,
    present: &'s impl Fn(usize) -> bool,
) -> impl Iterator<Item = Result<Option<i128>>> + 's {
    sum.iter().enumerate().map(move |(i, &s)| {
        let c = carry.get(i);
        if !present(i) {
            Ok(None)
        } else if c == 0 {
            Ok(Some(s))
        } else {
            Err(FrameError::Overflow(format!(
                "SUM of column {:?} does not fit 128 bits in some group (about {:e})",
                slot.aggregate.column.as_deref().unwrap_or("*"),
                c as f64 * 2f64.powi(128) + s as f64
            )))
        }
    })
}

/// The sums, checked to fit the result's type as they go into it.
fn int_sum(slot: &Slot<'_>, sums: impl Iterator<Item = Result<Option<i128>>>) -> Result<ArrayRef> {
    Ok(match slot.field.data_type() {
        DataType::Int64 => Arc::new(
            sums.map(|v| {
                v?.map(|s| i64::try_from(s).map_err(|_| overflow(slot, s, "Int64")))
                    .transpose()
            })
            .collect::<Result<Int64Array>>()?,
        ),
        DataType::UInt64 => Arc::new(
            sums.map(|v| {
                v?.map(|s| u64::try_from(s).map_err(|_| overflow(slot, s, "UInt64")))
                    .transpose()
            })
            .collect::<Result<UInt64Array>>()?,
        ),
        DataType::Decimal128(p, s) => {
            let checked = sums
                .map(|v| {
                    v?.map(|s| {
                        if s.abs() > DECIMAL_38_MAX {
                            Err(overflow(slot, s, "38 decimal digits"))
                        } else {
                            Ok(s)
                        }
                    })
                    .transpose()
                })
                .collect::<Result<Decimal128Array>>()?;
            Arc::new(
                checked
                    .with_precision_and_scale(*p, *s)
                    .map_err(|e| FrameError::arrow("building a decimal sum", e))?,
            )
        }
        other => {
            return Err(FrameError::InvalidRequest(format!(
                "a sum of integers cannot be {other}"
            )))
        }
    })
}

fn extremes(
    table: &Table,
    slot: &Slot<'_>,
    v: &[i128],
    present: &impl Fn(usize) -> bool,
) -> Result<ArrayRef> {
    let column = slot
        .column
        .ok_or_else(|| FrameError::InvalidRequest("MIN/MAX without a column".into()))?;
    if let Some(lane) = slot.lane.filter(|l| l.kind == LaneKind::Rank) {
        let rows: Vec<_> = v
            .iter()
            .enumerate()
            .map(|(i, &rank)| present(i).then(|| lane.representatives[rank as usize]))
            .collect();
        return gather(table, column, &rows);
    }
    let values = v.iter().enumerate().map(|(i, &x)| present(i).then_some(x));
    numbers_array(values, table.schema().field(column).data_type())
}

fn cast_to(array: ArrayRef, data_type: &DataType) -> Result<ArrayRef> {
    if array.data_type() == data_type {
        return Ok(array);
    }
    arrow_cast::cast(&array, data_type).map_err(|e| FrameError::arrow("building MIN/MAX", e))
}
