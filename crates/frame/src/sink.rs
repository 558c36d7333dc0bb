//! Where a result goes when it is not kept: a [`ResultSink`] takes its
//! batches as the operator makes them, so a result larger than memory can
//! still be written, and a written result is never held whole.
//! [`FileSink`] writes them to a file (CSV, Parquet or Arrow IPC) that
//! appears at its path only when [`FileSink::finish`] is called.
//!
//! This module does not decide which operators stream their results; an
//! operator that cannot (a sort's result exists only at its end) hands its
//! finished result over batch by batch all the same.

use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use numakit_io::{BatchWriter, WriteOptions};

use crate::error::{FrameError, Result};

/// Takes a result's batches as they are made.
pub trait ResultSink {
    /// Called once, with the result's schema, before any batch.
    fn start(&mut self, schema: &SchemaRef) -> Result<()>;
    /// One batch of the result, in the result's order where it has one (a
    /// sort's), else in no particular order.
    fn write(&mut self, batch: RecordBatch) -> Result<()>;
}

/// A result written to a file as it comes.
pub struct FileSink {
    path: PathBuf,
    options: WriteOptions,
    writer: Option<BatchWriter>,
    schema: Option<SchemaRef>,
    rows: u64,
}

impl FileSink {
    /// A sink writing to `path` (nothing is created until the result
    /// starts; an earlier file there stays until [`FileSink::finish`]).
    pub fn new(path: impl AsRef<Path>, options: WriteOptions) -> Self {
        FileSink {
            path: path.as_ref().to_path_buf(),
            options,
            writer: None,
            schema: None,
            rows: 0,
        }
    }

    /// The result's schema, once it has started.
    pub fn schema(&self) -> Option<&SchemaRef> {
        self.schema.as_ref()
    }

    /// Where the result goes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Rows written so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Writes what is left and makes the file appear at its path.
    pub fn finish(self) -> Result<()> {
        match self.writer {
            Some(writer) => Ok(writer.finish()?),
            None => Err(FrameError::InvalidRequest(format!(
                "no result was written to {}",
                self.path.display()
            ))),
        }
    }
}

impl ResultSink for FileSink {
    fn start(&mut self, schema: &SchemaRef) -> Result<()> {
        self.writer = Some(BatchWriter::create(&self.path, schema, &self.options)?);
        self.schema = Some(schema.clone());
        Ok(())
    }

    fn write(&mut self, batch: RecordBatch) -> Result<()> {
        let writer = self.writer.as_mut().ok_or_else(|| {
            FrameError::InvalidRequest("a result batch came before the result started".into())
        })?;
        self.rows += batch.num_rows() as u64;
        Ok(writer.write(batch)?)
    }
}

/// Hands every batch of `table` to `sink` (started with its schema).
pub fn write_table(sink: &mut dyn ResultSink, table: &crate::Table) -> Result<()> {
    sink.start(table.schema())?;
    for batch in table.batches() {
        sink.write(batch)?;
    }
    Ok(())
}
