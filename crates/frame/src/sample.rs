//! Small built-in tables of realistic shape, reproducible from a seed: a
//! sales table whose key is a string with nulls, beside a decimal amount
//! and a date, and a table of the cities it names. The main job and the
//! examples use them; benchmarks use files.
//!
//! Row i is a function of (seed, i) only.

use std::sync::Arc;

use arrow_array::{ArrayRef, Date32Array, Decimal128Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};

use crate::error::{FrameError, Result};
use crate::table::Table;

/// Distinct cities the sales name.
pub const CITIES: u64 = 2_000;
/// Rows per part of the generated tables.
const PART_ROWS: usize = 1 << 16;

fn mix(x: u64) -> u64 {
    numakit_ops::datagen::splitmix64(x)
}

fn city(i: u64) -> String {
    format!(
        "city-{:04}-{}",
        i,
        ["north", "south", "east", "west"][(i % 4) as usize]
    )
}

/// `rows` sales: `city` (Utf8, a tenth null, Zipf-like popularity),
/// `amount` (Decimal128(12, 2), a twentieth null), `day` (Date32 in 2024),
/// `id` (Int64), cut into parts for `workers` workers.
pub fn sales(rows: usize, seed: u64, workers: usize) -> Result<Table> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("city", DataType::Utf8, true),
        Field::new("amount", DataType::Decimal128(12, 2), true),
        Field::new("day", DataType::Date32, false),
        Field::new("id", DataType::Int64, false),
    ]));
    let mut batches = Vec::new();
    for start in (0..rows).step_by(PART_ROWS) {
        let end = (start + PART_ROWS).min(rows);
        let r = |i: usize, salt: u64| mix(seed ^ salt ^ (i as u64).wrapping_mul(0x9e37_79b9));
        let cities: StringArray = (start..end)
            .map(|i| {
                let x = r(i, 1);
                // Popular cities first: the square skews toward small numbers.
                let u = (x >> 11) as f64 / (1u64 << 53) as f64;
                (x % 10 != 0).then(|| city((u * u * CITIES as f64) as u64))
            })
            .collect();
        let amounts = Decimal128Array::from_iter((start..end).map(|i| {
            let x = r(i, 2);
            (x % 20 != 0).then_some((x % 100_000) as i128 - 20_000)
        }))
        .with_precision_and_scale(12, 2)
        .map_err(|e| FrameError::arrow("generating sales", e))?;
        let days =
            Date32Array::from_iter_values((start..end).map(|i| 19_723 + (r(i, 3) % 366) as i32));
        let ids = Int64Array::from_iter_values((start..end).map(|i| i as i64));
        let columns: Vec<ArrayRef> = vec![
            Arc::new(cities),
            Arc::new(amounts),
            Arc::new(days),
            Arc::new(ids),
        ];
        batches.push(
            RecordBatch::try_new(schema.clone(), columns)
                .map_err(|e| FrameError::arrow("generating sales", e))?,
        );
    }
    Table::from_batches("sales", schema, batches, workers)
}

/// Every city the sales may name and a few more: `city`, `region`.
pub fn cities(workers: usize) -> Result<Table> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("city", DataType::Utf8, false),
        Field::new("region", DataType::Utf8, false),
    ]));
    let n = CITIES + CITIES / 10;
    let names: StringArray = (0..n).map(|i| Some(city(i))).collect();
    let regions: StringArray = (0..n).map(|i| Some(format!("region-{}", i % 7))).collect();
    let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(names), Arc::new(regions)])
        .map_err(|e| FrameError::arrow("generating cities", e))?;
    Table::from_batches("cities", schema, vec![batch], workers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sales_have_nulls_and_do_not_depend_on_workers() {
        let one = sales(100_000, 7, 1).unwrap();
        let two = sales(100_000, 7, 2).unwrap();
        assert_eq!(one.rows(), 100_000);
        assert_eq!(one.batches(), two.batches());
        let nulls = one
            .batches()
            .iter()
            .map(|b| b.column(0).null_count())
            .sum::<usize>();
        assert!((8_000..12_000).contains(&nulls), "{nulls}");
        assert!(cities(2).unwrap().rows() as u64 > CITIES);
    }
}
