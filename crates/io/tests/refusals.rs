//! What numakit-io refuses, and how clearly: non-integer and null columns,
//! malformed CSV, truncated Parquet/IPC files, missing paths, unknown
//! extensions, and writes that fail (which must leave no file behind).

mod common;

use arrow_array::{Int64Array, StringArray, TimestampMillisecondArray};
use common::*;
use numakit_io::{read, read_with, write, Column, Format, IoError, ReadOptions, Table};

fn error_text(result: numakit_io::Result<Table>) -> String {
    result.expect_err("should have been refused").to_string()
}

fn key_and_name_batch() -> arrow_array::RecordBatch {
    batch(vec![
        ("key", array(Int64Array::from(vec![1, 2, 3]))),
        ("name", array(StringArray::from(vec!["a", "b", "c"]))),
    ])
}

#[test]
fn string_columns_are_refused_only_when_requested() {
    let directory = tempfile::tempdir().unwrap();
    for format in [Format::Parquet, Format::ArrowIpc] {
        let path = file_in(directory.path(), "strings", format);
        write_arrow_based(&path, format, &[key_and_name_batch()]);
        let table = read(&path, None, Some(&names(&["key"]))).unwrap();
        assert_eq!(
            table.column("key").unwrap().as_i64(),
            &[1, 2, 3],
            "{format}"
        );
        let message = error_text(read(&path, None, Some(&names(&["key", "name"]))));
        assert!(
            message.contains("\"name\"") && message.contains("Utf8"),
            "{format}: {message}"
        );
        assert!(
            message.contains("Int64") && message.contains("UInt8"),
            "{format}: {message}"
        );
        assert!(
            read(&path, None, None).is_err(),
            "{format}: all columns include the string"
        );
    }
    let csv = directory.path().join("strings.csv");
    std::fs::write(&csv, "key,name\n1,alpha\n2,beta\n").unwrap();
    assert_eq!(read(&csv, None, Some(&names(&["key"]))).unwrap().rows(), 2);
    let message = error_text(read(&csv, None, Some(&names(&["name"]))));
    assert!(
        message.contains("line 2") && message.contains("\"name\"") && message.contains("\"alpha\""),
        "{message}"
    );
}

#[test]
fn timestamps_are_refused_by_name() {
    let directory = tempfile::tempdir().unwrap();
    let timestamps = TimestampMillisecondArray::from(vec![0, 1]);
    for format in [Format::Parquet, Format::ArrowIpc] {
        let path = file_in(directory.path(), "times", format);
        write_arrow_based(
            &path,
            format,
            &[batch(vec![("at", array(timestamps.clone()))])],
        );
        let message = error_text(read(&path, None, None));
        assert!(
            message.contains("\"at\"") && message.contains("Timestamp"),
            "{format}: {message}"
        );
    }
}

#[test]
fn nulls_are_refused_with_their_row() {
    let directory = tempfile::tempdir().unwrap();
    let first = batch(vec![(
        "key",
        array(Int64Array::from(vec![Some(1), Some(2)])),
    )]);
    let second = batch(vec![(
        "key",
        array(Int64Array::from(vec![Some(3), None, None])),
    )]);
    for format in [Format::Parquet, Format::ArrowIpc] {
        let path = file_in(directory.path(), "nulls", format);
        write_arrow_based(&path, format, &[first.clone(), second.clone()]);
        let error = read(&path, None, None).unwrap_err();
        assert!(
            matches!(&error, IoError::Null { column, row: 4 } if column == "key"),
            "{format}: {error}"
        );
        assert!(
            error.to_string().contains("null at row 4"),
            "{format}: {error}"
        );
    }
    let csv = directory.path().join("nulls.csv");
    std::fs::write(&csv, "key,other\n1,x\n,y\n").unwrap();
    let message = error_text(read(&csv, None, Some(&names(&["key"]))));
    assert!(
        message.contains("line 3") && message.contains("empty"),
        "{message}"
    );
}

fn read_csv(text: &str) -> numakit_io::Result<Table> {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("t.csv");
    std::fs::write(&path, text).unwrap();
    read(&path, None, None)
}

#[test]
fn malformed_csv_is_explained() {
    let message = error_text(read_csv("a,b\n1,2\n3,x4\n"));
    assert!(
        message.contains("line 3, column \"b\"") && message.contains("\"x4\" is not an integer"),
        "{message}"
    );
    let message = error_text(read_csv("a,b\n1,2\n3\n"));
    assert!(
        message.contains("line 3") && message.contains("1 field(s) but the header has 2"),
        "{message}"
    );
    let message = error_text(read_csv("1,2\n3,4\n"));
    assert!(
        message.contains("header row") && message.contains("1,2"),
        "{message}"
    );
    let message = error_text(read_csv("a\n99999999999999999999\n"));
    assert!(
        message.contains("outside the 64-bit integer range"),
        "{message}"
    );
    let message = error_text(read_csv("a\n-1\n18446744073709551615\n"));
    assert!(
        message.contains("line 2") && message.contains("line 3"),
        "{message}"
    );
}

#[test]
fn csv_edge_cases_read_sensibly() {
    assert_eq!(read_csv("").unwrap(), Table::default());
    let header_only = read_csv("a,b\n").unwrap();
    assert_eq!(
        (header_only.column_names(), header_only.rows()),
        (names(&["a", "b"]), 0)
    );
    let crlf_bom = read_csv("\u{feff}a,b\r\n1, -2\r\n").unwrap();
    assert_eq!(crlf_bom.column("a").unwrap().as_i64(), &[1]);
    assert_eq!(crlf_bom.column("b").unwrap().as_i64(), &[-2]);
    let unsigned = read_csv("a\n18446744073709551615\n1\n").unwrap();
    assert_eq!(unsigned.column("a").unwrap().as_u64(), &[u64::MAX, 1]);
    let message = error_text(read(
        std::path::Path::new("/nonexistent/x.csv"),
        None,
        Some(&names(&["a"])),
    ));
    assert!(message.contains("/nonexistent/x.csv"), "{message}");
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("empty.csv");
    std::fs::write(&path, "").unwrap();
    let message = error_text(read(&path, None, Some(&names(&["key"]))));
    assert!(
        message.contains("\"key\" not found") && message.contains("no columns"),
        "{message}"
    );
}

#[test]
fn tab_separated_files_read_with_the_delimiter_option() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("t.csv");
    std::fs::write(&path, "a\tb\n1\t2\n").unwrap();
    let options = ReadOptions {
        csv: numakit_io::CsvOptions { delimiter: b'\t' },
        ..Default::default()
    };
    assert_eq!(
        read_with(&path, &options)
            .unwrap()
            .column("b")
            .unwrap()
            .as_i64(),
        &[2]
    );
    // Read with the default comma, the header is one column named "a\tb".
    let message = error_text(read(&path, None, Some(&names(&["b"]))));
    assert!(message.contains("\"b\" not found"), "{message}");
}

/// Cuts the file at `path` to every shorter length, longest first, and
/// hands each cut to `check`.
fn for_every_truncation(path: &std::path::Path, mut check: impl FnMut(u64)) {
    let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    let length = file.metadata().unwrap().len();
    for cut in (0..length).rev() {
        file.set_len(cut).unwrap();
        check(cut);
    }
}

#[test]
fn truncated_files_give_errors_not_panics() {
    let directory = tempfile::tempdir().unwrap();
    for format in [Format::Parquet, Format::ArrowIpc] {
        let path = file_in(directory.path(), "cut", format);
        write(&path, &extremes_table(), None).unwrap();
        for_every_truncation(&path, |cut| {
            let error = read(&path, None, None).expect_err("a truncated file must be refused");
            let message = error.to_string();
            assert!(message.contains("cut."), "{format} at {cut}: {message}");
        });
    }
    let stream = directory.path().join("stream.arrow");
    write_ipc(&stream, &[key_and_name_batch()], None, true);
    for_every_truncation(&stream, |_| {
        // A stream cut exactly between messages is a valid shorter stream.
        let _ = read(&stream, None, Some(&names(&["key"])));
    });
}

#[test]
fn other_files_under_arrow_names_are_refused_quickly() {
    let directory = tempfile::tempdir().unwrap();
    for format in [Format::Parquet, Format::ArrowIpc] {
        let path = file_in(directory.path(), "really_csv", format);
        std::fs::write(&path, "ARROW,PAR1\n1,2\n").unwrap();
        let started = std::time::Instant::now();
        let message = error_text(read(&path, None, None));
        assert!(
            message.contains("really_csv") && message.contains("really"),
            "{message}"
        );
        // No giant allocation for a length read from text.
        assert!(
            started.elapsed().as_secs() < 2,
            "{format}: {:?}",
            started.elapsed()
        );
    }
}

#[test]
fn missing_paths_and_unknown_extensions_are_named() {
    for format in Format::ALL {
        let path = format!("/definitely/not/here.{}", extension(format));
        let message = error_text(read(&path, None, None));
        assert!(
            message.contains(&path) && message.contains("No such file"),
            "{message}"
        );
    }
    let message = error_text(read("table.xlsx", None, None));
    assert!(
        message.contains(".xlsx") && message.contains("parquet"),
        "{message}"
    );
    let error = write("table.json", &extremes_table(), None).unwrap_err();
    assert!(matches!(error, IoError::UnknownFormat { .. }), "{error}");
}

#[test]
fn failed_writes_leave_no_file_behind() {
    let directory = tempfile::tempdir().unwrap();
    for format in Format::ALL {
        // The destination is a directory: everything is written, the rename fails.
        let blocked = file_in(directory.path(), "blocked", format);
        std::fs::create_dir(&blocked).unwrap();
        assert!(
            write(&blocked, &extremes_table(), None).is_err(),
            "{format}"
        );
        // A ragged table is refused before anything is created.
        let ragged = Table::new(vec![
            Column::signed("a", vec![1]),
            Column::signed("b", vec![]),
        ]);
        let path = file_in(directory.path(), "ragged", format);
        assert!(write(&path, &ragged, None).is_err(), "{format}");
        std::fs::remove_dir(&blocked).unwrap();
    }
    assert!(
        entries(directory.path()).is_empty(),
        "{:?}",
        entries(directory.path())
    );
    // Parquet cannot hold a table without columns: refused, nothing left.
    let path = directory.path().join("none.parquet");
    assert!(write(&path, &Table::default(), None).is_err());
    assert!(
        entries(directory.path()).is_empty(),
        "{:?}",
        entries(directory.path())
    );
}
