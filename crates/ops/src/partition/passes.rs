//! One pass or two: how many radix bits, split how.
//!
//! A partition should be small enough for the work done on it to stay in
//! the core's cache: for a radix join, the build side's partition and its
//! hash table should fit the L2 (256 KiB to 1 MiB; 1 MiB per core on the
//! measured Zen 5, where only about 4-6 MiB of the shared L3 is really
//! usable). That fixes the total number of bits. One pass can only use so
//! many: every partition needs a write-combining buffer
//! ([`super::swwcb::SLOT_LINES`] lines) that must stay in L2 next to the
//! histogram, and every partition's current output page needs a TLB entry.
//! [`MAX_BITS_PER_PASS`] is that limit; more bits take two passes, split
//! evenly, the second done per pass-1 partition as a task on the
//! partition's home node, reading and writing (mostly) cache-resident
//! data.
//!
//! This module plans passes and runs the second; pass 1 is [`super::pro`]'s
//! or [`super::cprl`]'s.

use std::sync::Mutex;

use serde::Serialize;

use numakit_pool::Pool;

use crate::error::{OpsError, Result};
use crate::partition::layout::{Piece, Region};
use crate::partition::swwcb::{ScatterTarget, Stores};
use crate::partition::{add_histogram, prefix_sum, recycle, Partitioned, Radix};
use crate::tuple::{Tuple, TUPLE_BYTES};

/// Most radix bits one pass uses: 2^11 write-combining buffers of
/// [`super::swwcb::SLOT_LINES`] lines take 1 MiB, the L2 of the measured
/// machine (still faster than fewer, smaller buffers there; more bits
/// would thrash it).
pub const MAX_BITS_PER_PASS: u32 = 11;

/// How many radix bits each pass uses (`second_bits == 0`: one pass).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PassPlan {
    /// Radix bits of pass 1 (the top bits of the hash).
    pub first_bits: u32,
    /// Radix bits of pass 2, taken just below pass 1's; 0 when there is
    /// no second pass.
    pub second_bits: u32,
}

impl PassPlan {
    /// One pass of `bits` bits.
    pub fn one(bits: u32) -> Self {
        Self {
            first_bits: bits,
            second_bits: 0,
        }
    }

    /// Bits of all passes together (the final fanout is 2^this).
    pub fn total_bits(&self) -> u32 {
        self.first_bits + self.second_bits
    }

    /// Number of passes: 1, or 2 when `second_bits > 0`.
    pub fn passes(&self) -> usize {
        1 + usize::from(self.second_bits > 0)
    }
}

/// The plan that cuts `bytes` (the build side, or whatever must fit in
/// cache per partition) into partitions of at most `target_bytes` each on
/// uniform data, with at most `max_bits_per_pass` bits per pass (use
/// [`MAX_BITS_PER_PASS`]; tests force two passes with less).
pub fn plan_passes(bytes: u64, target_bytes: u64, max_bits_per_pass: u32) -> Result<PassPlan> {
    if target_bytes == 0 || max_bits_per_pass == 0 {
        return Err(OpsError::InvalidArgument(
            "partition target size and bits per pass must be positive".into(),
        ));
    }
    let parts = bytes.div_ceil(target_bytes).max(1);
    let wanted = 64 - (parts - 1).leading_zeros();
    let total = wanted.min(2 * max_bits_per_pass).min(Radix::MAX_BITS);
    Ok(if total <= max_bits_per_pass {
        PassPlan::one(total)
    } else {
        let first = total.div_ceil(2);
        PassPlan {
            first_bits: first,
            second_bits: total - first,
        }
    })
}

/// Partitions the tuples of `pieces` (together) by `radix` into `out`,
/// which must be exactly as long as all pieces together and 16-byte
/// aligned (an [`super::swwcb::AlignedTuples`] or a node buffer); returns
/// the `fanout + 1` partition bounds in `out`. Single-threaded: the
/// per-partition step of a second pass.
pub fn subpartition<'a, I>(pieces: I, radix: Radix, out: &mut [Tuple]) -> Vec<usize>
where
    I: Iterator<Item = &'a [Tuple]> + Clone,
{
    let mut counts = vec![0usize; radix.fanout()];
    for piece in pieces.clone() {
        add_histogram(piece, radix, &mut counts);
    }
    let bounds = prefix_sum(&counts);
    assert_eq!(
        bounds.last().copied(),
        Some(out.len()),
        "output length must match the input"
    );
    let stores = Stores::for_output_bytes(out.len() * TUPLE_BYTES);
    let mut target = ScatterTarget::exclusive(out, &bounds);
    for piece in pieces {
        target.scatter(piece, radix, stores);
    }
    target.finish();
    bounds
}

/// Pass 2: every partition of `pass1` partitioned again by `radix` (whose
/// shift is pass 1's bits) into a buffer on its home node, one task per
/// partition queued at that node, largest first.
pub fn second_pass(pool: &Pool, pass1: &Partitioned, radix: Radix) -> Result<Partitioned> {
    let nodes = pool.nodes();
    let fanout1 = pass1.fanout();
    let group_of: Vec<usize> = (0..fanout1)
        .map(|p| nodes.iter().position(|&n| n == pass1.home(p)).unwrap_or(0))
        .collect();
    let mut offset = vec![0usize; fanout1];
    let mut group_len = vec![0usize; nodes.len()];
    for p in 0..fanout1 {
        offset[p] = group_len[group_of[p]];
        group_len[group_of[p]] += pass1.partition_len(p);
    }
    let mut buffers = nodes
        .iter()
        .zip(&group_len)
        .map(|(&node, &len)| recycle::take(pool, node, len))
        .collect::<Result<Vec<_>>>()?;
    let bounds = run_second_pass(pool, pass1, radix, &group_of, &mut buffers)?;
    let fanout2 = radix.fanout();
    let mut pieces_of = Vec::with_capacity(fanout1 * fanout2);
    let mut homes = Vec::with_capacity(fanout1 * fanout2);
    for p in 0..fanout1 {
        for q in 0..fanout2 {
            let (start, end) = (offset[p] + bounds[p][q], offset[p] + bounds[p][q + 1]);
            pieces_of.push(vec![Piece {
                region: group_of[p],
                start,
                end,
            }]);
            homes.push(pass1.home(p));
        }
    }
    let regions = nodes
        .iter()
        .zip(buffers)
        .map(|(&node, buffer)| Region { node, buffer })
        .collect();
    let total = Radix::top(pass1.radix().bits + radix.bits)?;
    Ok(Partitioned::new(
        total,
        regions,
        pieces_of,
        homes,
        recycle::Recycler::of(pool),
    ))
}

/// Runs the pass-2 tasks; returns every pass-1 partition's sub-bounds.
fn run_second_pass(
    pool: &Pool,
    pass1: &Partitioned,
    radix: Radix,
    group_of: &[usize],
    buffers: &mut [numakit_placement::NodeBuffer<Tuple>],
) -> Result<Vec<Vec<usize>>> {
    let fanout1 = pass1.fanout();
    let mut rest: Vec<&mut [Tuple]> = buffers.iter_mut().map(|b| &mut b[..]).collect();
    let mut jobs = Vec::with_capacity(fanout1);
    for (p, &g) in group_of.iter().enumerate() {
        let (out, after) = std::mem::take(&mut rest[g]).split_at_mut(pass1.partition_len(p));
        rest[g] = after;
        jobs.push((p, out));
    }
    jobs.sort_by_key(|(p, _)| std::cmp::Reverse(pass1.partition_len(*p)));
    let results: Vec<Mutex<Vec<usize>>> = (0..fanout1).map(|_| Mutex::new(Vec::new())).collect();
    pool.scope(|s| -> Result<()> {
        for (p, out) in jobs {
            let results = &results;
            s.spawn_on(pass1.home(p), move |_| {
                let bounds = subpartition(pass1.slices(p), radix, out);
                if let Ok(mut slot) = results[p].lock() {
                    *slot = bounds;
                }
            })?;
        }
        Ok(())
    })??;
    results
        .into_iter()
        .map(|m| {
            m.into_inner()
                .map_err(|_| OpsError::InvalidArgument("a pass-2 task failed".into()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::partition::tests_common::check_partitioned;
    use crate::partition::{partition_relation, Variant};
    use crate::relation::Relation;
    use crate::testing::pool;

    #[test]
    fn plans_use_one_pass_until_the_limit() {
        let mib = 1u64 << 20;
        assert_eq!(plan_passes(0, mib, 11).unwrap(), PassPlan::one(0));
        assert_eq!(plan_passes(mib, mib, 11).unwrap(), PassPlan::one(0));
        assert_eq!(plan_passes(mib + 1, mib, 11).unwrap(), PassPlan::one(1));
        assert_eq!(
            plan_passes(256 * mib, mib / 4, 11).unwrap(),
            PassPlan::one(10)
        );
        let two = plan_passes(4096 * mib, mib / 4, 11).unwrap();
        assert_eq!((two.first_bits, two.second_bits), (7, 7));
        assert_eq!(two.passes(), 2);
        assert!(plan_passes(1, 0, 11).is_err());
    }

    #[test]
    fn two_pass_partitioning_matches_the_hash_bits() {
        for threads in [1, 2] {
            let pool = pool(threads);
            for variant in [Variant::Pro, Variant::Cprl] {
                for (len, first, second) in [(0, 2, 2), (7, 1, 3), (50_001, 3, 4), (20_000, 0, 5)] {
                    let rel = Relation::from_fn(&pool, len, |i| {
                        Tuple::new((i as u64 * 31) % 7777, i as u64)
                    })
                    .unwrap();
                    let plan = PassPlan {
                        first_bits: first,
                        second_bits: second,
                    };
                    let parts = partition_relation(&pool, &rel, plan, variant).unwrap();
                    check_partitioned(&rel, &parts, first + second);
                }
            }
        }
    }
}
