//! The radix sort of local runs: LSD passes over cache-sized ranges.
//!
//! A plain LSD radix sort of a run far larger than the caches makes every
//! pass a trip through memory. So the sort first splits a large range by
//! its highest differing key bits (an up to 11-bit digit, streamed out
//! with non-temporal stores, the only pass that goes through memory) into
//! buckets of about a cache's size, and then sorts each bucket with 11-bit
//! LSD passes that stay in cache. Buckets that come out too large (skew)
//! are split again on the next bits.
//!
//! A bucket is LSD-sorted only on its highest differing digits, as many as
//! cover log2(its length) + 6 bits: then about one key in 32 shares its
//! high part with a neighbour, and a fix-up pass sorts those short runs on
//! the bits below (recursively, so duplicates-heavy keys stay linear).
//! For uniform 64-bit keys that is 2 passes per bucket instead of 5.
//! Digits on which all keys of a range agree are skipped: the split's
//! survey finds the bits on which keys differ at all, and every LSD pass
//! counts the next digit on the way and skips it when one bucket holds
//! everything. Every pass moves elements between the range and an equally
//! long scratch range.
//!
//! Generic over the element ([`Keyed`]): plain `u64` keys and [`Tuple`]s
//! sort with the same code. The order of equal keys is unspecified. This
//! module sorts one slice on the calling thread; the parallel NUMA-aware
//! sort is in `numa`.
//!
//! [`Tuple`]: crate::tuple::Tuple

use super::scatter::{
    below, bucket_starts, count, digit, magnitude, magnitude_counts, scatter_cached, scatter_split,
    survey, LSD_BITS, LSD_RADIX,
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
    match presorted(data) {
        Some(Order::Ascending) => {}
        Some(Order::Descending) => data.reverse(),
        None => sort_range(data, &mut scratch[..data.len()], u64::MAX, Side::Data),
    }
}

/// Input that is already in order (checking stops at the first element
/// out of order, so it costs next to nothing on other input).
enum Order {
    Ascending,
    Descending,
}

fn presorted<T: Keyed>(data: &[T]) -> Option<Order> {
    if data.is_sorted_by_key(Keyed::key) {
        Some(Order::Ascending)
    } else if data.is_sorted_by(|a, b| a.key() >= b.key()) {
        Some(Order::Descending)
    } else {
        None
    }
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
    match presorted(input) {
        Some(Order::Ascending) => return out.copy_from_slice(input),
        Some(Order::Descending) => {
            out.copy_from_slice(input);
            return out.reverse();
        }
        None => {}
    }
    if fits_in_cache::<T>(input.len()) {
        out.copy_from_slice(input);
        return sort_in_cache(out, scratch, differing_bits(input), Side::Data);
    }
    match plan_split(input, u64::MAX) {
        None => out.copy_from_slice(input),
        Some(split) => {
            split.apply(input, scratch);
            for (r, varying) in split.buckets() {
                sort_range(&mut scratch[r.clone()], &mut out[r], varying, Side::Scratch);
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

/// The bits on which the keys of `data` do not all agree.
fn differing_bits<T: Keyed>(data: &[T]) -> u64 {
    let first = data.first().map_or(0, Keyed::key);
    data.iter().fold(0, |acc, x| acc | (x.key() ^ first))
}

fn fits_in_cache<T>(len: usize) -> bool {
    len.saturating_mul(std::mem::size_of::<T>()) <= CACHE_BYTES
}

/// Sorts `data` (keys differ at most on the bits of `varying`), leaving
/// the result in `data` or `scratch` as `result` says.
fn sort_range<T: Keyed>(data: &mut [T], scratch: &mut [T], varying: u64, result: Side) {
    if fits_in_cache::<T>(data.len()) {
        // At the top, find the bits that vary; below a split they are known.
        let varying = match varying {
            u64::MAX => differing_bits(data),
            known => known,
        };
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
    for (r, varying) in split.buckets() {
        let (bucket, bucket_scratch) = (&mut scratch[r.clone()], &mut data[r]);
        sort_range(bucket, bucket_scratch, varying, result.other());
    }
}

/// One split of a range: by a digit of its highest differing bits, or,
/// when that digit would leave most keys in one bucket (heavy tails), by
/// the keys' magnitude.
struct Split {
    how: Bucketing,
    /// Bucket boundaries (prefix sums of the bucket sizes).
    bounds: Vec<usize>,
    /// The bits on which keys of the range differ.
    differing: u64,
    /// Whether to stream the output past the caches.
    stream: bool,
}

#[derive(Clone, Copy)]
enum Bucketing {
    /// The `bits`-wide digit at `shift`.
    Digit { shift: u32, bits: u32 },
    /// [`magnitude`] below bit `top`.
    Magnitude { top: u32 },
}

impl Split {
    fn apply<T: Keyed>(&self, src: &[T], dst: &mut [T]) {
        let (bounds, stream) = (&self.bounds, self.stream);
        match self.how {
            Bucketing::Digit { shift, bits } => {
                let mask = (1u64 << bits) - 1;
                scatter_split(src, dst, bounds, stream, |k| digit(k, shift, mask));
            }
            Bucketing::Magnitude { top } => {
                scatter_split(src, dst, bounds, stream, |k| magnitude(k, top));
            }
        }
    }

    /// Every bucket's range and the bits on which its keys may differ.
    fn buckets(&self) -> impl Iterator<Item = (std::ops::Range<usize>, u64)> + '_ {
        self.bounds.windows(2).enumerate().map(|(b, w)| {
            let top = match self.how {
                Bucketing::Digit { shift, .. } => shift,
                // Bucket b holds keys whose highest bit below `top` is b - 1.
                Bucketing::Magnitude { .. } => (b as u32).saturating_sub(1),
            };
            (w[0]..w[1], below(self.differing, top))
        })
    }
}

/// The split of `src` (keys differ at most on `varying`): a digit wide
/// enough for cache-sized buckets, ending at the highest bit on which
/// keys differ, or by magnitude when that takes a smaller largest bucket
/// than a digit holding more than half of the keys. None when all keys
/// are equal.
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
    let mut how = Bucketing::Digit { shift, bits };
    let mut counts = surveyed.counts;
    let largest = counts.iter().copied().max().unwrap_or(0);
    if largest > src.len() / 2 {
        let by_magnitude = magnitude_counts(src, high);
        if by_magnitude.iter().copied().max().unwrap_or(0) < largest {
            how = Bucketing::Magnitude { top: high };
            counts = by_magnitude;
        }
    }
    let bytes = src.len().saturating_mul(std::mem::size_of::<T>());
    Some(Split {
        how,
        bounds: prefix_sum(&counts),
        differing: surveyed.differing,
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

/// Sorts a cache-sized range: LSD passes over the highest digits that
/// touch `varying`, as many as make equal high parts rare, then a fix-up
/// of the few runs of equal high parts on the bits below.
fn sort_in_cache<T: Keyed>(data: &mut [T], scratch: &mut [T], varying: u64, result: Side) {
    if data.len() <= TINY {
        insertion_sort(data);
        if result == Side::Scratch {
            scratch.copy_from_slice(data);
        }
        return;
    }
    let (shifts, below) = plan_passes(varying, data.len());
    let holder = lsd_passes(data, scratch, &shifts);
    let (sorted, spare) = match holder {
        Side::Data => (&mut *data, &mut *scratch),
        Side::Scratch => (&mut *scratch, &mut *data),
    };
    if let (Some(&low_shift), true) = (shifts.first(), below != 0) {
        fix_ties(sorted, spare, low_shift, below);
    }
    match (holder, result) {
        (Side::Data, Side::Scratch) => scratch.copy_from_slice(data),
        (Side::Scratch, Side::Data) => data.copy_from_slice(scratch),
        _ => {}
    }
}

/// Bits sorted beyond log2(length) before the rest is left to the
/// fix-up: with 6, about one element in 32 has a twin high part.
const TIE_MARGIN_BITS: u32 = 6;

/// The LSD passes for `len` keys that differ on `varying`: the shifts of
/// the digits to sort on, in pass order (lowest first), taken from the
/// top until log2(len) + [`TIE_MARGIN_BITS`] varying bits are covered;
/// and the varying bits left below them.
fn plan_passes(varying: u64, len: usize) -> (Vec<u32>, u64) {
    let needed = usize::BITS - len.leading_zeros() + TIE_MARGIN_BITS;
    let mut shifts = Vec::new();
    let (mut covered, mut top) = (0, 64 - varying.leading_zeros());
    while top > 0 && covered < needed {
        let shift = top.saturating_sub(LSD_BITS);
        let in_digit = (varying >> shift) & ((1u64 << (top - shift)) - 1);
        if in_digit != 0 {
            shifts.push(shift);
            covered += in_digit.count_ones();
        }
        top = shift;
    }
    shifts.reverse();
    (shifts, varying & ((1u64 << top) - 1))
}

/// Stable LSD passes over the digits at `shifts` (lowest first) between
/// `data` and `scratch`, skipping digits on which all keys agree;
/// returns which buffer holds the result.
fn lsd_passes<T: Keyed>(data: &mut [T], scratch: &mut [T], shifts: &[u32]) -> Side {
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
        let count_next = next_shift.map(|s| (s, &mut next_counts));
        scatter_cached(src, dst, shift, &mut next, count_next);
        std::mem::swap(&mut counts, &mut next_counts);
        holder = holder.other();
    }
    holder
}

/// `sorted` is ordered by the key bits from `shift` up; sorts every run
/// of equal high parts by the bits of `below` (the varying bits under
/// `shift`), using the same range of `spare` as scratch.
fn fix_ties<T: Keyed>(sorted: &mut [T], spare: &mut [T], shift: u32, below: u64) {
    let mut start = 0;
    while start < sorted.len() {
        let high = sorted[start].key() >> shift;
        let end = start
            + 1
            + sorted[start + 1..]
                .iter()
                .take_while(|x| x.key() >> shift == high)
                .count();
        if end - start > 1 {
            let (run, run_spare) = (&mut sorted[start..end], &mut spare[start..end]);
            sort_in_cache(run, run_spare, below, Side::Data);
        }
        start = end;
    }
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
