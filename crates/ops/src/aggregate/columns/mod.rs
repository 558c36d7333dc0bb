//! Group-by over any number of value columns in one pass: COUNT(*) and,
//! per aggregate, COUNT, SUM, MIN or MAX of a column of integers (64 or
//! 128 bits) or floats, nulls skipped.
//!
//! The rows come as *segments* (one per table part, worked on by the
//! worker whose node holds it): each row's group code (a 64-bit key code,
//! see the table layer), the rows without a key (null keys, one group of
//! their own) and the value columns with their validity bitmaps. Every
//! worker aggregates its own segments into its own groups, a batch of rows
//! at a time: first the group numbers of the batch ([`index`]), then one
//! tight loop per aggregate ([`state`]). The workers' groups then meet at
//! their owners: with a direct index (small codes) each worker merges an
//! even share of the code range, with a hash index each merges the codes
//! whose hash falls to it. No row moves; this is [`AggMethod::Local`]
//! generalised to many columns.
//!
//! This module does not read Arrow arrays (the caller hands it slices) and
//! does not turn states into result columns.
//!
//! [`AggMethod::Local`]: crate::aggregate::AggMethod::Local

pub mod index;
pub mod radix;
pub mod state;

use serde::Serialize;

use numakit_pool::Pool;

use crate::error::{OpsError, Result};
use crate::hash::hash64;
use crate::par::even_ranges;
use crate::timing::{PhaseTime, PhaseTimer, Progress};

pub use index::GroupIndex;
pub use radix::{aggregate_radix, in_partition_order, RadixShared, RadixWorker};
pub use state::{State, Tally};

/// Rows whose group numbers are found before the aggregates are updated.
const BATCH_ROWS: usize = 1024;
/// How far ahead of the row being looked up the index is asked to bring
/// a row's slot into the cache.
const PREFETCH_ROWS: usize = 16;
/// A direct index is used while one worker's groups take at most this.
const DIRECT_BYTES: usize = 64 << 20;

/// The values of one column of a segment.
#[derive(Clone, Copy, Debug)]
pub enum Values<'a> {
    /// 64-bit integers, one per row.
    I64(&'a [i64]),
    /// 128-bit integers (decimals by their unscaled value), one per row.
    I128(&'a [i128]),
    /// Floats, one per row.
    F64(&'a [f64]),
    /// No values (COUNT needs only the validity).
    None,
}

impl<'a> Values<'a> {
    /// Rows `start..end` (a column without values stays without).
    pub fn slice(&self, start: usize, end: usize) -> Values<'a> {
        match *self {
            Values::I64(v) => Values::I64(&v[start..end]),
            Values::I128(v) => Values::I128(&v[start..end]),
            Values::F64(v) => Values::F64(&v[start..end]),
            Values::None => Values::None,
        }
    }
}

/// A validity bitmap in Arrow's layout: bit `offset + i` (least
/// significant first) set when row i is valid.
#[derive(Clone, Copy, Debug)]
pub struct Validity<'a> {
    bits: &'a [u8],
    offset: usize,
}

impl<'a> Validity<'a> {
    /// The bitmap `bits` read from bit `offset` on (row 0 is bit `offset`).
    pub fn new(bits: &'a [u8], offset: usize) -> Self {
        Validity { bits, offset }
    }

    /// Whether row `i` is valid (not null); panics past the bitmap's end.
    #[inline(always)]
    pub fn get(&self, i: usize) -> bool {
        let j = self.offset + i;
        self.bits[j >> 3] & (1 << (j & 7)) != 0
    }
}

/// One value column of a segment.
#[derive(Clone, Copy, Debug)]
pub struct ValueColumn<'a> {
    /// The values, one per row of the segment (null rows hold anything).
    pub values: Values<'a>,
    /// `None`: every row is valid.
    pub valid: Option<Validity<'a>>,
}

/// An aggregate function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Func {
    /// Non-null values of the column (COUNT(col)).
    Count,
    /// Sum of the non-null values (integers exactly, beyond 64 bits).
    Sum,
    /// Smallest non-null value (floats: NaN above +infinity).
    Min,
    /// Largest non-null value (floats: NaN above +infinity).
    Max,
}

/// One aggregate: `func` of value column `column`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AggSpec {
    /// Index of the value column in every [`Segment::columns`].
    pub column: usize,
    /// The function applied to it.
    pub func: Func,
    /// Whether the column holds floats.
    pub float: bool,
}

/// A run of rows.
#[derive(Clone, Debug)]
pub struct Segment<'a> {
    /// Row i's group code (meaningless for rows in `keyless`).
    pub codes: &'a [u64],
    /// Rows without a key (sorted): the null group.
    pub keyless: &'a [u32],
    /// The value columns, each as long as `codes`; [`AggSpec::column`]
    /// indexes them.
    pub columns: Vec<ValueColumn<'a>>,
}

/// Groups and their aggregates.
#[derive(Clone, Debug, Default)]
pub struct Groups {
    /// Each group's code (`None`: the null group).
    pub codes: Vec<Option<u64>>,
    /// COUNT(*) per group.
    pub rows: Vec<u64>,
    /// One state per aggregate, indexed like `codes`.
    pub states: Vec<State>,
}

impl Groups {
    fn new(specs: &[AggSpec]) -> Self {
        Groups {
            codes: Vec::new(),
            rows: Vec::new(),
            states: specs.iter().map(|s| State::new(s.func, s.float)).collect(),
        }
    }

    fn grow(&mut self, groups: usize) {
        if self.rows.len() < groups {
            self.rows.resize(groups, 0);
            for s in &mut self.states {
                s.grow(groups);
            }
        }
    }

    /// Number of groups.
    pub fn len(&self) -> usize {
        self.codes.len()
    }

    /// Whether there are no groups.
    pub fn is_empty(&self) -> bool {
        self.codes.is_empty()
    }
}

/// Options of a columns aggregation.
#[derive(Clone, Copy, Debug, Default)]
pub struct ColumnsOptions {
    /// The largest code, when known (dense codes can be indexed directly).
    pub max_code: Option<u64>,
    /// About how many groups to expect.
    pub expected_groups: usize,
}

/// The outcome.
#[derive(Clone, Debug, Default)]
pub struct ColumnsResult {
    /// The groups, one output per worker (each group once).
    pub groups: Vec<Groups>,
    /// Whether codes were their own group numbers (else hashed).
    pub direct: bool,
    /// Time of each phase ("aggregate parts", "merge"), in order.
    pub phases: Vec<PhaseTime>,
}

fn state_bytes(spec: &AggSpec) -> usize {
    match (spec.func, spec.float) {
        (Func::Count, _) => 8,
        (_, true) => 16,
        (_, false) => 24,
    }
}

/// Aggregates `segments` (`segments[w]` on worker w) by their codes.
pub fn aggregate(
    pool: &Pool,
    segments: &[Vec<Segment<'_>>],
    specs: &[AggSpec],
    opts: &ColumnsOptions,
    progress: &dyn Progress,
) -> Result<ColumnsResult> {
    if segments.len() != pool.workers() {
        return Err(OpsError::WorkerMismatch {
            expected: segments.len(),
            actual: pool.workers(),
        });
    }
    let per_group = 8 + specs.iter().map(state_bytes).sum::<usize>();
    let direct = opts
        .max_code
        .filter(|&m| m < u32::MAX as u64 - 1 && (m as usize + 2) * per_group <= DIRECT_BYTES);
    let mut timer = PhaseTimer::new(progress);
    timer.start("aggregate parts");
    let partials = pool.broadcast(|ctx| partial(&segments[ctx.index], specs, direct, opts))?;
    let partials = partials.into_iter().collect::<Result<Vec<_>>>()?;
    timer.start("merge");
    let groups = match direct {
        Some(max) => merge_direct(pool, &partials, specs, max as usize + 2)?,
        None => merge_hashed(pool, &partials, specs)?,
    };
    Ok(ColumnsResult {
        groups,
        direct: direct.is_some(),
        phases: timer.finish(),
    })
}

/// One worker's groups: the index and the aggregates by group number.
/// Made empty, fed segment by segment ([`Partial::add`]), so a caller can
/// stream batches through it as they are decoded, then merged with the
/// other workers' ([`merge`]).
pub struct Partial {
    index: GroupIndex,
    groups: Groups,
}

impl Partial {
    /// No groups yet; `direct`: codes are at most this and index their
    /// groups directly; else a hash index sized for `expected` groups.
    pub fn new(specs: &[AggSpec], direct: Option<u64>, expected: usize) -> Self {
        let index = match direct {
            Some(max) => GroupIndex::direct(max),
            None => GroupIndex::hashed(expected.min(1 << 22)),
        };
        Partial::with_index(index, specs)
    }

    fn with_index(index: GroupIndex, specs: &[AggSpec]) -> Self {
        let mut groups = Groups::new(specs);
        groups.grow(index.groups().max(16));
        Partial { index, groups }
    }

    /// No groups yet, for one hash partition of many that live at once (a
    /// compact hash index: see [`GroupIndex::hashed_compact`]).
    pub fn for_partition(specs: &[AggSpec]) -> Self {
        Partial::with_index(GroupIndex::hashed_compact(1024), specs)
    }

    /// No groups yet, for codes numbered densely from 0 (a dictionary's):
    /// a code is its own group number, with no hashing.
    pub fn dense(specs: &[AggSpec]) -> Self {
        let mut groups = Groups::new(specs);
        groups.grow(16);
        Partial {
            index: GroupIndex::dense(),
            groups,
        }
    }

    /// Adds the rows of `segment`.
    pub fn add(&mut self, segment: &Segment<'_>, specs: &[AggSpec]) -> Result<()> {
        let mut numbers = [0u32; BATCH_ROWS];
        let mut keyless = segment.keyless.iter().peekable();
        for start in (0..segment.codes.len()).step_by(BATCH_ROWS) {
            let end = (start + BATCH_ROWS).min(segment.codes.len());
            let batch = &mut numbers[..end - start];
            let prefetching = self.index.outgrows_cache();
            if segment.keyless.is_empty() {
                let ahead = prefetching.then_some(PREFETCH_ROWS);
                self.index
                    .group_keyed(&segment.codes[start..], batch, ahead);
            } else {
                self.number_with_keyless(segment, start, batch, &mut keyless, prefetching);
            }
            if self.groups.rows.len() < self.index.groups() {
                self.groups.grow((self.index.groups() * 2).max(16));
            }
            for &g in batch.iter() {
                self.groups.rows[g as usize] += 1;
            }
            for (k, spec) in specs.iter().enumerate() {
                let column = segment.columns.get(spec.column).ok_or_else(|| {
                    OpsError::InvalidArgument(format!("aggregate {k} reads a missing column"))
                })?;
                self.groups.states[k].update(batch, column, start, k)?;
            }
        }
        Ok(())
    }

    /// Group numbers of rows `start..` (as many as `batch`) of a segment
    /// with rows that have no key, or over an index that prefetches.
    fn number_with_keyless(
        &mut self,
        segment: &Segment<'_>,
        start: usize,
        batch: &mut [u32],
        keyless: &mut std::iter::Peekable<std::slice::Iter<'_, u32>>,
        prefetching: bool,
    ) {
        for (i, number) in batch.iter_mut().enumerate() {
            if let (true, Some(&ahead)) =
                (prefetching, segment.codes.get(start + i + PREFETCH_ROWS))
            {
                self.index.prefetch(ahead);
            }
            let row = (start + i) as u32;
            let code = if keyless.peek() == Some(&&row) {
                keyless.next();
                None
            } else {
                Some(segment.codes[start + i])
            };
            *number = self.index.group(code);
        }
    }

    /// Merges group `g` of `other` (the same aggregates, codes meaning the
    /// same) into the group of its code here.
    pub fn merge_group(&mut self, other: &Partial, g: usize, specs: &[AggSpec]) -> Result<()> {
        self.merge_group_as(other.index.code(g), other, g, specs)
    }

    /// Merges group `g` of `other` (the same aggregates, its codes meaning
    /// something else) into the group of `code` here.
    pub fn merge_group_as(
        &mut self,
        code: Option<u64>,
        other: &Partial,
        g: usize,
        specs: &[AggSpec],
    ) -> Result<()> {
        let to = self.index.group(code) as usize;
        if self.groups.rows.len() <= to {
            self.groups
                .grow((to + 1).max(self.groups.rows.len() * 2).max(16));
        }
        self.groups.rows[to] += other.groups.rows[g];
        for k in 0..specs.len() {
            self.groups.states[k].merge(to, &other.groups.states[k], g, k)?;
        }
        Ok(())
    }

    /// The groups with their codes, as they are (groups without rows
    /// included): no copy of the states.
    pub fn into_groups(self) -> Groups {
        let count = self.index.groups();
        let mut groups = self.groups;
        groups.codes = self.index.into_codes();
        groups.rows.truncate(count);
        for state in &mut groups.states {
            state.truncate(count);
        }
        groups
    }

    /// Group numbers in use are below this (some may have no rows).
    pub fn groups(&self) -> usize {
        self.index.groups()
    }

    /// Rows of group `g`.
    pub fn rows(&self, g: usize) -> u64 {
        self.groups.rows.get(g).copied().unwrap_or(0)
    }

    /// The code of group `g` (`None`: the null group).
    pub fn code(&self, g: usize) -> Option<u64> {
        self.index.code(g)
    }

    /// The same groups under new codes, `code_of(g)` for group `g` (codes
    /// that were local to a worker made global); groups keep their numbers.
    pub fn recode(self, code_of: impl Fn(usize) -> Option<u64>) -> Partial {
        let groups = self.index.groups();
        let mut index = GroupIndex::hashed(groups);
        for g in 0..groups {
            let number = index.group(code_of(g));
            debug_assert_eq!(number as usize, g, "two groups under one new code");
        }
        Partial {
            index,
            groups: self.groups,
        }
    }
}

/// Every worker's partial groups merged: each group once, in the output of
/// the worker its code hashes to.
pub fn merge(pool: &Pool, partials: &[Partial], specs: &[AggSpec]) -> Result<Vec<Groups>> {
    merge_hashed(pool, partials, specs)
}

fn partial(
    segments: &[Segment<'_>],
    specs: &[AggSpec],
    direct: Option<u64>,
    opts: &ColumnsOptions,
) -> Result<Partial> {
    let mut partial = Partial::new(specs, direct, opts.expected_groups);
    for segment in segments {
        partial.add(segment, specs)?;
    }
    Ok(partial)
}

/// The worker that merges group `code`.
#[inline]
fn owner(code: Option<u64>, workers: usize) -> usize {
    match code {
        None => 0,
        Some(c) => ((u128::from(hash64(c)) * workers as u128) >> 64) as usize,
    }
}

fn merge_hashed(pool: &Pool, partials: &[Partial], specs: &[AggSpec]) -> Result<Vec<Groups>> {
    let workers = pool.workers();
    let outputs = pool.broadcast(|ctx| -> Result<Groups> {
        let expected = partials.iter().map(|p| p.index.groups()).max().unwrap_or(0) / workers;
        let mut index = GroupIndex::hashed(expected);
        let mut out = Groups::new(specs);
        for p in partials {
            for g in 0..p.index.groups() {
                let code = p.index.code(g);
                if p.groups.rows[g] == 0 || owner(code, workers) != ctx.index {
                    continue;
                }
                let to = index.group(code) as usize;
                if to == out.codes.len() {
                    out.codes.push(code);
                    out.grow(to + 1);
                }
                out.rows[to] += p.groups.rows[g];
                for (k, state) in out.states.iter_mut().enumerate() {
                    state.merge(to, &p.groups.states[k], g, k)?;
                }
            }
        }
        Ok(out)
    })?;
    outputs.into_iter().collect()
}

fn merge_direct(
    pool: &Pool,
    partials: &[Partial],
    specs: &[AggSpec],
    len: usize,
) -> Result<Vec<Groups>> {
    let ranges = even_ranges(len, pool.workers());
    let outputs = pool.broadcast(|ctx| -> Result<Groups> {
        let mut out = Groups::new(specs);
        for g in ranges[ctx.index].clone() {
            let rows: u64 = partials.iter().map(|p| p.groups.rows[g]).sum();
            if rows == 0 {
                continue;
            }
            let to = out.codes.len();
            out.codes.push(partials[0].index.code(g));
            out.grow(to + 1);
            out.rows[to] = rows;
            for p in partials {
                for (k, state) in out.states.iter_mut().enumerate() {
                    state.merge(to, &p.groups.states[k], g, k)?;
                }
            }
        }
        Ok(out)
    })?;
    outputs.into_iter().collect()
}

#[cfg(test)]
mod tests;
