//! Whether a repetition of an operator (`--reps`) gave the same result as
//! the first, without holding either result as rows of [`Value`]s (a
//! 30M-row join's rows as values take tens of GiB):
//!
//! - a sort's results are compared row by row in order, a window of rows
//!   of each at a time;
//! - a join's or group-by's results have no order. Up to
//!   [`FULL_COMPARE_ROWS`] rows they are compared as multisets of rows;
//!   larger ones by a fingerprint: the row count, the sum of a hash of
//!   each row's exact cells (every cell but floats, whose sums depend on
//!   the order of addition), and per column the compensated sum of its
//!   finite floats (within a relative 2e-9 of their magnitude, as rows
//!   agree within 1e-9) with counts of NaN and infinities. Two multisets
//!   with the same fingerprint may still differ (two floats moved between
//!   rows with equal exact cells, or a 64-bit hash collision); the plain
//!   reference (`--verify`) is the full check.

use std::collections::VecDeque;

use numakit_ops::hash::hash64;

use super::{all_rows, close, same_rows, Row};
use crate::error::{FrameError, Result};
use crate::reference::value::{cells, Value};
use crate::table::Table;

/// Unordered results up to this many rows are compared row by row.
pub const FULL_COMPARE_ROWS: usize = 1 << 20;

/// Rows turned into values at a time.
const WINDOW_ROWS: usize = 1 << 16;

/// Checks that `again`, a repetition's result, equals `first`: in order
/// when `ordered`, else as a multiset (floats within 1e-9 relative).
pub fn check_repetition(first: &Table, again: &Table, what: &str, ordered: bool) -> Result<()> {
    check_with(first, again, what, ordered, FULL_COMPARE_ROWS)
}

fn check_with(
    first: &Table,
    again: &Table,
    what: &str,
    ordered: bool,
    full_rows: usize,
) -> Result<()> {
    let differs = if first.rows() != again.rows() {
        Some(format!(
            "{} rows, the first repetition had {}",
            again.rows(),
            first.rows()
        ))
    } else if ordered {
        first_difference_in_order(first, again)?
    } else if first.rows() <= full_rows {
        same_rows(all_rows(again)?, all_rows(first)?).err()
    } else {
        Fingerprint::of(again)?.difference(&Fingerprint::of(first)?)
    };
    match differs {
        Some(why) => Err(FrameError::InvalidRequest(format!(
            "a repetition of the {what} gave a different result from the first: {why}"
        ))),
        None => Ok(()),
    }
}

/// The cells of `table`'s columns, [`WINDOW_ROWS`] rows at a time, in
/// order.
fn column_windows(table: &Table) -> impl Iterator<Item = Result<Vec<Vec<Value>>>> + '_ {
    table.parts().iter().flat_map(|part| {
        let rows = part.batch.num_rows();
        (0..rows).step_by(WINDOW_ROWS).map(move |at| {
            let batch = part.batch.slice(at, WINDOW_ROWS.min(rows - at));
            batch.columns().iter().map(|c| cells(c.as_ref())).collect()
        })
    })
}

/// The rows of `table` in order, [`WINDOW_ROWS`] at a time.
fn windows(table: &Table) -> impl Iterator<Item = Result<Vec<Row>>> + '_ {
    column_windows(table).map(|columns| {
        let columns = columns?;
        let rows = columns.first().map_or(0, Vec::len);
        Ok((0..rows)
            .map(|r| columns.iter().map(|c| c[r].clone()).collect())
            .collect())
    })
}

/// The first row where two results of as many rows differ, in order.
fn first_difference_in_order(first: &Table, again: &Table) -> Result<Option<String>> {
    let (mut firsts, mut agains) = (windows(first), windows(again));
    let (mut a, mut b): (VecDeque<Row>, VecDeque<Row>) = (VecDeque::new(), VecDeque::new());
    for index in 0..first.rows() {
        if a.is_empty() {
            a.extend(firsts.next().transpose()?.unwrap_or_default());
        }
        if b.is_empty() {
            b.extend(agains.next().transpose()?.unwrap_or_default());
        }
        let (Some(x), Some(y)) = (a.pop_front(), b.pop_front()) else {
            return Ok(Some(format!("the rows end before row {index}")));
        };
        if x.len() != y.len() || !x.iter().zip(&y).all(|(p, q)| close(p, q)) {
            return Ok(Some(format!(
                "row {index} is {y:?} where the first repetition had {x:?}"
            )));
        }
    }
    Ok(None)
}

/// What a multiset of rows is compared by when it is too large to hold as
/// values (see the module's documentation).
#[derive(Debug, Default)]
struct Fingerprint {
    rows: u64,
    exact: u64,
    floats: Vec<FloatSum>,
}

/// One column's finite floats, summed with Neumaier's compensation, and
/// its non-finite ones counted.
#[derive(Debug, Default, Clone)]
struct FloatSum {
    sum: f64,
    compensation: f64,
    magnitude: f64,
    nan: u64,
    positive_infinity: u64,
    negative_infinity: u64,
}

impl FloatSum {
    fn add(&mut self, x: f64) {
        if x.is_nan() {
            self.nan += 1;
        } else if x == f64::INFINITY {
            self.positive_infinity += 1;
        } else if x == f64::NEG_INFINITY {
            self.negative_infinity += 1;
        } else {
            let t = self.sum + x;
            self.compensation += if self.sum.abs() >= x.abs() {
                (self.sum - t) + x
            } else {
                (x - t) + self.sum
            };
            self.sum = t;
            self.magnitude += x.abs();
        }
    }

    /// Whether two columns' floats agree, each value within 1e-9 of its
    /// magnitude (or of 1).
    fn agrees(&self, other: &FloatSum, rows: u64) -> bool {
        let (a, b) = (self.sum + self.compensation, other.sum + other.compensation);
        let tolerance = 2e-9 * (self.magnitude.max(other.magnitude) + rows as f64);
        self.nan == other.nan
            && self.positive_infinity == other.positive_infinity
            && self.negative_infinity == other.negative_infinity
            && (a - b).abs() <= tolerance
    }
}

impl Fingerprint {
    fn of(table: &Table) -> Result<Self> {
        let mut print = Fingerprint {
            floats: vec![FloatSum::default(); table.schema().fields().len()],
            ..Fingerprint::default()
        };
        for window in column_windows(table) {
            let columns = window?;
            for row in 0..columns.first().map_or(0, Vec::len) {
                let mut hash = 0x9e37_79b9_7f4a_7c15u64;
                for (column, cells) in columns.iter().enumerate() {
                    if let Value::Float(x) = cells[row] {
                        print.floats[column].add(x);
                    }
                    hash = hash64(hash.rotate_left(7) ^ cell_hash(&cells[row]));
                }
                print.exact = print.exact.wrapping_add(hash);
                print.rows += 1;
            }
        }
        Ok(print)
    }

    /// Why `self` (a repetition's) differs from `first`, if it does.
    fn difference(&self, first: &Fingerprint) -> Option<String> {
        if self.exact != first.exact {
            return Some(format!(
                "its {} rows differ from the first repetition's (row fingerprint {:#x}, the first \
                 {:#x})",
                self.rows, self.exact, first.exact
            ));
        }
        self.floats
            .iter()
            .zip(&first.floats)
            .position(|(a, b)| !a.agrees(b, self.rows))
            .map(|column| {
                format!(
                    "the floats of column {column} sum to {} where the first repetition's sum to \
                     {}",
                    self.floats[column].sum, first.floats[column].sum
                )
            })
    }
}

/// A hash of a cell's exact value: numbers by their canonical digits (1.5
/// as 1.50), bytes by their bytes; a float only as "a float" (its value is
/// summed apart).
fn cell_hash(value: &Value) -> u64 {
    match value {
        Value::Null => 1,
        Value::Bool(b) => 2 + u64::from(*b),
        Value::Float(_) => 4,
        Value::Number { .. } => {
            let Value::Number { unscaled, scale } = value.canonical() else {
                return 0;
            };
            hash64(
                hash64(unscaled as u64) ^ ((unscaled >> 64) as u64).rotate_left(17) ^ scale as u64,
            )
        }
        Value::Bytes(bytes) => bytes.chunks(8).fold(5 + bytes.len() as u64, |h, chunk| {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            hash64(h ^ u64::from_le_bytes(word))
        }),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
    use arrow_schema::{DataType, Field, Schema};

    use super::*;

    /// A table of (k, s, v) rows, in parts of `part_rows` rows.
    fn table(rows: &[(i64, &str, f64)], part_rows: usize) -> Table {
        let schema = Arc::new(Schema::new(vec![
            Field::new("k", DataType::Int64, true),
            Field::new("s", DataType::Utf8, true),
            Field::new("v", DataType::Float64, true),
        ]));
        let batches = rows
            .chunks(part_rows.max(1))
            .map(|chunk| {
                let columns: Vec<ArrayRef> = vec![
                    Arc::new(Int64Array::from_iter_values(chunk.iter().map(|r| r.0))),
                    Arc::new(StringArray::from_iter_values(chunk.iter().map(|r| r.1))),
                    Arc::new(Float64Array::from_iter_values(chunk.iter().map(|r| r.2))),
                ];
                RecordBatch::try_new(schema.clone(), columns).expect("batch")
            })
            .collect();
        Table::from_batches("t", schema, batches, 2).expect("table")
    }

    fn rows(n: i64) -> Vec<(i64, &'static str, f64)> {
        let words = ["", "a", "ab", "a long string beyond twelve bytes"];
        (0..n)
            .map(|i| (i % 97, words[i as usize % 4], i as f64 * 0.37 - 5.0))
            .collect()
    }

    /// Checks by fingerprint (no row compared as values) when `fingerprint`.
    fn same(a: &Table, b: &Table, ordered: bool, fingerprint: bool) -> bool {
        let full = if fingerprint { 0 } else { usize::MAX };
        check_with(a, b, "join", ordered, full).is_ok()
    }

    #[test]
    fn large_unordered_results_compare_by_fingerprint() {
        let first = table(&rows(1000), 300);
        let mut shuffled = rows(1000);
        shuffled.reverse();
        assert!(same(&first, &table(&shuffled, 77), false, true));
        let mut rounded = rows(1000);
        rounded[5].2 *= 1.0 + 1e-12;
        assert!(same(&first, &table(&rounded, 300), false, true));
        let mut changes: Vec<Vec<(i64, &str, f64)>> = vec![rows(1000); 4];
        changes[0][10].0 += 1;
        changes[1][10].1 = "b";
        changes[2][10].2 += 1e-3;
        changes[3][10] = changes[3][11];
        for (i, changed) in changes.iter().enumerate() {
            assert!(
                !same(&first, &table(changed, 300), false, true),
                "change {i}"
            );
            assert!(
                !same(&first, &table(changed, 300), false, false),
                "change {i}"
            );
        }
        let mut nan = rows(1000);
        nan[3].2 = f64::NAN;
        assert!(!same(&first, &table(&nan, 300), false, true));
        assert!(same(&table(&nan, 300), &table(&nan, 41), false, true));
    }

    #[test]
    fn ordered_results_compare_row_by_row_across_windows_and_parts() {
        let n = WINDOW_ROWS as i64 + 500;
        let first = table(&rows(n), 40_000);
        assert!(same(&first, &table(&rows(n), 65_000), true, false));
        let mut swapped = rows(n);
        swapped.swap(WINDOW_ROWS + 3, WINDOW_ROWS + 4);
        let err = check_with(&first, &table(&swapped, 40_000), "sort", true, 0)
            .expect_err("order counts");
        assert!(
            err.to_string()
                .contains(&format!("row {}", WINDOW_ROWS + 3)),
            "{err}"
        );
        assert!(!same(&first, &table(&rows(n - 1), 40_000), true, false));
    }
}
