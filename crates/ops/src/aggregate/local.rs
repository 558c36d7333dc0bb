//! [`AggMethod::Local`](crate::aggregate::AggMethod::Local): every worker
//! aggregates its own chunk into its own table, then the tables are merged,
//! each worker merging its share of the keys out of every table.
//!
//! No row moves and there is no partition pass: the only traffic between
//! workers is the tables, which is cheap exactly when they are small (few
//! groups). This is the limit of Li's migration with state copy when the
//! state is tiny: instead of carrying one table to every partition, each
//! worker keeps a copy and the copies meet once at the end.
//!
//! With hashed keys worker c owns the keys [`part_of_hash`] gives it; with
//! dense keys it owns an even share of the array's cells, plus the hashed
//! owner's share of the keys outside the range. This module does not
//! decide when local aggregation pays (`choose.rs`).

use numakit_pool::{Pool, WorkerContext};

use crate::aggregate::choose::{AggregationPlan, KeyLayout};
use crate::aggregate::dense::{combined_groups, DenseTable, KeyRange};
use crate::aggregate::split::part_of_hash;
use crate::aggregate::table::GroupTable;
use crate::aggregate::Group;
use crate::error::Result;
use crate::hash::hash64;
use crate::par::even_ranges;
use crate::relation::Relation;
use crate::timing::PhaseTimer;

/// Runs the method as `plan` says (its key layout and expected groups).
pub fn run(
    pool: &Pool,
    input: &Relation,
    plan: &AggregationPlan,
    timer: &mut PhaseTimer<'_>,
) -> Result<Vec<Vec<Group>>> {
    match plan.keys {
        KeyLayout::Hashed => run_hashed(pool, input, plan.expected_groups, timer),
        KeyLayout::Dense(range) => run_dense(pool, input, range, timer),
    }
}

fn run_hashed(
    pool: &Pool,
    input: &Relation,
    expected_groups: u64,
    timer: &mut PhaseTimer<'_>,
) -> Result<Vec<Vec<Group>>> {
    timer.start("aggregate chunks");
    let chunks = input.chunks();
    let expected = usize::try_from(expected_groups).unwrap_or(usize::MAX);
    let tables = pool.broadcast(|ctx| -> Result<GroupTable> {
        let rows = &chunks[ctx.index].tuples;
        let mut table = GroupTable::with_capacity(pool, ctx.node, expected.min(rows.len()))?;
        table.add_rows(rows)?;
        Ok(table)
    })?;
    let tables = tables.into_iter().collect::<Result<Vec<_>>>()?;
    timer.start("merge");
    if let [only] = tables.as_slice() {
        return Ok(vec![only.groups().collect()]);
    }
    let tables: Vec<&GroupTable> = tables.iter().collect();
    let outputs = pool.broadcast(|ctx| owned_groups(pool, ctx, &tables))?;
    outputs.into_iter().collect()
}

fn run_dense(
    pool: &Pool,
    input: &Relation,
    range: KeyRange,
    timer: &mut PhaseTimer<'_>,
) -> Result<Vec<Vec<Group>>> {
    timer.start("aggregate chunks");
    let chunks = input.chunks();
    let tables = pool.broadcast(|ctx| -> Result<DenseTable> {
        let mut table = DenseTable::new(pool, ctx.node, range)?;
        table.add_rows(&chunks[ctx.index].tuples)?;
        Ok(table)
    })?;
    let tables = tables.into_iter().collect::<Result<Vec<_>>>()?;
    timer.start("merge");
    let shares = even_ranges(tables[0].cells().len(), tables.len());
    let overflows: Vec<&GroupTable> = tables.iter().map(DenseTable::overflow).collect();
    let outputs = pool.broadcast(|ctx| -> Result<Vec<Group>> {
        let mut out = combined_groups(&tables, shares[ctx.index].clone());
        if overflows.iter().any(|t| !t.is_empty()) {
            out.extend(owned_groups(pool, ctx, &overflows)?);
        }
        Ok(out)
    })?;
    outputs.into_iter().collect()
}

/// The groups of `tables` whose keys the calling worker owns
/// ([`part_of_hash`] over the workers), merged.
fn owned_groups(
    pool: &Pool,
    ctx: &WorkerContext,
    tables: &[&GroupTable<'_>],
) -> Result<Vec<Group>> {
    let workers = ctx.workers;
    let largest = tables.iter().map(|t| t.len()).max().unwrap_or(0);
    let mut mine = GroupTable::with_capacity(pool, ctx.node, largest / workers + 16)?;
    for table in tables {
        for group in table.groups() {
            let hash = hash64(group.key);
            if part_of_hash(hash, workers) == ctx.index {
                mine.merge_hashed(&group, hash)?;
            }
        }
    }
    Ok(mine.groups().collect())
}
