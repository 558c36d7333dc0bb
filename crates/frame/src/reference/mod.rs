//! Plain, sequential twins of the table layer's join, group-by and sort,
//! on rows of [`Value`]s, and checks that compare a result table with
//! them. Tests use them on random and adversarial tables; the CLI's
//! `--verify` uses them on users' files.
//!
//! They follow SQL: null keys never join, nulls group together, aggregates
//! skip nulls, sorts put nulls first or last. Results are compared as
//! multisets of rows (a join or group-by has no order), sums and averages
//! of floats within a relative 1e-9 (they depend on the order of addition),
//! and a sort's key columns in order.

pub mod repetition;
pub mod value;

use std::collections::HashMap;

use numakit_ops::join::JoinKind;

use crate::error::{FrameError, Result};
use crate::request::aggregate::{AggFunc, AggregateRequest};
use crate::request::join::{JoinPlan, JoinRequest};
use crate::request::sort::SortRequest;
use crate::table::Table;
pub use repetition::check_repetition;
pub use value::{cells, Value};

/// One row.
pub type Row = Vec<Value>;

/// The rows of `table`'s columns `columns`, part after part.
pub fn rows(table: &Table, columns: &[usize]) -> Result<Vec<Row>> {
    let mut out = Vec::with_capacity(table.rows());
    for part in table.parts() {
        let cols = columns
            .iter()
            .map(|&c| cells(part.batch.column(c).as_ref()))
            .collect::<Result<Vec<_>>>()?;
        for r in 0..part.batch.num_rows() {
            out.push(cols.iter().map(|c| c[r].clone()).collect());
        }
    }
    Ok(out)
}

/// Every row of every column.
pub fn all_rows(table: &Table) -> Result<Vec<Row>> {
    rows(
        table,
        &(0..table.schema().fields().len()).collect::<Vec<_>>(),
    )
}

fn pick(row: &Row, columns: &[usize]) -> Row {
    columns.iter().map(|&c| row[c].clone()).collect()
}

/// The join of `left` and `right` rows: keys `lkeys`/`rkeys`, carried
/// columns `lout`/`rout` (the right ones null for unmatched left rows).
pub fn join(
    (left, lkeys, lout): (&[Row], &[usize], &[usize]),
    (right, rkeys, rout): (&[Row], &[usize], &[usize]),
    kind: JoinKind,
) -> Vec<Row> {
    let mut by_key: HashMap<Row, Vec<&Row>> = HashMap::new();
    for r in right {
        let key = pick(r, rkeys);
        if !key.iter().any(Value::is_null) {
            by_key.entry(key).or_default().push(r);
        }
    }
    let mut out = Vec::new();
    for l in left {
        let key = pick(l, lkeys);
        let matches = if key.iter().any(Value::is_null) {
            &[][..]
        } else {
            by_key.get(&key).map_or(&[][..], |m| &m[..])
        };
        let left_part = pick(l, lout);
        match kind {
            JoinKind::Inner | JoinKind::LeftOuter => {
                for r in matches {
                    out.push([left_part.clone(), pick(r, rout)].concat());
                }
                if matches.is_empty() && kind == JoinKind::LeftOuter {
                    out.push([left_part, vec![Value::Null; rout.len()]].concat());
                }
            }
            JoinKind::Semi if !matches.is_empty() => out.push(left_part),
            JoinKind::Anti if matches.is_empty() => out.push(left_part),
            _ => {}
        }
    }
    out
}

/// The group-by of `rows` on `keys`: per group its keys, then each
/// aggregate (`func` of column `column`).
pub fn aggregate(
    rows: &[Row],
    keys: &[usize],
    aggregates: &[(AggFunc, Option<usize>)],
) -> Vec<Row> {
    let mut groups: HashMap<Row, Vec<&Row>> = HashMap::new();
    for r in rows {
        groups.entry(pick(r, keys)).or_default().push(r);
    }
    groups
        .into_iter()
        .map(|(key, members)| {
            let mut row = key;
            for &(func, column) in aggregates {
                row.push(aggregate_one(&members, func, column));
            }
            row
        })
        .collect()
}

fn aggregate_one(members: &[&Row], func: AggFunc, column: Option<usize>) -> Value {
    let Some(c) = column else {
        return Value::int(members.len() as i128);
    };
    let values: Vec<&Value> = members
        .iter()
        .map(|r| &r[c])
        .filter(|v| !v.is_null())
        .collect();
    match func {
        AggFunc::CountRows => Value::int(members.len() as i128),
        AggFunc::Count => Value::int(values.len() as i128),
        _ if values.is_empty() => Value::Null,
        AggFunc::Min => values.iter().min().map_or(Value::Null, |v| (*v).clone()),
        AggFunc::Max => values.iter().max().map_or(Value::Null, |v| (*v).clone()),
        AggFunc::Sum => sum(&values),
        AggFunc::Avg => {
            Value::Float(sum(&values).as_f64().unwrap_or(f64::NAN) / values.len() as f64)
        }
    }
}

fn sum(values: &[&Value]) -> Value {
    match values.first() {
        Some(Value::Number { scale, .. }) => Value::Number {
            unscaled: values
                .iter()
                .map(|v| match v {
                    Value::Number { unscaled, .. } => *unscaled,
                    _ => 0,
                })
                .sum(),
            scale: *scale,
        },
        _ => Value::Float(values.iter().filter_map(|v| v.as_f64()).sum()),
    }
}

/// `rows` sorted by `keys` (column, descending, nulls first), stably.
pub fn sort(rows: &[Row], keys: &[(usize, bool, bool)]) -> Vec<Row> {
    let mut out = rows.to_vec();
    out.sort_by(|a, b| {
        for &(c, descending, nulls_first) in keys {
            let ord = match (a[c].is_null(), b[c].is_null()) {
                (true, true) => std::cmp::Ordering::Equal,
                (true, false) if nulls_first => std::cmp::Ordering::Less,
                (true, false) => std::cmp::Ordering::Greater,
                (false, true) if nulls_first => std::cmp::Ordering::Greater,
                (false, true) => std::cmp::Ordering::Less,
                _ if descending => b[c].cmp(&a[c]),
                _ => a[c].cmp(&b[c]),
            };
            if ord != std::cmp::Ordering::Equal {
                return ord;
            }
        }
        std::cmp::Ordering::Equal
    });
    out
}

fn close(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Float(x), Value::Float(y)) if x.is_finite() && y.is_finite() => {
            (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0)
        }
        _ => a == b,
    }
}

/// Whether two multisets of rows agree (floats within 1e-9 relative).
pub fn same_rows(mut got: Vec<Row>, mut want: Vec<Row>) -> std::result::Result<(), String> {
    if got.len() != want.len() {
        return Err(format!(
            "{} rows, the reference has {}",
            got.len(),
            want.len()
        ));
    }
    got.sort();
    want.sort();
    for (g, w) in got.iter().zip(&want) {
        if g.len() != w.len() || !g.iter().zip(w).all(|(a, b)| close(a, b)) {
            return Err(format!("row {g:?} where the reference has {w:?}"));
        }
    }
    Ok(())
}

fn wrong(what: &str, why: String) -> FrameError {
    FrameError::InvalidRequest(format!("wrong {what} result: {why}"))
}

fn indices(table: &Table, names: &[String]) -> Result<Vec<usize>> {
    names.iter().map(|n| table.column_index(n)).collect()
}

/// Checks a join's `result` (or, when only counted, its `rows`) against
/// the reference on the same `left` and `right` tables.
pub fn check_join(
    left: &Table,
    right: &Table,
    request: &JoinRequest,
    result: Option<&Table>,
    rows: u64,
) -> Result<()> {
    let plan = JoinPlan::new(request, left.schema(), right.schema())?;
    let out_names: Vec<String> = plan
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let (lall, rall) = (all_rows(left)?, all_rows(right)?);
    let lout = plan
        .left_out_names()
        .iter()
        .map(|n| left.column_index(n))
        .collect::<Result<Vec<_>>>()?;
    let rout = plan
        .right_out_names()
        .iter()
        .map(|n| right.column_index(n))
        .collect::<Result<Vec<_>>>()?;
    let want = join(
        (&lall, &indices(left, &request.left_on)?, &lout),
        (&rall, &indices(right, &request.right_on)?, &rout),
        request.kind,
    );
    match result {
        None if want.len() as u64 == rows => Ok(()),
        None => Err(wrong(
            "join",
            format!("{rows} rows, the reference has {}", want.len()),
        )),
        Some(table) => {
            debug_assert_eq!(table.schema().fields().len(), out_names.len());
            same_rows(all_rows(table)?, want).map_err(|why| wrong("join", why))
        }
    }
}

/// Checks a group-by's `result` against the reference on `input`.
pub fn check_aggregate(input: &Table, request: &AggregateRequest, result: &Table) -> Result<()> {
    let keys = indices(input, &request.keys)?;
    let aggregates = request
        .aggregates
        .iter()
        .map(|a| {
            Ok((
                a.func,
                a.column
                    .as_ref()
                    .map(|c| input.column_index(c))
                    .transpose()?,
            ))
        })
        .collect::<Result<Vec<_>>>()?;
    let all: Vec<usize> = (0..input.schema().fields().len()).collect();
    let want = aggregate(&rows(input, &all)?, &keys, &aggregates);
    same_rows(all_rows(result)?, want).map_err(|why| wrong("group-by", why))
}

/// Checks a sort's `result` against the reference on `input`.
pub fn check_sort(input: &Table, request: &SortRequest, result: &Table) -> Result<()> {
    let out_names: Vec<String> = result
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let out_columns = indices(input, &out_names)?;
    let input_rows = rows(input, &out_columns)?;
    let keys: Vec<(usize, bool, bool)> = request
        .by
        .iter()
        .map(|k| {
            let at = out_names.iter().position(|n| n == &k.name).ok_or_else(|| {
                FrameError::InvalidRequest(format!("sort key {:?} is not in the result", k.name))
            })?;
            Ok((at, k.descending, k.nulls_first))
        })
        .collect::<Result<_>>()?;
    let want = sort(&input_rows, &keys);
    let got = all_rows(result)?;
    let key_of = |r: &Row| keys.iter().map(|&(c, _, _)| r[c].clone()).collect::<Row>();
    if let Some(at) = (0..got.len().min(want.len())).find(|&i| key_of(&got[i]) != key_of(&want[i]))
    {
        return Err(wrong(
            "sort",
            format!(
                "row {at} has key {:?}, the reference {:?}",
                key_of(&got[at]),
                key_of(&want[at])
            ),
        ));
    }
    same_rows(got, want).map_err(|why| wrong("sort", why))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(values: &[i64], floats: &[f64]) -> Table {
        use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch};
        use arrow_schema::{DataType, Field, Schema};
        let schema = std::sync::Arc::new(Schema::new(vec![
            Field::new("k", DataType::Int64, true),
            Field::new("v", DataType::Float64, true),
        ]));
        let columns: Vec<ArrayRef> = vec![
            std::sync::Arc::new(Int64Array::from(values.to_vec())),
            std::sync::Arc::new(Float64Array::from(floats.to_vec())),
        ];
        let batch = RecordBatch::try_new(schema.clone(), columns).expect("batch");
        Table::from_batches("t", schema, vec![batch], 1).expect("table")
    }

    #[test]
    fn a_repetition_must_give_the_first_result() {
        let first = ints(&[1, 2, 3], &[0.5, 1.0, 1.5]);
        let shuffled = ints(&[3, 1, 2], &[1.5, 0.5, 1.0]);
        let rounded = ints(&[1, 2, 3], &[0.5, 1.0, 1.5 + 1e-13]);
        let other = ints(&[1, 2, 4], &[0.5, 1.0, 1.5]);
        let shorter = ints(&[1, 2], &[0.5, 1.0]);
        assert!(check_repetition(&first, &shuffled, "group-by", false).is_ok());
        assert!(check_repetition(&first, &rounded, "group-by", false).is_ok());
        assert!(check_repetition(&first, &other, "group-by", false).is_err());
        assert!(check_repetition(&first, &shorter, "join", false).is_err());
        let err = check_repetition(&first, &shuffled, "sort", true).expect_err("order counts");
        assert!(err.to_string().contains("row 0"), "{err}");
        assert!(check_repetition(&first, &shorter, "sort", true).is_err());
    }

    fn row(values: &[i64]) -> Row {
        values.iter().map(|&v| Value::int(v.into())).collect()
    }

    #[test]
    fn the_reference_follows_sql() {
        let null = |mut r: Row, at: usize| {
            r[at] = Value::Null;
            r
        };
        let left = vec![row(&[1, 10]), null(row(&[0, 20]), 0), row(&[2, 30])];
        let right = vec![row(&[1, 100]), row(&[1, 101]), null(row(&[0, 102]), 0)];
        let inner = join(
            (&left, &[0], &[0, 1]),
            (&right, &[0], &[1]),
            JoinKind::Inner,
        );
        assert_eq!(inner.len(), 2);
        let outer = join(
            (&left, &[0], &[1]),
            (&right, &[0], &[1]),
            JoinKind::LeftOuter,
        );
        assert_eq!(outer.len(), 4);
        let anti = join((&left, &[0], &[1]), (&right, &[0], &[1]), JoinKind::Anti);
        assert_eq!(anti.len(), 2, "the null key and 2");
        let groups = aggregate(
            &[
                row(&[1, 5]),
                null(row(&[1, 0]), 1),
                null(row(&[0, 7]), 0),
                null(row(&[0, 8]), 0),
            ],
            &[0],
            &[
                (AggFunc::CountRows, None),
                (AggFunc::Sum, Some(1)),
                (AggFunc::Count, Some(1)),
            ],
        );
        assert_eq!(groups.len(), 2);
        let sorted = sort(
            &[row(&[2]), null(row(&[0]), 0), row(&[1])],
            &[(0, true, false)],
        );
        assert_eq!(sorted[0], row(&[2]));
        assert!(sorted[2][0].is_null());
        assert!(same_rows(vec![row(&[1])], vec![row(&[2])]).is_err());
    }
}
