//! Sorts whose result goes to a sink a window of rows at a time: the
//! windows come in order and together equal the held result (itself
//! checked against the sequential reference), with strings, integers and
//! dates with nulls, one and two workers; written to Parquet, the file
//! reads back in the same order.

mod common;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use common::pool;
use numakit_frame::keys::KeyEncoding;
use numakit_frame::reference::{all_rows, Value};
use numakit_frame::sink::{FileSink, ResultSink};
use numakit_frame::sort::{sort_input, sort_input_into, InputOrder, SortColumn, SortRequest};
use numakit_frame::{Input, MemoryLimit, RunOptions, Table};
use numakit_io::{SourceOptions, WriteOptions};
use numakit_ops::timing::Silent;

/// Keeps what it is given.
#[derive(Default)]
struct Collect {
    schema: Option<SchemaRef>,
    batches: Vec<RecordBatch>,
}

impl ResultSink for Collect {
    fn start(&mut self, schema: &SchemaRef) -> numakit_frame::Result<()> {
        assert!(self.schema.is_none(), "started twice");
        self.schema = Some(schema.clone());
        Ok(())
    }

    fn write(&mut self, batch: RecordBatch) -> numakit_frame::Result<()> {
        assert!(self.schema.is_some(), "a batch before the start");
        self.batches.push(batch);
        Ok(())
    }
}

/// A CSV file: a string with nulls, an integer with nulls, a date, a
/// unique row number (so that the order is total) and a shuffled one.
fn csv(rows: usize) -> tempfile::NamedTempFile {
    let mut text = String::from("name,id,day,row,mix\n");
    for i in 0..rows {
        let name = if i % 11 == 0 {
            String::new()
        } else {
            format!("n{}", (i * 7) % 97)
        };
        let id = if i % 13 == 0 {
            String::new()
        } else {
            format!("{}", (i * 31 % 1000) as i64 - 500)
        };
        let mix = i * 7919 % rows;
        text.push_str(&format!(
            "{name},{id},2024-03-{:02},{i},{mix}\n",
            1 + i % 28
        ));
    }
    let file = tempfile::Builder::new().suffix(".csv").tempfile().unwrap();
    std::fs::write(file.path(), text).unwrap();
    file
}

fn request() -> SortRequest {
    let key = |name: &str, descending: bool, nulls_first: bool| SortColumn {
        name: name.into(),
        descending,
        nulls_first,
    };
    SortRequest {
        by: vec![
            key("name", true, true),
            key("id", false, false),
            key("row", false, false),
        ],
        columns: None,
        memory_limit: MemoryLimit::unlimited(),
    }
}

fn rows_of(table: &Table) -> Vec<Vec<Value>> {
    all_rows(table).expect("rows")
}

#[test]
fn a_sort_handed_on_in_windows_equals_the_held_one_in_order() {
    let file = csv(20_000);
    let options = SourceOptions {
        csv_unit_bytes: 16 << 10,
        ..SourceOptions::default()
    };
    let input = Input::file(file.path(), &options).unwrap();
    let directory = tempfile::tempdir().unwrap();
    for threads in [1, 2] {
        let pool = pool(threads);
        let checked = RunOptions {
            verify: true,
            ..RunOptions::default()
        };
        let held = sort_input(&pool, &input, &request(), &checked, &Silent).unwrap();
        assert!(held.verified);
        let held = held.table.expect("a held result");
        let windows = RunOptions {
            window_rows: Some(1_500),
            ..RunOptions::default()
        };
        let mut sink = Collect::default();
        let outcome = sort_input_into(
            &pool,
            &input,
            &request(),
            &windows,
            &Silent,
            Some(&mut sink),
        )
        .unwrap();
        assert!(
            outcome.table.is_none(),
            "the handed-on result was also kept"
        );
        assert!(
            sink.batches.len() >= 20_000 / 1_500,
            "{} batches",
            sink.batches.len()
        );
        let schema = sink.schema.clone().unwrap();
        assert_eq!(&schema, held.schema());
        let got = Table::from_batches("windows", schema, sink.batches, threads).unwrap();
        assert_eq!(rows_of(&got), rows_of(&held), "{threads} threads");
        // Written to Parquet as it is made, the file holds the same rows in
        // the same order.
        let path = directory.path().join(format!("sorted-{threads}.parquet"));
        let mut file_sink = FileSink::new(&path, WriteOptions::default());
        sort_input_into(
            &pool,
            &input,
            &request(),
            &windows,
            &Silent,
            Some(&mut file_sink),
        )
        .unwrap();
        file_sink.finish().unwrap();
        let back = Input::file(&path, &SourceOptions::default()).unwrap();
        let names: Vec<String> = ["name", "id", "day", "row", "mix"]
            .map(String::from)
            .to_vec();
        let (read, _) = back
            .columns(&pool, &names, &MemoryLimit::unlimited())
            .unwrap();
        assert_eq!(
            rows_of(&read),
            rows_of(&held),
            "{threads} threads, from the file"
        );
    }
}

#[test]
fn a_sort_of_one_integer_column_is_handed_on_in_windows_too() {
    let file = csv(20_000);
    let input = Input::file(file.path(), &SourceOptions::default()).unwrap();
    let pool = pool(2);
    for descending in [false, true] {
        let request = SortRequest {
            by: vec![SortColumn {
                name: "mix".into(),
                descending,
                nulls_first: false,
            }],
            columns: Some(vec!["mix".into()]),
            memory_limit: MemoryLimit::unlimited(),
        };
        let checked = RunOptions {
            verify: true,
            ..RunOptions::default()
        };
        let held = sort_input(&pool, &input, &request, &checked, &Silent).unwrap();
        let held = held.table.expect("a held result");
        let windows = RunOptions {
            window_rows: Some(1_000),
            ..RunOptions::default()
        };
        let mut sink = Collect::default();
        let outcome =
            sort_input_into(&pool, &input, &request, &windows, &Silent, Some(&mut sink)).unwrap();
        assert!(outcome.table.is_none());
        // The sort of words alone, not of (code, row) tuples.
        assert_eq!(outcome.runs[0].key_encoding, KeyEncoding::Value);
        assert_eq!(outcome.runs[0].input_order, InputOrder::Unsorted);
        assert!(sink.batches.len() >= 20, "{} batches", sink.batches.len());
        let schema = sink.schema.clone().unwrap();
        let got = Table::from_batches("windows", schema, sink.batches, 2).unwrap();
        assert_eq!(rows_of(&got), rows_of(&held), "descending {descending}");
    }
}
