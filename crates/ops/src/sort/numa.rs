//! The NUMA-aware sort (the lecture's "Sorting and NUMA"): every step
//! reads or writes node-local memory except the exchange, which moves
//! each piece across the interconnect exactly once, on the shuffle's
//! schedule.
//!
//! 1. "local sort": each worker radix-sorts its own chunk into a run on
//!    its node;
//! 2. "splitters": keys sampled from all runs, refined to exact ranks,
//!    give P-1 splitters; each worker binary-searches them in its run and
//!    the boundaries are cut so that worker i owns key range i and gets
//!    an even share of the elements (see `splitters`);
//! 3. "exchange": through [`numakit_shuffle::exchange()`], consumer i copies
//!    piece i of every producer's run into one buffer on its own node;
//! 4. "merge": each worker merges the sorted pieces it received into its
//!    output run on its node.
//!
//! Fresh memory is expensive (the kernel zeroes every new page, and on
//! virtual machines the host may have to back it first), so each worker
//! works in two buffers of its chunk's size, both from the buffer cache
//! ([`crate::recycle`], so that a repeated sort maps nothing new): its run
//! and a spare. The local sort writes the run with the spare as scratch,
//! the exchange fills the spare, and the merge writes into the run's
//! buffer once every consumer has copied its piece out; the spare then
//! goes back to the cache (the output's buffers go back when the caller
//! drops the result). Sorting an owned input uses the input chunk as the
//! run, so that only the spare is taken.
//!
//! Generic over the element ([`Keyed`]); the callers in `sort` wrap the
//! runs as a relation or a key column. This module does not check its
//! result (the tests do).

use numakit_placement::NodeBuffer;
use numakit_pool::Pool;
use numakit_topology::NodeId;

use super::lsd::{radix_sort, radix_sort_into};
use super::merge::merge_into;
use super::splitters::{choose, cut, even_targets, locate, select};
use super::{Keyed, SortOptions};
use crate::error::{OpsError, Result};
use crate::par::per_worker_mut;
use crate::recycle::{self, Paging};
use crate::timing::PhaseTimer;

/// New buffers are mapped on base pages: a fresh process's first sort of
/// 64M keys maps 1 GiB, which took 0.5-0.8 s on base pages and 1.2-1.9 s
/// on huge pages on this VM (see [`Paging`]); reused buffers sorted
/// equally fast on either (0.33-0.39 s).
const PAGING: Paging = Paging::Base;

/// One worker's sorted output.
pub struct SortedRun<T> {
    /// The node the run's memory is on (its worker's node).
    pub node: NodeId,
    /// Index of the worker that merged the run; runs come in worker order.
    pub worker: usize,
    /// The elements, sorted by key.
    pub data: NodeBuffer<T>,
}

/// Sorts `inputs` (chunk w read by worker w) on `pool`; output run w
/// lives on worker w's node and holds keys no larger than run w+1's.
/// Outputs are as long as the inputs when those are even (sizes differ
/// by at most one, larger first), and even otherwise.
pub fn sort_runs<T: Keyed>(
    pool: &Pool,
    inputs: &[&[T]],
    options: &SortOptions,
    timer: &mut PhaseTimer<'_>,
) -> Result<Vec<SortedRun<T>>> {
    check_workers(pool, inputs.len())?;
    timer.start("local sort");
    let share = even_share(inputs.iter().map(|i| i.len()), pool.workers());
    let runs = pool.broadcast(|ctx| -> Result<LocalRun<T>> {
        let input = inputs[ctx.index];
        let mut run = with_room(pool, ctx.node, input.len(), share)?;
        let mut spare = with_room(pool, ctx.node, input.len(), share)?;
        radix_sort_into(input, &mut run, &mut spare);
        Ok(LocalRun { run, spare })
    })?;
    let runs = runs.into_iter().collect::<Result<Vec<_>>>()?;
    exchange_and_merge(pool, runs, options, timer)
}

/// [`sort_runs`] of chunks it may sort in place (chunk w on worker w's
/// node), which become the output buffers when sizes allow: a chunk whose
/// capacity holds an even share of all the rows is always reused, whatever
/// its length.
pub fn sort_owned_runs<T: Keyed>(
    pool: &Pool,
    inputs: Vec<NodeBuffer<T>>,
    options: &SortOptions,
    timer: &mut PhaseTimer<'_>,
) -> Result<Vec<SortedRun<T>>> {
    check_workers(pool, inputs.len())?;
    timer.start("local sort");
    let share = even_share(inputs.iter().map(|i| i.len()), pool.workers());
    let mut slots: Vec<Option<NodeBuffer<T>>> = inputs.into_iter().map(Some).collect();
    let runs = per_worker_mut(pool, &mut slots, |ctx, slot| -> Result<LocalRun<T>> {
        let mut run = slot
            .take()
            .ok_or_else(|| OpsError::InvalidArgument("missing chunk".into()))?;
        let mut spare = with_room(pool, ctx.node, run.len(), share.max(run.capacity()))?;
        radix_sort(&mut run, &mut spare);
        Ok(LocalRun { run, spare })
    })?;
    let runs = runs.into_iter().collect::<Result<Vec<_>>>()?;
    exchange_and_merge(pool, runs, options, timer)
}

/// The rows each worker holds after the exchange: the total, evenly
/// divided (rounded up).
fn even_share(lens: impl Iterator<Item = usize>, workers: usize) -> usize {
    lens.sum::<usize>().div_ceil(workers.max(1))
}

/// A buffer of `len` elements on `node` with room for `room`: the
/// exchange's inbox and the merge's output then reuse it even when a
/// worker receives more rows than it sorted. Room that is never written
/// is address space, not memory.
fn with_room<T: Keyed>(
    pool: &Pool,
    node: NodeId,
    len: usize,
    room: usize,
) -> Result<NodeBuffer<T>> {
    let mut buffer = recycle::take_as(pool, node, len.max(room), PAGING)?;
    buffer.set_len(len)?;
    Ok(buffer)
}

fn check_workers(pool: &Pool, chunks: usize) -> Result<()> {
    if chunks != pool.workers() {
        return Err(OpsError::WorkerMismatch {
            expected: chunks,
            actual: pool.workers(),
        });
    }
    Ok(())
}

/// Steps 2 to 4 on the sorted runs.
fn exchange_and_merge<T: Keyed>(
    pool: &Pool,
    runs: Vec<LocalRun<T>>,
    options: &SortOptions,
    timer: &mut PhaseTimer<'_>,
) -> Result<Vec<SortedRun<T>>> {
    timer.start("splitters");
    let bounds = range_bounds(pool, &runs)?;
    timer.start("exchange");
    let inboxes = exchange_pieces(pool, options, runs, &bounds)?;
    timer.start("merge");
    let merged = merge_pieces(pool, inboxes)?;
    timer.stop();
    Ok(merged)
}

/// A worker's sorted run and a spare buffer of the same size.
struct LocalRun<T> {
    run: NodeBuffer<T>,
    spare: NodeBuffer<T>,
}

/// Step 2: `bounds[p]` = the piece boundaries in producer p's run.
fn range_bounds<T: Keyed>(pool: &Pool, runs: &[LocalRun<T>]) -> Result<Vec<Vec<usize>>> {
    let slices: Vec<&[T]> = runs.iter().map(|r| &r.run[..]).collect();
    let lens: Vec<usize> = slices.iter().map(|r| r.len()).collect();
    let targets = even_targets(lens.iter().sum(), pool.workers());
    let guesses = choose(&slices, &targets);
    // Worker i refines splitter i, then every worker locates them all.
    let refined = pool.broadcast(|ctx| {
        let i = ctx.index;
        targets.get(i).map(|&t| select(&slices, t, guesses[i]))
    })?;
    let splitters: Vec<u64> = refined.into_iter().flatten().collect();
    let located = pool.broadcast(|ctx| locate(slices[ctx.index], &splitters))?;
    Ok(cut(&located, &lens, &targets))
}

/// What a consumer received, and where it may merge it to.
struct Inbox<T> {
    /// The pieces, one after another in producer order (None when the
    /// consumer keeps its own run whole).
    buffer: Option<NodeBuffer<T>>,
    /// `starts[p]..starts[p + 1]`: producer p's piece in `buffer`.
    starts: Vec<usize>,
    /// The consumer's own run buffer: its output when it keeps its run
    /// whole, else free memory for the merge (after the exchange).
    run: Option<NodeBuffer<T>>,
}

/// Step 3: consumer c copies piece c of every run into its spare buffer
/// (on its node), in the exchange's schedule.
fn exchange_pieces<T: Keyed>(
    pool: &Pool,
    options: &SortOptions,
    runs: Vec<LocalRun<T>>,
    bounds: &[Vec<usize>],
) -> Result<Vec<Inbox<T>>> {
    let mut inboxes = Vec::with_capacity(runs.len());
    let mut sorted = Vec::with_capacity(runs.len());
    for (c, (local, ctx)) in runs.into_iter().zip(pool.worker_contexts()).enumerate() {
        let mut starts = vec![0usize];
        for b in bounds {
            starts.push(starts[starts.len() - 1] + b[c + 1] - b[c]);
        }
        let total = starts[starts.len() - 1];
        let own_piece = bounds[c][c + 1] - bounds[c][c];
        if own_piece == total && total == local.run.len() {
            // Its whole run stays: nothing to receive.
            recycle::give_back(pool, ctx.node, local.spare);
            inboxes.push(Inbox {
                buffer: None,
                starts,
                run: Some(local.run),
            });
            sorted.push(None);
        } else {
            let buffer = recycle::fit(pool, ctx.node, local.spare, total, PAGING)?;
            inboxes.push(Inbox {
                buffer: Some(buffer),
                starts,
                run: None,
            });
            sorted.push(Some(local.run));
        }
    }
    let slices: Vec<&[T]> = sorted.iter().map(|r| r.as_deref().unwrap_or(&[])).collect();
    let (mut inboxes, _report) =
        numakit_shuffle::exchange(pool, &options.exchange, inboxes, |ctx, inbox, visit| {
            let (c, p) = (ctx.index, visit.producer);
            let (from, to) = (bounds[p][c], bounds[p][c + 1]);
            if let (Some(buffer), true) = (inbox.buffer.as_mut(), to > from) {
                buffer[inbox.starts[p]..inbox.starts[p + 1]].copy_from_slice(&slices[p][from..to]);
            }
        })?;
    for (inbox, run) in inboxes.iter_mut().zip(sorted) {
        if run.is_some() {
            inbox.run = run;
        }
    }
    Ok(inboxes)
}

/// Step 4: every worker merges its pieces into its output run.
fn merge_pieces<T: Keyed>(pool: &Pool, mut inboxes: Vec<Inbox<T>>) -> Result<Vec<SortedRun<T>>> {
    let merged = per_worker_mut(pool, &mut inboxes, |ctx, inbox| -> Result<SortedRun<T>> {
        let data = match (inbox.buffer.take(), inbox.run.take()) {
            (None, Some(run)) => run,
            (None, None) => recycle::take_as(pool, ctx.node, 0, PAGING)?,
            (Some(buffer), run) => merge_buffer(pool, ctx.node, buffer, &inbox.starts, run)?,
        };
        Ok(SortedRun {
            node: ctx.node,
            worker: ctx.index,
            data,
        })
    })?;
    merged.into_iter().collect()
}

/// The merge of the pieces of `buffer` (bounded by `starts`) into
/// `target` (resized, or another buffer, if its size differs); `buffer`
/// itself when it holds a single piece. The buffer not returned goes back
/// to the cache.
fn merge_buffer<T: Keyed>(
    pool: &Pool,
    node: NodeId,
    buffer: NodeBuffer<T>,
    starts: &[usize],
    target: Option<NodeBuffer<T>>,
) -> Result<NodeBuffer<T>> {
    if starts.windows(2).filter(|w| w[1] > w[0]).count() <= 1 {
        if let Some(unused) = target {
            recycle::give_back(pool, node, unused);
        }
        return Ok(buffer);
    }
    let mut out = match target {
        Some(target) => recycle::fit(pool, node, target, buffer.len(), PAGING)?,
        None => recycle::take_as(pool, node, buffer.len(), PAGING)?,
    };
    let pieces: Vec<&[T]> = starts.windows(2).map(|w| &buffer[w[0]..w[1]]).collect();
    merge_into(&pieces, &mut out);
    recycle::give_back(pool, node, buffer);
    Ok(out)
}
