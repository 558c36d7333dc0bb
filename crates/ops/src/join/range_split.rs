//! Range partitioning of MPSM's private input: splitters from a sample of
//! keys cut the key space into one range per worker, and every worker
//! scatters its chunk into the ranges' buffers, range i on worker i's node.
//!
//! Skew: a key that several splitters equal (a heavy key) is not given to
//! one range; its tuples are dealt over all the ranges that border on it,
//! by position, so ranges stay balanced even when one key dominates. This
//! is sound for a join because each R tuple still goes to exactly one
//! range, and the range's owner merges it with every S tuple of its key.
//!
//! This module partitions by key ranges; it does not sort or join.

use numakit_pool::Pool;

use crate::error::Result;
use crate::par::per_worker_mut;
use crate::relation::{Chunk, Relation};
use crate::tuple::Tuple;

/// Sampled keys per range.
const SAMPLE_PER_RANGE: usize = 1024;

/// Splitters that cut keys into `ranges()` ranges.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct RangeSplit {
    /// Range i holds keys from `splitters[i - 1]` to `splitters[i]`, both
    /// ends included (tuples with a splitter's key go to either side).
    splitters: Vec<u64>,
}

impl RangeSplit {
    /// Splitters for `ranges` ranges at the quantiles of a sample of the
    /// keys of `input` (evenly strided over every chunk).
    pub(super) fn from_sample(input: &Relation, ranges: usize) -> Self {
        let ranges = ranges.max(1);
        let total = input.len();
        let wanted = total.min(SAMPLE_PER_RANGE * ranges);
        let mut sample = Vec::with_capacity(wanted + input.chunks().len());
        for chunk in input.chunks() {
            let len = chunk.tuples.len();
            let take = (wanted * len).div_ceil(total.max(1));
            sample.extend((0..take).map(|k| chunk.tuples[k * len / take].key));
        }
        Self::from_keys(sample, ranges)
    }

    /// Splitters at the quantiles of `sample`.
    pub(super) fn from_keys(mut sample: Vec<u64>, ranges: usize) -> Self {
        let ranges = ranges.max(1);
        if sample.is_empty() {
            return Self {
                splitters: vec![0; ranges - 1],
            };
        }
        sample.sort_unstable();
        let splitters = (1..ranges)
            .map(|i| sample[(i * sample.len() / ranges).min(sample.len() - 1)])
            .collect();
        Self { splitters }
    }

    /// Number of ranges.
    pub(super) fn ranges(&self) -> usize {
        self.splitters.len() + 1
    }

    /// The range of the tuple with `key` at `position` of its chunk.
    #[inline(always)]
    pub(super) fn range_of(&self, key: u64, position: usize) -> usize {
        let below = self.splitters.partition_point(|&s| s < key);
        let up_to = self.splitters.partition_point(|&s| s <= key);
        if below == up_to {
            below
        } else {
            below + position % (up_to - below + 1)
        }
    }
}

/// Scatters `input` into one chunk per range: chunk i holds range i and
/// lives on worker i's node. `split` must have one range per worker.
pub(super) fn partition(pool: &Pool, input: &Relation, split: &RangeSplit) -> Result<Vec<Chunk>> {
    input.check_pool(pool)?;
    let workers = pool.workers();
    let histograms = pool.broadcast(|ctx| histogram(&input.chunks()[ctx.index].tuples, split))?;
    let mut outputs = pool
        .worker_contexts()
        .iter()
        .map(|ctx| {
            let len = histograms.iter().map(|h| h[ctx.index]).sum();
            Chunk::alloc(pool, ctx.index, ctx.node, len)
        })
        .collect::<Result<Vec<_>>>()?;
    // pieces[w][i]: where worker w writes its tuples of range i.
    let mut pieces: Vec<Vec<&mut [Tuple]>> = (0..workers).map(|_| Vec::new()).collect();
    for (range, out) in outputs.iter_mut().enumerate() {
        let mut rest: &mut [Tuple] = &mut out.tuples;
        for (worker, h) in histograms.iter().enumerate() {
            let (piece, tail) = std::mem::take(&mut rest).split_at_mut(h[range]);
            pieces[worker].push(piece);
            rest = tail;
        }
    }
    per_worker_mut(pool, &mut pieces, |ctx, mine| {
        scatter(&input.chunks()[ctx.index].tuples, split, mine);
    })?;
    Ok(outputs)
}

fn histogram(tuples: &[Tuple], split: &RangeSplit) -> Vec<usize> {
    let mut counts = vec![0; split.ranges()];
    for (position, t) in tuples.iter().enumerate() {
        counts[split.range_of(t.key, position)] += 1;
    }
    counts
}

/// Writes every tuple into the piece of its range (sized by `histogram`).
fn scatter(tuples: &[Tuple], split: &RangeSplit, pieces: &mut [&mut [Tuple]]) {
    let mut next = vec![0; pieces.len()];
    for (position, t) in tuples.iter().enumerate() {
        let range = split.range_of(t.key, position);
        pieces[range][next[range]] = *t;
        next[range] += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::pool;

    #[test]
    fn ranges_are_ordered_and_keep_every_tuple() {
        let pool = pool(2);
        let input = Relation::from_fn(&pool, 10_000, |i| {
            Tuple::new((i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15), i as u64)
        })
        .unwrap();
        let split = RangeSplit::from_sample(&input, pool.workers());
        let out = partition(&pool, &input, &split).unwrap();
        let mut all: Vec<Tuple> = out.iter().flat_map(|c| c.tuples.to_vec()).collect();
        for pair in out.windows(2) {
            let max = pair[0].tuples.iter().map(|t| t.key).max();
            let min = pair[1].tuples.iter().map(|t| t.key).min();
            assert!(max.zip(min).is_none_or(|(a, b)| a <= b));
        }
        let mut expected = input.to_vec();
        all.sort_unstable();
        expected.sort_unstable();
        assert_eq!(all, expected);
    }

    #[test]
    fn a_heavy_key_is_dealt_over_its_ranges() {
        let split = RangeSplit::from_keys(vec![7; 100], 4);
        assert_eq!(split.ranges(), 4);
        let mut counts = [0; 4];
        for position in 0..400 {
            counts[split.range_of(7, position)] += 1;
        }
        assert_eq!(counts, [100; 4]);
        assert_eq!(split.range_of(3, 0), 0);
        assert_eq!(split.range_of(9, 0), 3);
        let empty = RangeSplit::from_keys(Vec::new(), 3);
        assert_eq!(empty.ranges(), 3);
        assert_eq!(RangeSplit::from_keys(vec![1, 2], 1).ranges(), 1);
    }
}
