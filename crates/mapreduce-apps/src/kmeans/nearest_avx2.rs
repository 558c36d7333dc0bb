//! The AVX2 body of the nearest-mean search, written with intrinsics
//! because the compiler does not vectorise the running lowest-index
//! minimum on its own: per point, the distances to eight means at a time
//! (`vpmulld` squares, wrapping as the C code's `int`s), an unsigned
//! compare against each lane's best so far, and a blend of the winning
//! indices. The portable body in the parent module computes the same.
//!
//! The intrinsics are called only with an [`Avx2`] token in hand, which
//! exists only once the CPU is known to have AVX2; the helpers are
//! `#[inline(always)]` so that they compile into the one
//! `#[target_feature]` entry point. It only searches: the table layout
//! and padding are the parent's.

use std::arch::x86_64::{
    __m256i, _mm256_add_epi32, _mm256_blendv_epi8, _mm256_cmpeq_epi32, _mm256_loadu_si256,
    _mm256_max_epu32, _mm256_min_epu32, _mm256_mullo_epi32, _mm256_set1_epi32, _mm256_setr_epi32,
    _mm256_setzero_si256, _mm256_storeu_si256, _mm256_sub_epi32,
};

use super::{first_of_lanes, LANES};

/// Proof that the CPU has AVX2 (the private field keeps anyone outside
/// this module from making one).
#[derive(Clone, Copy)]
struct Avx2(());

/// Sets `nearest[i]` to the nearest mean of point `i`, with the means in
/// `by_dim` (coordinate `d` of mean `j` at `d * padded + j`). Points of up
/// to four dimensions get a copy of the loop with the dimension fixed.
///
/// # Safety
/// The CPU must support AVX2.
///
/// # Panics
/// If `by_dim` is not `dim * padded` values or `padded` is not a multiple
/// of [`LANES`].
#[target_feature(enable = "avx2")]
pub(super) unsafe fn nearest_means(
    by_dim: &[i32],
    dim: usize,
    padded: usize,
    points: &[i32],
    nearest: &mut [u32],
) {
    assert!(
        by_dim.len() == dim * padded && padded % LANES == 0,
        "a table of whole groups"
    );
    let avx2 = Avx2(());
    let table = Table {
        by_dim,
        padded,
        dim,
    };
    match dim {
        1 => each_point::<1>(avx2, table, points, nearest),
        2 => each_point::<2>(avx2, table, points, nearest),
        3 => each_point::<3>(avx2, table, points, nearest),
        4 => each_point::<4>(avx2, table, points, nearest),
        _ => {
            for (point, slot) in points.chunks_exact(dim).zip(nearest.iter_mut()) {
                *slot = nearest_of_any(avx2, table, point);
            }
        }
    }
}

/// The means by dimension: `dim` rows of `padded` (a multiple of
/// [`LANES`]) values, checked on construction in [`nearest_means`].
#[derive(Clone, Copy)]
struct Table<'a> {
    by_dim: &'a [i32],
    padded: usize,
    dim: usize,
}

impl Table<'_> {
    /// Coordinate `d` of the eight means from `group`.
    ///
    /// # Safety
    /// `d < dim` and `group` a multiple of [`LANES`] below `padded`.
    #[inline(always)]
    unsafe fn load(self, _avx2: Avx2, d: usize, group: usize) -> __m256i {
        debug_assert!(d < self.dim && group < self.padded);
        // SAFETY: AVX2 is present (the token). `by_dim` holds `dim` rows
        // of `padded` values and `padded` is a multiple of LANES, so by
        // the contract the 32 bytes from `d * padded + group` lie inside
        // it; the load is unaligned.
        unsafe {
            _mm256_loadu_si256(
                self.by_dim
                    .as_ptr()
                    .add(d * self.padded + group)
                    .cast::<__m256i>(),
            )
        }
    }
}

#[inline(always)]
fn each_point<const D: usize>(avx2: Avx2, table: Table<'_>, points: &[i32], nearest: &mut [u32]) {
    for (point, slot) in points.chunks_exact(D).zip(nearest.iter_mut()) {
        let xs: [__m256i; D] = std::array::from_fn(|d| broadcast(avx2, point[d]));
        let mut search = Search::new(avx2);
        for group in (0..table.padded).step_by(LANES) {
            let mut dist = zero(avx2);
            for (d, &x) in xs.iter().enumerate() {
                // SAFETY: d < D, the table's dimension (checked by
                // `nearest_means`); `group` steps by LANES below `padded`.
                let means = unsafe { table.load(avx2, d, group) };
                dist = add_square_of_difference(avx2, dist, x, means);
            }
            search.offer(dist);
        }
        *slot = search.winner();
    }
}

#[inline(always)]
fn nearest_of_any(avx2: Avx2, table: Table<'_>, point: &[i32]) -> u32 {
    let mut search = Search::new(avx2);
    for group in (0..table.padded).step_by(LANES) {
        let mut dist = zero(avx2);
        for (d, &x) in point.iter().enumerate() {
            // SAFETY: d < point.len(), the table's dimension (checked by
            // `nearest_means`); `group` steps by LANES below `padded`.
            let means = unsafe { table.load(avx2, d, group) };
            dist = add_square_of_difference(avx2, dist, broadcast(avx2, x), means);
        }
        search.offer(dist);
    }
    search.winner()
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

/// `dist + (x - m)²`, lane by lane, wrapping.
#[inline(always)]
fn add_square_of_difference(_avx2: Avx2, dist: __m256i, x: __m256i, m: __m256i) -> __m256i {
    // SAFETY: AVX2 is present (the token).
    unsafe {
        let diff = _mm256_sub_epi32(x, m);
        _mm256_add_epi32(dist, _mm256_mullo_epi32(diff, diff))
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
    #[inline(always)]
    fn new(avx2: Avx2) -> Self {
        // SAFETY: AVX2 is present (the token).
        unsafe {
            Search {
                avx2,
                best: _mm256_set1_epi32(-1),
                best_index: _mm256_setzero_si256(),
                index: _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
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
            self.index = _mm256_add_epi32(self.index, _mm256_set1_epi32(LANES as i32));
        }
    }

    /// The nearest mean over all lanes.
    #[inline(always)]
    fn winner(&self) -> u32 {
        let mut lanes = [0u32; LANES];
        let mut indices = [0u32; LANES];
        // SAFETY: AVX2 is present (the token held since `new`); both
        // arrays are 32 writable bytes and the stores are unaligned.
        unsafe {
            _mm256_storeu_si256(lanes.as_mut_ptr().cast::<__m256i>(), self.best);
            _mm256_storeu_si256(indices.as_mut_ptr().cast::<__m256i>(), self.best_index);
        }
        first_of_lanes(&lanes, &indices)
    }
}
