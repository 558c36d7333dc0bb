//! The sorted result, gathered and handed on a window of rows at a time:
//! the sorted (code, row) tuples are cut, in output order, into runs of at
//! most [`GATHER_ROWS`], and about [`WINDOW_ROWS_PER_WORKER`] rows per
//! worker are gathered at once, the runs dealt to the workers in turn (a window
//! lies mostly in one worker's sorted chunk, and the rows it reads are
//! anywhere in the input), and given to the caller before the next window
//! is gathered. A
//! caller that writes each window and lets it go never holds the whole
//! result beside the input.
//!
//! It does not sort, and knows nothing of where the windows go.

use std::sync::Arc;
use std::time::Instant;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use numakit_ops::relation::Relation;
use numakit_ops::tuple::Tuple;
use numakit_pool::Pool;

use crate::error::{FrameError, Result};
use crate::keys::decode::{Gatherer, GATHER_ROWS};
use crate::memory::MemoryLimit;
use crate::par::try_per_part;
use crate::table::{Part, Table};

/// Rows each worker gathers per window.
pub(crate) const WINDOW_ROWS_PER_WORKER: usize = 1 << 20;

/// Time spent gathering, and handing windows on.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct WindowTimes {
    pub gather: f64,
    pub deliver: f64,
}

/// Gathers `columns` of `table` in the order of `sorted`'s payloads,
/// window by window (about `window_rows` rows; `None`: about
/// [`WINDOW_ROWS_PER_WORKER`] per worker), handing each window to
/// `deliver` (at least one, empty when there are no rows). `bytes` is the
/// whole result's size, for the memory limit's check of each window.
pub(super) fn deliver_windows(
    pool: &Pool,
    (table, columns): (&Table, &[usize]),
    sorted: &Relation,
    (limit, bytes): (&MemoryLimit, u64),
    window_rows: Option<usize>,
    deliver: &mut dyn FnMut(Table) -> Result<()>,
) -> Result<WindowTimes> {
    let schema: SchemaRef = Arc::new(
        table
            .schema()
            .project(columns)
            .map_err(|e| FrameError::arrow("choosing columns", e))?,
    );
    let workers = pool.workers().max(1);
    let window_rows = window_rows
        .unwrap_or(WINDOW_ROWS_PER_WORKER * workers)
        .max(1);
    let run_rows = GATHER_ROWS.min(window_rows.div_ceil(workers));
    let runs: Vec<(usize, &[Tuple])> = sorted
        .chunks()
        .iter()
        .flat_map(|c| c.tuples.chunks(run_rows))
        .enumerate()
        .map(|(i, run)| (i % workers, run))
        .collect();
    let mut times = WindowTimes::default();
    if runs.is_empty() {
        deliver(Table::new("the sorted result", schema, Vec::new())?)?;
        return Ok(times);
    }
    let rows = table.rows().max(1) as u64;
    let per_window = window_rows.div_ceil(run_rows);
    let nulls = Gatherer::nulls(table, columns);
    for window in runs.chunks(per_window) {
        let clock = Instant::now();
        let window_rows: u64 = window.iter().map(|(_, run)| run.len() as u64).sum();
        limit.check("the sorted result", bytes * window_rows / rows)?;
        let batches = try_per_part(
            pool,
            window.len(),
            |i| window[i].0,
            |i| {
                let mut gatherer = Gatherer::new(table, columns, &nulls);
                let arrays = gatherer.gather(window[i].1.iter().map(|t| Some(t.payload)))?;
                RecordBatch::try_new(schema.clone(), arrays)
                    .map_err(|e| FrameError::arrow("assembling the sort's result", e))
            },
        )?;
        let parts = batches
            .into_iter()
            .zip(window)
            .map(|(batch, &(worker, _))| Part { batch, worker })
            .collect();
        let piece = Table::new("the sorted result", schema.clone(), parts)?;
        times.gather += clock.elapsed().as_secs_f64();
        let clock = Instant::now();
        deliver(piece)?;
        times.deliver += clock.elapsed().as_secs_f64();
    }
    Ok(times)
}
