//! [`Table`]: an Arrow table held in parts, each part a record batch that
//! one pool worker decoded or produced, so its memory was first touched on
//! that worker's node and the worker (or a neighbour) works on it there.
//!
//! Operators refer to a row by a [`RowRef`]: its part and its row in the
//! part, packed in 64 bits, which is the payload the 64-bit kernels carry.
//! Result columns are then gathered from the parts by these references.
//!
//! This module holds data and answers questions about it; it does not
//! read files (`load`), encode keys (`keys`) or run operators.

use std::collections::HashSet;

use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_data::ArrayData;
use arrow_schema::SchemaRef;

use crate::error::{FrameError, Result};

/// A row of a table: part index in the high 32 bits, row in the low 32.
pub type RowRef = u64;

/// The reference of row `row` of part `part`.
#[inline(always)]
pub fn row_ref(part: usize, row: usize) -> RowRef {
    ((part as u64) << 32) | row as u64
}

/// The part of a row reference.
#[inline(always)]
pub fn part_of(r: RowRef) -> usize {
    (r >> 32) as usize
}

/// The row (within its part) of a row reference.
#[inline(always)]
pub fn row_of(r: RowRef) -> usize {
    (r & 0xFFFF_FFFF) as usize
}

/// Rows a part may hold (row references have 32 bits for them).
pub const MAX_PART_ROWS: usize = u32::MAX as usize;

/// One record batch and the worker whose node holds it.
#[derive(Clone, Debug)]
pub struct Part {
    /// The part's rows, with the table's schema.
    pub batch: RecordBatch,
    /// The pool worker that made the batch (and works on it first).
    pub worker: usize,
}

/// A table of named, typed columns, in parts.
#[derive(Clone, Debug)]
pub struct Table {
    name: String,
    schema: SchemaRef,
    parts: Vec<Part>,
}

impl Table {
    /// A table of `parts`, each of which must have `schema`'s columns.
    /// `name` identifies the table in messages (a path, "left").
    pub fn new(name: impl Into<String>, schema: SchemaRef, parts: Vec<Part>) -> Result<Self> {
        let name = name.into();
        for part in &parts {
            let fields = part.batch.schema();
            let same = fields.fields().len() == schema.fields().len()
                && fields
                    .fields()
                    .iter()
                    .zip(schema.fields())
                    .all(|(a, b)| a.name() == b.name() && a.data_type() == b.data_type());
            if !same {
                return Err(FrameError::InvalidRequest(format!(
                    "a part of {name} has columns {fields:?}, not the table's {schema:?}"
                )));
            }
            if part.batch.num_rows() > MAX_PART_ROWS {
                return Err(FrameError::InvalidRequest(format!(
                    "a part of {name} has {} rows; at most {MAX_PART_ROWS} are supported",
                    part.batch.num_rows()
                )));
            }
        }
        Ok(Table {
            name,
            schema,
            parts,
        })
    }

    /// A table of `batches` in memory, given to `workers` workers in
    /// contiguous runs of about equal rows (cut larger batches first with
    /// [`Table::split_for`] to balance them).
    pub fn from_batches(
        name: impl Into<String>,
        schema: SchemaRef,
        batches: Vec<RecordBatch>,
        workers: usize,
    ) -> Result<Self> {
        let total: usize = batches.iter().map(RecordBatch::num_rows).sum();
        let workers = workers.max(1);
        let mut before = 0usize;
        let parts = batches
            .into_iter()
            .map(|batch| {
                let middle = before + batch.num_rows() / 2;
                before += batch.num_rows();
                let worker = (middle * workers)
                    .checked_div(total)
                    .map_or(0, |w| w.min(workers - 1));
                Part { batch, worker }
            })
            .collect();
        Table::new(name, schema, parts)
    }

    /// A table of operator outputs: `outputs[i]` are the batches output
    /// `i` made, on worker `i % workers`; empty batches are left out.
    pub(crate) fn of_outputs(
        name: impl Into<String>,
        schema: SchemaRef,
        outputs: Vec<Vec<RecordBatch>>,
        workers: usize,
    ) -> Result<Self> {
        let workers = workers.max(1);
        let parts = outputs
            .into_iter()
            .enumerate()
            .flat_map(|(i, list)| {
                list.into_iter().map(move |batch| Part {
                    batch,
                    worker: i % workers,
                })
            })
            .filter(|p| p.batch.num_rows() > 0)
            .collect();
        Table::new(name, schema, parts)
    }

    /// `batches` cut into slices of at most `rows` rows (zero-copy), so
    /// that [`Table::from_batches`] can balance them over workers.
    pub fn split_for(batches: Vec<RecordBatch>, rows: usize) -> Vec<RecordBatch> {
        let rows = rows.max(1);
        let mut out = Vec::new();
        for batch in batches {
            let n = batch.num_rows();
            if n <= rows {
                out.push(batch);
                continue;
            }
            let mut start = 0;
            while start < n {
                let len = rows.min(n - start);
                out.push(batch.slice(start, len));
                start += len;
            }
        }
        out
    }

    /// What the table is called in messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The columns' names and types; every part has them.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// The parts, in row order (part i's rows come before part i + 1's).
    pub fn parts(&self) -> &[Part] {
        &self.parts
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.parts.iter().map(|p| p.batch.num_rows()).sum()
    }

    /// The position of the column named `name`.
    pub fn column_index(&self, name: &str) -> Result<usize> {
        self.schema
            .index_of(name)
            .map_err(|_| FrameError::column_not_found(&self.schema, name, self.name.clone()))
    }

    /// The arrays of column `index`, one per part.
    pub fn column(&self, index: usize) -> Vec<&ArrayRef> {
        self.parts.iter().map(|p| p.batch.column(index)).collect()
    }

    /// The record batches, part after part (shared, not copied).
    pub fn batches(&self) -> Vec<RecordBatch> {
        self.parts.iter().map(|p| p.batch.clone()).collect()
    }

    /// The indices of the parts of worker `worker`.
    pub fn parts_of(&self, worker: usize) -> impl Iterator<Item = usize> + '_ {
        self.parts
            .iter()
            .enumerate()
            .filter(move |(_, p)| p.worker == worker)
            .map(|(i, _)| i)
    }

    /// The table with only the columns at `indices`, in that order.
    pub fn project(&self, indices: &[usize]) -> Result<Table> {
        let schema = std::sync::Arc::new(
            self.schema
                .project(indices)
                .map_err(|e| FrameError::arrow("choosing columns", e))?,
        );
        let parts = self
            .parts
            .iter()
            .map(|p| {
                Ok(Part {
                    batch: p
                        .batch
                        .project(indices)
                        .map_err(|e| FrameError::arrow("choosing columns", e))?,
                    worker: p.worker,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Table {
            name: self.name.clone(),
            schema,
            parts,
        })
    }

    /// Bytes of memory the table's buffers take, each buffer once.
    pub fn memory_bytes(&self) -> u64 {
        let all: Vec<usize> = (0..self.schema.fields().len()).collect();
        self.columns_memory_bytes(&all)
    }

    /// Bytes of memory the buffers of `columns` take. A buffer is counted
    /// once however many parts share it: parts cut from one batch without
    /// copying (a caller's table shared among workers) would otherwise
    /// count it once per part.
    pub fn columns_memory_bytes(&self, columns: &[usize]) -> u64 {
        let mut seen = HashSet::new();
        let mut total = 0u64;
        for part in &self.parts {
            for &c in columns {
                add_buffers(&part.batch.column(c).to_data(), &mut seen, &mut total);
            }
        }
        total
    }

    /// The first `rows` rows, as batches (zero-copy slices).
    pub fn head(&self, rows: usize) -> Vec<RecordBatch> {
        let mut left = rows;
        let mut out = Vec::new();
        for part in &self.parts {
            if left == 0 {
                break;
            }
            let take = left.min(part.batch.num_rows());
            if take > 0 {
                out.push(part.batch.slice(0, take));
            }
            left -= take;
        }
        out
    }
}

/// Adds the bytes of `data`'s buffers (and its children's) not `seen`
/// before, keyed by the allocation they belong to.
fn add_buffers(data: &ArrayData, seen: &mut HashSet<usize>, total: &mut u64) {
    let nulls = data.nulls().map(|n| n.buffer());
    for buffer in data.buffers().iter().chain(nulls) {
        if seen.insert(buffer.data_ptr().as_ptr() as usize) {
            *total += buffer.capacity() as u64;
        }
    }
    for child in data.child_data() {
        add_buffers(child, seen, total);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::Int64Array;
    use arrow_schema::{DataType, Field, Schema};

    use super::*;

    fn batch(values: Vec<i64>) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![Field::new("a", DataType::Int64, false)]));
        RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from(values))]).unwrap()
    }

    #[test]
    fn row_refs_round_trip() {
        let r = row_ref(7, 123_456);
        assert_eq!((part_of(r), row_of(r)), (7, 123_456));
        let r = row_ref(u32::MAX as usize, u32::MAX as usize);
        assert_eq!(
            (part_of(r), row_of(r)),
            (u32::MAX as usize, u32::MAX as usize)
        );
    }

    #[test]
    fn slices_of_one_batch_count_its_buffers_once() {
        let whole = batch((0..1000).collect());
        let one = Table::from_batches("t", whole.schema(), vec![whole.clone()], 1).unwrap();
        let sliced =
            Table::from_batches("t", whole.schema(), Table::split_for(vec![whole], 10), 4).unwrap();
        assert_eq!(sliced.parts().len(), 100);
        assert_eq!(sliced.memory_bytes(), one.memory_bytes());
        assert!(one.memory_bytes() >= 8000, "{}", one.memory_bytes());
        // Separate allocations add up.
        let two = Table::from_batches(
            "t",
            batch(vec![0]).schema(),
            vec![batch((0..1000).collect()), batch((0..1000).collect())],
            1,
        )
        .unwrap();
        assert_eq!(two.columns_memory_bytes(&[0]), 2 * one.memory_bytes());
    }

    #[test]
    fn batches_spread_over_workers_in_runs_and_heads_slice() {
        let batches = Table::split_for(vec![batch((0..10).collect())], 3);
        assert_eq!(batches.len(), 4);
        let schema = batches[0].schema();
        let table = Table::from_batches("t", schema, batches, 2).unwrap();
        let workers: Vec<usize> = table.parts().iter().map(|p| p.worker).collect();
        assert_eq!(workers, vec![0, 0, 1, 1]);
        assert_eq!(table.rows(), 10);
        let head: usize = table.head(4).iter().map(RecordBatch::num_rows).sum();
        assert_eq!(head, 4);
        let message = table.column_index("b").unwrap_err().to_string();
        assert!(
            message.contains("\"b\" not found in t; available columns: a"),
            "{message}"
        );
    }
}
