//! Wide-vector versions of the partitioning kernels, chosen at run time.
//!
//! The partition number of a tuple costs two 64-bit multiplies; with
//! AVX-512 (F + DQ: `vpmullq`) the compiler computes sixteen at once when
//! they are taken in batches ([`batch_ids`]). The kernels are written once
//! as `#[inline(always)]` bodies; a `#[target_feature]` wrapper compiles a
//! second copy with the wide instructions, and [`wide`] says whether the
//! CPU may run it. This module holds the histogram kernel and the
//! dispatch; the scatter kernel's wrapper lives with it in `swwcb`.
//!
//! It changes how fast partition numbers are computed, never their value.

use crate::partition::Radix;
use crate::tuple::Tuple;

/// Tuples per batch of partition numbers.
pub(crate) const BATCH: usize = 16;

/// Whether this CPU runs the wide (AVX-512 F + DQ) kernels.
#[inline]
pub(crate) fn wide() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512dq")
            && std::arch::is_x86_feature_detected!("avx512vl")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The partition numbers of a batch (a loop the compiler vectorises).
#[inline(always)]
pub(crate) fn batch_ids<const TOP31: bool>(batch: &[Tuple; BATCH], radix: Radix) -> [u32; BATCH] {
    let mut ids = [0u32; BATCH];
    for (id, t) in ids.iter_mut().zip(batch) {
        *id = radix.of_with::<TOP31>(t.key) as u32;
    }
    ids
}

/// Adds the per-partition counts of `input` to `counts` (fanout > 1).
pub(crate) fn add_counts(input: &[Tuple], radix: Radix, counts: &mut [usize]) {
    #[cfg(target_arch = "x86_64")]
    if wide() {
        // SAFETY: the CPU has the features the wrapper enables (checked
        // by `wide`).
        unsafe { add_counts_wide(input, radix, counts) };
        return;
    }
    add_counts_body(input, radix, counts);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl")]
unsafe fn add_counts_wide(input: &[Tuple], radix: Radix, counts: &mut [usize]) {
    add_counts_body(input, radix, counts);
}

#[inline(always)]
fn add_counts_body(input: &[Tuple], radix: Radix, counts: &mut [usize]) {
    if radix.within_top31() {
        count_with::<true>(input, radix, counts);
    } else {
        count_with::<false>(input, radix, counts);
    }
}

/// Counts go to four interleaved tables, so that runs of one partition
/// (skewed data) do not serialise on one counter; u32 lanes are summed
/// into `counts` every `u32::MAX` tuples at most.
#[inline(always)]
fn count_with<const TOP31: bool>(input: &[Tuple], radix: Radix, counts: &mut [usize]) {
    let fanout = radix.fanout();
    let mut lanes = vec![0u32; 4 * fanout];
    for block in input.chunks(u32::MAX as usize & !(BATCH - 1)) {
        let mut batches = block.chunks_exact(BATCH);
        for batch in &mut batches {
            let Ok(batch) = <&[Tuple; BATCH]>::try_from(batch) else {
                continue;
            };
            let ids = batch_ids::<TOP31>(batch, radix);
            for (i, &id) in ids.iter().enumerate() {
                lanes[(i % 4) * fanout + id as usize] += 1;
            }
        }
        for t in batches.remainder() {
            lanes[radix.of_with::<TOP31>(t.key)] += 1;
        }
        for (p, c) in counts.iter_mut().enumerate() {
            *c += (0..4)
                .map(|l| lanes[l * fanout + p] as usize)
                .sum::<usize>();
        }
        lanes.fill(0);
    }
}
