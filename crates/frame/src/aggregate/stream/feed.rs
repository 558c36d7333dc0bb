//! Where a streamed group-by's batches come from: a file's units, decoded
//! by whichever worker takes them next, or the parts of a table in memory,
//! each taken by the worker that owns it. It does not aggregate.

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use numakit_io::{Projection, Source};

use crate::error::Result;
use crate::table::Table;

/// Where the batches come from.
pub(crate) enum Feed<'a> {
    /// A file's units, decoded by whichever worker takes them.
    File {
        source: &'a Source,
        projection: &'a Projection,
    },
    /// A table in memory: each worker takes the parts it owns.
    Table(&'a Table),
}

impl Feed<'_> {
    pub(super) fn schema(&self) -> SchemaRef {
        match self {
            Feed::File { projection, .. } => projection.schema().clone(),
            Feed::Table(table) => table.schema().clone(),
        }
    }

    /// The rows the feed holds, where that is known before reading.
    pub(super) fn rows_hint(&self) -> Option<u64> {
        match self {
            Feed::File { source, .. } => source.rows_hint(),
            Feed::Table(table) => Some(table.rows() as u64),
        }
    }

    pub(super) fn units(&self) -> usize {
        match self {
            Feed::File { source, .. } => source.units(),
            Feed::Table(table) => table.parts().len(),
        }
    }

    /// Whether worker `w` (of `workers`) takes unit `unit` of a table.
    pub(super) fn owns(&self, unit: usize, w: usize, workers: usize) -> bool {
        match self {
            Feed::File { .. } => true,
            Feed::Table(table) => table.parts()[unit].worker % workers == w,
        }
    }

    pub(super) fn read(&self, unit: usize) -> Result<Vec<RecordBatch>> {
        match self {
            Feed::File { source, projection } => Ok(source.read_unit(unit, projection)?),
            Feed::Table(table) => Ok(vec![table.parts()[unit].batch.clone()]),
        }
    }
}
