//! The integer matrix product for values that fit in 16 bits: the same
//! `out = A · B` as [`crate::numeric::gemm`], with every value stored as
//! an `i16` and consecutive terms of a dot product taken in pairs, so that
//! AVX2's `vpmaddwd` does two multiply-adds per 32-bit lane in one
//! instruction (four times the `vpmulld` rate).
//!
//! [`PairRows`] holds `A`'s rows, each a run of `(a[k], a[k+1])` pairs;
//! [`PackedPairs`] holds `B` in panels of [`PANEL`] columns, each panel
//! row the pairs `(b[k][j], b[k+1][j])` of its columns (an odd depth is
//! padded with a zero term). A pair product `a0·b0 + a1·b1` is exact in 32
//! bits except for `(-32768)² · 2 = 2^31`, which wraps to `-2^31` —
//! congruent modulo 2^32, and the sums wrap anyway: the result is the
//! wrapping `i32` product, bit for bit, whenever every value fits `i16`.
//! Callers check that ([`fits_i16`]) and otherwise use the 32-bit kernel.
//!
//! It knows nothing of threads. Shapes are the caller's contract
//! (assertions, not errors).

use crate::numeric::gemm::{sweep, Extent};
use crate::numeric::wide;

#[cfg(target_arch = "x86_64")]
#[path = "pairs_avx2.rs"]
mod avx2;

/// Columns per panel (two AVX2 registers of 32-bit sums).
pub const PANEL: usize = 16;
/// Rows of `A` per register tile.
const TILE_ROWS: usize = 4;

/// Whether every value fits in `i16`: `v + 2^15` is below `2^16` exactly
/// then, so the high halves of those sums, or-ed together (a loop the
/// compiler vectorises), are zero.
pub fn fits_i16(values: &[i32]) -> bool {
    values.iter().fold(0u32, |high, &v| {
        high | ((v as u32).wrapping_add(0x8000) >> 16)
    }) == 0
}

/// Packs `(lo, hi)` as the 32-bit word `vpmaddwd` reads: `lo` in the low
/// half.
#[inline(always)]
fn pair(lo: i16, hi: i16) -> i32 {
    (lo as u16 as u32 | (hi as u16 as u32) << 16) as i32
}

/// The multiply-add of two packed pairs, as `vpmaddwd` computes one lane.
#[inline(always)]
fn pair_product(a: i32, b: i32) -> i32 {
    let (a0, a1) = (a as i16 as i32, (a >> 16) as i16 as i32);
    let (b0, b1) = (b as i16 as i32, (b >> 16) as i16 as i32);
    (a0 * b0).wrapping_add(a1 * b1)
}

/// Rows of `A`, each as `depth.div_ceil(2)` packed pairs.
#[derive(Clone, Debug)]
pub struct PairRows {
    pairs_per_row: usize,
    data: Vec<i32>,
}

impl PairRows {
    /// Packs the row-major `rows × depth` matrix `a`; `value` converts an
    /// element (which the caller knows fits `i16`).
    ///
    /// # Panics
    /// If `a.len() != rows * depth`.
    pub fn new<T: Copy>(a: &[T], rows: usize, depth: usize, value: impl Fn(T) -> i16) -> Self {
        assert_eq!(a.len(), rows * depth, "A must be rows x depth");
        let pairs_per_row = depth.div_ceil(2);
        let mut data = Vec::with_capacity(rows * pairs_per_row);
        for row in a.chunks_exact(depth.max(1)).take(rows) {
            let mut terms = row.chunks(2);
            data.extend((0..pairs_per_row).map(|_| match terms.next() {
                Some([lo, hi]) => pair(value(*lo), value(*hi)),
                Some([lo]) => pair(value(*lo), 0),
                _ => 0,
            }));
        }
        data.resize(rows * pairs_per_row, 0);
        PairRows {
            pairs_per_row,
            data,
        }
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.data.len().checked_div(self.pairs_per_row).unwrap_or(0)
    }

    /// Rows `first..end`, pairs row-major.
    pub fn rows_slice(&self, first: usize, end: usize) -> &[i32] {
        &self.data[first * self.pairs_per_row..end * self.pairs_per_row]
    }
}

/// `B` (`depth × cols`) in panels of [`PANEL`] columns, each panel
/// `depth.div_ceil(2)` rows of [`PANEL`] packed pairs.
#[derive(Clone, Debug)]
pub struct PackedPairs {
    pairs: usize,
    cols: usize,
    data: Vec<i32>,
}

impl PackedPairs {
    /// Packs the row-major `depth × cols` matrix `b`.
    ///
    /// # Panics
    /// If `b.len() != depth * cols`.
    pub fn from_rows<T: Copy>(
        b: &[T],
        depth: usize,
        cols: usize,
        value: impl Fn(T) -> i16,
    ) -> Self {
        assert_eq!(b.len(), depth * cols, "B must be depth x cols");
        Self::from_fn(depth, cols, |k, j| value(b[k * cols + j]))
    }

    /// Packs `Cᵀ` for the row-major `cols × depth` matrix `c`.
    ///
    /// # Panics
    /// If `c.len() != cols * depth`.
    pub fn from_transposed<T: Copy>(
        c: &[T],
        cols: usize,
        depth: usize,
        value: impl Fn(T) -> i16,
    ) -> Self {
        assert_eq!(c.len(), depth * cols, "C must be cols x depth");
        Self::from_fn(depth, cols, |k, j| value(c[j * depth + k]))
    }

    /// Packs the `depth × cols` matrix whose element `(k, j)` is
    /// `at(k, j)`.
    pub fn from_fn(depth: usize, cols: usize, at: impl Fn(usize, usize) -> i16) -> Self {
        let pairs = depth.div_ceil(2);
        let panels = cols.div_ceil(PANEL);
        let mut data = vec![0i32; panels * pairs * PANEL];
        for (p, panel) in data.chunks_exact_mut((pairs * PANEL).max(1)).enumerate() {
            let width = PANEL.min(cols - p * PANEL);
            for (q, row) in panel.chunks_exact_mut(PANEL).enumerate() {
                for (jj, slot) in row[..width].iter_mut().enumerate() {
                    let j = p * PANEL + jj;
                    let hi = if 2 * q + 1 < depth {
                        at(2 * q + 1, j)
                    } else {
                        0
                    };
                    *slot = pair(at(2 * q, j), hi);
                }
            }
        }
        PackedPairs { pairs, cols, data }
    }

    /// Packs the `depth × cols` matrix whose column `j` the call
    /// `column(j, values)` writes into `values` (`depth` long): for `B`s
    /// whose columns are cheap to produce whole (the rows of a centred
    /// matrix, for `Cᵀ`).
    pub fn from_columns(
        depth: usize,
        cols: usize,
        mut column: impl FnMut(usize, &mut [i16]),
    ) -> Self {
        let pairs = depth.div_ceil(2);
        let mut data = vec![0i32; cols.div_ceil(PANEL) * pairs * PANEL];
        let mut values = vec![0i16; 2 * pairs];
        for j in 0..cols {
            column(j, &mut values[..depth]);
            let (p, jj) = (j / PANEL, j % PANEL);
            let panel = &mut data[p * pairs * PANEL..(p + 1) * pairs * PANEL];
            for (q, two) in values.chunks_exact(2).enumerate() {
                panel[q * PANEL + jj] = pair(two[0], two[1]);
            }
        }
        PackedPairs { pairs, cols, data }
    }

    /// Columns of `B`.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Pairs per row of `A` this `B` goes with.
    pub fn pairs(&self) -> usize {
        self.pairs
    }

    fn panel(&self, p: usize) -> &[i32] {
        &self.data[p * self.pairs * PANEL..(p + 1) * self.pairs * PANEL]
    }
}

/// `out = a · b` for rows of `A` (from [`PairRows::rows_slice`]), `out`
/// row-major `rows × b.cols()`, wrapping `i32`.
///
/// # Panics
/// If the lengths of `a` and `out` do not fit `b`'s shape.
pub fn multiply(a: &[i32], b: &PackedPairs, out: &mut [i32], extent: Extent) {
    let rows = a
        .len()
        .checked_div(b.pairs())
        .unwrap_or(out.len() / b.cols().max(1));
    assert_eq!(a.len(), rows * b.pairs(), "A must have whole rows");
    assert_eq!(out.len(), rows * b.cols(), "out must be rows x cols");
    #[cfg(target_arch = "x86_64")]
    if wide::available() {
        // SAFETY: the CPU has AVX2 (checked just above).
        unsafe { avx2::multiply(a, b, out, rows, extent) };
        return;
    }
    multiply_portable(a, b, out, rows, extent);
}

fn multiply_portable(a: &[i32], b: &PackedPairs, out: &mut [i32], rows: usize, extent: Extent) {
    let (pairs, cols) = (b.pairs(), b.cols());
    let first_panel = |row| extent.first_panel(row, PANEL);
    sweep(rows, cols.div_ceil(PANEL), 1, first_panel, |row, _, p| {
        let a_row = &a[row * pairs..(row + 1) * pairs];
        let width = PANEL.min(cols - p * PANEL);
        let mut sums = [0i32; PANEL];
        for (&x, b_row) in a_row.iter().zip(b.panel(p).chunks_exact(PANEL)) {
            for (s, &y) in sums.iter_mut().zip(b_row) {
                *s = s.wrapping_add(pair_product(x, y));
            }
        }
        out[row * cols + p * PANEL..][..width].copy_from_slice(&sums[..width]);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(a: &[i32], b: &[i32], rows: usize, depth: usize, cols: usize) -> Vec<i32> {
        let mut out = vec![0i32; rows * cols];
        for i in 0..rows {
            for j in 0..cols {
                for k in 0..depth {
                    out[i * cols + j] = out[i * cols + j]
                        .wrapping_add(a[i * depth + k].wrapping_mul(b[k * cols + j]));
                }
            }
        }
        out
    }

    fn values(n: usize, seed: u32) -> Vec<i32> {
        let mut r = crate::numeric::CRand::new(seed);
        (0..n)
            .map(|_| (r.next_rand() % 65_536) as i32 - 32_768)
            .collect()
    }

    fn product(
        a: &[i32],
        b: &[i32],
        rows: usize,
        depth: usize,
        cols: usize,
        portable: bool,
    ) -> Vec<i32> {
        let pa = PairRows::new(a, rows, depth, |v| v as i16);
        let pb = PackedPairs::from_rows(b, depth, cols, |v| v as i16);
        let mut out = vec![7; rows * cols];
        let a_rows = pa.rows_slice(0, rows);
        if portable {
            multiply_portable(a_rows, &pb, &mut out, rows, Extent::Full);
        } else {
            multiply(a_rows, &pb, &mut out, Extent::Full);
        }
        out
    }

    #[test]
    fn equals_the_wrapping_product_on_every_shape() {
        for rows in [1, 3, 4, 5, 9] {
            for depth in [1, 2, 3, 8] {
                for cols in [1, 15, 16, 17, 40] {
                    let (a, b) = (values(rows * depth, 1), values(depth * cols, 2));
                    let expected = naive(&a, &b, rows, depth, cols);
                    assert_eq!(
                        product(&a, &b, rows, depth, cols, false),
                        expected,
                        "{rows}x{depth}x{cols}"
                    );
                    assert_eq!(
                        product(&a, &b, rows, depth, cols, true),
                        expected,
                        "portable"
                    );
                }
            }
        }
    }

    #[test]
    fn the_one_pair_that_overflows_still_wraps_correctly() {
        let a = vec![-32_768; 4];
        let b = vec![-32_768; 4];
        let expected = naive(&a, &b, 2, 2, 2);
        assert_eq!(product(&a, &b, 2, 2, 2, false), expected);
        assert_eq!(product(&a, &b, 2, 2, 2, true), expected);
    }

    #[test]
    fn upper_extent_and_transposed_packing() {
        let (n, depth) = (37, 5);
        let c = values(n * depth, 3);
        let pa = PairRows::new(&c, n, depth, |v| v as i16);
        let pb = PackedPairs::from_transposed(&c, n, depth, |v| v as i16);
        for first in [0, 16, 20] {
            let rows = 9.min(n - first);
            let mut out = vec![0; rows * n];
            multiply(
                pa.rows_slice(first, first + rows),
                &pb,
                &mut out,
                Extent::UpperFrom { first_row: first },
            );
            for r in 0..rows {
                for j in first + r..n {
                    let dot = (0..depth).fold(0i32, |s, k| {
                        s.wrapping_add(c[(first + r) * depth + k].wrapping_mul(c[j * depth + k]))
                    });
                    assert_eq!(out[r * n + j], dot);
                }
            }
        }
    }

    #[test]
    fn column_packing_equals_element_packing() {
        let (depth, cols) = (7, 21);
        let b = values(depth * cols, 4);
        let by_element = PackedPairs::from_rows(&b, depth, cols, |v| v as i16);
        let by_column = PackedPairs::from_columns(depth, cols, |j, column| {
            for (k, slot) in column.iter_mut().enumerate() {
                *slot = b[k * cols + j] as i16;
            }
        });
        assert_eq!(by_column.data, by_element.data);
    }

    #[test]
    fn sixteen_bit_check() {
        assert!(fits_i16(&[-32_768, 32_767, 0]));
        assert!(fits_i16(&[]));
        assert!(!fits_i16(&[32_768]));
        assert!(!fits_i16(&[0, -32_769]));
        assert!(!fits_i16(&[i32::MIN, 5]));
        assert!(!fits_i16(&[i32::MAX]));
    }
}
