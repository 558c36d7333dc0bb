//! Reading and writing Parquet files through the `parquet` crate's Arrow
//! interface.
//!
//! Reading pushes the column selection down (only the requested columns'
//! pages are read and decoded), checks their types against the schema before
//! any data is read, reserves the row count the footer announces, and
//! appends record batches into the `Vec<u64>` columns. Files compressed with
//! Snappy, Zstandard, LZ4 or gzip are read; Brotli is not compiled in.
//!
//! Writing produces non-nullable INT64 / UINT64 columns in row groups of
//! about a million rows, compressed as [`ParquetCompression`] says.
//! It deliberately writes no statistics beyond the library's defaults and no
//! custom metadata.

use std::fs::File;
use std::path::Path;

use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::{ArrowWriter, ProjectionMask};
use parquet::basic::{Compression, ZstdLevel};
use parquet::errors::ParquetError;
use parquet::file::properties::WriterProperties;

use crate::arrow_columns::{self, BatchCollector};
use crate::error::{IoError, Result};
use crate::options::ParquetCompression;
use crate::projection;
use crate::table::Table;

/// Rows per record batch when reading: large enough that per-batch overhead
/// vanishes, small enough that a batch of several columns stays in cache-sized
/// pieces.
const READ_BATCH_ROWS: usize = 1 << 16;
/// Rows per record batch (and so per row group) when writing.
const WRITE_BATCH_ROWS: usize = 1 << 20;

fn parquet_error(path: &Path) -> impl Fn(ParquetError) -> IoError + '_ {
    move |source| IoError::Parquet {
        path: path.to_path_buf(),
        source,
    }
}

/// Reads the Parquet file at `path`, keeping the `requested` columns (all when `None`).
pub(crate) fn read(path: &Path, requested: Option<&[String]>) -> Result<Table> {
    let file = File::open(path).map_err(|source| IoError::file("open", path, source))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(parquet_error(path))?;
    let schema = builder.schema().clone();
    let indices = projection::resolve(&arrow_columns::field_names(&schema), requested)?;
    let announced_rows = builder.metadata().file_metadata().num_rows();
    let mut collector = BatchCollector::new(
        &schema,
        &indices,
        usize::try_from(announced_rows).unwrap_or(0),
    )?;
    if indices.is_empty() {
        return Ok(collector.finish());
    }
    let mask = ProjectionMask::roots(builder.parquet_schema(), indices.iter().copied());
    let reader = builder
        .with_projection(mask)
        .with_batch_size(READ_BATCH_ROWS)
        .build()
        .map_err(parquet_error(path))?;
    for batch in reader {
        let batch = batch.map_err(|source| IoError::Arrow {
            path: path.to_path_buf(),
            source,
        })?;
        collector.append(&batch)?;
    }
    Ok(collector.finish())
}

/// Writes `table` (already validated) to `file` as Parquet; `path` is for messages.
pub(crate) fn write(
    file: File,
    path: &Path,
    table: &Table,
    compression: ParquetCompression,
) -> Result<()> {
    if table.columns.is_empty() {
        return Err(IoError::InvalidTable(
            "a Parquet file needs at least one column".to_string(),
        ));
    }
    let properties = WriterProperties::builder()
        .set_compression(codec(compression)?)
        .set_max_row_group_row_count(Some(WRITE_BATCH_ROWS))
        .build();
    let schema = arrow_columns::schema_of(table);
    let mut writer = ArrowWriter::try_new(file, schema.clone(), Some(properties))
        .map_err(parquet_error(path))?;
    for (start, end) in arrow_columns::batch_ranges(table.rows(), WRITE_BATCH_ROWS) {
        let batch = arrow_columns::batch_of(table, &schema, start, end)?;
        writer.write(&batch).map_err(parquet_error(path))?;
    }
    writer.close().map_err(parquet_error(path))?;
    Ok(())
}

fn codec(compression: ParquetCompression) -> Result<Compression> {
    Ok(match compression {
        ParquetCompression::Zstd => {
            let level =
                ZstdLevel::try_new(1).map_err(|error| IoError::InvalidOption(error.to_string()))?;
            Compression::ZSTD(level)
        }
        ParquetCompression::Snappy => Compression::SNAPPY,
        ParquetCompression::None => Compression::UNCOMPRESSED,
    })
}
