//! Parquet files written from record batches as they come: rows are cut
//! into row groups of about a million, and as soon as a wave of row groups
//! is complete (one, when the table has at least two fields per CPU; else
//! as many as there are CPUs), every field's column chunks of the wave are
//! encoded and compressed as a task of their own on that many threads, the
//! largest first, and the chunks are appended in order. The file is the
//! same as one written serially, and at most one wave of batches and of
//! encoded chunks is held; a field's leaves (its levels and value indices,
//! about ten bytes a row) are made by its task, so only the running
//! tasks' are.
//!
//! Zstandard level 1 by default. Which columns are dictionary encoded is
//! decided on the first wave's rows (`dictionary_choice`), so the file is
//! opened for writing only then. This module does not choose the file's
//! path or make it appear atomically (`batch_write` and `atomic` do).

use std::fs::File;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::SchemaRef;
use parquet::arrow::arrow_writer::{
    compute_leaves, ArrowColumnChunk, ArrowColumnWriter, ArrowRowGroupWriterFactory,
};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::errors::ParquetError;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::ColumnPath;

use crate::dictionary_choice;
use crate::options::ParquetCompression;

/// Rows per Parquet row group.
pub(crate) const ROW_GROUP_ROWS: usize = 1 << 20;

/// A Parquet file being written.
pub(crate) struct ParquetSink {
    /// The file, until the writer is made from the first rows.
    file: Option<File>,
    codec: Compression,
    open: Option<(SerializedFileWriter<File>, ArrowRowGroupWriterFactory)>,
    schema: SchemaRef,
    /// Parquet columns (writers) per field of `schema`.
    leaf_counts: Vec<usize>,
    /// Batches not yet encoded, and their rows.
    pending: Vec<RecordBatch>,
    pending_rows: usize,
    /// Row groups written so far.
    groups: usize,
    threads: usize,
}

impl ParquetSink {
    pub(crate) fn new(
        file: File,
        schema: &SchemaRef,
        compression: ParquetCompression,
    ) -> Result<Self, ParquetError> {
        let codec = match compression {
            ParquetCompression::Zstd => Compression::ZSTD(ZstdLevel::try_new(1)?),
            ParquetCompression::Snappy => Compression::SNAPPY,
            ParquetCompression::None => Compression::UNCOMPRESSED,
        };
        Ok(ParquetSink {
            file: Some(file),
            codec,
            open: None,
            schema: schema.clone(),
            leaf_counts: leaf_counts(schema)?,
            pending: Vec::new(),
            pending_rows: 0,
            groups: 0,
            threads: encoding_threads(),
        })
    }

    /// Adds `batch`; encodes a wave once one is complete.
    pub(crate) fn push(&mut self, batch: RecordBatch) -> Result<(), ParquetError> {
        self.pending_rows += batch.num_rows();
        self.pending.push(batch);
        let per_wave = self.groups_per_wave();
        let wave_rows = per_wave * ROW_GROUP_ROWS;
        if self.pending_rows >= wave_rows {
            let mut groups = row_groups(&std::mem::take(&mut self.pending));
            let whole_waves = self.pending_rows / wave_rows;
            let rest = groups.split_off(whole_waves * per_wave);
            self.pending_rows -= groups.len() * ROW_GROUP_ROWS;
            self.pending = rest.into_iter().flatten().collect();
            for wave in groups.chunks(per_wave) {
                self.encode_wave(wave)?;
            }
        }
        Ok(())
    }

    /// Row groups encoded at once: one when its fields alone give every
    /// thread two tasks or more, else one per thread (so that a table of
    /// one or two wide columns still keeps every thread busy). Fewer row
    /// groups at once hold fewer rows waiting.
    fn groups_per_wave(&self) -> usize {
        if self.schema.fields().len() >= 2 * self.threads {
            1
        } else {
            self.threads
        }
    }

    /// Encodes what is left and closes the file.
    pub(crate) fn finish(mut self) -> Result<(), ParquetError> {
        let groups = last_row_groups(
            &std::mem::take(&mut self.pending),
            self.pending_rows,
            self.threads,
        );
        for wave in groups.chunks(self.threads) {
            self.encode_wave(wave)?;
        }
        self.open(&[])?;
        if let Some((writer, _)) = self.open.take() {
            writer.close()?;
        }
        Ok(())
    }

    /// Makes the writer, if not yet made, with the columns to dictionary
    /// encode chosen on `sample`.
    fn open(&mut self, sample: &[RecordBatch]) -> Result<(), ParquetError> {
        let Some(file) = self.file.take() else {
            return Ok(());
        };
        let mut properties = WriterProperties::builder()
            .set_compression(self.codec)
            .set_max_row_group_row_count(Some(ROW_GROUP_ROWS));
        let choices = dictionary_choice::choose(sample, self.schema.fields().len());
        for (field, choice) in self.schema.fields().iter().zip(choices) {
            if let Some(dictionary) = choice {
                let path = ColumnPath::new(vec![field.name().clone()]);
                properties = properties.set_column_dictionary_enabled(path, dictionary);
            }
        }
        let writer = ArrowWriter::try_new(file, self.schema.clone(), Some(properties.build()))?;
        self.open = Some(writer.into_serialized_writer()?);
        Ok(())
    }

    /// Encodes the row groups of one wave in parallel and appends them.
    fn encode_wave(&mut self, wave: &[Vec<RecordBatch>]) -> Result<(), ParquetError> {
        self.open(wave.first().map_or(&[][..], Vec::as_slice))?;
        let (writer, factory) = self
            .open
            .as_mut()
            .ok_or_else(|| ParquetError::General("the Parquet file was closed".into()))?;
        let mut tasks = Vec::new();
        for (offset, group) in wave.iter().enumerate() {
            let mut writers = factory
                .create_column_writers(self.groups + offset)?
                .into_iter();
            let mut column = 0;
            let fields = self.schema.fields().iter().zip(&self.leaf_counts);
            for (f, (field, &leaves)) in fields.enumerate() {
                let writers: Vec<(usize, ArrowColumnWriter)> =
                    (column..column + leaves).zip(writers.by_ref()).collect();
                column += leaves;
                tasks.push(ColumnTask {
                    group: offset,
                    field: field.clone(),
                    writers,
                    arrays: group.iter().map(|b| b.column(f).clone()).collect(),
                });
            }
        }
        // The largest first, so that no thread is left with a large one
        // at the end of the wave while the others wait.
        tasks.sort_by_key(|t| std::cmp::Reverse(t.bytes()));
        let mut chunks = encode_in_parallel(tasks, self.threads)?;
        chunks.sort_unstable_by_key(|(key, _)| *key);
        let mut chunks = chunks.into_iter().peekable();
        for offset in 0..wave.len() {
            let mut row_group = writer.next_row_group()?;
            while let Some(((_, _), chunk)) = chunks.next_if(|((g, _), _)| *g == offset) {
                chunk.append_to_row_group(&mut row_group)?;
            }
            row_group.close()?;
        }
        self.groups += wave.len();
        Ok(())
    }
}

/// CPUs to encode on.
pub(crate) fn encoding_threads() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// How many Parquet leaf columns (column writers) each field of `schema`
/// becomes: one for a flat field, more for a nested one.
fn leaf_counts(schema: &SchemaRef) -> Result<Vec<usize>, ParquetError> {
    schema
        .fields()
        .iter()
        .map(|field| {
            let empty = arrow_array::new_empty_array(field.data_type());
            Ok(compute_leaves(field, &empty)?.len())
        })
        .collect()
}

/// The rows of `batches` in row groups of [`ROW_GROUP_ROWS`] rows (the
/// last one fewer), larger batches sliced (without copying).
pub(crate) fn row_groups(batches: &[RecordBatch]) -> Vec<Vec<RecordBatch>> {
    row_groups_of(batches, ROW_GROUP_ROWS)
}

/// The last rows of a file, less than a wave, need not fill their row
/// groups; at least this many go to each thread before they are split.
const LEAST_SPLIT_ROWS: usize = 1 << 16;

/// The `rows` rows of `batches`, the last of a file, in row groups of
/// equal size, as few as [`ROW_GROUP_ROWS`] allows but a multiple of
/// `threads`, so that the last wave keeps every thread busy (a 1.2M-row
/// rest is two groups of 600K rows, not 1M and 200K).
fn last_row_groups(batches: &[RecordBatch], rows: usize, threads: usize) -> Vec<Vec<RecordBatch>> {
    let fewest = rows.div_ceil(ROW_GROUP_ROWS);
    let groups = if rows >= threads * LEAST_SPLIT_ROWS {
        fewest.next_multiple_of(threads.max(1))
    } else {
        fewest
    };
    row_groups_of(batches, rows.div_ceil(groups.max(1)).max(1))
}

/// The rows of `batches` in row groups of `size` rows (the last one
/// fewer), larger batches sliced (without copying).
fn row_groups_of(batches: &[RecordBatch], size: usize) -> Vec<Vec<RecordBatch>> {
    let mut groups = Vec::new();
    let mut group: Vec<RecordBatch> = Vec::new();
    let mut rows = 0;
    for batch in batches {
        let mut at = 0;
        while at < batch.num_rows() {
            let take = (size - rows).min(batch.num_rows() - at);
            group.push(batch.slice(at, take));
            at += take;
            rows += take;
            if rows == size {
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

/// One field's column chunks to encode: which row group of the wave, the
/// field's column writers (with their column numbers) and its arrays. The
/// leaves (levels and value indices, about ten bytes a row) are computed
/// when the task runs, so only the running tasks' leaves are held, not the
/// whole wave's.
struct ColumnTask {
    group: usize,
    field: arrow_schema::FieldRef,
    writers: Vec<(usize, ArrowColumnWriter)>,
    arrays: Vec<ArrayRef>,
}

impl ColumnTask {
    /// The memory its arrays use: a guess at its share of the work.
    fn bytes(&self) -> usize {
        self.arrays.iter().map(|a| a.get_array_memory_size()).sum()
    }

    /// Encodes the arrays; the chunks keyed by (row group, column).
    fn encode(mut self) -> Result<Vec<EncodedChunk>, ParquetError> {
        for array in std::mem::take(&mut self.arrays) {
            let leaves = compute_leaves(&self.field, &array)?;
            for ((_, writer), leaf) in self.writers.iter_mut().zip(&leaves) {
                writer.write(leaf)?;
            }
        }
        self.writers
            .into_iter()
            .map(|(column, writer)| Ok(((self.group, column), writer.close()?)))
            .collect()
    }
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
                    while let Some(task) = next() {
                        done.extend(task.encode()?);
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_schema::{DataType, Field, Schema};

    use super::*;

    fn sink_of(fields: usize, threads: usize) -> ParquetSink {
        let directory = tempfile::tempdir().unwrap();
        let file = File::create(directory.path().join("t.parquet")).unwrap();
        let schema: SchemaRef = Arc::new(Schema::new(
            (0..fields)
                .map(|i| Field::new(format!("c{i}"), DataType::Int64, false))
                .collect::<Vec<_>>(),
        ));
        let mut sink = ParquetSink::new(file, &schema, ParquetCompression::Zstd).unwrap();
        sink.threads = threads;
        sink
    }

    /// A wide table waits for one row group, a narrow one for a row group
    /// per thread, so that every thread has work.
    #[test]
    fn waves_are_one_row_group_when_the_fields_give_every_thread_two_tasks() {
        assert_eq!(sink_of(8, 2).groups_per_wave(), 1);
        assert_eq!(sink_of(4, 2).groups_per_wave(), 1);
        assert_eq!(sink_of(3, 2).groups_per_wave(), 2);
        assert_eq!(sink_of(1, 4).groups_per_wave(), 4);
        assert_eq!(sink_of(16, 8).groups_per_wave(), 1);
        assert_eq!(sink_of(15, 8).groups_per_wave(), 8);
    }
}
