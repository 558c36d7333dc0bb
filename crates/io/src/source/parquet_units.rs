//! Parquet files in units of row groups.
//!
//! The footer is read once, when the file is opened; each unit then opens
//! the file again (a cheap system call) and decodes one row group's
//! projected column chunks into one record batch, so that threads decode
//! row groups side by side without sharing a reader. It does not split a
//! row group further.
//!
//! Two reading choices change the Arrow types a file's columns arrive as
//! ([`ReadChoices`]): strings of few distinct values as dictionary arrays,
//! and decimals stored as 32- or 64-bit integers as `Decimal32`/`Decimal64`
//! (the reader then hands the file's integers over as they are, where the
//! default `Decimal128` widens every value to 128 bits).

use std::fs::File;
use std::path::Path;

use arrow_array::RecordBatch;
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::ProjectionMask;
use parquet::basic::Type as PhysicalType;

use crate::error::{IoError, Result};
use crate::source::Projection;

/// Row groups larger than this are decoded in several batches.
const MAX_BATCH_ROWS: usize = 1 << 20;

pub(crate) struct ParquetUnits {
    metadata: ArrowReaderMetadata,
    /// The file's own Arrow schema (before dictionary hints).
    declared: SchemaRef,
}

fn parquet_error(path: &Path) -> impl Fn(parquet::errors::ParquetError) -> IoError + '_ {
    move |source| IoError::Parquet {
        path: path.to_path_buf(),
        source,
    }
}

/// A dictionary page at most this share of its chunk marks a column of
/// few distinct values.
const SMALL_DICTIONARY_SHARE: f64 = 0.1;
/// Row groups looked at to judge a column's dictionaries.
const SAMPLED_ROW_GROUPS: usize = 4;

/// The dictionary type a string or binary type is read as, if any.
fn dictionary_type(data_type: &DataType) -> Option<DataType> {
    let values = match data_type {
        DataType::Utf8 | DataType::Utf8View => DataType::Utf8,
        DataType::LargeUtf8 => DataType::LargeUtf8,
        DataType::Binary | DataType::BinaryView => DataType::Binary,
        DataType::LargeBinary => DataType::LargeBinary,
        _ => return None,
    };
    Some(DataType::Dictionary(
        Box::new(DataType::Int32),
        Box::new(values),
    ))
}

/// How columns are read, beyond the file's own Arrow types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReadChoices {
    /// Low-cardinality dictionary-encoded strings as dictionary arrays.
    pub(crate) dictionaries: bool,
    /// Decimals stored as 32- or 64-bit integers as `Decimal32`/`Decimal64`.
    pub(crate) narrow_decimals: bool,
}

/// The type a top-level column is read as under `choices`, when it
/// differs from the file's own: `leaf` is the column's only leaf.
fn hinted_type(
    metadata: &ArrowReaderMetadata,
    field: &Field,
    leaf: usize,
    choices: ReadChoices,
) -> Option<DataType> {
    if choices.narrow_decimals {
        if let DataType::Decimal128(p, s) = field.data_type() {
            return match metadata.parquet_schema().column(leaf).physical_type() {
                PhysicalType::INT32 => Some(DataType::Decimal32(*p, *s)),
                PhysicalType::INT64 => Some(DataType::Decimal64(*p, *s)),
                _ => None,
            };
        }
    }
    let dictionary = dictionary_type(field.data_type()).filter(|_| choices.dictionaries)?;
    let small = metadata
        .metadata()
        .row_groups()
        .iter()
        .take(SAMPLED_ROW_GROUPS)
        .all(|group| {
            let chunk = group.column(leaf);
            chunk.dictionary_page_offset().is_some_and(|start| {
                let bytes = (chunk.data_page_offset() - start) as f64;
                bytes <= SMALL_DICTIONARY_SHARE * chunk.compressed_size().max(1) as f64
            })
        });
    (small && metadata.metadata().num_row_groups() > 0).then_some(dictionary)
}

/// The schema to read with under `choices` (`None` when it is the file's
/// own).
fn read_schema(metadata: &ArrowReaderMetadata, choices: ReadChoices) -> Option<SchemaRef> {
    let descr = metadata.parquet_schema();
    let schema = metadata.schema();
    let mut changed = false;
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .enumerate()
        .map(|(root, field)| {
            let leaves: Vec<usize> = (0..descr.num_columns())
                .filter(|&leaf| descr.get_column_root_idx(leaf) == root)
                .collect();
            let hinted = match leaves.as_slice() {
                [leaf] => hinted_type(metadata, field, *leaf, choices),
                _ => None,
            };
            match hinted {
                Some(data_type) => {
                    changed = true;
                    field.as_ref().clone().with_data_type(data_type)
                }
                None => field.as_ref().clone(),
            }
        })
        .collect();
    changed
        .then(|| std::sync::Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())))
}

impl ParquetUnits {
    /// Opens `path`, to be read as `choices` say.
    pub(crate) fn open(path: &Path, choices: ReadChoices) -> Result<Self> {
        let file = File::open(path).map_err(|source| IoError::file("open", path, source))?;
        let metadata = ArrowReaderMetadata::load(&file, ArrowReaderOptions::new())
            .map_err(parquet_error(path))?;
        let declared = metadata.schema().clone();
        if let Some(schema) = read_schema(&metadata, choices) {
            let options = ArrowReaderOptions::new().with_schema(schema);
            let hinted = ArrowReaderMetadata::try_new(metadata.metadata().clone(), options)
                .map_err(parquet_error(path))?;
            return Ok(ParquetUnits {
                metadata: hinted,
                declared,
            });
        }
        Ok(ParquetUnits { metadata, declared })
    }

    pub(crate) fn schema(&self) -> SchemaRef {
        self.metadata.schema().clone()
    }

    pub(crate) fn declared_schema(&self) -> SchemaRef {
        self.declared.clone()
    }

    pub(crate) fn len(&self) -> usize {
        self.metadata.metadata().num_row_groups()
    }

    pub(crate) fn rows(&self) -> u64 {
        u64::try_from(self.metadata.metadata().file_metadata().num_rows()).unwrap_or(0)
    }

    /// The uncompressed size of the projected columns' chunks.
    pub(crate) fn decoded_bytes(&self, roots: &[usize]) -> u64 {
        let descr = self.metadata.parquet_schema();
        let mut total = 0u64;
        for group in self.metadata.metadata().row_groups() {
            for (leaf, chunk) in group.columns().iter().enumerate() {
                if roots.contains(&descr.get_column_root_idx(leaf)) {
                    total += u64::try_from(chunk.uncompressed_size()).unwrap_or(0);
                }
            }
        }
        total
    }

    pub(crate) fn read(
        &self,
        path: &Path,
        unit: usize,
        projection: &Projection,
    ) -> Result<Vec<RecordBatch>> {
        let file = File::open(path).map_err(|source| IoError::file("open", path, source))?;
        let rows = self.metadata.metadata().row_group(unit).num_rows();
        let batch_rows = usize::try_from(rows)
            .unwrap_or(MAX_BATCH_ROWS)
            .clamp(1, MAX_BATCH_ROWS);
        let mask = ProjectionMask::roots(
            self.metadata.parquet_schema(),
            projection.indices().iter().copied(),
        );
        let reader =
            ParquetRecordBatchReaderBuilder::new_with_metadata(file, self.metadata.clone())
                .with_row_groups(vec![unit])
                .with_projection(mask)
                .with_batch_size(batch_rows)
                .build()
                .map_err(parquet_error(path))?;
        // The reader returns the projected columns in file order; put them
        // in the requested order.
        let mut in_file_order = projection.indices().to_vec();
        in_file_order.sort_unstable();
        let order: Vec<usize> = projection
            .indices()
            .iter()
            .map(|i| in_file_order.binary_search(i).unwrap_or(0))
            .collect();
        let mut out = Vec::new();
        for batch in reader {
            let batch = batch.map_err(|source| IoError::Decode {
                format: "Parquet",
                path: path.to_path_buf(),
                message: source.to_string(),
            })?;
            let batch = batch.project(&order).map_err(|source| IoError::Decode {
                format: "Parquet",
                path: path.to_path_buf(),
                message: source.to_string(),
            })?;
            out.push(batch);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::cast::AsArray;
    use arrow_array::types::{Decimal128Type, Decimal32Type, Decimal64Type};
    use arrow_array::{ArrayRef, Decimal128Array, RecordBatch};
    use parquet::arrow::ArrowWriter;

    use crate::source::{Source, SourceOptions};

    /// Decimals of 7, 15 and 30 digits (Parquet INT32, INT64 and
    /// fixed-size binary), with nulls and their precisions' limits.
    fn decimals_file() -> (tempfile::NamedTempFile, Vec<Vec<Option<i128>>>) {
        let columns = vec![
            vec![Some(-9_999_999), None, Some(0), Some(9_999_999), Some(-1)],
            vec![
                Some(-999_999_999_999_999),
                Some(12),
                None,
                Some(999_999_999_999_999),
                Some(0),
            ],
            vec![
                Some(-(10i128.pow(30) - 1)),
                Some(10i128.pow(30) - 1),
                None,
                Some(7),
                Some(-7),
            ],
        ];
        let arrays: Vec<(&str, ArrayRef)> = [("d7", 7u8), ("d15", 15), ("d30", 30)]
            .iter()
            .zip(&columns)
            .map(|(&(name, p), values)| {
                let array = Decimal128Array::from(values.clone())
                    .with_precision_and_scale(p, 2)
                    .unwrap();
                (name, Arc::new(array) as ArrayRef)
            })
            .collect();
        let batch = RecordBatch::try_from_iter(arrays).unwrap();
        let file = tempfile::Builder::new()
            .suffix(".parquet")
            .tempfile()
            .unwrap();
        let mut writer =
            ArrowWriter::try_new(file.reopen().unwrap(), batch.schema(), None).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        (file, columns)
    }

    fn read(file: &tempfile::NamedTempFile, narrow: bool) -> (Source, RecordBatch) {
        let options = SourceOptions {
            narrow_decimals: narrow,
            ..SourceOptions::default()
        };
        let source = Source::open(file.path(), &options).unwrap();
        let projection = source.project(None).unwrap();
        let mut batches = source.read_all(&projection).unwrap();
        assert_eq!(batches.len(), 1);
        (source, batches.remove(0))
    }

    fn types_of(batch: &RecordBatch) -> Vec<arrow_schema::DataType> {
        let schema = batch.schema();
        schema
            .fields()
            .iter()
            .map(|f| f.data_type().clone())
            .collect()
    }

    #[test]
    fn integer_decimals_are_read_narrow_only_when_asked() {
        use arrow_schema::DataType::{Decimal128, Decimal32, Decimal64};
        let (file, expected) = decimals_file();
        let (source, wide) = read(&file, false);
        assert_eq!(
            types_of(&wide),
            vec![Decimal128(7, 2), Decimal128(15, 2), Decimal128(30, 2)]
        );
        assert_eq!(source.declared_schema(), wide.schema());

        let (source, narrow) = read(&file, true);
        assert_eq!(
            types_of(&narrow),
            vec![Decimal32(7, 2), Decimal64(15, 2), Decimal128(30, 2)]
        );
        // The declared schema is still the file's own.
        assert_eq!(source.declared_schema(), wide.schema());

        let d7: Vec<Option<i128>> = narrow
            .column(0)
            .as_primitive::<Decimal32Type>()
            .iter()
            .map(|v| v.map(i128::from))
            .collect();
        let d15: Vec<Option<i128>> = narrow
            .column(1)
            .as_primitive::<Decimal64Type>()
            .iter()
            .map(|v| v.map(i128::from))
            .collect();
        let d30: Vec<Option<i128>> = narrow
            .column(2)
            .as_primitive::<Decimal128Type>()
            .iter()
            .collect();
        assert_eq!(vec![d7, d15, d30], expected);
    }
}
