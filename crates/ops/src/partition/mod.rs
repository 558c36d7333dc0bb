//! Radix partitioning: split tuples by some bits of their key's hash.
//!
//! The kernel is the classic three steps: a histogram of partition sizes,
//! a prefix sum into write offsets, and a scatter. [`scatter`] is the
//! plain single-threaded version (any partition function); the parallel
//! partitioner uses the same steps with software write-combining buffers
//! ([`swwcb`]: a few cache lines per partition, flushed whole lines at a
//! time, with non-temporal stores when the output is larger than the
//! caches). Partition numbers are computed 16 at a time, vectorised with
//! AVX2 where the CPU has it (`simd`).
//!
//! The parallel API, for every operator that partitions (radix joins,
//! aggregation, sort helpers):
//!
//! - [`Radix`] names the hash bits a pass uses: `bits` bits starting
//!   `shift` bits below the top of [`crate::hash::hash64`] (the same bits
//!   as [`crate::hash::radix_of`]). Hash tables use the low bits, so they
//!   stay independent of the partitioning.
//! - [`partition_relation`] partitions a [`Relation`] on the pool with one
//!   of two NUMA variants ([`Variant::Pro`]: global histogram, every worker
//!   writes its share of every partition straight into that partition's
//!   node; [`Variant::Cprl`]: every worker partitions its chunk into its
//!   own node-local buffer, with no histogram at all on large inputs) in
//!   one or two passes
//!   ([`PassPlan`], see [`passes`] for how the number of passes is chosen).
//! - The result, [`Partitioned`], lists for every partition its pieces
//!   (slices and the node they live on) and its home node, where tasks
//!   working on it should be queued (`pool.scope` + `spawn_on`). Dropping
//!   it hands its buffers to [`recycle`] for the next partitioning (fresh
//!   memory costs a page fault per page, several times the partitioning
//!   on a VM).
//!
//! This module partitions; it does not join or aggregate.

pub mod cprl;
pub mod layout;
pub mod passes;
pub mod pro;
pub use crate::recycle;
pub(crate) mod simd;
pub mod swwcb;

use serde::Serialize;

use numakit_pool::Pool;

use crate::error::{OpsError, Result};
use crate::relation::Relation;
use crate::tuple::Tuple;

pub use layout::{home_nodes, Partitioned};
pub use passes::{plan_passes, subpartition, PassPlan, MAX_BITS_PER_PASS};

/// Writes `input` into `out` grouped by `part_of(key)` (values below
/// `fanout`), partitions in order, and returns the `fanout + 1` partition
/// boundaries. `out` must be as long as `input`.
pub fn scatter<F>(input: &[Tuple], out: &mut [Tuple], fanout: usize, part_of: F) -> Vec<usize>
where
    F: Fn(u64) -> usize,
{
    assert_eq!(
        input.len(),
        out.len(),
        "scatter needs an output as long as its input"
    );
    let mut counts = vec![0usize; fanout];
    for t in input {
        counts[part_of(t.key)] += 1;
    }
    let bounds = prefix_sum(&counts);
    let mut next = bounds[..fanout].to_vec();
    for t in input {
        let p = part_of(t.key);
        out[next[p]] = *t;
        next[p] += 1;
    }
    bounds
}

/// `counts` turned into boundaries: `[0, c0, c0 + c1, ..., total]`.
pub fn prefix_sum(counts: &[usize]) -> Vec<usize> {
    let mut bounds = Vec::with_capacity(counts.len() + 1);
    let mut total = 0;
    bounds.push(0);
    for &c in counts {
        total += c;
        bounds.push(total);
    }
    bounds
}

/// The hash bits one partitioning pass uses: `bits` bits starting `shift`
/// bits below the top of the key's hash. Pass 1 of a two-pass plan uses
/// shift 0, pass 2 shift = the bits of pass 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Radix {
    /// Hash bits skipped from the top before this radix's bits (0 to 64).
    pub shift: u32,
    /// Bits used: the fanout is `2^bits` (0 to [`Radix::MAX_BITS`]; 0
    /// puts every key in partition 0).
    pub bits: u32,
}

impl Radix {
    /// Most bits one radix may use (a fanout of 2^24 is far beyond any
    /// useful single pass; the limit keeps partition numbers in `u32`).
    pub const MAX_BITS: u32 = 24;

    /// A radix of `bits` bits at `shift`; refuses more than
    /// [`Radix::MAX_BITS`] bits or bits past the end of the hash.
    pub fn new(shift: u32, bits: u32) -> Result<Self> {
        if bits > Self::MAX_BITS || shift + bits > 64 {
            return Err(OpsError::InvalidArgument(format!(
                "radix of {bits} bits at shift {shift} (at most {} bits, within 64)",
                Self::MAX_BITS
            )));
        }
        Ok(Self { shift, bits })
    }

    /// The first `bits` bits of the hash.
    pub fn top(bits: u32) -> Result<Self> {
        Self::new(0, bits)
    }

    /// Number of partitions.
    pub fn fanout(&self) -> usize {
        1 << self.bits
    }

    /// The partition of `key`; equal to
    /// `hash::radix_of(key, self.shift, self.bits)`.
    #[inline(always)]
    pub fn of(&self, key: u64) -> usize {
        if self.within_top31() {
            self.of_with::<true>(key)
        } else {
            self.of_with::<false>(key)
        }
    }

    /// Whether the radix lies in the top 31 bits of the hash, which the
    /// last step of hash64 (h ^= h >> 33) leaves as they are: kernels
    /// then skip that step (`of_with::<true>`).
    #[inline(always)]
    pub fn within_top31(&self) -> bool {
        self.shift + self.bits <= 31
    }

    /// [`Radix::of`] with the choice of [`Radix::within_top31`] made by
    /// the caller (`TOP31` must be false unless it holds).
    #[inline(always)]
    pub fn of_with<const TOP31: bool>(&self, key: u64) -> usize {
        let h = if TOP31 {
            hash_top31(key)
        } else {
            crate::hash::hash64(key)
        };
        // Two shifts so that bits == 0 gives 0 without a branch.
        (((h << self.shift) >> 1) >> (63 - self.bits)) as usize
    }
}

/// hash64 without its final xor-shift: the same top 31 bits.
#[inline(always)]
fn hash_top31(key: u64) -> u64 {
    let mut h = key;
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h.wrapping_mul(0xc4ce_b9fe_1a85_ec53)
}

/// The two NUMA-aware parallel partitioners (Balkesen et al., the
/// lecture's radix-join PRO and CPRL).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    /// Global histogram and prefix sum; every worker scatters its chunk
    /// straight into every partition's home node (many small remote
    /// writes, one contiguous piece per partition).
    Pro,
    /// No global histogram: every worker partitions its chunk into its own
    /// node-local buffer; a partition is one piece per worker, read
    /// remotely (few large reads) by whoever processes it.
    Cprl,
}

impl Variant {
    /// The short name the variant is reported by: "pro" or "cprl".
    pub fn name(self) -> &'static str {
        match self {
            Self::Pro => "pro",
            Self::Cprl => "cprl",
        }
    }
}

/// Partitions `rel` on `pool` into `2^plan.total_bits()` partitions by the
/// top bits of the key hash, with pass 1 done by `variant` and pass 2 (if
/// the plan has one) as one task per pass-1 partition on its home node.
/// Partition p holds exactly the tuples with `Radix::top(total).of(key) ==
/// p`, in no particular order.
pub fn partition_relation(
    pool: &Pool,
    rel: &Relation,
    plan: PassPlan,
    variant: Variant,
) -> Result<Partitioned> {
    rel.check_pool(pool)?;
    let first = Radix::top(plan.first_bits)?;
    let pass1 = match variant {
        Variant::Pro => pro::partition(pool, rel, first)?,
        Variant::Cprl => cprl::partition(pool, rel, first)?,
    };
    if plan.second_bits == 0 {
        return Ok(pass1);
    }
    passes::second_pass(pool, &pass1, Radix::new(plan.first_bits, plan.second_bits)?)
}

/// Per-partition counts of `input` for `radix`.
pub fn histogram(input: &[Tuple], radix: Radix) -> Vec<usize> {
    let mut counts = vec![0usize; radix.fanout()];
    add_histogram(input, radix, &mut counts);
    counts
}

/// Adds the per-partition counts of `input` to `counts`.
pub fn add_histogram(input: &[Tuple], radix: Radix, counts: &mut [usize]) {
    assert_eq!(counts.len(), radix.fanout(), "one count per partition");
    if radix.fanout() == 1 {
        counts[0] += input.len();
        return;
    }
    simd::add_counts(input, radix, counts);
}

#[cfg(test)]
pub(crate) mod tests_common {
    use super::*;

    /// Checks that `parts` holds exactly the tuples of `rel`, each in the
    /// partition its top `bits` hash bits name.
    pub(crate) fn check_partitioned(rel: &Relation, parts: &Partitioned, bits: u32) {
        let radix = Radix::top(bits).unwrap();
        assert_eq!(parts.fanout(), radix.fanout());
        assert_eq!(parts.radix(), radix);
        assert_eq!(parts.len(), rel.len());
        let mut all = Vec::with_capacity(rel.len());
        for p in 0..parts.fanout() {
            let v = parts.partition_to_vec(p);
            assert_eq!(v.len(), parts.partition_len(p));
            assert!(v.iter().all(|t| radix.of(t.key) == p), "partition {p}");
            all.extend(v);
        }
        let mut expected = rel.to_vec();
        expected.sort_unstable();
        all.sort_unstable();
        assert!(
            all == expected,
            "the partitions hold other tuples than the input"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::radix_of;

    #[test]
    fn scatter_groups_by_partition_and_keeps_every_tuple() {
        let input: Vec<Tuple> = (0..1000u64).map(|i| Tuple::new(i * 7919, i)).collect();
        let mut out = vec![Tuple::default(); input.len()];
        let bounds = scatter(&input, &mut out, 16, |k| radix_of(k, 0, 4));
        assert_eq!(bounds.len(), 17);
        for p in 0..16 {
            assert!(out[bounds[p]..bounds[p + 1]]
                .iter()
                .all(|t| radix_of(t.key, 0, 4) == p));
        }
        let mut a = input.clone();
        let mut b = out.clone();
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b);
    }

    #[test]
    fn scatter_of_nothing_is_nothing() {
        let bounds = scatter(&[], &mut [], 4, |_| 0);
        assert_eq!(bounds, vec![0; 5]);
    }

    #[test]
    fn radix_of_agrees_with_the_hash_module() {
        let keys = [0u64, 1, 2, 77, 1 << 40, u64::MAX, u64::MAX - 1, 0x1234_5678];
        for shift in [0u32, 3, 7, 11, 20, 30, 40] {
            for bits in [0u32, 1, 4, 7, 11, 13, 24] {
                let Ok(r) = Radix::new(shift, bits) else {
                    continue;
                };
                for k in keys.iter().copied().chain(0..2000) {
                    assert_eq!(r.of(k), radix_of(k, shift, bits), "{k} {shift} {bits}");
                }
            }
        }
        assert!(Radix::new(0, 25).is_err());
        assert!(Radix::new(50, 20).is_err());
    }

    #[test]
    fn histogram_counts_every_tuple_once() {
        let input: Vec<Tuple> = (0..10_003u64).map(|i| Tuple::new(i % 97, i)).collect();
        for bits in [0, 1, 5, 9] {
            let r = Radix::top(bits).unwrap();
            let h = histogram(&input, r);
            let mut expected = vec![0usize; r.fanout()];
            for t in &input {
                expected[r.of(t.key)] += 1;
            }
            assert_eq!(h, expected);
        }
    }
}
