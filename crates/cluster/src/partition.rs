//! Who owns what: which process a key belongs to and which of its buckets
//! (hash distribution, Chakraborty §II), and which rows of a generated
//! relation each process holds.
//!
//! Ownership and buckets come from numakit's one hash function: the high
//! half of the hash picks the process, the low half the bucket, so the two
//! are independent. Process i holds rows `share(n, i, P)` of an n-row
//! relation, contiguous and as even as possible, so that the union over
//! the processes is the same relation whatever P is; the single-machine
//! join of that relation is the reference for every P.
//!
//! This module decides; it does not move rows between processes.

use std::ops::Range;
use std::time::Instant;

use numakit_ops::hash::hash64;
use numakit_ops::{Relation, Tuple};
use numakit_pool::Pool;

use crate::error::Result;

/// How keys map to processes and buckets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Partitioning {
    /// Processes of the join (P).
    pub processes: usize,
    /// Buckets per process.
    pub buckets: u32,
}

impl Partitioning {
    /// The process that joins `key`.
    #[inline]
    pub fn owner(&self, key: u64) -> usize {
        (((hash64(key) >> 32) * self.processes as u64) >> 32) as usize
    }

    /// The bucket of `key` at its owner.
    #[inline]
    pub fn bucket(&self, key: u64) -> u32 {
        (((hash64(key) & 0xffff_ffff) * u64::from(self.buckets)) >> 32) as u32
    }

    /// Index of (owner, bucket) in a flat list of pieces.
    #[inline]
    fn slot(&self, key: u64) -> usize {
        self.owner(key) * self.buckets as usize + self.bucket(key) as usize
    }
}

/// Rows of an `rows`-row relation held by `process` of `processes`.
pub fn share(rows: u64, process: usize, processes: usize) -> Range<u64> {
    let p = processes.max(1) as u128;
    let at = |i: usize| (rows as u128 * i as u128 / p) as u64;
    at(process)..at(process + 1)
}

/// A relation cut by destination process and bucket: `pieces[d][b]`.
pub struct Pieces {
    /// `pieces[d][b]`: the rows owned by process `d` that fall in its
    /// bucket `b`, in the relation's order.
    pub pieces: Vec<Vec<Vec<Tuple>>>,
    /// Seconds the pool's workers spent cutting (summed over workers).
    pub compute_seconds: f64,
}

/// Cuts `relation` by owner and bucket on the pool: every worker cuts its
/// own chunk, then the workers' parts of each piece are put together.
pub fn cut(pool: &Pool, relation: &Relation, layout: &Partitioning) -> Result<Pieces> {
    let slots = layout.processes * layout.buckets as usize;
    let mut parts: Vec<(Vec<Vec<Tuple>>, f64)> =
        (0..pool.workers()).map(|_| (Vec::new(), 0.0)).collect();
    relation.check_pool(pool)?;
    numakit_ops::par::per_worker_mut(pool, &mut parts, |ctx, out| {
        let start = Instant::now();
        let chunk = &relation.chunks()[ctx.index].tuples[..];
        let mut local: Vec<Vec<Tuple>> = (0..slots).map(|_| Vec::new()).collect();
        for t in chunk {
            local[layout.slot(t.key)].push(*t);
        }
        *out = (local, start.elapsed().as_secs_f64());
    })?;
    let start = Instant::now();
    let mut compute_seconds: f64 = parts.iter().map(|p| p.1).sum();
    let mut flat: Vec<Vec<Tuple>> = (0..slots).map(|_| Vec::new()).collect();
    for (slot, piece) in flat.iter_mut().enumerate() {
        let len = parts.iter().map(|p| p.0[slot].len()).sum();
        piece.reserve_exact(len);
        for p in &parts {
            piece.extend_from_slice(&p.0[slot]);
        }
    }
    compute_seconds += start.elapsed().as_secs_f64();
    let mut pieces = Vec::with_capacity(layout.processes);
    let mut it = flat.into_iter();
    for _ in 0..layout.processes {
        pieces.push(it.by_ref().take(layout.buckets as usize).collect());
    }
    Ok(Pieces {
        pieces,
        compute_seconds,
    })
}

/// Cuts `relation` into blocks of at most `block_rows` rows (the unit of
/// a broadcast), in order.
pub fn blocks(relation: &Relation, block_rows: usize) -> Vec<Vec<Tuple>> {
    let block_rows = block_rows.max(1);
    let mut out = Vec::new();
    for c in relation.chunks() {
        out.extend(c.tuples.chunks(block_rows).map(<[Tuple]>::to_vec));
    }
    out
}

/// This process's share of the generated relation `spec`: rows
/// `share(spec.rows, process, processes)`.
pub fn generated_share(
    pool: &Pool,
    spec: &numakit_ops::datagen::GenSpec,
    process: usize,
    processes: usize,
) -> Result<Relation> {
    Ok(numakit_ops::datagen::generate_rows(
        pool,
        spec,
        share(spec.rows, process, processes),
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_cover_the_relation_in_order() {
        for (rows, p) in [(0, 3), (1, 4), (10, 3), (1000, 4), (7, 1)] {
            let mut next = 0;
            for i in 0..p {
                let r = share(rows, i, p);
                assert_eq!(r.start, next);
                next = r.end;
            }
            assert_eq!(next, rows);
        }
    }

    #[test]
    fn owners_and_buckets_are_in_range_and_spread() {
        let layout = Partitioning {
            processes: 3,
            buckets: 8,
        };
        let mut seen = [[0usize; 8]; 3];
        for k in [0, u64::MAX].into_iter().chain(1..30_000) {
            let (o, b) = (layout.owner(k), layout.bucket(k));
            seen[o][b as usize] += 1;
        }
        for row in seen {
            for n in row {
                assert!(n > 700, "{seen:?}");
            }
        }
    }
}
