//! Parquet files in units of row groups.
//!
//! The footer is read once, when the file is opened; each unit then opens
//! the file again (a cheap system call) and decodes one row group's
//! projected column chunks into one record batch, so that threads decode
//! row groups side by side without sharing a reader. It does not split a
//! row group further.

use std::fs::File;
use std::path::Path;

use arrow_array::RecordBatch;
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::ProjectionMask;

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

/// The schema with low-cardinality dictionary-encoded string and binary
/// columns as dictionary arrays (`None` when there are none).
fn dictionary_schema(metadata: &ArrowReaderMetadata) -> Option<SchemaRef> {
    let descr = metadata.parquet_schema();
    let row_groups = metadata.metadata().row_groups();
    let schema = metadata.schema();
    let mut changed = false;
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .enumerate()
        .map(|(root, field)| {
            let Some(dictionary) = dictionary_type(field.data_type()) else {
                return field.as_ref().clone();
            };
            let leaves: Vec<usize> = (0..descr.num_columns())
                .filter(|&leaf| descr.get_column_root_idx(leaf) == root)
                .collect();
            let small = !row_groups.is_empty()
                && leaves.len() == 1
                && row_groups.iter().take(SAMPLED_ROW_GROUPS).all(|group| {
                    let chunk = group.column(leaves[0]);
                    chunk.dictionary_page_offset().is_some_and(|start| {
                        let bytes = (chunk.data_page_offset() - start) as f64;
                        bytes <= SMALL_DICTIONARY_SHARE * chunk.compressed_size().max(1) as f64
                    })
                });
            if small {
                changed = true;
                field.as_ref().clone().with_data_type(dictionary)
            } else {
                field.as_ref().clone()
            }
        })
        .collect();
    changed
        .then(|| std::sync::Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())))
}

impl ParquetUnits {
    /// Opens `path`; with `keep_dictionaries`, low-cardinality dictionary
    /// columns are read as dictionary arrays.
    pub(crate) fn open(path: &Path, keep_dictionaries: bool) -> Result<Self> {
        let file = File::open(path).map_err(|source| IoError::file("open", path, source))?;
        let metadata = ArrowReaderMetadata::load(&file, ArrowReaderOptions::new())
            .map_err(parquet_error(path))?;
        let declared = metadata.schema().clone();
        if keep_dictionaries {
            if let Some(schema) = dictionary_schema(&metadata) {
                let options = ArrowReaderOptions::new().with_schema(schema);
                let hinted = ArrowReaderMetadata::try_new(metadata.metadata().clone(), options)
                    .map_err(parquet_error(path))?;
                return Ok(ParquetUnits {
                    metadata: hinted,
                    declared,
                });
            }
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
