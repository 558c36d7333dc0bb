//! Writing Arrow record batches of any type as CSV, Parquet or Arrow IPC,
//! all-or-nothing (through `atomic`).
//!
//! CSV gets a header row, nulls as empty fields, dates and timestamps in
//! ISO 8601 and decimals with their scale; Parquet Zstandard level 1 by
//! default in row groups of about a million rows, as many row groups at
//! once as there are CPUs, each of their columns encoded and compressed as
//! a task of its own; Arrow IPC the file format,
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
    let groups = row_groups(batches);
    let threads = encoding_threads();
    // Row groups are encoded a wave at a time (as many as there are CPUs),
    // every column of every row group of the wave a task of its own, and
    // appended in order: the file is the same as one written serially,
    // and at most one wave of encoded chunks is held at once.
    for (wave_index, wave) in groups.chunks(threads).enumerate() {
        let first = wave_index * threads;
        let mut tasks = Vec::new();
        for (offset, group) in wave.iter().enumerate() {
            let writers = factory.create_column_writers(first + offset)?;
            let leaves = leaves_of(schema, group, writers.len())?;
            for (column, (writer, leaves)) in writers.into_iter().zip(leaves).enumerate() {
                tasks.push(ColumnTask {
                    group: offset,
                    column,
                    writer,
                    leaves,
                });
            }
        }
        let mut chunks = encode_in_parallel(tasks, threads)?;
        chunks.sort_unstable_by_key(|(key, _)| *key);
        let mut chunks = chunks.into_iter().peekable();
        for offset in 0..wave.len() {
            let mut row_group = file_writer.next_row_group()?;
            while let Some(((_, _), chunk)) = chunks.next_if(|((g, _), _)| *g == offset) {
                chunk.append_to_row_group(&mut row_group)?;
            }
            row_group.close()?;
        }
    }
    file_writer.close()?;
    Ok(())
}

/// CPUs to encode on.
fn encoding_threads() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// The leaf columns of one row group's batches, per column writer.
fn leaves_of(
    schema: &SchemaRef,
    group: &[RecordBatch],
    writers: usize,
) -> Result<Vec<Vec<ArrowLeafColumn>>, parquet::errors::ParquetError> {
    let mut leaves: Vec<Vec<ArrowLeafColumn>> = (0..writers).map(|_| Vec::new()).collect();
    for batch in group {
        let mut at = 0;
        for (field, column) in schema.fields().iter().zip(batch.columns()) {
            for leaf in compute_leaves(field, column)? {
                leaves[at].push(leaf);
                at += 1;
            }
        }
    }
    Ok(leaves)
}

/// The rows of `batches` in row groups of [`ROW_GROUP_ROWS`] rows (the
/// last one fewer), larger batches sliced (without copying).
fn row_groups(batches: &[RecordBatch]) -> Vec<Vec<RecordBatch>> {
    let mut groups = Vec::new();
    let mut group: Vec<RecordBatch> = Vec::new();
    let mut rows = 0;
    for batch in batches {
        let mut at = 0;
        while at < batch.num_rows() {
            let take = (ROW_GROUP_ROWS - rows).min(batch.num_rows() - at);
            group.push(batch.slice(at, take));
            at += take;
            rows += take;
            if rows == ROW_GROUP_ROWS {
                groups.push(std::mem::take(&mut group));
                rows = 0;
            }
        }
    }
    if !group.is_empty() {
        groups.push(group);
    }
    groups
}

/// One column chunk to encode: which row group of the wave, which column.
struct ColumnTask {
    group: usize,
    column: usize,
    writer: ArrowColumnWriter,
    leaves: Vec<ArrowLeafColumn>,
}

type EncodedChunk = ((usize, usize), ArrowColumnChunk);

/// Encodes every task on up to `threads` threads, each taking the next
/// task when it is done with one; the chunks keyed by (row group, column).
fn encode_in_parallel(
    tasks: Vec<ColumnTask>,
    threads: usize,
) -> Result<Vec<EncodedChunk>, parquet::errors::ParquetError> {
    let threads = threads.min(tasks.len()).max(1);
    let queue = std::sync::Mutex::new(tasks.into_iter());
    let next = || queue.lock().ok().and_then(|mut q| q.next());
    let encoded = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    while let Some(mut task) = next() {
                        for leaf in &task.leaves {
                            task.writer.write(leaf)?;
                        }
                        done.push(((task.group, task.column), task.writer.close()?));
                    }
                    Ok::<_, parquet::errors::ParquetError>(done)
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
    Ok(chunks)
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Array, Int64Array, StringArray};
    use arrow_schema::{DataType, Field, Schema};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    use super::*;

    fn batch(schema: &SchemaRef, start: i64, rows: i64) -> RecordBatch {
        let ids = Int64Array::from_iter_values(start..start + rows);
        let names = StringArray::from_iter_values((start..start + rows).map(|i| format!("n{i}")));
        RecordBatch::try_new(schema.clone(), vec![Arc::new(ids), Arc::new(names)]).unwrap()
    }

    #[test]
    fn row_groups_slice_large_batches_and_join_small_ones() {
        let schema: SchemaRef = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, false),
        ]));
        let big = ROW_GROUP_ROWS as i64;
        let batches = [
            batch(&schema, 0, 3),
            batch(&schema, 3, 2 * big),
            batch(&schema, 0, 0),
        ];
        let groups = row_groups(&batches);
        let sizes: Vec<usize> = groups
            .iter()
            .map(|g| g.iter().map(RecordBatch::num_rows).sum())
            .collect();
        assert_eq!(sizes, vec![ROW_GROUP_ROWS, ROW_GROUP_ROWS, 3]);
        assert_eq!(groups[0].len(), 2);
        assert!(row_groups(&[]).is_empty());
    }

    #[test]
    fn several_waves_of_row_groups_are_written_in_order() {
        let schema: SchemaRef = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, false),
        ]));
        let rows = (ROW_GROUP_ROWS * (encoding_threads() + 1) + 17) as i64;
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("waves.parquet");
        let batches = [
            batch(&schema, 0, rows / 3),
            batch(&schema, rows / 3, rows - rows / 3),
        ];
        write_batches(&path, &schema, &batches, &WriteOptions::default()).unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(&path).unwrap()).unwrap();
        assert_eq!(
            reader.metadata().num_row_groups(),
            (rows as usize).div_ceil(ROW_GROUP_ROWS)
        );
        let mut next = 0i64;
        for read in reader.build().unwrap() {
            let read = read.unwrap();
            let ids = read
                .column(0)
                .as_any()
                .downcast_ref::<Int64Array>()
                .unwrap();
            let names = read
                .column(1)
                .as_any()
                .downcast_ref::<StringArray>()
                .unwrap();
            for i in 0..read.num_rows() {
                assert_eq!(ids.value(i), next);
                assert_eq!(names.value(i), format!("n{next}"));
                next += 1;
            }
            assert_eq!(names.null_count(), 0);
        }
        assert_eq!(next, rows);
    }
}
