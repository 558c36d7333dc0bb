//! The AVX2 body of the nearest-mean search, written with intrinsics
//! because the compiler does not vectorise the running lowest-index
//! minimum on its own: per point, the distances to eight means at a time
//! (per word, `vpsubd` and a `vpmulld` square wrapping as the C code's
//! `int`s, or for pair words `vpsubw` and one `vpmaddwd`), an unsigned
//! compare against each lane's best so far, and a blend of the winning
//! indices. The portable body in the parent module computes the same.
//!
//! The intrinsics are called only with an [`Avx2`] token in hand, which
//! exists only once the CPU is known to have AVX2; the helpers are
//! `#[inline(always)]` so that they compile into the one
//! `#[target_feature]` entry point. It only searches: the table layout
//! and padding are the parent's.

use std::arch::x86_64::{
    __m256i, _mm256_add_epi32, _mm256_blendv_epi8, _mm256_castsi256_si128, _mm256_cmpeq_epi32,
    _mm256_loadu_si256, _mm256_madd_epi16, _mm256_max_epu32, _mm256_min_epu32, _mm256_mullo_epi32,
    _mm256_permute2x128_si256, _mm256_set1_epi32, _mm256_setr_epi32, _mm256_setzero_si256,
    _mm256_shuffle_epi32, _mm256_sub_epi16, _mm256_sub_epi32, _mm_cvtsi128_si32,
};

use super::LANES;

/// Proof that the CPU has AVX2 (the private field keeps anyone outside
/// this module from making one).
#[derive(Clone, Copy)]
struct Avx2(());

/// Sets `nearest[i]` to the nearest mean of point `i` and returns how
/// many slots changed value, with the means in
/// `by_word` (word `w` of mean `j` at `w * padded + j`), `words` words per
/// point and mean, pair words when `pairs`. Points of up to four words get
/// a copy of the loop with the count fixed.
///
/// # Safety
/// The CPU must support AVX2.
///
/// # Panics
/// If `by_word` is not `words * padded` values or `padded` is not a
/// multiple of [`LANES`].
#[target_feature(enable = "avx2")]
pub(super) unsafe fn nearest_means(
    by_word: &[i32],
    words: usize,
    padded: usize,
    pairs: bool,
    points: &[i32],
    nearest: &mut [u32],
) -> usize {
    assert!(
        by_word.len() == words * padded && padded % LANES == 0,
        "a table of whole groups"
    );
    let avx2 = Avx2(());
    let table = Table {
        by_word,
        padded,
        words,
    };
    match (pairs, words) {
        (false, 1) => each_point::<1, false>(avx2, table, points, nearest),
        (false, 2) => each_point::<2, false>(avx2, table, points, nearest),
        (false, 3) => each_point::<3, false>(avx2, table, points, nearest),
        (false, 4) => each_point::<4, false>(avx2, table, points, nearest),
        (true, 1) => each_point::<1, true>(avx2, table, points, nearest),
        (true, 2) => each_point::<2, true>(avx2, table, points, nearest),
        (true, 3) => each_point::<3, true>(avx2, table, points, nearest),
        (true, 4) => each_point::<4, true>(avx2, table, points, nearest),
        (false, _) => any_width::<false>(avx2, table, points, nearest),
        (true, _) => any_width::<true>(avx2, table, points, nearest),
    }
}

/// The means word by word: `words` rows of `padded` (a multiple of
/// [`LANES`]) values, checked on construction in [`nearest_means`].
#[derive(Clone, Copy)]
struct Table<'a> {
    by_word: &'a [i32],
    padded: usize,
    words: usize,
}

impl Table<'_> {
    /// Word `w` of the eight means from `group`.
    ///
    /// # Safety
    /// `w < words` and `group` a multiple of [`LANES`] below `padded`.
    #[inline(always)]
    unsafe fn load(self, _avx2: Avx2, w: usize, group: usize) -> __m256i {
        debug_assert!(w < self.words && group < self.padded);
        // SAFETY: AVX2 is present (the token). `by_word` holds `words` rows
        // of `padded` values and `padded` is a multiple of LANES, so by
        // the contract the 32 bytes from `w * padded + group` lie inside
        // it; the load is unaligned.
        unsafe {
            _mm256_loadu_si256(
                self.by_word
                    .as_ptr()
                    .add(w * self.padded + group)
                    .cast::<__m256i>(),
            )
        }
    }
}

#[inline(always)]
fn each_point<const W: usize, const PAIRS: bool>(
    avx2: Avx2,
    table: Table<'_>,
    points: &[i32],
    nearest: &mut [u32],
) -> usize {
    let mut changed = 0;
    for (point, slot) in points.chunks_exact(W).zip(nearest.iter_mut()) {
        let xs: [__m256i; W] = std::array::from_fn(|w| broadcast(avx2, point[w]));
        let winner = search(avx2, table.padded, |group| {
            let mut dist = zero(avx2);
            for (w, &x) in xs.iter().enumerate() {
                // SAFETY: w < W, the table's word count (checked by
                // `nearest_means`); `search` passes groups below `padded`
                // in steps of LANES.
                let means = unsafe { table.load(avx2, w, group) };
                dist = add_square_of_difference::<PAIRS>(avx2, dist, x, means);
            }
            dist
        });
        changed += usize::from(*slot != winner);
        *slot = winner;
    }
    changed
}

#[inline(always)]
fn any_width<const PAIRS: bool>(
    avx2: Avx2,
    table: Table<'_>,
    points: &[i32],
    nearest: &mut [u32],
) -> usize {
    let mut changed = 0;
    for (point, slot) in points.chunks_exact(table.words).zip(nearest.iter_mut()) {
        let winner = search(avx2, table.padded, |group| {
            let mut dist = zero(avx2);
            for (w, &x) in point.iter().enumerate() {
                // SAFETY: w < point.len(), the table's word count (checked
                // by `nearest_means`); `search` passes groups below
                // `padded` in steps of LANES.
                let means = unsafe { table.load(avx2, w, group) };
                dist = add_square_of_difference::<PAIRS>(avx2, dist, broadcast(avx2, x), means);
            }
            dist
        });
        changed += usize::from(*slot != winner);
        *slot = winner;
    }
    changed
}

/// The nearest of `padded` means, `distances(group)` giving the distances
/// to the eight from `group`. Even and odd groups go to two independent
/// searches, so that one's compare-and-blend chain overlaps the other's.
#[inline(always)]
fn search(avx2: Avx2, padded: usize, mut distances: impl FnMut(usize) -> __m256i) -> u32 {
    let mut even = Search::new(avx2, 0);
    let mut odd = Search::new(avx2, LANES as i32);
    let mut group = 0;
    while group + LANES < padded {
        even.offer(distances(group));
        odd.offer(distances(group + LANES));
        group += 2 * LANES;
    }
    if group < padded {
        even.offer(distances(group));
    }
    Search::first_smallest(&even, &odd)
}

#[inline(always)]
fn broadcast(_avx2: Avx2, x: i32) -> __m256i {
    // SAFETY: AVX2 is present (the token).
    unsafe { _mm256_set1_epi32(x) }
}

#[inline(always)]
fn zero(_avx2: Avx2) -> __m256i {
    // SAFETY: AVX2 is present (the token).
    unsafe { _mm256_setzero_si256() }
}

/// `dist + (x - m)²` lane by lane, wrapping; for pair words the two
/// 16-bit differences' squares (exact: the encoding keeps them within
/// ±32767).
#[inline(always)]
fn add_square_of_difference<const PAIRS: bool>(
    _avx2: Avx2,
    dist: __m256i,
    x: __m256i,
    m: __m256i,
) -> __m256i {
    // SAFETY: AVX2 is present (the token).
    unsafe {
        if PAIRS {
            let diff = _mm256_sub_epi16(x, m);
            _mm256_add_epi32(dist, _mm256_madd_epi16(diff, diff))
        } else {
            let diff = _mm256_sub_epi32(x, m);
            _mm256_add_epi32(dist, _mm256_mullo_epi32(diff, diff))
        }
    }
}

/// Per lane, the smallest distance offered so far and the index of the
/// first mean that had it.
struct Search {
    avx2: Avx2,
    best: __m256i,
    best_index: __m256i,
    index: __m256i,
}

impl Search {
    /// A search whose first group starts at mean `first` and whose
    /// groups are two groups apart.
    #[inline(always)]
    fn new(avx2: Avx2, first: i32) -> Self {
        // SAFETY: AVX2 is present (the token).
        unsafe {
            Search {
                avx2,
                best: _mm256_set1_epi32(-1),
                best_index: _mm256_setzero_si256(),
                index: _mm256_add_epi32(
                    _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                    _mm256_set1_epi32(first),
                ),
            }
        }
    }

    /// Takes the distances of the next group of means.
    #[inline(always)]
    fn offer(&mut self, dist: __m256i) {
        let Avx2(()) = self.avx2;
        // SAFETY: AVX2 is present (the token held since `new`).
        unsafe {
            // dist >= best (unsigned) <=> max(dist, best) == dist: a tie
            // keeps the earlier, lower index.
            let not_nearer = _mm256_cmpeq_epi32(_mm256_max_epu32(dist, self.best), dist);
            self.best = _mm256_min_epu32(dist, self.best);
            self.best_index = _mm256_blendv_epi8(self.index, self.best_index, not_nearer);
            self.index = _mm256_add_epi32(self.index, _mm256_set1_epi32(2 * LANES as i32));
        }
    }

    /// The index of the smallest distance in either search, the lowest
    /// index among equals: the minimum over all lanes, then the smallest
    /// index of a lane holding it, each by three halving steps. A lane
    /// that never saw a distance below `u32::MAX` still holds index 0, so
    /// when none did the answer is mean 0, as in the original.
    #[inline(always)]
    fn first_smallest(even: &Search, odd: &Search) -> u32 {
        let avx2 = even.avx2;
        // SAFETY: AVX2 is present (the token held since `new`).
        unsafe {
            let smallest = all_lanes_min(avx2, _mm256_min_epu32(even.best, odd.best));
            let none = _mm256_set1_epi32(-1);
            let even_index = _mm256_blendv_epi8(
                none,
                even.best_index,
                _mm256_cmpeq_epi32(even.best, smallest),
            );
            let odd_index =
                _mm256_blendv_epi8(none, odd.best_index, _mm256_cmpeq_epi32(odd.best, smallest));
            let index = all_lanes_min(avx2, _mm256_min_epu32(even_index, odd_index));
            _mm_cvtsi128_si32(_mm256_castsi256_si128(index)) as u32
        }
    }
}

/// Every lane set to the smallest lane of `v` (unsigned).
#[inline(always)]
fn all_lanes_min(_avx2: Avx2, v: __m256i) -> __m256i {
    // SAFETY: AVX2 is present (the token).
    unsafe {
        let v = _mm256_min_epu32(v, _mm256_permute2x128_si256::<0x01>(v, v));
        let v = _mm256_min_epu32(v, _mm256_shuffle_epi32::<0b01_00_11_10>(v));
        _mm256_min_epu32(v, _mm256_shuffle_epi32::<0b10_11_00_01>(v))
    }
}
