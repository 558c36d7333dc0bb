//! Loading a file onto the pool: the workers take the file's units one at
//! a time and decode them, so each part of the table is first touched, and
//! kept, on the node of the worker that decoded it; the parts keep the
//! file's row order.
//!
//! Only the projected columns are decoded, straight from the file (no
//! whole-file buffer). The memory limit is checked against the decoded
//! size the file announces before anything is read. It does not convert
//! types: the table holds what the file holds.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

use numakit_io::{Projection, Source};
use numakit_pool::Pool;
use serde::Serialize;

use crate::error::{FrameError, Result};
use crate::memory::MemoryLimit;
use crate::table::{Part, Table};

/// What loading a file did.
#[derive(Clone, Debug, Serialize)]
pub struct LoadStats {
    /// The file's path, as given.
    pub path: String,
    /// The file's format: "csv", "parquet" or "arrow".
    pub format: &'static str,
    /// Rows loaded (all of the file's).
    pub rows: u64,
    /// Units decoded (row groups, CSV ranges, IPC batches).
    pub units: usize,
    /// Bytes of the decoded columns in memory.
    pub bytes: u64,
    /// Wall-clock time of the load, checking the limit included, in seconds.
    pub seconds: f64,
}

/// Decodes the projected columns of `source` on `pool`.
pub fn load(
    pool: &Pool,
    source: &Source,
    projection: &Projection,
    limit: &MemoryLimit,
) -> Result<(Table, LoadStats)> {
    let started = Instant::now();
    let name = source.path().display().to_string();
    limit.check(
        &format!("reading {name}"),
        source.decoded_bytes_hint(projection),
    )?;
    let parts = decode_units(pool, source, projection, 0..source.units())?;
    let table = Table::new(name.clone(), projection.schema().clone(), parts)?;
    let stats = LoadStats {
        path: name,
        format: source.format().name(),
        rows: table.rows() as u64,
        units: source.units(),
        bytes: table.memory_bytes(),
        seconds: started.elapsed().as_secs_f64(),
    };
    Ok((table, stats))
}

/// Decodes `units` of `source` on `pool` (the workers taking them one at a
/// time) into a table of their rows, in the file's order: a piece of a
/// file that is read a piece at a time.
pub(crate) fn load_units(
    pool: &Pool,
    source: &Source,
    projection: &Projection,
    units: Range<usize>,
) -> Result<Table> {
    let parts = decode_units(pool, source, projection, units)?;
    let name = source.path().display().to_string();
    Table::new(name, projection.schema().clone(), parts)
}

/// The parts of `units`, in order, each on the worker that decoded it.
fn decode_units(
    pool: &Pool,
    source: &Source,
    projection: &Projection,
    units: Range<usize>,
) -> Result<Vec<Part>> {
    let next = AtomicUsize::new(units.start);
    let failed = AtomicBool::new(false);
    let decoded = pool.broadcast(|ctx| {
        let mut mine = Vec::new();
        while !failed.load(Ordering::Relaxed) {
            let unit = next.fetch_add(1, Ordering::Relaxed);
            if unit >= units.end {
                break;
            }
            match source.read_unit(unit, projection) {
                Ok(batches) => mine.push((unit, ctx.index, batches)),
                Err(error) => {
                    failed.store(true, Ordering::Relaxed);
                    return Err(FrameError::from(error));
                }
            }
        }
        Ok(mine)
    })?;
    let mut all = Vec::with_capacity(units.len());
    for worker in decoded {
        all.extend(worker?);
    }
    all.sort_unstable_by_key(|(unit, _, _)| *unit);
    Ok(all
        .into_iter()
        .flat_map(|(_, worker, batches)| {
            batches
                .into_iter()
                .filter(|b| b.num_rows() > 0)
                .map(move |batch| Part { batch, worker })
        })
        .collect())
}
