//! The first step of every partitioned method: each worker splits its own
//! chunk into parts, by the high bits of the key's hash ([`by_hash`]) or,
//! for dense keys, by runs of consecutive keys ([`by_range`]), into a
//! buffer on its own node.
//!
//! A key's part among `parts` is a multiply-shift of the top 32 hash bits
//! ([`part_of_hash`]): the "radix" of the hash for any number of parts,
//! power of two or not, so every worker owns an equal share of the hash
//! space. When `parts` is a multiple of the workers, part `j` belongs to
//! worker `j / (parts / workers)`, the worker [`part_of_hash`] gives for
//! `workers` parts. Hash tables use the low bits, so one part still spreads
//! over a whole table.
//!
//! The kernel is [`crate::partition::scatter`] (any part function, which
//! range partitioning needs), writing into buffers reused across runs
//! through [`crate::partition::recycle`]: on a virtual machine the page
//! faults of fresh buffers cost several times the scatter. This module
//! only places and drives the kernel; it does not aggregate.

use std::sync::Arc;

use numakit_placement::NodeBuffer;
use numakit_pool::Pool;
use numakit_topology::NodeId;

use crate::aggregate::dense::KeyRange;
use crate::aggregate::source::ColumnSource;
use crate::error::Result;
use crate::hash::hash64;
use crate::partition::recycle::{self, Recycler};
use crate::partition::{prefix_sum, scatter};
use crate::relation::Relation;
use crate::tuple::Tuple;

/// The part (of `parts`) that a key with hash `hash` falls in.
#[inline(always)]
pub fn part_of_hash(hash: u64, parts: usize) -> usize {
    (((hash >> 32) * parts as u64) >> 32) as usize
}

/// One worker's chunk, split into parts, in a buffer borrowed from the
/// partitioner's [`recycle`] cache (and given back when dropped).
pub struct Split {
    /// The node the buffer is on (the worker's).
    pub node: NodeId,
    buffer: Option<NodeBuffer<Tuple>>,
    /// Where `buffer` goes back when the split is dropped.
    recycler: Arc<Recycler>,
    /// Part `j` is `buffer[bounds[j]..bounds[j + 1]]`.
    bounds: Vec<usize>,
}

impl Split {
    /// The parts `bounds` of `buffer` on `node`, which goes back to
    /// `recycler` when the split is dropped.
    fn new(
        node: NodeId,
        buffer: NodeBuffer<Tuple>,
        recycler: &Arc<Recycler>,
        bounds: Vec<usize>,
    ) -> Self {
        Split {
            node,
            buffer: Some(buffer),
            recycler: Arc::clone(recycler),
            bounds,
        }
    }

    fn tuples(&self) -> &[Tuple] {
        self.buffer.as_deref().unwrap_or(&[])
    }

    /// The tuples of part `part`.
    pub fn part(&self, part: usize) -> &[Tuple] {
        &self.tuples()[self.bounds[part]..self.bounds[part + 1]]
    }

    /// Number of parts.
    pub fn parts_count(&self) -> usize {
        self.bounds.len() - 1
    }

    /// The tuples of parts `parts.start..parts.end`, in one slice.
    pub fn parts(&self, parts: std::ops::Range<usize>) -> &[Tuple] {
        &self.tuples()[self.bounds[parts.start]..self.bounds[parts.end]]
    }
}

impl Drop for Split {
    fn drop(&mut self) {
        if let Some(buffer) = self.buffer.take() {
            self.recycler.give_back(self.node, buffer);
        }
    }
}

/// The part of `key` among `parts` by hash.
pub fn by_hash(parts: usize) -> impl Fn(u64) -> usize + Sync {
    move |key| part_of_hash(hash64(key), parts)
}

/// The part of `key` for range partitioning: run `(key - base) >> bits`
/// of the range, or the last part (`parts - 1`) for keys outside it.
pub fn by_range(range: KeyRange, bits: u32, parts: usize) -> impl Fn(u64) -> usize + Sync {
    move |key| match range.index_of(key) {
        Some(i) => (i >> bits) as usize,
        None => parts - 1,
    }
}

/// Splits every worker's chunk into `parts` parts by `part_of` (values
/// below `parts`), on that worker, into a buffer on the worker's node.
pub fn split_chunks<F>(
    pool: &Pool,
    input: &Relation,
    parts: usize,
    part_of: F,
) -> Result<Vec<Split>>
where
    F: Fn(u64) -> usize + Sync,
{
    let parts = parts.max(1);
    let chunks = input.chunks();
    let recycler = Recycler::of(pool);
    let splits = pool.broadcast(|ctx| -> Result<Split> {
        let chunk = &chunks[ctx.index];
        let rows = chunk.tuples.len();
        let mut buffer = recycle::take(pool, chunk.node, rows)?;
        let bounds = scatter(&chunk.tuples, &mut buffer[..rows], parts, &part_of);
        Ok(Split::new(chunk.node, buffer, &recycler, bounds))
    })?;
    splits.into_iter().collect()
}

/// [`split_chunks`] for an input still in its columns: every worker
/// splits the rows of its own segments, read in place (two passes, one
/// over the keys to count, one to scatter), so no tuple relation is made.
pub fn split_source<F>(
    pool: &Pool,
    source: &ColumnSource<'_>,
    parts: usize,
    part_of: F,
) -> Result<Vec<Split>>
where
    F: Fn(u64) -> usize + Sync,
{
    source.check_pool(pool)?;
    let parts = parts.max(1);
    let recycler = Recycler::of(pool);
    let splits = pool.broadcast(|ctx| -> Result<Split> {
        let segments = source.segments(ctx.index);
        let rows = source.worker_rows(ctx.index);
        let mut buffer = recycle::take(pool, ctx.node, rows)?;
        let mut counts = vec![0usize; parts];
        for segment in segments {
            segment.for_each_key(|key| counts[part_of(key)] += 1);
        }
        let bounds = prefix_sum(&counts);
        let mut next = bounds[..parts].to_vec();
        let out = &mut buffer[..rows];
        for segment in segments {
            segment.for_each_tuple(|t| {
                let p = part_of(t.key);
                out[next[p]] = t;
                next[p] += 1;
            });
        }
        Ok(Split::new(ctx.node, buffer, &recycler, bounds))
    })?;
    splits.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::pool;

    #[test]
    fn parts_nest_inside_owners() {
        for workers in [1usize, 2, 3, 5] {
            for per_worker in [1usize, 4, 16] {
                let parts = workers * per_worker;
                for k in (0..10_000u64).map(|i| i * 0x9e37_79b9) {
                    let h = hash64(k);
                    assert_eq!(
                        part_of_hash(h, parts) / per_worker,
                        part_of_hash(h, workers)
                    );
                    assert!(part_of_hash(h, parts) < parts);
                }
            }
        }
        assert_eq!(part_of_hash(u64::MAX, 7), 6);
        assert_eq!(part_of_hash(0, 7), 0);
    }

    #[test]
    fn every_tuple_lands_in_its_part() {
        let pool = pool(2);
        let input =
            Relation::from_fn(&pool, 10_001, |i| Tuple::new(i as u64 * 31, i as u64)).unwrap();
        let splits = split_chunks(&pool, &input, 8, by_hash(8)).unwrap();
        let mut all = Vec::new();
        for s in &splits {
            for j in 0..8 {
                assert!(s
                    .part(j)
                    .iter()
                    .all(|t| part_of_hash(hash64(t.key), 8) == j));
                all.extend_from_slice(s.part(j));
            }
            assert_eq!(s.parts(0..8).len(), s.part(0).len() + s.parts(1..8).len());
        }
        all.sort_unstable();
        let mut want = input.to_vec();
        want.sort_unstable();
        assert_eq!(all, want);
    }

    #[test]
    fn splitting_columns_in_place_matches_splitting_their_relation() {
        use crate::aggregate::source::ColumnSegment;
        let pool = pool(2);
        let keys: Vec<u64> = (0..5_000u64).map(|i| i.wrapping_mul(0x9e37_79b9)).collect();
        let values: Vec<i64> = (0..5_000i64).map(|i| i - 2_500).collect();
        let keyless: Vec<u32> = (0..1_000u32).map(|i| i * 3).collect();
        let source = ColumnSource::new(vec![
            vec![ColumnSegment {
                keys: &keys[..3_000],
                values: Some(&values[..3_000]),
                keyless: &keyless,
            }],
            vec![ColumnSegment {
                keys: &keys[3_000..],
                values: Some(&values[3_000..]),
                keyless: &[],
            }],
        ])
        .unwrap();
        let relation = source.to_relation(&pool).unwrap();
        let direct = split_source(&pool, &source, 8, by_hash(8)).unwrap();
        let copied = split_chunks(&pool, &relation, 8, by_hash(8)).unwrap();
        for (d, c) in direct.iter().zip(&copied) {
            for j in 0..8 {
                assert_eq!(d.part(j), c.part(j), "part {j}");
            }
        }
        assert_eq!(direct[0].parts(0..8).len(), 2_000);
    }

    #[test]
    fn range_parts_put_strays_last() {
        let range = KeyRange {
            base: 100,
            len: 1000,
        };
        let part = by_range(range, 8, 5);
        assert_eq!(part(100), 0);
        assert_eq!(part(355), 0);
        assert_eq!(part(356), 1);
        assert_eq!(part(1099), 3);
        for stray in [0, 99, 1100, u64::MAX] {
            assert_eq!(part(stray), 4);
        }
    }
}
