//! Writing Arrow record batches of any type as CSV, Parquet or Arrow IPC,
//! all-or-nothing (through `atomic`).
//!
//! CSV gets a header row, nulls as empty fields, dates and timestamps in
//! ISO 8601 and decimals with their scale; Parquet Zstandard level 1 by
//! default in row groups of about a million rows, each row group's columns
//! encoded and compressed on all CPUs at once; Arrow IPC the file format,
//! uncompressed. It does not write nested types to CSV (the CSV writer
//! refuses them with a message naming the type).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use arrow_array::RecordBatch;
use arrow_ipc::writer::FileWriter;
use arrow_schema::{ArrowError, SchemaRef};
use parquet::arrow::arrow_writer::{
    compute_leaves, ArrowColumnChunk, ArrowColumnWriter, ArrowLeafColumn,
};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

use crate::atomic::write_atomically;
use crate::error::{IoError, Result};
use crate::format::Format;
use crate::options::{ParquetCompression, WriteOptions};

/// Rows per Parquet row group.
const ROW_GROUP_ROWS: usize = 1 << 20;

/// Writes `batches` (all of `schema`) to `path` in `options.format` (from
/// the extension when `None`), replacing any file there only once every
/// batch is written.
pub fn write_batches(
    path: impl AsRef<Path>,
    schema: &SchemaRef,
    batches: &[RecordBatch],
    options: &WriteOptions,
) -> Result<()> {
    let path = path.as_ref();
    let format = Format::resolve(options.format, path)?;
    options.csv.validate()?;
    if schema.fields().is_empty() {
        return Err(IoError::InvalidTable(
            "a table to write needs at least one column".to_string(),
        ));
    }
    let names: Vec<&String> = schema.fields().iter().map(|f| f.name()).collect();
    for (i, name) in names.iter().enumerate() {
        if names[..i].contains(name) {
            return Err(IoError::DuplicateColumn {
                column: name.to_string(),
                context: "appears twice in the table to write",
            });
        }
    }
    let fail = |message: String| IoError::Encode {
        format: format.name(),
        path: path.to_path_buf(),
        message,
    };
    write_atomically(path, |file| match format {
        Format::Csv => {
            write_csv(file, batches, options.csv.delimiter).map_err(|e| fail(e.to_string()))
        }
        Format::Parquet => write_parquet(file, schema, batches, options.parquet_compression)
            .map_err(|e| fail(e.to_string())),
        Format::ArrowIpc => write_ipc(file, schema, batches).map_err(|e| fail(e.to_string())),
    })
}

fn write_csv(file: File, batches: &[RecordBatch], delimiter: u8) -> Result<(), ArrowError> {
    let mut sink = BufWriter::with_capacity(1 << 20, file);
    {
        let mut writer = arrow_csv::WriterBuilder::new()
            .with_header(true)
            .with_delimiter(delimiter)
            .build(&mut sink);
        for batch in batches {
            writer.write(batch)?;
        }
    }
    sink.flush().map_err(ArrowError::from)
}

fn write_parquet(
    file: File,
    schema: &SchemaRef,
    batches: &[RecordBatch],
    compression: ParquetCompression,
) -> Result<(), parquet::errors::ParquetError> {
    let codec = match compression {
        ParquetCompression::Zstd => Compression::ZSTD(ZstdLevel::try_new(1)?),
        ParquetCompression::Snappy => Compression::SNAPPY,
        ParquetCompression::None => Compression::UNCOMPRESSED,
    };
    let properties = WriterProperties::builder()
        .set_compression(codec)
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        .build();
    let writer = ArrowWriter::try_new(file, schema.clone(), Some(properties))?;
    let (mut file_writer, factory) = writer.into_serialized_writer()?;
    for (index, group) in row_groups(batches).into_iter().enumerate() {
        let writers = factory.create_column_writers(index)?;
        let mut leaves: Vec<Vec<ArrowLeafColumn>> =
            (0..writers.len()).map(|_| Vec::new()).collect();
        for batch in group {
            let mut at = 0;
            for (field, column) in schema.fields().iter().zip(batch.columns()) {
                for leaf in compute_leaves(field, column)? {
                    leaves[at].push(leaf);
                    at += 1;
                }
            }
        }
        let chunks = encode_in_parallel(writers, leaves)?;
        let mut row_group = file_writer.next_row_group()?;
        for chunk in chunks {
            chunk.append_to_row_group(&mut row_group)?;
        }
        row_group.close()?;
    }
    file_writer.close()?;
    Ok(())
}

/// Consecutive batches of about [`ROW_GROUP_ROWS`] rows each.
fn row_groups(batches: &[RecordBatch]) -> Vec<&[RecordBatch]> {
    let mut groups = Vec::new();
    let (mut start, mut rows) = (0, 0);
    for (i, batch) in batches.iter().enumerate() {
        if rows > 0 && rows + batch.num_rows() > ROW_GROUP_ROWS {
            groups.push(&batches[start..i]);
            start = i;
            rows = 0;
        }
        rows += batch.num_rows();
    }
    if start < batches.len() {
        groups.push(&batches[start..]);
    }
    groups
}

/// Encodes every column chunk of a row group, the columns spread over the
/// machine's CPUs; the chunks in column order.
fn encode_in_parallel(
    writers: Vec<ArrowColumnWriter>,
    leaves: Vec<Vec<ArrowLeafColumn>>,
) -> Result<Vec<ArrowColumnChunk>, parquet::errors::ParquetError> {
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(writers.len())
        .max(1);
    let mut shares: Vec<Vec<(usize, ArrowColumnWriter, Vec<ArrowLeafColumn>)>> =
        (0..threads).map(|_| Vec::new()).collect();
    for (i, (writer, leaves)) in writers.into_iter().zip(leaves).enumerate() {
        shares[i % threads].push((i, writer, leaves));
    }
    let encoded = std::thread::scope(|scope| {
        let handles: Vec<_> = shares
            .into_iter()
            .map(|share| {
                scope.spawn(move || {
                    share
                        .into_iter()
                        .map(|(i, mut writer, leaves)| {
                            for leaf in &leaves {
                                writer.write(leaf)?;
                            }
                            Ok((i, writer.close()?))
                        })
                        .collect::<Result<Vec<_>, parquet::errors::ParquetError>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(parquet::errors::ParquetError::General(
                        "a column encoder panicked".into(),
                    ))
                })
            })
            .collect::<Vec<_>>()
    });
    let mut chunks = Vec::new();
    for share in encoded {
        chunks.extend(share?);
    }
    chunks.sort_unstable_by_key(|(i, _)| *i);
    Ok(chunks.into_iter().map(|(_, c)| c).collect())
}

fn write_ipc(file: File, schema: &SchemaRef, batches: &[RecordBatch]) -> Result<(), ArrowError> {
    let mut writer = FileWriter::try_new_buffered(file, schema)?;
    for batch in batches {
        writer.write(batch)?;
    }
    writer.finish()?;
    let mut inner = writer.into_inner()?;
    inner.flush().map_err(ArrowError::from)
}
