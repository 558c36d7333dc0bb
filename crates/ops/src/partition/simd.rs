//! Wide-vector versions of the partitioning kernels, chosen at run time.
//!
//! The partition number of a tuple costs two 64-bit multiplies; with AVX2
//! the compiler computes several at once when they are taken in batches
//! ([`batch_ids`]), and a hash bucket's keys are compared in one go
//! ([`count_key`]). (AVX-512 would do more per instruction, but its
//! intrinsics and target feature need Rust 1.89, past the workspace's
//! minimum of 1.85.) The kernels are written once
//! as `#[inline(always)]` bodies; a `#[target_feature]` wrapper compiles a
//! second copy with the wide instructions, and [`wide`] says whether the
//! CPU may run it. This module holds the histogram kernel and the
//! dispatch, and [`run_kernel`] for kernels elsewhere (the radix join's
//! probe); the scatter kernel's wrapper lives with it in `swwcb`.
//!
//! It changes how fast partition numbers are computed, never their value.

use crate::partition::Radix;
use crate::tuple::Tuple;

/// Tuples per batch of partition numbers.
pub(crate) const BATCH: usize = 16;

/// Whether this CPU runs the wide kernels (AVX2, BMI1/2, POPCNT).
#[inline]
pub(crate) fn wide() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        has!("avx2") && has!("bmi1") && has!("bmi2") && has!("popcnt")
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

/// Proof of which instructions a kernel may use: [`Portable`] anywhere,
/// [`Wide`] only where [`run_kernel`] made one after checking the CPU.
pub(crate) trait Width: Copy {
    const WIDE: bool;
}

/// Baseline instructions only.
#[derive(Clone, Copy)]
pub(crate) struct Portable;

/// AVX2, BMI1/2 and POPCNT are available (the private field keeps anyone
/// else from making one).
#[derive(Clone, Copy)]
pub(crate) struct Wide(());

impl Width for Portable {
    const WIDE: bool = false;
}

impl Width for Wide {
    const WIDE: bool = true;
}

/// A computation that runs faster with wide instructions; `run` must be
/// `#[inline(always)]` so that [`run_kernel`]'s wide copy compiles it with
/// them.
pub(crate) trait Kernel {
    type Output;
    fn run<W: Width>(self, width: W) -> Self::Output;
}

/// Runs `kernel`, compiled for the wide instructions where the CPU has
/// them.
pub(crate) fn run_kernel<K: Kernel>(kernel: K) -> K::Output {
    #[cfg(target_arch = "x86_64")]
    if wide() {
        // SAFETY: the CPU has the features the wrapper enables (checked
        // by `wide`).
        return unsafe { run_wide(kernel) };
    }
    kernel.run(Portable)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi1,bmi2,popcnt")]
unsafe fn run_wide<K: Kernel>(kernel: K) -> K::Output {
    kernel.run(Wide(()))
}

/// How many of the first `len` (at most 4) tuples of `window` have key
/// `key`: one 64-byte compare where wide instructions are allowed.
#[inline(always)]
pub(crate) fn count_key<W: Width>(_width: W, window: &[Tuple; 4], len: usize, key: u64) -> u64 {
    debug_assert!(len <= 4);
    #[cfg(target_arch = "x86_64")]
    if W::WIDE {
        use std::arch::x86_64::{
            __m256i, _mm256_castsi256_pd, _mm256_cmpeq_epi64, _mm256_loadu_si256,
            _mm256_movemask_pd, _mm256_set1_epi64x,
        };
        // SAFETY: a `Wide` value exists, so the CPU has AVX2 (see
        // `run_kernel`); `window` is 64 readable bytes (two unaligned
        // 32-byte loads).
        let equal = unsafe {
            let wanted = _mm256_set1_epi64x(key as i64);
            let half = |i: usize| {
                let lanes = _mm256_loadu_si256(window.as_ptr().add(2 * i).cast::<__m256i>());
                _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(lanes, wanted))) as u8
            };
            half(0) | (half(1) << 4)
        };
        // Keys are the even lanes; the first `len` tuples are valid.
        let valid = (((1u32 << (2 * len)) - 1) & 0x55) as u8;
        return u64::from((equal & valid).count_ones());
    }
    (0..4)
        .map(|j| u64::from((j < len) & (window[j].key == key)))
        .sum()
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
#[target_feature(enable = "avx2,bmi1,bmi2,popcnt")]
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
