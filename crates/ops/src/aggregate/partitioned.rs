//! [`AggMethod::Partitioned`](crate::aggregate::AggMethod::Partitioned):
//! the shuffle-based aggregation with more partitions than workers.
//!
//! Every worker splits its chunk into partitions (by hash, or for dense
//! keys into runs of consecutive keys plus one partition for the keys
//! outside the range); then workers take partitions one at a time (a
//! shared counter, so skewed partitions balance out), read that
//! partition's piece from every producer, starting at a different
//! producer per partition so that readers spread over the nodes, and
//! aggregate it into one reused table sized for a partition, which stays
//! in the private cache. The table is drained into the worker's output
//! before the next partition.
//!
//! Unlike the exchange-driven shuffle, a consumer's state is one
//! partition's table, not all of its groups: that is what keeps large
//! group counts cache-resident. This module does not choose the
//! partitioning (`choose.rs`).

use std::sync::atomic::{AtomicUsize, Ordering};

use numakit_pool::{Pool, WorkerContext};

use crate::aggregate::choose::{AggregationPlan, KeyLayout};
use crate::aggregate::dense::{DenseTable, KeyRange};
use crate::aggregate::source::ColumnSource;
use crate::aggregate::split::{by_hash, by_range, split_chunks, split_source, Split};
use crate::aggregate::table::GroupTable;
use crate::aggregate::Group;
use crate::error::Result;
use crate::relation::Relation;
use crate::timing::PhaseTimer;
use crate::tuple::Tuple;

/// A table that aggregates one partition at a time.
trait PartTable {
    /// Gets ready for partition `part` (the table is empty).
    fn start(&mut self, part: usize);
    fn add_rows(&mut self, rows: &[Tuple]) -> Result<()>;
    fn drain_into(&mut self, out: &mut Vec<Group>);
}

impl PartTable for GroupTable<'_> {
    fn start(&mut self, _part: usize) {}
    fn add_rows(&mut self, rows: &[Tuple]) -> Result<()> {
        GroupTable::add_rows(self, rows)
    }
    fn drain_into(&mut self, out: &mut Vec<Group>) {
        GroupTable::drain_into(self, out)
    }
}

/// A dense table over one run of the whole range; the last partition
/// (keys outside the range) lands entirely in its hash table.
struct RunTable<'p> {
    table: DenseTable<'p>,
    range: KeyRange,
    bits: u32,
}

impl PartTable for RunTable<'_> {
    fn start(&mut self, part: usize) {
        let offset = ((part as u64) << self.bits).min(self.range.len - 1);
        self.table.rebase(self.range.base.wrapping_add(offset));
    }
    fn add_rows(&mut self, rows: &[Tuple]) -> Result<()> {
        self.table.add_rows(rows)
    }
    fn drain_into(&mut self, out: &mut Vec<Group>) {
        self.table.drain_into(out)
    }
}

/// Where the method reads its rows: a relation, or the columns they were
/// loaded in (scattered in place, no tuples made first).
#[derive(Clone, Copy)]
pub enum Input<'a> {
    /// Tuples in node-placed chunks.
    Relation(&'a Relation),
    /// Key and value columns, per worker.
    Columns(&'a ColumnSource<'a>),
}

impl Input<'_> {
    fn rows(&self) -> usize {
        match self {
            Input::Relation(r) => r.len(),
            Input::Columns(c) => c.rows(),
        }
    }

    fn split<F>(&self, pool: &Pool, parts: usize, part_of: F) -> Result<Vec<Split>>
    where
        F: Fn(u64) -> usize + Sync,
    {
        match self {
            Input::Relation(r) => split_chunks(pool, r, parts, part_of),
            Input::Columns(c) => split_source(pool, c, parts, part_of),
        }
    }
}

/// Runs the method as `plan` says.
pub fn run(
    pool: &Pool,
    input: Input<'_>,
    plan: &AggregationPlan,
    timer: &mut PhaseTimer<'_>,
) -> Result<Vec<Vec<Group>>> {
    let parts = plan.parts.max(1);
    let expected = usize::try_from(plan.expected_groups)
        .unwrap_or(usize::MAX)
        .min(input.rows());
    timer.start("partition");
    let splits = match plan.keys {
        KeyLayout::Hashed => input.split(pool, parts, by_hash(parts))?,
        KeyLayout::Dense(range) => {
            input.split(pool, parts, by_range(range, plan.part_bits, parts))?
        }
    };
    timer.start("aggregate partitions");
    match plan.keys {
        KeyLayout::Hashed => {
            let per_part = expected / parts;
            aggregate_parts(pool, &splits, expected, |ctx| {
                GroupTable::with_capacity(pool, ctx.node, per_part + per_part / 4)
            })
        }
        KeyLayout::Dense(range) => aggregate_parts(pool, &splits, expected, |ctx| {
            let run = KeyRange {
                base: range.base,
                len: range.len.min(1 << plan.part_bits),
            };
            Ok(RunTable {
                table: DenseTable::new(pool, ctx.node, run)?,
                range,
                bits: plan.part_bits,
            })
        }),
    }
}

/// Every worker takes partitions from a shared counter and aggregates
/// each into its own table made by `make`, draining it into its output.
fn aggregate_parts<T, M>(
    pool: &Pool,
    splits: &[Split],
    expected: usize,
    make: M,
) -> Result<Vec<Vec<Group>>>
where
    T: PartTable,
    M: Fn(&WorkerContext) -> Result<T> + Sync,
{
    let parts = splits.first().map_or(0, Split::parts_count);
    let workers = pool.workers();
    let next = AtomicUsize::new(0);
    let outputs = pool.broadcast(|ctx| -> Result<Vec<Group>> {
        let mut table = make(ctx)?;
        let mut out = Vec::with_capacity(expected / workers + expected / (8 * workers));
        loop {
            let part = next.fetch_add(1, Ordering::Relaxed);
            if part >= parts {
                return Ok(out);
            }
            table.start(part);
            for k in 0..splits.len() {
                table.add_rows(splits[(part + k) % splits.len()].part(part))?;
            }
            table.drain_into(&mut out);
        }
    })?;
    outputs.into_iter().collect()
}
