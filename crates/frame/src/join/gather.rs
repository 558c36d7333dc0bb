//! The result of a join as a table: its rows' columns gathered from both
//! sides by the row references the kernel gave, one batch list per
//! worker, and the left rows without a key added where the join keeps
//! unmatched rows.
//!
//! This module does not join; it only turns result rows into columns.

use arrow_array::RecordBatch;

use numakit_ops::join::JoinRow;
use numakit_pool::Pool;

use crate::error::{FrameError, Result};
use crate::join::JoinPlan;
use crate::keys::decode::{Gatherer, GATHER_ROWS};
use crate::keys::PartCodes;
use crate::par::try_per_part;
use crate::table::{row_ref, Table};

/// The left rows without a key, as unmatched result rows.
pub(crate) fn keyless_rows(codes: &[PartCodes]) -> Vec<JoinRow> {
    codes
        .iter()
        .enumerate()
        .flat_map(|(p, part)| {
            part.invalid.iter().map(move |&r| JoinRow {
                key: 0,
                left: row_ref(p, r as usize),
                right: None,
            })
        })
        .collect()
}

pub(crate) fn gather_result(
    pool: &Pool,
    left: &Table,
    right: &Table,
    plan: &JoinPlan,
    (lcols, rcols): (&[usize], &[usize]),
    rows: Vec<Vec<JoinRow>>,
) -> Result<Table> {
    let workers = pool.workers().max(1);
    let (lnulls, rnulls) = (Gatherer::nulls(left, lcols), Gatherer::nulls(right, rcols));
    let batches = try_per_part(
        pool,
        rows.len(),
        |i| i % workers,
        |i| {
            let mut lg = Gatherer::new(left, lcols, &lnulls);
            let mut rg = Gatherer::new(right, rcols, &rnulls);
            rows[i]
                .chunks(GATHER_ROWS)
                .map(|chunk| {
                    let mut arrays = lg.gather(chunk.iter().map(|r| Some(r.left)))?;
                    arrays.extend(rg.gather(chunk.iter().map(|r| r.right))?);
                    RecordBatch::try_new(plan.schema().clone(), arrays)
                        .map_err(|e| FrameError::arrow("assembling the join's result", e))
                })
                .collect::<Result<Vec<_>>>()
        },
    )?;
    Table::of_outputs("the join's result", plan.schema().clone(), batches, workers)
}
