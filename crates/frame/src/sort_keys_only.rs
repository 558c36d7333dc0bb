//! The sort of a single integer-like column that is also the only column
//! of the result (`sort --key ts --columns ts`, the shape of "sort 64M
//! int64"): the values become order-preserving 64-bit words, are sorted
//! alone (8 bytes a row, not a 16-byte (code, row) tuple), and come back
//! as values, handed on a window of rows at a time. No row references and
//! no gather. The words are written straight into the sort's per-worker
//! chunks, and the values are rebuilt from the sorted words, so the input
//! column is not needed once they are made: a caller that owns the table
//! drops it before sorting. Neither the input nor the whole result is held
//! beside the sorted keys.
//!
//! It applies to 32- and 64-bit integers, dates, times, timestamps and
//! durations without nulls; everything else takes the general sort.

use std::sync::Arc;

use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, UInt64Array};
use arrow_schema::{DataType, Field, Schema};

use numakit_ops::sort::{sort_keys_owned, KeyChunk, KeyColumn, SortOptions};
use numakit_ops::timing::{PhaseTime, PhaseTimer, Progress};
use numakit_pool::Pool;

use crate::error::{FrameError, Result};
use crate::keys::decode::retyped;
use crate::keys::numbers::{physical, Physical};
use crate::keys::SortKey;
use crate::par::try_per_part;
use crate::table::{Part, Table};

const SIGN: u64 = 1 << 63;

/// How the column's words are read back.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Width {
    Signed64,
    Signed32,
    Unsigned64,
}

/// The order-preserving words of every row, already in the sort's
/// per-worker chunks (each worker's parts one after another, in part
/// order), so that they are made once and never copied before sorting.
pub(crate) struct Words {
    chunks: Vec<KeyChunk>,
    /// Part p's words: `chunks[spans[p].0][spans[p].1..spans[p].2]`.
    spans: Vec<(usize, usize, usize)>,
}

impl Words {
    /// The words of part `p`.
    pub(crate) fn part(&self, p: usize) -> &[u64] {
        let (chunk, from, to) = self.spans[p];
        &self.chunks[chunk].keys[from..to]
    }
}

/// The order-preserving words of every part, if the key qualifies.
pub(crate) fn words(pool: &Pool, table: &Table, key: &SortKey) -> Result<Option<Words>> {
    let parts = table.parts();
    let column = key.column;
    let fits = parts.iter().all(|p| {
        let a = p.batch.column(column);
        a.null_count() == 0 && physical(a.as_ref()).is_some()
    });
    if !fits {
        return Ok(None);
    }
    let flip = if key.descending { u64::MAX } else { 0 };
    let workers = pool.workers().max(1);
    let mut spans = vec![(0, 0, 0); parts.len()];
    let mut lens = vec![0usize; workers];
    for (p, part) in parts.iter().enumerate() {
        let w = part.worker % workers;
        let rows = part.batch.num_rows();
        spans[p] = (w, lens[w], lens[w] + rows);
        lens[w] += rows;
    }
    // Room for an even share, so that the sort merges into these chunks
    // whichever worker receives more rows than it coded.
    let share = table.rows().div_ceil(workers);
    let chunks = pool.broadcast(|ctx| -> Result<KeyChunk> {
        let len = lens[ctx.index];
        let mut chunk = KeyChunk::alloc(pool, ctx.index, ctx.node, len.max(share))?;
        chunk
            .keys
            .set_len(len)
            .map_err(numakit_ops::OpsError::from)?;
        for (p, &(w, from, to)) in spans.iter().enumerate() {
            if w == ctx.index {
                code_into(
                    parts[p].batch.column(column).as_ref(),
                    flip,
                    &mut chunk.keys[from..to],
                )?;
            }
        }
        Ok(chunk)
    })?;
    let chunks = chunks.into_iter().collect::<Result<Vec<_>>>()?;
    Ok(Some(Words { chunks, spans }))
}

/// Writes the order-preserving words of `array`'s values into `out`.
fn code_into(array: &dyn arrow_array::Array, flip: u64, out: &mut [u64]) -> Result<()> {
    match physical(array) {
        Some(Physical::I64(v)) => out
            .iter_mut()
            .zip(v.iter())
            .for_each(|(o, &x)| *o = (x as u64 ^ SIGN) ^ flip),
        Some(Physical::I32(v)) => out
            .iter_mut()
            .zip(v.iter())
            .for_each(|(o, &x)| *o = (i64::from(x) as u64 ^ SIGN) ^ flip),
        Some(Physical::U64(v)) => out
            .iter_mut()
            .zip(v.iter())
            .for_each(|(o, &x)| *o = x ^ flip),
        None => return Err(FrameError::InvalidRequest("a sort key changed type".into())),
    }
    Ok(())
}

fn width(data_type: &DataType) -> Result<Width> {
    let empty = arrow_array::new_empty_array(data_type);
    Ok(match physical(empty.as_ref()) {
        Some(Physical::I64(_)) => Width::Signed64,
        Some(Physical::I32(_)) => Width::Signed32,
        Some(Physical::U64(_)) => Width::Unsigned64,
        None => return Err(FrameError::InvalidRequest("not an integer sort key".into())),
    })
}

/// Rows turned back into values and handed on at a time, per worker.
const WINDOW_ROWS_PER_WORKER: usize = 1 << 20;

/// Sorts the words (the sort's own chunks) and hands the sorted column,
/// of `field`'s name and type, to `deliver` a window at a time (about
/// `window_rows` rows; `None`: about a million per worker); the phases,
/// and the seconds spent handing on.
pub(crate) fn sort(
    pool: &Pool,
    (field, descending): (Field, bool),
    words: Words,
    (window_rows, progress): (Option<usize>, &dyn Progress),
    deliver: &mut dyn FnMut(Table) -> Result<()>,
) -> Result<(Vec<PhaseTime>, f64)> {
    let workers = pool.workers().max(1);
    let column = KeyColumn::from_chunks(words.chunks);
    let sorted = sort_keys_owned(pool, column, &SortOptions::default(), progress)?;
    let mut phases = sorted.phases.clone();
    let mut timer = PhaseTimer::new(progress);
    timer.start("values");
    let sorted = sorted
        .sorted
        .ok_or_else(|| FrameError::InvalidRequest("the sort returned nothing".into()))?;
    let data_type = field.data_type().clone();
    let schema = Arc::new(Schema::new(vec![field]));
    let kind = width(&data_type)?;
    let flip = if descending { u64::MAX } else { 0 };
    let window_rows = window_rows
        .unwrap_or(WINDOW_ROWS_PER_WORKER * workers)
        .max(1);
    let run_rows = window_rows.div_ceil(workers);
    let runs: Vec<&[u64]> = sorted
        .chunks()
        .iter()
        .flat_map(|c| c.keys.chunks(run_rows))
        .collect();
    let values = |keys: &[u64]| -> Result<RecordBatch> {
        let array: ArrayRef = match kind {
            Width::Signed64 => Arc::new(Int64Array::from_iter_values(
                keys.iter().map(|&w| ((w ^ flip) ^ SIGN) as i64),
            )),
            Width::Signed32 => Arc::new(Int32Array::from_iter_values(
                keys.iter().map(|&w| ((w ^ flip) ^ SIGN) as i64 as i32),
            )),
            Width::Unsigned64 => Arc::new(UInt64Array::from_iter_values(
                keys.iter().map(|&w| w ^ flip),
            )),
        };
        let array = if array.data_type() == &data_type {
            array
        } else {
            retyped(array, &data_type)?
        };
        RecordBatch::try_new(schema.clone(), vec![array])
            .map_err(|e| FrameError::arrow("assembling the sort's result", e))
    };
    let mut delivering = 0.0;
    if runs.is_empty() {
        deliver(Table::new("the sorted result", schema.clone(), Vec::new())?)?;
    }
    for window in runs.chunks(workers) {
        let batches = try_per_part(pool, window.len(), |i| i, |i| values(window[i]))?;
        let out = batches
            .into_iter()
            .enumerate()
            .map(|(worker, batch)| Part { batch, worker })
            .collect();
        let piece = Table::new("the sorted result", schema.clone(), out)?;
        let clock = std::time::Instant::now();
        deliver(piece)?;
        delivering += clock.elapsed().as_secs_f64();
    }
    phases.extend(timer.finish());
    if let Some(values) = phases.last_mut() {
        values.seconds -= delivering;
    }
    phases.push(PhaseTime {
        name: "deliver result".into(),
        seconds: delivering,
    });
    Ok((phases, delivering))
}
