//! Helpers shared by the integration tests: sample tables, and files with
//! arbitrary Arrow columns (strings, nulls, narrow integers, timestamps)
//! written straight through the arrow and parquet crates.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch};
use numakit_io::{Column, Format, Table};

/// A table with the extreme values of both kinds.
pub(crate) fn extremes_table() -> Table {
    Table::new(vec![
        Column::signed("signed", vec![i64::MIN, -1, 0, 1, i64::MAX]),
        Column::unsigned("unsigned", vec![0, 1, u64::MAX / 2, u64::MAX - 1, u64::MAX]),
    ])
}

/// A table with columns but no rows.
pub(crate) fn empty_table() -> Table {
    Table::new(vec![
        Column::signed("a", vec![]),
        Column::unsigned("b", vec![]),
    ])
}

/// The usual extension of a format.
pub(crate) fn extension(format: Format) -> &'static str {
    match format {
        Format::Csv => "csv",
        Format::Parquet => "parquet",
        Format::ArrowIpc => "arrow",
    }
}

/// `directory/name.ext` for the format.
pub(crate) fn file_in(directory: &Path, name: &str, format: Format) -> PathBuf {
    directory.join(format!("{name}.{}", extension(format)))
}

/// A record batch of the named arrays (nullable fields).
pub(crate) fn batch(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
    RecordBatch::try_from_iter_with_nullable(
        columns.into_iter().map(|(name, array)| (name, array, true)),
    )
    .unwrap()
}

/// Writes the batches as a Parquet file with the given compression.
pub(crate) fn write_parquet(
    path: &Path,
    batches: &[RecordBatch],
    compression: parquet::basic::Compression,
) {
    let file = std::fs::File::create(path).unwrap();
    let properties = parquet::file::properties::WriterProperties::builder()
        .set_compression(compression)
        .build();
    let mut writer =
        parquet::arrow::ArrowWriter::try_new(file, batches[0].schema(), Some(properties)).unwrap();
    for batch in batches {
        writer.write(batch).unwrap();
    }
    writer.close().unwrap();
}

/// Writes the batches as an Arrow IPC file (or stream) with optional
/// buffer compression.
pub(crate) fn write_ipc(
    path: &Path,
    batches: &[RecordBatch],
    compression: Option<arrow_ipc::CompressionType>,
    stream: bool,
) {
    let file = std::fs::File::create(path).unwrap();
    let options = arrow_ipc::writer::IpcWriteOptions::default()
        .try_with_compression(compression)
        .unwrap();
    let schema = batches[0].schema();
    if stream {
        let mut writer =
            arrow_ipc::writer::StreamWriter::try_new_with_options(file, &schema, options).unwrap();
        for batch in batches {
            writer.write(batch).unwrap();
        }
        writer.finish().unwrap();
    } else {
        let mut writer =
            arrow_ipc::writer::FileWriter::try_new_with_options(file, &schema, options).unwrap();
        for batch in batches {
            writer.write(batch).unwrap();
        }
        writer.finish().unwrap();
    }
}

/// Writes the batches in one of the Arrow-based formats.
pub(crate) fn write_arrow_based(path: &Path, format: Format, batches: &[RecordBatch]) {
    match format {
        Format::Parquet => write_parquet(path, batches, parquet::basic::Compression::SNAPPY),
        Format::ArrowIpc => write_ipc(path, batches, None, false),
        Format::Csv => panic!("not an Arrow-based format"),
    }
}

/// An Arc'd array, for brevity.
pub(crate) fn array<A: arrow_array::Array + 'static>(array: A) -> ArrayRef {
    Arc::new(array)
}

/// The names of the files in a directory, sorted.
pub(crate) fn entries(directory: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(directory)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Owned column names.
pub(crate) fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|name| name.to_string()).collect()
}
