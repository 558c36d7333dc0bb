//! Writing Arrow record batches of any type as CSV, Parquet or Arrow IPC,
//! all-or-nothing (through `atomic`).
//!
//! CSV gets a header row, nulls as empty fields, dates and timestamps in
//! ISO 8601 and decimals with their scale; Parquet as `parquet_write`
//! encodes it (Zstandard level 1 by default, row groups encoded in
//! parallel); Arrow IPC the file format, uncompressed. A [`BatchWriter`]
//! takes the batches as they come, so a result need not be held whole. It does not write nested types to CSV (the CSV writer
//! refuses them with a message naming the type).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use arrow_ipc::writer::FileWriter;
use arrow_schema::{ArrowError, SchemaRef};

use crate::atomic::AtomicFile;
use crate::error::{IoError, Result};
use crate::format::Format;
use crate::options::WriteOptions;
use crate::parquet_write::ParquetSink;

/// Writes `batches` (all of `schema`) to `path` in `options.format` (from
/// the extension when `None`), replacing any file there only once every
/// batch is written.
pub fn write_batches(
    path: impl AsRef<Path>,
    schema: &SchemaRef,
    batches: &[RecordBatch],
    options: &WriteOptions,
) -> Result<()> {
    let mut writer = BatchWriter::create(path, schema, options)?;
    for batch in batches {
        writer.write(batch.clone())?;
    }
    writer.finish()
}

/// A file being written from record batches as they come (a result that
/// is never held whole): [`BatchWriter::finish`] makes it appear at its
/// path; dropped unfinished, nothing appears and an earlier file there is
/// kept.
pub struct BatchWriter {
    file: AtomicFile,
    path: PathBuf,
    format: Format,
    sink: Sink,
}

enum Sink {
    Csv(arrow_csv::Writer<BufWriter<File>>),
    Parquet(Box<ParquetSink>),
    Ipc(FileWriter<BufWriter<File>>),
}

impl BatchWriter {
    /// Starts writing a table of `schema` to `path` in `options.format`
    /// (from the extension when `None`).
    pub fn create(
        path: impl AsRef<Path>,
        schema: &SchemaRef,
        options: &WriteOptions,
    ) -> Result<Self> {
        let path = path.as_ref();
        let format = Format::resolve(options.format, path)?;
        options.csv.validate()?;
        check_schema(schema)?;
        let (file, handle) = AtomicFile::create(path)?;
        let fail = |message: String| IoError::Encode {
            format: format.name(),
            path: path.to_path_buf(),
            message,
        };
        let sink = match format {
            Format::Csv => Sink::Csv(
                arrow_csv::WriterBuilder::new()
                    .with_header(true)
                    .with_delimiter(options.csv.delimiter)
                    .build(BufWriter::with_capacity(1 << 20, handle)),
            ),
            Format::Parquet => Sink::Parquet(Box::new(
                ParquetSink::new(handle, schema, options.parquet_compression)
                    .map_err(|e| fail(e.to_string()))?,
            )),
            Format::ArrowIpc => Sink::Ipc(
                FileWriter::try_new_buffered(handle, schema).map_err(|e| fail(e.to_string()))?,
            ),
        };
        Ok(BatchWriter {
            file,
            path: path.to_path_buf(),
            format,
            sink,
        })
    }

    fn fail(&self, message: String) -> IoError {
        IoError::Encode {
            format: self.format.name(),
            path: self.path.clone(),
            message,
        }
    }

    /// Adds `batch` (of the writer's schema).
    pub fn write(&mut self, batch: RecordBatch) -> Result<()> {
        let written = match &mut self.sink {
            Sink::Csv(writer) => writer.write(&batch).map_err(|e| e.to_string()),
            Sink::Parquet(sink) => sink.push(batch).map_err(|e| e.to_string()),
            Sink::Ipc(writer) => writer.write(&batch).map_err(|e| e.to_string()),
        };
        written.map_err(|message| self.fail(message))
    }

    /// Writes what is left and moves the file to its path.
    pub fn finish(self) -> Result<()> {
        let BatchWriter {
            file,
            path,
            format,
            sink,
        } = self;
        let closed = match sink {
            Sink::Csv(writer) => writer.into_inner().flush().map_err(|e| e.to_string()),
            Sink::Parquet(sink) => sink.finish().map_err(|e| e.to_string()),
            Sink::Ipc(mut writer) => writer
                .finish()
                .and_then(|_| writer.into_inner())
                .and_then(|mut inner| inner.flush().map_err(ArrowError::from))
                .map_err(|e| e.to_string()),
        };
        closed.map_err(|message| IoError::Encode {
            format: format.name(),
            path,
            message,
        })?;
        file.commit()
    }
}

/// A table to write needs columns, each named once.
fn check_schema(schema: &SchemaRef) -> Result<()> {
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
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Array, Int64Array, StringArray};
    use arrow_schema::{DataType, Field, Schema};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    use super::*;
    use crate::parquet_write::{encoding_threads, row_groups, ROW_GROUP_ROWS};

    fn id_and_name() -> SchemaRef {
        Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, false),
        ]))
    }

    fn batch(schema: &SchemaRef, start: i64, rows: i64) -> RecordBatch {
        let ids = Int64Array::from_iter_values(start..start + rows);
        let names = StringArray::from_iter_values((start..start + rows).map(|i| format!("n{i}")));
        RecordBatch::try_new(schema.clone(), vec![Arc::new(ids), Arc::new(names)]).unwrap()
    }

    #[test]
    fn row_groups_slice_large_batches_and_join_small_ones() {
        let schema = id_and_name();
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

    /// Every row group holds at most [`ROW_GROUP_ROWS`] rows, all are full
    /// but the last wave's, whose groups are of equal size (within a row)
    /// and a multiple of the threads.
    fn assert_row_groups(metadata: &parquet::file::metadata::ParquetMetaData, rows: usize) {
        let sizes: Vec<usize> = metadata
            .row_groups()
            .iter()
            .map(|g| g.num_rows() as usize)
            .collect();
        assert_eq!(sizes.iter().sum::<usize>(), rows);
        let full = sizes.iter().take_while(|&&s| s == ROW_GROUP_ROWS).count();
        let last = &sizes[full..];
        let threads = encoding_threads();
        assert_eq!(full % threads, 0, "{sizes:?}");
        assert!(!last.is_empty() && last.len() % threads == 0, "{sizes:?}");
        let (lo, hi) = (last.iter().min().unwrap(), last.iter().max().unwrap());
        assert!(hi - lo <= 1 || (last.len() == 1), "{sizes:?}");
        assert!(*hi <= ROW_GROUP_ROWS, "{sizes:?}");
        assert!(last.len() < (rows - full * ROW_GROUP_ROWS).div_ceil(ROW_GROUP_ROWS) + threads);
    }

    #[test]
    fn several_waves_of_row_groups_are_written_in_order() {
        let schema = id_and_name();
        let rows = (ROW_GROUP_ROWS * (encoding_threads() + 1) + 17) as i64;
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("waves.parquet");
        let batches = [
            batch(&schema, 0, rows / 3),
            batch(&schema, rows / 3, rows - rows / 3),
        ];
        write_batches(&path, &schema, &batches, &WriteOptions::default()).unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(&path).unwrap()).unwrap();
        assert_row_groups(reader.metadata(), rows as usize);
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

    #[test]
    fn batches_written_one_at_a_time_across_waves_read_back_in_order() {
        let schema = id_and_name();
        let rows = (ROW_GROUP_ROWS * (encoding_threads() * 2 + 1) + 5) as i64;
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("pushed.parquet");
        std::fs::write(&path, b"old").unwrap();
        let step = 300_007;
        let mut writer = BatchWriter::create(&path, &schema, &WriteOptions::default()).unwrap();
        let mut start = 0;
        while start < rows {
            writer
                .write(batch(&schema, start, step.min(rows - start)))
                .unwrap();
            start += step;
            // Nothing appears before the writer finishes.
            assert_eq!(std::fs::read(&path).unwrap(), b"old");
        }
        writer.finish().unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(&path).unwrap()).unwrap();
        assert_row_groups(reader.metadata(), rows as usize);
        let mut next = 0i64;
        for read in reader.build().unwrap() {
            let read = read.unwrap();
            let ids = read
                .column(0)
                .as_any()
                .downcast_ref::<Int64Array>()
                .unwrap();
            for i in 0..read.num_rows() {
                assert_eq!(ids.value(i), next);
                next += 1;
            }
        }
        assert_eq!(next, rows);
    }

    /// A nested field becomes several Parquet columns (a struct of two:
    /// two writers); each field's writers must get its own leaves, in the
    /// schema's order, in every row group of every wave.
    #[test]
    fn nested_columns_between_flat_ones_read_back_whole() {
        use arrow_array::{ListArray, StructArray};
        use arrow_schema::Fields;
        let inner = Fields::from(vec![
            Field::new("a", DataType::Int64, false),
            Field::new("b", DataType::Utf8, true),
        ]);
        let item = Arc::new(Field::new("item", DataType::Int64, true));
        let schema: SchemaRef = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("pair", DataType::Struct(inner.clone()), true),
            Field::new("list", DataType::List(item.clone()), true),
            Field::new("name", DataType::Utf8, false),
        ]));
        let make = |start: i64, rows: i64| -> RecordBatch {
            let ids = Int64Array::from_iter_values(start..start + rows);
            let a = Int64Array::from_iter_values((start..start + rows).map(|i| -i));
            let b = StringArray::from_iter(
                (start..start + rows).map(|i| (i % 3 != 0).then(|| format!("b{i}"))),
            );
            let pair = StructArray::new(inner.clone(), vec![Arc::new(a), Arc::new(b)], None);
            let list = ListArray::from_iter_primitive::<arrow_array::types::Int64Type, _, _>(
                (start..start + rows)
                    .map(|i| (i % 5 != 0).then(|| (0..i % 4).map(move |j| Some(i + j)))),
            );
            let names =
                StringArray::from_iter_values((start..start + rows).map(|i| format!("n{i}")));
            RecordBatch::try_new(
                schema.clone(),
                vec![
                    Arc::new(ids),
                    Arc::new(pair),
                    Arc::new(list),
                    Arc::new(names),
                ],
            )
            .unwrap()
        };
        let rows = (ROW_GROUP_ROWS * encoding_threads() + 1000) as i64;
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("nested.parquet");
        let mut writer = BatchWriter::create(&path, &schema, &WriteOptions::default()).unwrap();
        let step = 400_009;
        let mut start = 0;
        while start < rows {
            writer.write(make(start, step.min(rows - start))).unwrap();
            start += step;
        }
        writer.finish().unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(&path).unwrap()).unwrap();
        let mut at = 0i64;
        for read in reader.build().unwrap() {
            let read = read.unwrap();
            let n = read.num_rows() as i64;
            assert_eq!(read, make(at, n), "rows from {at}");
            at += n;
        }
        assert_eq!(at, rows);
    }

    #[test]
    fn only_columns_of_few_values_are_dictionary_encoded() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("flag", DataType::Utf8, true),
        ]));
        let rows = 20_000;
        let ids = Int64Array::from_iter_values(0..rows);
        let flags: StringArray = (0..rows)
            .map(|i| (i % 5 != 0).then(|| ["A", "F", "O"][i as usize % 3]))
            .collect();
        let full =
            RecordBatch::try_new(schema.clone(), vec![Arc::new(ids), Arc::new(flags)]).unwrap();
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("dictionaries.parquet");
        write_batches(
            &path,
            &schema,
            std::slice::from_ref(&full),
            &WriteOptions::default(),
        )
        .unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(&path).unwrap()).unwrap();
        let chunks = reader.metadata().row_group(0).columns().to_vec();
        assert!(chunks[0].dictionary_page_offset().is_none(), "unique ids");
        assert!(chunks[1].dictionary_page_offset().is_some(), "three flags");
        let mut at = 0;
        for read in reader.build().unwrap() {
            let read = read.unwrap();
            assert_eq!(read.columns(), full.slice(at, read.num_rows()).columns());
            at += read.num_rows();
        }
        assert_eq!(at, rows as usize);
        // An empty result still makes a valid file.
        write_batches(
            &path,
            &schema,
            &[full.slice(0, 0)],
            &WriteOptions::default(),
        )
        .unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(&path).unwrap()).unwrap();
        assert_eq!(reader.metadata().file_metadata().num_rows(), 0);
    }

    #[test]
    fn an_unfinished_writer_leaves_nothing_and_keeps_the_old_file() {
        let schema = id_and_name();
        let directory = tempfile::tempdir().unwrap();
        for name in ["out.parquet", "out.csv", "out.arrow"] {
            let path = directory.path().join(name);
            std::fs::write(&path, b"old").unwrap();
            let mut writer = BatchWriter::create(&path, &schema, &WriteOptions::default()).unwrap();
            writer.write(batch(&schema, 0, 10)).unwrap();
            drop(writer);
            assert_eq!(std::fs::read(&path).unwrap(), b"old", "{name}");
        }
        let mut names: Vec<String> = std::fs::read_dir(directory.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, vec!["out.arrow", "out.csv", "out.parquet"]);
    }
}
