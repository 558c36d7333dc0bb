//! The radix sort of local runs: LSD passes over cache-sized ranges.
//!
//! A plain LSD radix sort of a run far larger than the caches makes every
//! pass a trip through memory. So the sort first splits a large range by
//! its highest differing key bits (an up to 11-bit digit, streamed out
//! with non-temporal stores, the only pass that goes through memory) into
//! buckets of about a cache's size, and then sorts each bucket with 11-bit
//! LSD passes that stay in cache. Buckets that come out too large (skew)
//! are split again on the next bits. Digits on which all keys of a range
//! agree are skipped: the top-level survey finds the bits on which keys
//! differ at all, and every LSD pass counts the next digit on the way and
//! skips it when one bucket holds everything. Every pass moves elements
//! between the range and an equally long scratch range.
//!
//! Generic over the element ([`Keyed`]): plain `u64` keys and [`Tuple`]s
//! sort with the same code. The order of equal keys is unspecified. This
//! module sorts one slice on the calling thread; the parallel NUMA-aware
//! sort is in `numa`.
//!
//! [`Tuple`]: crate::tuple::Tuple

use super::scatter::{
    bucket_starts, count, scatter_cached, scatter_split, survey, LSD_BITS, LSD_RADIX,
};
use super::Keyed;
use crate::partition::prefix_sum;

/// Most bits of one split digit (2048 buckets).
const SPLIT_BITS: u32 = 11;
/// Ranges up to this size are sorted with in-cache LSD passes (the range
/// and its scratch together take half of a 1 MiB L2 cache).
const CACHE_BYTES: usize = 256 << 10;
/// Splits of ranges larger than this stream their output past the caches.
const STREAM_BYTES: usize = 8 << 20;
/// Ranges up to this length are insertion-sorted.
const TINY: usize = 24;

/// Sorts `data` by key, using `scratch` (at least as long as `data`) for
/// the passes.
///
/// # Panics
/// If `scratch` is shorter than `data`.
pub fn radix_sort<T: Keyed>(data: &mut [T], scratch: &mut [T]) {
    assert!(scratch.len() >= data.len(), "the scratch is too short");
    let scratch = &mut scratch[..data.len()];
    sort_range(data, scratch, u64::MAX, Side::Data);
}

/// Writes `input` sorted by key into `out`, using `scratch` for the
/// passes; `input` is only read.
///
/// # Panics
/// If `out` or `scratch` is not as long as `input`.
pub fn radix_sort_into<T: Keyed>(input: &[T], out: &mut [T], scratch: &mut [T]) {
    assert_eq!(
        input.len(),
        out.len(),
        "the output must be as long as the input"
    );
    assert_eq!(
        input.len(),
        scratch.len(),
        "the scratch must be as long as the input"
    );
    if fits_in_cache::<T>(input.len()) {
        out.copy_from_slice(input);
        return sort_in_cache(out, scratch, u64::MAX, Side::Data);
    }
    match plan_split(input, u64::MAX) {
        None => out.copy_from_slice(input),
        Some(split) => {
            split.apply(input, scratch);
            for r in split.buckets() {
                sort_range(
                    &mut scratch[r.clone()],
                    &mut out[r],
                    split.below,
                    Side::Scratch,
                );
            }
        }
    }
}

/// Sorts `data` by key with a scratch buffer of its own.
pub fn sort<T: Keyed>(data: &mut [T]) {
    let mut scratch = vec![T::zeroed(); data.len()];
    radix_sort(data, &mut scratch);
}

/// Which of the two buffers of a range a result should end up in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Data,
    Scratch,
}

impl Side {
    fn other(self) -> Self {
        match self {
            Side::Data => Side::Scratch,
            Side::Scratch => Side::Data,
        }
    }
}

fn fits_in_cache<T>(len: usize) -> bool {
    len.saturating_mul(std::mem::size_of::<T>()) <= CACHE_BYTES
}

/// Sorts `data` (keys differ at most on the bits of `varying`), leaving
/// the result in `data` or `scratch` as `result` says.
fn sort_range<T: Keyed>(data: &mut [T], scratch: &mut [T], varying: u64, result: Side) {
    if fits_in_cache::<T>(data.len()) {
        return sort_in_cache(data, scratch, varying, result);
    }
    let Some(split) = plan_split(data, varying) else {
        // All keys are equal: already sorted.
        if result == Side::Scratch {
            scratch.copy_from_slice(data);
        }
        return;
    };
    split.apply(data, scratch);
    for r in split.buckets() {
        let (bucket, bucket_scratch) = (&mut scratch[r.clone()], &mut data[r]);
        sort_range(bucket, bucket_scratch, split.below, result.other());
    }
}

/// One split of a range by a digit of its highest differing bits.
struct Split {
    shift: u32,
    bits: u32,
    /// Bucket boundaries (prefix sums of the bucket sizes).
    bounds: Vec<usize>,
    /// The bits on which keys of one bucket may still differ.
    below: u64,
    /// Whether to stream the output past the caches.
    stream: bool,
}

impl Split {
    fn apply<T: Keyed>(&self, src: &[T], dst: &mut [T]) {
        scatter_split(src, dst, self.shift, self.bits, &self.bounds, self.stream);
    }

    fn buckets(&self) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        self.bounds.windows(2).map(|w| w[0]..w[1])
    }
}

/// The split of `src` (keys differ at most on `varying`): a digit wide
/// enough for cache-sized buckets, ending at the highest bit on which
/// keys differ. None when all keys are equal.
fn plan_split<T: Keyed>(src: &[T], varying: u64) -> Option<Split> {
    let top = 64 - varying.leading_zeros();
    let bits = split_bits::<T>(src.len()).min(top);
    let mut shift = top - bits;
    let mut surveyed = survey(src, shift, bits);
    if surveyed.differing == 0 {
        return None;
    }
    let high = 64 - surveyed.differing.leading_zeros();
    let mut bits = bits;
    if high <= shift {
        // Keys agree on the whole digit: take the one below `high`.
        bits = bits.min(high);
        shift = high - bits;
        surveyed = survey(src, shift, bits);
    }
    let bytes = src.len().saturating_mul(std::mem::size_of::<T>());
    Some(Split {
        shift,
        bits,
        bounds: prefix_sum(&surveyed.counts),
        below: surveyed.differing & ((1u64 << shift) - 1),
        stream: bytes > STREAM_BYTES,
    })
}

/// Digit bits for splitting `len` elements into buckets of half the
/// in-cache size.
fn split_bits<T>(len: usize) -> u32 {
    let bytes = len.saturating_mul(std::mem::size_of::<T>());
    let buckets = bytes.div_ceil(CACHE_BYTES / 2).max(2);
    buckets
        .next_power_of_two()
        .trailing_zeros()
        .clamp(1, SPLIT_BITS)
}

/// Sorts a cache-sized range with LSD passes over the digits that touch
/// `varying`.
fn sort_in_cache<T: Keyed>(data: &mut [T], scratch: &mut [T], varying: u64, result: Side) {
    if data.len() <= TINY {
        insertion_sort(data);
        if result == Side::Scratch {
            scratch.copy_from_slice(data);
        }
        return;
    }
    let shifts = digit_shifts(varying);
    let len = data.len();
    let mut holder = Side::Data;
    let (mut counts, mut next_counts) = ([0u32; LSD_RADIX], [0u32; LSD_RADIX]);
    let mut next = [0usize; LSD_RADIX];
    if let Some(&first) = shifts.first() {
        count(data, first, &mut counts);
    }
    for (i, &shift) in shifts.iter().enumerate() {
        let next_shift = shifts.get(i + 1).copied();
        let (src, dst) = match holder {
            Side::Data => (&*data, &mut *scratch),
            Side::Scratch => (&*scratch, &mut *data),
        };
        if counts.iter().any(|&c| c as usize == len) {
            // One bucket holds everything: this digit is already sorted.
            if let Some(next_shift) = next_shift {
                count(src, next_shift, &mut counts);
            }
            continue;
        }
        bucket_starts(&counts, &mut next);
        scatter_cached(
            src,
            dst,
            shift,
            &mut next,
            next_shift.map(|s| (s, &mut next_counts)),
        );
        std::mem::swap(&mut counts, &mut next_counts);
        holder = holder.other();
    }
    match (holder, result) {
        (Side::Data, Side::Scratch) => scratch.copy_from_slice(data),
        (Side::Scratch, Side::Data) => data.copy_from_slice(scratch),
        _ => {}
    }
}

/// The shifts of the LSD digits that contain a bit of `varying`, lowest
/// first.
fn digit_shifts(varying: u64) -> Vec<u32> {
    let bits = LSD_BITS;
    (0..64)
        .step_by(bits as usize)
        .filter(|&shift| (varying >> shift) & ((1u64 << bits) - 1) != 0)
        .collect()
}

fn insertion_sort<T: Keyed>(data: &mut [T]) {
    for i in 1..data.len() {
        let x = data[i];
        let mut j = i;
        while j > 0 && data[j - 1].key() > x.key() {
            data[j] = data[j - 1];
            j -= 1;
        }
        data[j] = x;
    }
}
