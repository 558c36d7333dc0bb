//! The AVX2 body of the 16-bit pair product: a tile of four rows of `A`
//! times one panel of `B` keeps its 4 × 16 sums in eight registers; per
//! pair of terms it loads the panel row (two registers), broadcasts each
//! row's pair and does two `vpmaddwd` and two adds per row. Rows left over
//! below a multiple of four go one at a time.
//!
//! Intrinsics are only called with an [`Avx2`] token, made once the CPU
//! is known to have AVX2; helpers are `#[inline(always)]` so they compile
//! into the one `#[target_feature]` entry point.

use std::arch::x86_64::{
    __m256i, _mm256_add_epi32, _mm256_loadu_si256, _mm256_madd_epi16, _mm256_set1_epi32,
    _mm256_setzero_si256, _mm256_storeu_si256,
};

use super::{PackedPairs, PANEL, TILE_ROWS};
use crate::numeric::gemm::{sweep, Extent};

/// Proof that the CPU has AVX2 (only this module can make one).
#[derive(Clone, Copy)]
struct Avx2(());

/// See [`super::multiply`]; `rows` rows of `a`.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn multiply(
    a: &[i32],
    b: &PackedPairs,
    out: &mut [i32],
    rows: usize,
    extent: Extent,
) {
    let avx2 = Avx2(());
    let (pairs, cols) = (b.pairs(), b.cols());
    let first_panel = |row| extent.first_panel(row, PANEL);
    sweep(
        rows,
        cols.div_ceil(PANEL),
        TILE_ROWS,
        first_panel,
        |row, tile, p| {
            let width = PANEL.min(cols - p * PANEL);
            let panel = b.panel(p);
            let out_at = row * cols + p * PANEL;
            if tile == TILE_ROWS {
                let a_rows = &a[row * pairs..(row + TILE_ROWS) * pairs];
                let sums = tile_sums::<TILE_ROWS>(avx2, a_rows, pairs, panel);
                store(avx2, &sums, &mut out[out_at..], cols, width);
            } else {
                let sums = tile_sums::<1>(avx2, &a[row * pairs..(row + 1) * pairs], pairs, panel);
                store(avx2, &sums, &mut out[out_at..], cols, width);
            }
        },
    );
}

/// Sums of `R` rows of pairs (`R × pairs`) times one panel.
#[inline(always)]
fn tile_sums<const R: usize>(
    _avx2: Avx2,
    a: &[i32],
    pairs: usize,
    panel: &[i32],
) -> [[__m256i; 2]; R] {
    let rows: [&[i32]; R] = std::array::from_fn(|r| &a[r * pairs..(r + 1) * pairs]);
    // SAFETY: AVX2 is present (the token).
    let mut sums = [[unsafe { _mm256_setzero_si256() }; 2]; R];
    for (q, b_row) in panel.chunks_exact(PANEL).enumerate().take(pairs) {
        // SAFETY: AVX2 is present (the token); `b_row` is PANEL = 16
        // readable i32s, read as two unaligned 32-byte halves.
        let (b0, b1) = unsafe {
            (
                _mm256_loadu_si256(b_row.as_ptr().cast::<__m256i>()),
                _mm256_loadu_si256(b_row.as_ptr().add(PANEL / 2).cast::<__m256i>()),
            )
        };
        for r in 0..R {
            // SAFETY: AVX2 is present (the token).
            unsafe {
                let x = _mm256_set1_epi32(rows[r][q]);
                sums[r][0] = _mm256_add_epi32(sums[r][0], _mm256_madd_epi16(x, b0));
                sums[r][1] = _mm256_add_epi32(sums[r][1], _mm256_madd_epi16(x, b1));
            }
        }
    }
    sums
}

/// Writes the first `width` sums of each tile row, `cols` apart.
#[inline(always)]
fn store<const R: usize>(
    _avx2: Avx2,
    sums: &[[__m256i; 2]; R],
    out: &mut [i32],
    cols: usize,
    width: usize,
) {
    for (r, halves) in sums.iter().enumerate() {
        let mut lanes = [0i32; PANEL];
        // SAFETY: AVX2 is present (the token); `lanes` is 64 writable
        // bytes, written as two unaligned 32-byte halves.
        unsafe {
            _mm256_storeu_si256(lanes.as_mut_ptr().cast::<__m256i>(), halves[0]);
            _mm256_storeu_si256(
                lanes.as_mut_ptr().add(PANEL / 2).cast::<__m256i>(),
                halves[1],
            );
        }
        out[r * cols..r * cols + width].copy_from_slice(&lanes[..width]);
    }
}
