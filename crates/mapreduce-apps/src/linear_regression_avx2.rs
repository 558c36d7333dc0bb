//! The AVX2 body of linear regression's five sums, built on `vpmaddwd`:
//! sixteen bytes (eight points) are sign-extended to sixteen 16-bit lanes
//! `x0 y0 x1 y1 …`, and with `v` that vector, `vx` its `x` lanes alone and
//! `s` its pairs swapped (`y0 x0 …`), one multiply-add each gives per point
//! `x² + y²` (`v · v`), `x²` (`vx · v`) and `x·y` (`vx · s`) in a 32-bit
//! lane; `y²` is the difference of the first two at the end. `x` and `y`
//! themselves are added in the 16-bit lanes. Ten instructions per eight
//! points, where widening every byte to a 32-bit lane and multiplying
//! with `vpmulld` took about three times as many.
//!
//! Every [`RUN`] steps the 16-bit and 32-bit sums are widened into 64-bit
//! lanes before they can overflow (see [`RUN`]); the 64-bit lanes wrap as
//! the original's `uint64_t` sums do, so the result is theirs bit for bit.
//!
//! Intrinsics are only called with an [`Avx2`] token, made once the CPU
//! is known to have AVX2; helpers are `#[inline(always)]` so they compile
//! into the one `#[target_feature]` entry point.

use std::arch::x86_64::{
    __m128i, __m256i, _mm256_add_epi16, _mm256_add_epi32, _mm256_add_epi64, _mm256_and_si256,
    _mm256_castsi256_si128, _mm256_cvtepi32_epi64, _mm256_cvtepi8_epi16, _mm256_extracti128_si256,
    _mm256_madd_epi16, _mm256_set1_epi32, _mm256_setr_epi8, _mm256_setzero_si256,
    _mm256_shuffle_epi8, _mm256_slli_epi32, _mm256_srai_epi32, _mm256_storeu_si256,
    _mm_loadu_si128,
};

use super::SUMS;

/// Bytes per step: two vectors of eight points.
const STEP: usize = 32;

/// Steps between widenings into 64-bit lanes. A 16-bit lane receives two
/// coordinates per step, each in -128..=127: 256 of them stay within
/// -32768..=32512. A 32-bit lane receives two terms per step, each at
/// most 2^15 in magnitude (`x² + y² <= 32768`): 2^24 in all.
const RUN: usize = 128;

/// Proof that the CPU has AVX2 (only this module can make one).
#[derive(Clone, Copy)]
struct Avx2(());

/// The five sums (SX, SY, SXX, SYY, SXY) of the points in `bytes` (whole
/// points: an even length), wrapping modulo 2^64.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn sums(bytes: &[u8]) -> [u64; SUMS] {
    let avx2 = Avx2(());
    let whole = bytes.len() / STEP * STEP;
    let (body, tail) = bytes.split_at(whole);
    let mut wide = [zero(avx2); SUMS];
    for run in body.chunks(RUN * STEP) {
        let narrow = run_sums(avx2, run);
        for (w, n) in wide.iter_mut().zip(narrow) {
            *w = add_widened(avx2, *w, n);
        }
    }
    let [sx, sy, q, xx, xy] = wide.map(|w| horizontal(avx2, w));
    let mut s = [sx, sy, xx, q.wrapping_sub(xx), xy];
    for p in tail.chunks_exact(2) {
        let (x, y) = (p[0] as i8 as i64 as u64, p[1] as i8 as i64 as u64);
        let terms = [
            x,
            y,
            x.wrapping_mul(x),
            y.wrapping_mul(y),
            x.wrapping_mul(y),
        ];
        for (acc, t) in s.iter_mut().zip(terms) {
            *acc = acc.wrapping_add(t);
        }
    }
    s
}

/// A zero vector.
#[inline(always)]
fn zero(_avx2: Avx2) -> __m256i {
    // SAFETY: AVX2 is present (the token).
    unsafe { _mm256_setzero_si256() }
}

/// Sums of at most [`RUN`] steps in 32-bit lanes: SX, SY (sign-extended
/// from the 16-bit lanes), x² + y², x², x·y.
#[inline(always)]
fn run_sums(_avx2: Avx2, run: &[u8]) -> [__m256i; SUMS] {
    debug_assert!(run.len() <= RUN * STEP && run.len() % STEP == 0);
    // SAFETY: AVX2 is present (the token); every load reads 16 bytes
    // within a STEP-long chunk of `run`.
    unsafe {
        let x_lanes = _mm256_set1_epi32(0xffff);
        let swap = _mm256_setr_epi8(
            2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13, //
            2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13,
        );
        let (mut coords, mut q, mut xx, mut xy) = (
            _mm256_setzero_si256(),
            _mm256_setzero_si256(),
            _mm256_setzero_si256(),
            _mm256_setzero_si256(),
        );
        for step in run.chunks_exact(STEP) {
            let p = step.as_ptr();
            let v0 = _mm256_cvtepi8_epi16(_mm_loadu_si128(p.cast::<__m128i>()));
            let v1 = _mm256_cvtepi8_epi16(_mm_loadu_si128(p.add(16).cast::<__m128i>()));
            coords = _mm256_add_epi16(coords, _mm256_add_epi16(v0, v1));
            let (x0, x1) = (_mm256_and_si256(v0, x_lanes), _mm256_and_si256(v1, x_lanes));
            q = _mm256_add_epi32(
                q,
                _mm256_add_epi32(_mm256_madd_epi16(v0, v0), _mm256_madd_epi16(v1, v1)),
            );
            xx = _mm256_add_epi32(
                xx,
                _mm256_add_epi32(_mm256_madd_epi16(x0, v0), _mm256_madd_epi16(x1, v1)),
            );
            xy = _mm256_add_epi32(
                xy,
                _mm256_add_epi32(
                    _mm256_madd_epi16(x0, _mm256_shuffle_epi8(v0, swap)),
                    _mm256_madd_epi16(x1, _mm256_shuffle_epi8(v1, swap)),
                ),
            );
        }
        let sx = _mm256_srai_epi32(_mm256_slli_epi32(coords, 16), 16);
        let sy = _mm256_srai_epi32(coords, 16);
        [sx, sy, q, xx, xy]
    }
}

/// `wide` (four 64-bit lanes) plus the eight 32-bit lanes of `narrow`,
/// sign-extended.
#[inline(always)]
fn add_widened(_avx2: Avx2, wide: __m256i, narrow: __m256i) -> __m256i {
    // SAFETY: AVX2 is present (the token).
    unsafe {
        let low = _mm256_cvtepi32_epi64(_mm256_castsi256_si128(narrow));
        let high = _mm256_cvtepi32_epi64(_mm256_extracti128_si256(narrow, 1));
        _mm256_add_epi64(wide, _mm256_add_epi64(low, high))
    }
}

/// The wrapping sum of four 64-bit lanes.
#[inline(always)]
fn horizontal(_avx2: Avx2, wide: __m256i) -> u64 {
    let mut lanes = [0u64; 4];
    // SAFETY: AVX2 is present (the token); `lanes` is 32 writable bytes.
    unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast::<__m256i>(), wide) };
    lanes.iter().fold(0u64, |s, &l| s.wrapping_add(l))
}
