//! The AVX2 body of the 64-bit product for values that fit 32 bits: each
//! `i64` lane holds a sign-extended `i32`, so one `vpmuldq` (signed
//! 32 × 32 → 64) gives four exact products where AVX2 has no 64-bit
//! multiply (the compiler emulates it with three multiplies, shifts and
//! adds). A tile of four rows of `A` times one panel of eight columns
//! keeps its 4 × 8 sums in eight registers; per term it loads the panel
//! row (two registers), broadcasts each row's value and does two
//! `vpmuldq` and two `vpaddq` per row. Sums wrap, as the generic kernel's.
//!
//! Intrinsics are only called with an [`Avx2`] token, made once the CPU
//! is known to have AVX2; helpers are `#[inline(always)]` so they compile
//! into the one `#[target_feature]` entry point. Values outside `i32`
//! would give other (never undefined) results: the caller checks them.

use std::arch::x86_64::{
    __m256i, _mm256_add_epi64, _mm256_loadu_si256, _mm256_mul_epi32, _mm256_set1_epi64x,
    _mm256_setzero_si256, _mm256_storeu_si256,
};

use super::{sweep, Extent, PackedColumns, NARROW_PANEL as PANEL, TILE_ROWS};

/// Proof that the CPU has AVX2 (only this module can make one).
#[derive(Clone, Copy)]
struct Avx2(());

/// See [`super::multiply_narrow`]; `rows` rows of `a`.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn multiply(
    a: &[i64],
    b: &PackedColumns<i64, PANEL>,
    out: &mut [i64],
    rows: usize,
    extent: Extent,
) {
    let avx2 = Avx2(());
    let (depth, cols) = (b.depth(), b.cols());
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
                let a_rows = &a[row * depth..(row + TILE_ROWS) * depth];
                let sums = tile_sums::<TILE_ROWS>(avx2, a_rows, depth, panel);
                store(avx2, &sums, &mut out[out_at..], cols, width);
            } else {
                let sums = tile_sums::<1>(avx2, &a[row * depth..(row + 1) * depth], depth, panel);
                store(avx2, &sums, &mut out[out_at..], cols, width);
            }
        },
    );
}

/// Sums of `R` rows (`R × depth`) times one panel.
#[inline(always)]
fn tile_sums<const R: usize>(
    _avx2: Avx2,
    a: &[i64],
    depth: usize,
    panel: &[i64],
) -> [[__m256i; 2]; R] {
    let rows: [&[i64]; R] = std::array::from_fn(|r| &a[r * depth..(r + 1) * depth]);
    // SAFETY: AVX2 is present (the token).
    let mut sums = [[unsafe { _mm256_setzero_si256() }; 2]; R];
    for (k, b_row) in panel.chunks_exact(PANEL).enumerate().take(depth) {
        // SAFETY: AVX2 is present (the token); `b_row` is PANEL = 8
        // readable i64s, read as two unaligned 32-byte halves.
        let (b0, b1) = unsafe {
            (
                _mm256_loadu_si256(b_row.as_ptr().cast::<__m256i>()),
                _mm256_loadu_si256(b_row.as_ptr().add(PANEL / 2).cast::<__m256i>()),
            )
        };
        for r in 0..R {
            // SAFETY: AVX2 is present (the token).
            unsafe {
                let x = _mm256_set1_epi64x(rows[r][k]);
                sums[r][0] = _mm256_add_epi64(sums[r][0], _mm256_mul_epi32(x, b0));
                sums[r][1] = _mm256_add_epi64(sums[r][1], _mm256_mul_epi32(x, b1));
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
    out: &mut [i64],
    cols: usize,
    width: usize,
) {
    for (r, halves) in sums.iter().enumerate() {
        let mut lanes = [0i64; PANEL];
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
