//! Joins whose right side is streamed from its file (read and probed a
//! piece at a time): string, integer and composite keys with nulls, every
//! join kind, one and two workers, pieces of one unit per worker; each
//! result equal to the join of the right side held whole (itself checked
//! against the sequential reference), counting equal to materializing, and
//! a result written as it is made equal to the one kept.

mod common;

use common::pool;
use numakit_frame::join::{join_inputs, join_inputs_into, JoinOutcome, JoinRequest};
use numakit_frame::reference::{all_rows, same_rows};
use numakit_frame::sink::FileSink;
use numakit_frame::{Input, MemoryLimit, RunOptions, Table};
use numakit_io::{SourceOptions, WriteOptions};
use numakit_ops::join::JoinKind;
use numakit_ops::timing::Silent;
use numakit_pool::Pool;

const KINDS: [JoinKind; 4] = [
    JoinKind::Inner,
    JoinKind::LeftOuter,
    JoinKind::Semi,
    JoinKind::Anti,
];

/// A CSV file: a string key with nulls (empty fields), an integer key
/// with nulls, and a value.
fn csv(rows: usize, names: usize, ids: usize, seed: usize, value: &str) -> tempfile::NamedTempFile {
    let mut text = format!("name,id,{value}\n");
    for i in 0..rows {
        let name = if (i + seed) % 11 == 0 {
            String::new()
        } else {
            format!("n{}", (i * seed) % names)
        };
        let id = if (i + seed) % 13 == 0 {
            String::new()
        } else {
            format!("{}", ((i * 3 + seed) % ids) as i64 - 10)
        };
        text.push_str(&format!("{name},{id},{i}\n"));
    }
    let file = tempfile::Builder::new().suffix(".csv").tempfile().unwrap();
    std::fs::write(file.path(), text).unwrap();
    file
}

fn request(on: &[&str], kind: JoinKind) -> JoinRequest {
    let mut r = JoinRequest::on(on);
    r.kind = kind;
    r.memory_limit = MemoryLimit::unlimited();
    r
}

fn joined(
    pool: &Pool,
    inputs: (&Input, &Input),
    request: &JoinRequest,
    options: RunOptions,
) -> JoinOutcome {
    join_inputs(pool, inputs.0, inputs.1, request, &options, &Silent)
        .unwrap_or_else(|e| panic!("{:?} on {:?}: {e}", request.kind, request.left_on))
}

fn rows_of(table: &Table) -> Vec<Vec<numakit_frame::reference::Value>> {
    all_rows(table).expect("rows")
}

#[test]
fn streamed_right_sides_give_the_held_join_for_every_key_and_kind() {
    let left_file = csv(300, 40, 50, 1, "lval");
    let right_file = csv(5_000, 60, 70, 7, "rval");
    // Units of 4 KiB: dozens per worker, so many pieces.
    let options = SourceOptions {
        csv_unit_bytes: 4096,
        ..SourceOptions::default()
    };
    let left = Input::file(left_file.path(), &options).unwrap();
    let right = Input::file(right_file.path(), &options).unwrap();
    let held = RunOptions {
        stream: false,
        verify: true,
        ..RunOptions::default()
    };
    let streamed = RunOptions {
        piece_bytes: 1,
        ..RunOptions::default()
    };
    for threads in [1, 2] {
        let pool = pool(threads);
        for on in [&["name"][..], &["id"], &["name", "id"]] {
            for kind in KINDS {
                let what = format!("{kind:?} on {on:?}, {threads} threads");
                let request = request(on, kind);
                let want = joined(&pool, (&left, &right), &request, held);
                assert!(
                    want.verified && want.runs[0].right_pieces.is_none(),
                    "{what}"
                );
                let got = joined(&pool, (&left, &right), &request, streamed);
                let report = &got.runs[0];
                assert!(report.right_pieces.unwrap_or(0) > 1, "{what}: {report:?}");
                assert_eq!(report.right_rows, 5_000, "{what}");
                assert_eq!(report.rows, want.runs[0].rows, "{what}");
                assert_eq!(report.left_keyless, want.runs[0].left_keyless, "{what}");
                assert_eq!(report.right_keyless, want.runs[0].right_keyless, "{what}");
                let (got_table, want_table) = (got.table.unwrap(), want.table.unwrap());
                assert_eq!(got_table.schema(), want_table.schema(), "{what}");
                same_rows(rows_of(&got_table), rows_of(&want_table))
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                let mut counting = request.clone();
                counting.count_only = true;
                let count = joined(&pool, (&left, &right), &counting, streamed);
                assert!(count.table.is_none(), "{what}");
                assert_eq!(count.runs[0].rows, report.rows, "{what}: counted");
            }
        }
    }
}

#[test]
fn a_streamed_result_written_as_it_is_made_equals_the_kept_one() {
    let left_file = csv(200, 30, 40, 3, "lval");
    let right_file = csv(3_000, 45, 60, 5, "rval");
    let options = SourceOptions {
        csv_unit_bytes: 2048,
        ..SourceOptions::default()
    };
    let left = Input::file(left_file.path(), &options).unwrap();
    let right = Input::file(right_file.path(), &options).unwrap();
    let streamed = RunOptions {
        piece_bytes: 1,
        ..RunOptions::default()
    };
    let pool = pool(2);
    let directory = tempfile::tempdir().unwrap();
    for kind in KINDS {
        let request = request(&["name", "id"], kind);
        let kept = joined(&pool, (&left, &right), &request, streamed);
        let kept = kept.table.unwrap();
        let path = directory.path().join(format!("{kind:?}.parquet"));
        let mut sink = FileSink::new(&path, WriteOptions::default());
        let written = join_inputs_into(
            &pool,
            (&left, &right),
            &request,
            &streamed,
            &Silent,
            Some(&mut sink),
        )
        .unwrap();
        assert!(
            written.table.is_none(),
            "{kind:?}: the written result was also kept"
        );
        assert_eq!(sink.rows(), kept.rows() as u64, "{kind:?}");
        sink.finish().unwrap();
        let back = Input::file(&path, &SourceOptions::default()).unwrap();
        let names: Vec<String> = kept
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        let (read, _) = back
            .columns(&pool, &names, &MemoryLimit::unlimited())
            .unwrap();
        same_rows(rows_of(&read), rows_of(&kept)).unwrap_or_else(|e| panic!("{kind:?}: {e}"));
    }
}
