//! A group-by's input as the columns it was loaded in: per worker, slices
//! of key codes and of values (and the rows without a key), read in place.
//!
//! The partitioned method reads rows once, to scatter them into its
//! partitions; copying every row into a tuple relation first costs a
//! second copy of the input in fresh memory (for 64M rows a gigabyte,
//! 0.2-1.2 s of page faults on our VMs, more than the scatter itself).
//! With a [`ColumnSource`] it scatters straight from the columns
//! ([`crate::aggregate::aggregate_columns`]). The other methods still
//! read a [`Relation`], made by [`ColumnSource::to_relation`] when one of
//! them is chosen.
//!
//! This module holds and walks the input; it does not aggregate.

use numakit_pool::Pool;

use crate::error::{OpsError, Result};
use crate::relation::{Chunk, Relation};
use crate::tuple::Tuple;

/// One slice of a worker's rows: row i has key code `keys[i]` and value
/// `values[i]`, unless i is in `keyless`.
#[derive(Clone, Copy, Debug)]
pub struct ColumnSegment<'a> {
    /// Each row's key code.
    pub keys: &'a [u64],
    /// Each row's value (as long as `keys`); `None`: every value is 0
    /// (nothing but COUNT(*) is asked).
    pub values: Option<&'a [i64]>,
    /// Rows without a key, ascending: they are left out (the caller
    /// aggregates them as its null group).
    pub keyless: &'a [u32],
}

impl ColumnSegment<'_> {
    /// Rows with a key.
    pub fn keyed_rows(&self) -> usize {
        self.keys.len() - self.keyless.len()
    }

    /// Calls `f(row)` for every row with a key, in order.
    #[inline]
    fn for_each_keyed_row(&self, mut f: impl FnMut(usize)) {
        if self.keyless.is_empty() {
            (0..self.keys.len()).for_each(f);
            return;
        }
        let mut keyless = self.keyless.iter().peekable();
        for row in 0..self.keys.len() {
            if keyless.peek() == Some(&&(row as u32)) {
                keyless.next();
                continue;
            }
            f(row);
        }
    }

    /// The key of every row with a key, in order.
    #[inline]
    pub(crate) fn for_each_key(&self, mut f: impl FnMut(u64)) {
        self.for_each_keyed_row(|row| f(self.keys[row]));
    }

    /// The tuple (key, value as `u64`) of every row with a key, in order.
    #[inline]
    pub(crate) fn for_each_tuple(&self, mut f: impl FnMut(Tuple)) {
        match self.values {
            Some(values) => {
                self.for_each_keyed_row(|row| f(Tuple::new(self.keys[row], values[row] as u64)))
            }
            None => self.for_each_keyed_row(|row| f(Tuple::new(self.keys[row], 0))),
        }
    }
}

/// Every worker's segments: worker w reads `segments(w)`, in order.
#[derive(Clone, Debug)]
pub struct ColumnSource<'a> {
    workers: Vec<Vec<ColumnSegment<'a>>>,
}

impl<'a> ColumnSource<'a> {
    /// The input of `workers.len()` workers. Refuses values not as long
    /// as their keys, and keyless rows out of range or out of order.
    pub fn new(workers: Vec<Vec<ColumnSegment<'a>>>) -> Result<Self> {
        for segment in workers.iter().flatten() {
            if segment
                .values
                .is_some_and(|v| v.len() != segment.keys.len())
            {
                return Err(OpsError::InvalidArgument(
                    "a column segment's values are not as long as its keys".into(),
                ));
            }
            let ascending = segment.keyless.windows(2).all(|w| w[0] < w[1]);
            let in_range = segment
                .keyless
                .last()
                .is_none_or(|&r| (r as usize) < segment.keys.len());
            if !ascending || !in_range {
                return Err(OpsError::InvalidArgument(
                    "a column segment's keyless rows must be ascending rows of the segment".into(),
                ));
            }
        }
        Ok(ColumnSource { workers })
    }

    /// Number of workers the source is split for.
    pub fn workers(&self) -> usize {
        self.workers.len()
    }

    /// Worker `w`'s segments.
    pub fn segments(&self, w: usize) -> &[ColumnSegment<'a>] {
        self.workers.get(w).map_or(&[], Vec::as_slice)
    }

    /// Rows with a key of worker `w`.
    pub fn worker_rows(&self, w: usize) -> usize {
        self.segments(w).iter().map(ColumnSegment::keyed_rows).sum()
    }

    /// Rows with a key, over all workers.
    pub fn rows(&self) -> usize {
        (0..self.workers()).map(|w| self.worker_rows(w)).sum()
    }

    /// Refuses a source split for another number of workers than `pool`.
    pub fn check_pool(&self, pool: &Pool) -> Result<()> {
        if self.workers() != pool.workers() {
            return Err(OpsError::WorkerMismatch {
                expected: self.workers(),
                actual: pool.workers(),
            });
        }
        Ok(())
    }

    /// The rows as a relation: worker w's chunk holds its segments'
    /// tuples in order, written by worker w on its node.
    pub fn to_relation(&self, pool: &Pool) -> Result<Relation> {
        self.check_pool(pool)?;
        let chunks = pool.broadcast(|ctx| -> Result<Chunk> {
            let mut chunk = Chunk::alloc(pool, ctx.index, ctx.node, self.worker_rows(ctx.index))?;
            let mut at = 0;
            for segment in self.segments(ctx.index) {
                segment.for_each_tuple(|t| {
                    chunk.tuples[at] = t;
                    at += 1;
                });
            }
            Ok(chunk)
        })?;
        Ok(Relation::from_chunks(
            chunks.into_iter().collect::<Result<Vec<_>>>()?,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::pool;

    #[test]
    fn a_relation_of_the_source_holds_its_keyed_rows_in_order() {
        let pool = pool(2);
        let keys: Vec<u64> = (0..10).map(|i| i * 7).collect();
        let values: Vec<i64> = (0..10).map(|i| -i).collect();
        let source = ColumnSource::new(vec![
            vec![ColumnSegment {
                keys: &keys[..6],
                values: Some(&values[..6]),
                keyless: &[0, 4],
            }],
            vec![
                ColumnSegment {
                    keys: &keys[6..],
                    values: None,
                    keyless: &[],
                },
                ColumnSegment {
                    keys: &[],
                    values: Some(&[]),
                    keyless: &[],
                },
            ],
        ])
        .unwrap();
        assert_eq!(source.rows(), 8);
        assert_eq!(source.worker_rows(0), 4);
        let relation = source.to_relation(&pool).unwrap();
        let first: Vec<(u64, i64)> = relation.chunks()[0]
            .tuples
            .iter()
            .map(|t| (t.key, t.payload as i64))
            .collect();
        assert_eq!(first, [(7, -1), (14, -2), (21, -3), (35, -5)]);
        let second: Vec<(u64, u64)> = relation.chunks()[1]
            .tuples
            .iter()
            .map(|t| (t.key, t.payload))
            .collect();
        assert_eq!(second, [(42, 0), (49, 0), (56, 0), (63, 0)]);
    }

    #[test]
    fn bad_segments_and_pools_are_refused() {
        let keys = [1u64, 2, 3];
        let short = ColumnSource::new(vec![vec![ColumnSegment {
            keys: &keys,
            values: Some(&[1, 2]),
            keyless: &[],
        }]]);
        assert!(short.is_err());
        for keyless in [&[2u32, 1][..], &[3][..]] {
            let bad = ColumnSource::new(vec![vec![ColumnSegment {
                keys: &keys,
                values: None,
                keyless,
            }]]);
            assert!(bad.is_err(), "{keyless:?}");
        }
        let one = ColumnSource::new(vec![vec![]]).unwrap();
        assert!(one.to_relation(&pool(2)).is_err());
    }
}
