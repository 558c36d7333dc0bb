//! The kernels of the radix sort: digit histograms and stable scatters of
//! elements into the buckets of one digit.
//!
//! Two scatters: [`scatter_cached`] for ranges that fit in cache (plain
//! stores; it also counts the next digit on the way, so that an LSD sort
//! reads its data once per pass), and [`scatter_streaming`] for ranges far
//! larger than the caches (each bucket stages one cache line and writes it
//! out with streaming stores once full).
//!
//! This module moves elements by one digit; which digits to sort on, and
//! in what order, is `lsd`'s business.

use super::stream::{fence, store_line, LINE_BYTES};
use super::Keyed;

/// Bits per digit of the in-cache LSD passes (five passes cover the 53
/// bits left below an 11-bit split; 8-bit digits measured 15% slower).
pub(super) const LSD_BITS: u32 = 11;
/// Buckets per in-cache LSD digit.
pub(super) const LSD_RADIX: usize = 1 << LSD_BITS;

/// Counts per bucket of one in-cache digit.
pub(super) type Counts = [u32; LSD_RADIX];

/// The bucket of `key` for the digit of `mask`'s width at `shift`.
#[inline(always)]
pub(super) fn digit(key: u64, shift: u32, mask: u64) -> usize {
    ((key >> shift) & mask) as usize
}

/// Sets `starts` to the exclusive prefix sums of `counts`: where each
/// bucket starts.
pub(super) fn bucket_starts(counts: &Counts, starts: &mut [usize; LSD_RADIX]) {
    let mut total = 0usize;
    for (s, &c) in starts.iter_mut().zip(counts) {
        *s = total;
        total += c as usize;
    }
}

/// Sets `counts` to the histogram of the in-cache digit at `shift`
/// (`src` shorter than 2^32).
pub(super) fn count<T: Keyed>(src: &[T], shift: u32, counts: &mut Counts) {
    counts.fill(0);
    let mask = (LSD_RADIX - 1) as u64;
    for x in src {
        counts[digit(x.key(), shift, mask)] += 1;
    }
}

/// Writes `src` into `dst` ordered by the in-cache digit at `shift`,
/// keeping the order of equal digits (`next` = where each bucket starts).
/// With `count_next = Some((shift, counts))`, also sets `counts` to the
/// histogram of the digit at that shift.
pub(super) fn scatter_cached<T: Keyed>(
    src: &[T],
    dst: &mut [T],
    shift: u32,
    next: &mut [usize; LSD_RADIX],
    count_next: Option<(u32, &mut Counts)>,
) {
    let mask = (LSD_RADIX - 1) as u64;
    match count_next {
        Some((count_shift, counts)) => {
            counts.fill(0);
            for &x in src {
                let k = x.key();
                let b = digit(k, shift, mask);
                dst[next[b]] = x;
                next[b] += 1;
                counts[digit(k, count_shift, mask)] += 1;
            }
        }
        None => {
            for &x in src {
                let b = digit(x.key(), shift, mask);
                dst[next[b]] = x;
                next[b] += 1;
            }
        }
    }
}

/// What a split pass needs to know about its input: the histogram of
/// its digit and which key bits differ anywhere in it.
pub(super) struct Survey {
    pub counts: Vec<usize>,
    /// The OR of `key ^ first key` over all keys: bit i is set iff the
    /// keys do not all agree on bit i.
    pub differing: u64,
}

/// Reads `src` once: the histogram of the `bits`-wide digit at `shift`
/// and the bits on which keys differ.
pub(super) fn survey<T: Keyed>(src: &[T], shift: u32, bits: u32) -> Survey {
    let mask = (1u64 << bits) - 1;
    let mut counts = vec![0usize; 1 << bits];
    let first = src.first().map_or(0, Keyed::key);
    let mut differing = 0u64;
    for x in src {
        let k = x.key();
        differing |= k ^ first;
        counts[digit(k, shift, mask)] += 1;
    }
    Survey { counts, differing }
}

/// The bits of `key` below bit `top`.
#[inline(always)]
pub(super) fn below(key: u64, top: u32) -> u64 {
    key & u64::MAX.checked_shr(64 - top).unwrap_or(0)
}

/// The bit length (0..=`top`) of `key`'s bits below `top`: for keys that
/// agree on every bit from `top` up, a bucket number in key order that
/// separates keys of different magnitude.
#[inline(always)]
pub(super) fn magnitude(key: u64, top: u32) -> usize {
    (64 - below(key, top).leading_zeros()) as usize
}

/// Histogram of [`magnitude`] over `src`.
pub(super) fn magnitude_counts<T: Keyed>(src: &[T], top: u32) -> Vec<usize> {
    let mut counts = vec![0usize; top as usize + 1];
    for x in src {
        counts[magnitude(x.key(), top)] += 1;
    }
    counts
}

/// Writes `src` into `dst` ordered by `bucket_of(key)` (a split of the
/// radix sort, in key order), keeping the order within buckets; `bounds`
/// are the bucket boundaries (prefix sums of the bucket sizes). With
/// `stream`, full cache lines of `dst` bypass the caches.
pub(super) fn scatter_split<T, F>(
    src: &[T],
    dst: &mut [T],
    bounds: &[usize],
    stream: bool,
    bucket_of: F,
) where
    T: Keyed,
    F: Fn(u64) -> usize,
{
    if stream {
        scatter_streaming(src, dst, bounds, bucket_of);
    } else {
        scatter_plain(src, dst, bounds, bucket_of);
    }
}

/// [`scatter_split`] with streaming stores: full cache lines of `dst`
/// are written past the caches, so `dst` is not read and does not evict
/// them; `dst` is readable by other threads once they synchronise with
/// this one.
fn scatter_streaming<T, F>(src: &[T], dst: &mut [T], bounds: &[usize], bucket_of: F)
where
    T: Keyed,
    F: Fn(u64) -> usize,
{
    let size = std::mem::size_of::<T>();
    let offset_in_line = dst.as_ptr() as usize % LINE_BYTES;
    if size == 0 || LINE_BYTES % size != 0 || offset_in_line % size != 0 {
        // Elements straddle cache lines: no whole line to stream.
        return scatter_plain(src, dst, bounds, bucket_of);
    }
    let buckets = bounds.len() - 1;
    let mut staging = Staging {
        lines: vec![T::zeroed(); Staging::<T>::LINE * buckets],
        phase: offset_in_line / size,
        bounds,
    };
    let mut next: Vec<usize> = bounds[..buckets].to_vec();
    for &x in src {
        let b = bucket_of(x.key());
        let at = next[b];
        next[b] = at + 1;
        staging.put(dst, b, at, x);
    }
    fence();
    staging.drain(dst, &next);
}

/// One cache line per bucket, the line of `dst` being filled.
struct Staging<'a, T> {
    lines: Vec<T>,
    /// Position of `dst[0]` within its cache line, in elements.
    phase: usize,
    bounds: &'a [usize],
}

impl<T: Keyed> Staging<'_, T> {
    /// Elements per cache line (a power of two: the caller checked that
    /// the size divides the line).
    const LINE: usize = LINE_BYTES / std::mem::size_of::<T>();

    /// Stages `x`, bound for `dst[at]` in bucket `b`; writes the line out
    /// when `at` is its last element.
    #[inline(always)]
    fn put(&mut self, dst: &mut [T], b: usize, at: usize, x: T) {
        let line = Self::LINE;
        let slot = (at + self.phase) % line;
        let staged = &mut self.lines[b * line..(b + 1) * line];
        staged[slot] = x;
        if slot + 1 == line {
            let end = at + 1;
            let bucket_start = self.bounds[b];
            if end >= bucket_start + line {
                store_line(&mut dst[end - line..end], staged);
            } else {
                // The line starts before the bucket: write our part only.
                for i in bucket_start..end {
                    dst[i] = staged[(i + self.phase) % line];
                }
            }
        }
    }

    /// Writes out the partly filled last line of every bucket (`next[b]`
    /// = one past bucket b's last element).
    fn drain(&self, dst: &mut [T], next: &[usize]) {
        let line = Self::LINE;
        for (b, &end) in next.iter().enumerate() {
            let line_start = end.saturating_sub((end + self.phase) % line);
            let staged = &self.lines[b * line..(b + 1) * line];
            for i in line_start.max(self.bounds[b])..end {
                dst[i] = staged[(i + self.phase) % line];
            }
        }
    }
}

/// [`scatter_split`] with plain stores.
fn scatter_plain<T, F>(src: &[T], dst: &mut [T], bounds: &[usize], bucket_of: F)
where
    T: Keyed,
    F: Fn(u64) -> usize,
{
    let mut next: Vec<usize> = bounds[..bounds.len() - 1].to_vec();
    for &x in src {
        let b = bucket_of(x.key());
        dst[next[b]] = x;
        next[b] += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::partition::prefix_sum;
    use crate::tuple::Tuple;

    fn check_streaming<T: Keyed + PartialEq + std::fmt::Debug>(src: &[T], skip: usize, bits: u32) {
        let shift = 3;
        let survey = survey(src, shift, bits);
        let bounds = prefix_sum(&survey.counts);
        let mut buf = vec![T::zeroed(); src.len() + skip];
        let mask = (1u64 << bits) - 1;
        scatter_split(src, &mut buf[skip..], &bounds, true, |k| {
            digit(k, shift, mask)
        });
        let mut expect = src.to_vec();
        expect.sort_by_key(|x| digit(x.key(), shift, mask)); // stable
        assert_eq!(&buf[skip..], &expect[..]);
    }

    #[test]
    fn streaming_scatter_is_a_stable_bucket_sort_at_any_alignment() {
        let keys: Vec<u64> = (0..5000u64)
            .map(|i| crate::datagen::splitmix64(i) % 977)
            .collect();
        let tuples: Vec<Tuple> = keys
            .iter()
            .enumerate()
            .map(|(i, &k)| Tuple::new(k, i as u64))
            .collect();
        for skip in 0..9 {
            for bits in [1, 4, 11] {
                check_streaming(&keys, skip, bits);
                check_streaming(&tuples, skip, bits);
            }
        }
        check_streaming::<u64>(&[], 0, 4);
        check_streaming(&[7u64], 1, 4);
    }

    #[test]
    fn cached_scatter_sorts_by_digit_and_counts_the_next() {
        let src: Vec<u64> = (0..3000u64).map(|i| i.wrapping_mul(0x9e37_79b9)).collect();
        let mask = (LSD_RADIX - 1) as u64;
        let mut dst = vec![0u64; src.len()];
        let (mut counts, mut next_counts) = ([0u32; LSD_RADIX], [0u32; LSD_RADIX]);
        let mut next = [0usize; LSD_RADIX];
        count(&src, 0, &mut counts);
        bucket_starts(&counts, &mut next);
        scatter_cached(
            &src,
            &mut dst,
            0,
            &mut next,
            Some((LSD_BITS, &mut next_counts)),
        );
        let mut sorted = src.clone();
        sorted.sort_by_key(|k| k & mask); // stable
        assert_eq!(dst, sorted);
        count(&src, LSD_BITS, &mut counts);
        assert_eq!(next_counts, counts);
        let mut by_size = src.clone();
        let bounds = prefix_sum(&magnitude_counts(&src, 40));
        scatter_split(&src, &mut by_size, &bounds, false, |k| magnitude(k, 40));
        assert!(by_size
            .windows(2)
            .all(|w| magnitude(w[0], 40) <= magnitude(w[1], 40)));
        assert_eq!(
            (below(u64::MAX, 0), below(u64::MAX, 64), below(0xff, 4)),
            (0, u64::MAX, 0xf)
        );
        let s = survey(&src, 0, 4);
        assert_eq!(s.counts.iter().sum::<usize>(), src.len());
        assert_eq!(s.differing, src.iter().fold(0, |a, &k| a | (k ^ src[0])));
    }
}
