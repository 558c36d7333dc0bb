//! Tables survive writing and reading back in every format, and files
//! written by other Arrow/Parquet writers (narrow integer types, other
//! compression codecs, the IPC stream format, several batches) read right.

mod common;

use arrow_array::{
    Int16Array, Int32Array, Int64Array, Int8Array, UInt16Array, UInt32Array, UInt64Array,
    UInt8Array,
};
use common::*;
use numakit_io::{
    read, read_with, write, write_with, Column, CsvOptions, Format, IntKind, ParquetCompression,
    ReadOptions, Table, WriteOptions,
};

#[test]
fn extremes_round_trip_in_every_format() {
    let directory = tempfile::tempdir().unwrap();
    let table = extremes_table();
    for format in Format::ALL {
        let path = file_in(directory.path(), "extremes", format);
        write(&path, &table, None).unwrap();
        let back = read(&path, None, None).unwrap();
        assert_eq!(back, table, "{format}");
        assert_eq!(back.column("signed").unwrap().as_i64()[0], i64::MIN);
        assert_eq!(back.column("unsigned").unwrap().kind, IntKind::Unsigned);
    }
}

#[test]
fn empty_tables_keep_their_columns_in_every_format() {
    let directory = tempfile::tempdir().unwrap();
    for format in Format::ALL {
        let path = file_in(directory.path(), "empty", format);
        write(&path, &empty_table(), None).unwrap();
        let back = read(&path, None, None).unwrap();
        assert_eq!(back.column_names(), names(&["a", "b"]), "{format}");
        assert_eq!(back.rows(), 0, "{format}");
        if format != Format::Csv {
            // CSV has no types: a column without values reads back as signed.
            assert_eq!(back, empty_table(), "{format}");
        }
    }
}

#[test]
fn several_batches_and_row_groups_round_trip() {
    let directory = tempfile::tempdir().unwrap();
    let rows = 1_100_000u64; // more than one write batch (and row group) of 2^20 rows
    let table = Table::new(vec![
        Column::unsigned(
            "key",
            (0..rows)
                .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
                .collect(),
        ),
        Column::signed("payload", (0..rows as i64).map(|i| i - 1_000_000).collect()),
    ]);
    for format in [Format::Parquet, Format::ArrowIpc] {
        let path = file_in(directory.path(), "big", format);
        write(&path, &table, None).unwrap();
        assert_eq!(read(&path, None, None).unwrap(), table, "{format}");
    }
}

#[test]
fn requested_columns_come_back_in_the_requested_order() {
    let directory = tempfile::tempdir().unwrap();
    let table = Table::new(vec![
        Column::signed("a", vec![1, 2]),
        Column::unsigned("b", vec![3, 4]),
        Column::signed("c", vec![5, 6]),
    ]);
    for format in Format::ALL {
        let path = file_in(directory.path(), "abc", format);
        write(&path, &table, None).unwrap();
        let back = read(&path, None, Some(&names(&["c", "a"]))).unwrap();
        assert_eq!(back.column_names(), names(&["c", "a"]), "{format}");
        assert_eq!(back.columns[0].values, vec![5, 6], "{format}");
        assert_eq!(
            read(&path, None, Some(&[])).unwrap().columns.len(),
            0,
            "{format}"
        );
    }
}

#[test]
fn explicit_format_overrides_the_extension_and_files_are_replaced() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("table.dat");
    let table = extremes_table();
    for format in Format::ALL {
        write(&path, &table, Some(format)).unwrap();
        assert_eq!(read(&path, Some(format), None).unwrap(), table, "{format}");
    }
    assert_eq!(entries(directory.path()), vec!["table.dat"]);
}

#[test]
fn options_change_delimiter_and_compression() {
    let directory = tempfile::tempdir().unwrap();
    let table = extremes_table();
    let csv = directory.path().join("t.csv");
    let semicolon = CsvOptions { delimiter: b';' };
    write_with(
        &csv,
        &table,
        &WriteOptions {
            csv: semicolon,
            ..Default::default()
        },
    )
    .unwrap();
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.starts_with("signed;unsigned\n"), "{text}");
    let options = ReadOptions {
        csv: semicolon,
        ..Default::default()
    };
    assert_eq!(read_with(&csv, &options).unwrap(), table);
    for compression in [
        ParquetCompression::Snappy,
        ParquetCompression::None,
        ParquetCompression::Zstd,
    ] {
        let path = directory.path().join("t.parquet");
        let options = WriteOptions {
            parquet_compression: compression,
            ..Default::default()
        };
        write_with(&path, &table, &options).unwrap();
        assert_eq!(read(&path, None, None).unwrap(), table, "{compression:?}");
    }
}

#[test]
fn csv_header_names_are_quoted_when_needed() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("quoted.csv");
    let table = Table::new(vec![
        Column::signed("a,b", vec![1]),
        Column::signed("say \"hi\"", vec![-2]),
    ]);
    write(&path, &table, None).unwrap();
    assert_eq!(read(&path, None, None).unwrap(), table);
}

fn narrow_batch() -> arrow_array::RecordBatch {
    batch(vec![
        ("i8", array(Int8Array::from(vec![i8::MIN, -1, i8::MAX]))),
        ("i16", array(Int16Array::from(vec![i16::MIN, -1, i16::MAX]))),
        ("i32", array(Int32Array::from(vec![i32::MIN, -1, i32::MAX]))),
        ("i64", array(Int64Array::from(vec![i64::MIN, -1, i64::MAX]))),
        ("u8", array(UInt8Array::from(vec![0, 1, u8::MAX]))),
        ("u16", array(UInt16Array::from(vec![0, 1, u16::MAX]))),
        ("u32", array(UInt32Array::from(vec![0, 1, u32::MAX]))),
        ("u64", array(UInt64Array::from(vec![0, 1, u64::MAX]))),
    ])
}

fn check_narrow(table: &Table, context: &str) {
    for (name, low, high) in [
        ("i8", i8::MIN as i64, i8::MAX as i64),
        ("i16", i16::MIN as i64, i16::MAX as i64),
        ("i32", i32::MIN as i64, i32::MAX as i64),
        ("i64", i64::MIN, i64::MAX),
    ] {
        let column = table.column(name).unwrap();
        assert_eq!(column.kind, IntKind::Signed, "{context} {name}");
        assert_eq!(column.as_i64(), &[low, -1, high], "{context} {name}");
    }
    for (name, high) in [
        ("u8", u8::MAX as u64),
        ("u16", u16::MAX as u64),
        ("u32", u32::MAX as u64),
        ("u64", u64::MAX),
    ] {
        let column = table.column(name).unwrap();
        assert_eq!(column.kind, IntKind::Unsigned, "{context} {name}");
        assert_eq!(column.as_u64(), &[0, 1, high], "{context} {name}");
    }
}

#[test]
fn narrow_integers_widen_from_parquet_with_every_codec() {
    use parquet::basic::{BrotliLevel, Compression, GzipLevel, ZstdLevel};
    let directory = tempfile::tempdir().unwrap();
    let codecs = [
        Compression::BROTLI(BrotliLevel::default()),
        Compression::UNCOMPRESSED,
        Compression::SNAPPY,
        Compression::ZSTD(ZstdLevel::default()),
        Compression::LZ4_RAW,
        Compression::GZIP(GzipLevel::default()),
    ];
    for codec in codecs {
        let path = directory.path().join("narrow.parquet");
        write_parquet(&path, &[narrow_batch(), narrow_batch()], codec);
        let table = read(&path, None, None).unwrap();
        assert_eq!(table.rows(), 6, "{codec:?}");
        let first_half = Table::new(
            table
                .columns
                .iter()
                .map(|c| Column {
                    values: c.values[..3].to_vec(),
                    ..c.clone()
                })
                .collect(),
        );
        check_narrow(&first_half, &format!("{codec:?}"));
    }
}

#[test]
fn narrow_integers_widen_from_ipc_files_and_streams_with_every_codec() {
    use arrow_ipc::CompressionType;
    let directory = tempfile::tempdir().unwrap();
    for compression in [
        None,
        Some(CompressionType::LZ4_FRAME),
        Some(CompressionType::ZSTD),
    ] {
        for stream in [false, true] {
            let path = directory.path().join("narrow.arrow");
            write_ipc(&path, &[narrow_batch()], compression, stream);
            let context = format!("{compression:?} stream={stream}");
            check_narrow(&read(&path, None, None).unwrap(), &context);
            let projected = read(&path, None, Some(&names(&["u64", "i8"]))).unwrap();
            assert_eq!(projected.column_names(), names(&["u64", "i8"]), "{context}");
        }
    }
}
