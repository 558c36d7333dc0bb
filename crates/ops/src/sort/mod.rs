//! Sorting by key, NUMA-aware: each worker sorts its local chunk (radix
//! sort, [`lsd`]), sampled splitters refined to exact ranks cut the key
//! range into one range per worker ([`splitters`]), the ranges are
//! exchanged through the shuffle, and each worker merges the sorted runs
//! it received ([`merge`]); the pipeline is in [`numa`]. The result is one
//! sorted run per worker, in key order across workers, with exactly as
//! many elements as the worker's input chunk when those are even.
//!
//! Two element types share the code through [`Keyed`]: [`Tuple`]s (key
//! and payload, [`sort`]) and plain `u64` keys ([`sort_keys`], on a
//! [`KeyColumn`]), the shape of "sort 64M int64". Signed keys are mapped
//! to unsigned ones in the same order by [`i64_to_ordered_u64`]. The
//! `*_owned` variants sort their input in place, needing half as much
//! other memory. All working memory comes from, and goes back to, the
//! buffer cache ([`crate::recycle`]), and so do the buffers of a sorted
//! result when it is dropped: a process that sorts again (the second of
//! two runs, say) reuses placed, already faulted-in memory.
//!
//! This module defines the vocabulary and dispatches; the steps live in
//! submodules. It does not sort by payload: the order of equal keys is
//! unspecified.

pub mod keys;
pub mod lsd;
pub mod merge;
pub mod numa;
mod scatter;
pub mod splitters;
mod stream;

use bytemuck::Pod;
use serde::Serialize;

use numakit_pool::Pool;
use numakit_shuffle::Exchange;

use crate::error::Result;
use crate::relation::{Chunk, Relation};
use crate::timing::{PhaseTime, PhaseTimer, Progress};
use crate::tuple::Tuple;

pub use keys::{KeyChunk, KeyColumn};

/// An element the sort can order: plain old data with a 64-bit key.
pub trait Keyed: Pod + Send + Sync {
    /// The key the element is sorted by (unsigned order).
    fn key(&self) -> u64;
}

impl Keyed for u64 {
    #[inline(always)]
    fn key(&self) -> u64 {
        *self
    }
}

impl Keyed for Tuple {
    #[inline(always)]
    fn key(&self) -> u64 {
        self.key
    }
}

/// Sorts `tuples` by key (payloads follow their keys; order among equal
/// keys is unspecified) with the radix sort. Single-threaded; the
/// NUMA-aware sort runs one per worker.
pub fn sort_local(tuples: &mut [Tuple]) {
    lsd::sort(tuples);
}

/// Sorts plain keys with the radix sort. Single-threaded.
pub fn sort_keys_local(keys: &mut [u64]) {
    lsd::sort(keys);
}

/// Maps a float to an unsigned key in SQL's total order: -0.0 equal to
/// 0.0, every NaN one value above +infinity.
#[inline(always)]
pub fn f64_to_ordered_u64(value: f64) -> u64 {
    let value = if value == 0.0 {
        0.0
    } else if value.is_nan() {
        f64::NAN
    } else {
        value
    };
    let bits = value.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

/// Maps a signed key to an unsigned one with the same order (flips the
/// sign bit).
pub const fn i64_to_ordered_u64(value: i64) -> u64 {
    (value as u64) ^ (1 << 63)
}

/// The inverse of [`i64_to_ordered_u64`].
pub const fn ordered_u64_to_i64(key: u64) -> i64 {
    (key ^ (1 << 63)) as i64
}

/// How the NUMA-aware sort runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct SortOptions {
    /// The schedule of the exchange of key ranges (default: the
    /// coordinated ring, tight).
    pub exchange: Exchange,
}

/// The outcome of a sort.
#[derive(Debug, Default, Serialize)]
pub struct SortResult {
    /// The sorted relation: chunk w holds keys no larger than chunk w+1's.
    #[serde(skip)]
    pub sorted: Option<Relation>,
    /// Time of each phase ("local sort", "splitters", "exchange",
    /// "merge"), in order.
    pub phases: Vec<PhaseTime>,
}

/// The outcome of a keys-only sort.
#[derive(Debug, Default, Serialize)]
pub struct KeySortResult {
    /// The sorted keys: chunk w holds keys no larger than chunk w+1's.
    #[serde(skip)]
    pub sorted: Option<KeyColumn>,
    /// Time of each phase, as in [`SortResult::phases`].
    pub phases: Vec<PhaseTime>,
}

/// Sorts `input` on `pool` with the default options.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
///
/// use numakit_ops::sort::sort;
/// use numakit_ops::timing::Silent;
/// use numakit_ops::{Relation, Tuple};
/// use numakit_placement::PlacementMode;
/// use numakit_pool::PoolBuilder;
///
/// let topology = Arc::new(numakit_topology::discover()?);
/// let pool = PoolBuilder::new(topology)
///     .threads(2)
///     .placement(PlacementMode::BestEffort)
///     .build()?;
/// let input = Relation::from_tuples(
///     &pool,
///     &[Tuple::new(50, 0), Tuple::new(10, 1), Tuple::new(40, 2), Tuple::new(20, 3)],
/// )?;
/// let result = sort(&pool, &input, &Silent)?;
/// let sorted = result.sorted.expect("a sort returns its output");
///
/// // Chunk after chunk, the keys ascend; payloads follow their keys.
/// let tuples = sorted.to_vec();
/// assert_eq!(tuples.iter().map(|t| t.key).collect::<Vec<_>>(), [10, 20, 40, 50]);
/// assert_eq!(tuples[0], Tuple::new(10, 1));
/// let phases: Vec<&str> = result.phases.iter().map(|p| p.name.as_str()).collect();
/// assert_eq!(phases, ["local sort", "splitters", "exchange", "merge"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn sort(pool: &Pool, input: &Relation, progress: &dyn Progress) -> Result<SortResult> {
    sort_with(pool, input, &SortOptions::default(), progress)
}

/// Sorts `input` on `pool`: phases "local sort", "splitters", "exchange",
/// "merge". Output chunks are as long as the input's when those are even
/// (as `Relation::from_*` makes them), and even otherwise.
pub fn sort_with(
    pool: &Pool,
    input: &Relation,
    options: &SortOptions,
    progress: &dyn Progress,
) -> Result<SortResult> {
    input.check_pool(pool)?;
    let runs: Vec<&[Tuple]> = input.chunks().iter().map(|c| &c.tuples[..]).collect();
    let mut timer = PhaseTimer::new(progress);
    let sorted = numa::sort_runs(pool, &runs, options, &mut timer)?;
    Ok(SortResult {
        sorted: Some(relation_of(pool, sorted)),
        phases: timer.finish(),
    })
}

/// Like [`sort_with`], but sorts `input` in place, which saves allocating
/// (and the kernel zeroing) a copy of the data.
pub fn sort_owned(
    pool: &Pool,
    input: Relation,
    options: &SortOptions,
    progress: &dyn Progress,
) -> Result<SortResult> {
    input.check_pool(pool)?;
    let chunks = input.into_chunks().into_iter().map(|c| c.tuples).collect();
    let mut timer = PhaseTimer::new(progress);
    let sorted = numa::sort_owned_runs(pool, chunks, options, &mut timer)?;
    Ok(SortResult {
        sorted: Some(relation_of(pool, sorted)),
        phases: timer.finish(),
    })
}

fn relation_of(pool: &Pool, runs: Vec<numa::SortedRun<Tuple>>) -> Relation {
    let chunks = runs
        .into_iter()
        .map(|run| Chunk {
            node: run.node,
            worker: run.worker,
            tuples: run.data,
        })
        .collect();
    Relation::from_recycled_chunks(chunks, crate::recycle::Recycler::of(pool))
}

/// Sorts the keys of `input` on `pool` with the default options.
pub fn sort_keys(pool: &Pool, input: &KeyColumn, progress: &dyn Progress) -> Result<KeySortResult> {
    sort_keys_with(pool, input, &SortOptions::default(), progress)
}

/// Sorts the keys of `input` on `pool`, with the phases of [`sort_with`].
pub fn sort_keys_with(
    pool: &Pool,
    input: &KeyColumn,
    options: &SortOptions,
    progress: &dyn Progress,
) -> Result<KeySortResult> {
    input.check_pool(pool)?;
    let runs: Vec<&[u64]> = input.chunks().iter().map(|c| &c.keys[..]).collect();
    let mut timer = PhaseTimer::new(progress);
    let sorted = numa::sort_runs(pool, &runs, options, &mut timer)?;
    Ok(KeySortResult {
        sorted: Some(column_of(pool, sorted)),
        phases: timer.finish(),
    })
}

/// Like [`sort_keys_with`], but sorts `input` in place (see
/// [`sort_owned`]): the fastest way to sort a column that is not needed
/// unsorted afterwards.
pub fn sort_keys_owned(
    pool: &Pool,
    input: KeyColumn,
    options: &SortOptions,
    progress: &dyn Progress,
) -> Result<KeySortResult> {
    input.check_pool(pool)?;
    let chunks = input.into_chunks().into_iter().map(|c| c.keys).collect();
    let mut timer = PhaseTimer::new(progress);
    let sorted = numa::sort_owned_runs(pool, chunks, options, &mut timer)?;
    Ok(KeySortResult {
        sorted: Some(column_of(pool, sorted)),
        phases: timer.finish(),
    })
}

fn column_of(pool: &Pool, runs: Vec<numa::SortedRun<u64>>) -> KeyColumn {
    let chunks = runs
        .into_iter()
        .map(|run| KeyChunk {
            node: run.node,
            worker: run.worker,
            keys: run.data,
        })
        .collect();
    KeyColumn::from_recycled_chunks(chunks, crate::recycle::Recycler::of(pool))
}

#[cfg(test)]
mod tests;
