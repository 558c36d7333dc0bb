//! Parquet decimals stored as 32- or 64-bit integers, read narrow
//! (`SourceOptions::narrow_decimals`: Arrow `Decimal32`/`Decimal64` over
//! the file's values) through group-by, sort and join: every result equals
//! the one read as `Decimal128`, names and types included (a carried
//! decimal, a decimal key and a decimal MIN come back as the file's
//! `Decimal128`), and each is checked against the plain reference.

mod common;

use std::sync::Arc;

use arrow_array::{ArrayRef, Decimal128Array, Int64Array, RecordBatch};
use arrow_schema::DataType;

use common::pool;
use numakit_frame::aggregate::{aggregate_input, Aggregate, AggregateRequest};
use numakit_frame::join::{join_inputs, JoinRequest};
use numakit_frame::sort::{sort_input, SortColumn, SortRequest};
use numakit_frame::{Input, MemoryLimit, RunOptions, Table};
use numakit_io::{SourceOptions, WriteOptions};
use numakit_ops::timing::Silent;

/// A decimal column of `precision` digits, scale 2, with nulls and the
/// precision's limits among small repeated values.
fn decimals(rows: usize, precision: u8, salt: usize) -> ArrayRef {
    let limit = 10i128.pow(u32::from(precision)) - 1;
    let values: Vec<Option<i128>> = (0..rows)
        .map(|i| match (i * 7 + salt) % 23 {
            0 => None,
            1 => Some(limit),
            2 => Some(-limit),
            v => Some((v as i128 - 11) * 125),
        })
        .collect();
    Arc::new(
        Decimal128Array::from(values)
            .with_precision_and_scale(precision, 2)
            .unwrap(),
    )
}

/// A Parquet file of `k` (int64), `d7` (INT32 decimals) and `d15` (INT64
/// decimals), in row groups of 300 rows.
fn file(rows: usize, salt: usize) -> tempfile::NamedTempFile {
    let keys: ArrayRef = Arc::new(Int64Array::from_iter_values(
        (0..rows).map(|i| ((i * 13 + salt) % 41) as i64),
    ));
    let batch = RecordBatch::try_from_iter([
        ("k", keys),
        ("d7", decimals(rows, 7, salt)),
        ("d15", decimals(rows, 15, salt + 5)),
    ])
    .unwrap();
    let file = tempfile::Builder::new()
        .suffix(".parquet")
        .tempfile()
        .unwrap();
    let batches: Vec<RecordBatch> = (0..rows)
        .step_by(300)
        .map(|at| batch.slice(at, 300.min(rows - at)))
        .collect();
    numakit_io::write_batches(
        file.path(),
        &batch.schema(),
        &batches,
        &WriteOptions::default(),
    )
    .unwrap();
    file
}

/// `path` opened both ways: decimals widened, and read narrow.
fn inputs(path: &std::path::Path) -> [Input; 2] {
    [false, true].map(|narrow| {
        let options = SourceOptions {
            narrow_decimals: narrow,
            ..SourceOptions::default()
        };
        let input = Input::file(path, &options).unwrap();
        if narrow {
            assert_eq!(
                input.schema().field(2).data_type(),
                &DataType::Decimal64(15, 2),
                "the file is read narrow"
            );
        }
        input
    })
}

fn verify() -> RunOptions {
    RunOptions {
        verify: true,
        ..RunOptions::default()
    }
}

/// The batches of `table`, one after another, as one batch.
fn whole(table: &Table) -> RecordBatch {
    arrow_select::concat::concat_batches(table.schema(), &table.batches()).unwrap()
}

/// Rows of `batch` as text, sorted (for results whose order is free).
fn rows_sorted(batch: &RecordBatch) -> Vec<String> {
    let mut rows: Vec<String> = (0..batch.num_rows())
        .map(|r| {
            batch
                .columns()
                .iter()
                .map(|c| arrow_cast::display::array_value_to_string(c, r).unwrap())
                .collect::<Vec<_>>()
                .join("|")
        })
        .collect();
    rows.sort_unstable();
    rows
}

#[test]
fn group_bys_on_and_of_narrow_decimals_equal_the_wide_ones() {
    let file = file(2_000, 0);
    let pool = pool(2);
    for (keys, aggs) in [
        (
            &["k"][..],
            "count,sum:d7,sum:d15,min:d15,max:d7,avg:d15,count:d15",
        ),
        (&["d15"][..], "count,sum:d7,min:d7"),
        (&["d7", "k"][..], "count,max:d15"),
    ] {
        let request = AggregateRequest {
            keys: keys.iter().map(|k| k.to_string()).collect(),
            aggregates: Aggregate::parse_list(aggs).unwrap(),
            method: None,
            memory_limit: MemoryLimit::default(),
            cost_model: None,
        };
        let [wide, narrow] = inputs(file.path()).map(|input| {
            let outcome = aggregate_input(&pool, &input, &request, &verify(), &Silent)
                .unwrap_or_else(|e| panic!("{keys:?} {aggs}: {e}"));
            assert!(outcome.verified, "{keys:?} {aggs}");
            whole(&outcome.table)
        });
        assert_eq!(narrow.schema(), wide.schema(), "{keys:?} {aggs}");
        assert_eq!(rows_sorted(&narrow), rows_sorted(&wide), "{keys:?} {aggs}");
    }
}

#[test]
fn sorts_by_and_carrying_narrow_decimals_equal_the_wide_ones() {
    let file = file(2_000, 3);
    let pool = pool(2);
    for by in [
        vec![SortColumn::ascending("d15"), SortColumn::ascending("k")],
        vec![
            SortColumn {
                descending: true,
                ..SortColumn::ascending("d7")
            },
            SortColumn::ascending("d15"),
            SortColumn::ascending("k"),
        ],
    ] {
        let request = SortRequest {
            by: by.clone(),
            columns: None,
            memory_limit: MemoryLimit::default(),
        };
        let [wide, narrow] = inputs(file.path()).map(|input| {
            let outcome = sort_input(&pool, &input, &request, &verify(), &Silent).unwrap();
            assert!(outcome.verified);
            whole(&outcome.table.unwrap())
        });
        assert_eq!(
            narrow.schema().field(1).data_type(),
            &DataType::Decimal128(7, 2)
        );
        // A total order on (d15, k) or (d7, d15, k) is not total on rows
        // with equal keys, so compare as multisets and the key columns in
        // order.
        assert_eq!(rows_sorted(&narrow), rows_sorted(&wide));
        for name in by.iter().map(|c| c.name.as_str()) {
            assert_eq!(
                narrow.column_by_name(name).unwrap(),
                wide.column_by_name(name).unwrap(),
                "{name}"
            );
        }
    }
}

#[test]
fn joins_on_and_carrying_narrow_decimals_equal_the_wide_ones() {
    let (left, right) = (file(700, 1), file(900, 2));
    let pool = pool(2);
    for on in [&["d15"][..], &["k", "d7"][..]] {
        let request = JoinRequest::on(on);
        let [wide, narrow] = [0, 1].map(|side| {
            let (l, r) = (&inputs(left.path())[side], &inputs(right.path())[side]);
            let outcome = join_inputs(&pool, l, r, &request, &verify(), &Silent).unwrap();
            assert!(outcome.verified, "{on:?}");
            whole(&outcome.table.unwrap())
        });
        assert!(narrow.num_rows() > 0, "{on:?}");
        assert_eq!(narrow.schema(), wide.schema(), "{on:?}");
        assert_eq!(rows_sorted(&narrow), rows_sorted(&wide), "{on:?}");
    }
}
