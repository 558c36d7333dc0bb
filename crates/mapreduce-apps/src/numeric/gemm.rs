//! The integer matrix product both matrix multiply and PCA's covariance
//! reduce to: `out = A · B` with `B` packed into panels of `P` columns.
//!
//! Each panel stores its `P` columns row after row (`depth × P` values,
//! the last panel padded with zeros), so the innermost loop reads `B`
//! contiguously instead of striding down a column, and a tile of `R = 4`
//! rows of `A` times one panel keeps its `4 × P` sums in registers for the
//! whole depth. Arithmetic wraps (two's complement), which makes the
//! result independent of the order of the additions: the same as the
//! C originals' `int` and `long long` loops on every input.
//!
//! It knows nothing of threads: callers hand it the rows they own. Shapes
//! are the caller's contract (checked with assertions, not errors).

use crate::numeric::wide::{self, Kernel};

#[cfg(target_arch = "x86_64")]
#[path = "gemm_avx2.rs"]
mod avx2;

/// Columns per panel of [`multiply_narrow`]'s `B`.
pub const NARROW_PANEL: usize = 8;

/// Rows of `A` per register tile.
const TILE_ROWS: usize = 4;

/// An integer type with wrapping multiply-add.
pub trait Word: Copy + Default + Send + Sync + 'static {
    /// `self + a * b`, wrapping.
    fn mul_add(self, a: Self, b: Self) -> Self;
}

impl Word for i32 {
    #[inline(always)]
    fn mul_add(self, a: Self, b: Self) -> Self {
        self.wrapping_add(a.wrapping_mul(b))
    }
}

impl Word for i64 {
    #[inline(always)]
    fn mul_add(self, a: Self, b: Self) -> Self {
        self.wrapping_add(a.wrapping_mul(b))
    }
}

/// The right-hand matrix `B` (`depth × cols`) cut into panels of `P`
/// columns, each stored row-major.
#[derive(Clone, Debug)]
pub struct PackedColumns<T, const P: usize> {
    depth: usize,
    cols: usize,
    data: Vec<T>,
}

impl<T: Word, const P: usize> PackedColumns<T, P> {
    /// Packs the row-major `depth × cols` matrix `b`.
    ///
    /// # Panics
    /// If `b.len() != depth * cols`.
    pub fn from_rows(b: &[T], depth: usize, cols: usize) -> Self {
        assert_eq!(b.len(), depth * cols, "B must be depth x cols");
        Self::from_fn(depth, cols, |k, j| b[k * cols + j])
    }

    /// Packs `Cᵀ` for the row-major `cols × depth` matrix `c`, so that
    /// `A · B` is `A · Cᵀ` (row-by-row dot products with the rows of `c`).
    ///
    /// # Panics
    /// If `c.len() != cols * depth`.
    pub fn from_transposed(c: &[T], cols: usize, depth: usize) -> Self {
        assert_eq!(c.len(), depth * cols, "C must be cols x depth");
        Self::from_fn(depth, cols, |k, j| c[j * depth + k])
    }

    /// Packs the `depth × cols` matrix whose element `(k, j)` is
    /// `at(k, j)`.
    pub fn from_fn(depth: usize, cols: usize, at: impl Fn(usize, usize) -> T) -> Self {
        let panels = cols.div_ceil(P);
        let mut data = vec![T::default(); panels * depth * P];
        for (p, panel) in data.chunks_exact_mut((depth * P).max(1)).enumerate() {
            let width = P.min(cols - p * P);
            for (k, row) in panel.chunks_exact_mut(P).enumerate() {
                for (jj, slot) in row[..width].iter_mut().enumerate() {
                    *slot = at(k, p * P + jj);
                }
            }
        }
        PackedColumns { depth, cols, data }
    }

    /// Rows of `B` (the length of `A`'s rows).
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// Columns of `B` (the length of the product's rows).
    pub fn cols(&self) -> usize {
        self.cols
    }

    fn panel(&self, p: usize) -> &[T] {
        &self.data[p * self.depth * P..(p + 1) * self.depth * P]
    }
}

/// Which part of each product row to compute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extent {
    /// Every column.
    Full,
    /// Only from the panel holding the diagonal on (for symmetric
    /// products): with `A`'s first row being row `first_row` of the whole
    /// product, columns of panels wholly left of a tile's first row are
    /// left untouched in `out`.
    UpperFrom {
        /// Index of `a`'s first row in the whole product.
        first_row: usize,
    },
}

impl Extent {
    /// The first panel (of `panel` columns) the product row `row` of
    /// `a`'s rows needs.
    #[inline(always)]
    pub fn first_panel(self, row: usize, panel: usize) -> usize {
        match self {
            Extent::Full => 0,
            Extent::UpperFrom { first_row } => (first_row + row) / panel,
        }
    }
}

/// Rows of `A` whose tiles sweep one panel of `B` before the next: the
/// panel stays in the first-level cache while the block's rows (in the
/// second) pass it.
pub(crate) const BLOCK_ROWS: usize = 64;

/// Calls `tile(row, rows_in_tile, panel)` for every tile of `rows` rows
/// and every panel `0..panels` it needs (from `first_panel(row)`), in
/// cache order: blocks of [`BLOCK_ROWS`] rows; in a block, panel after
/// panel; in a panel, tiles of `tile_rows` rows, single rows at the end.
#[inline(always)]
pub(crate) fn sweep(
    rows: usize,
    panels: usize,
    tile_rows: usize,
    first_panel: impl Fn(usize) -> usize,
    mut tile: impl FnMut(usize, usize, usize),
) {
    for block in (0..rows).step_by(BLOCK_ROWS) {
        let end = (block + BLOCK_ROWS).min(rows);
        for p in first_panel(block)..panels {
            let mut row = block;
            while row < end {
                let size = if end - row >= tile_rows { tile_rows } else { 1 };
                if p >= first_panel(row) {
                    tile(row, size, p);
                }
                row += size;
            }
        }
    }
}

/// `out = a · b` for the rows of `a` (row-major, `rows × b.depth()`),
/// `out` row-major `rows × b.cols()`.
///
/// # Panics
/// If the lengths of `a` and `out` do not fit `b`'s shape.
pub fn multiply<T: Word, const P: usize>(
    a: &[T],
    b: &PackedColumns<T, P>,
    out: &mut [T],
    extent: Extent,
) {
    let rows = checked_rows(a, b, out);
    wide::run(Multiply {
        a,
        b,
        out,
        rows,
        extent,
    });
}

/// Whether every value fits `i32`, as [`multiply_narrow`] needs.
pub fn fits_i32(values: &[i64]) -> bool {
    values.iter().all(|&v| i32::try_from(v).is_ok())
}

/// [`multiply`] for `i64` values that all fit `i32` (checked:
/// [`fits_i32`] over `a` and `b`): the products are exact 64-bit ones
/// and the sums wrap, so the result is [`multiply`]'s. Where the CPU has
/// AVX2 each product is one lane of a `vpmuldq`, about three times as
/// fast as AVX2's emulated 64-bit multiply; otherwise, or if a value does
/// not fit, it is [`multiply`].
///
/// # Panics
/// If the lengths of `a` and `out` do not fit `b`'s shape.
pub fn multiply_narrow(
    a: &[i64],
    b: &PackedColumns<i64, NARROW_PANEL>,
    out: &mut [i64],
    extent: Extent,
) {
    #[cfg(target_arch = "x86_64")]
    if wide::available() && fits_i32(a) && fits_i32(&b.data) {
        let rows = checked_rows(a, b, out);
        // SAFETY: the CPU has AVX2 (checked just above).
        unsafe { avx2::multiply(a, b, out, rows, extent) };
        return;
    }
    multiply(a, b, out, extent);
}

/// Rows of `a`, with the shapes of `a` and `out` checked against `b`.
fn checked_rows<T: Word, const P: usize>(a: &[T], b: &PackedColumns<T, P>, out: &[T]) -> usize {
    let depth = b.depth();
    let rows = a
        .len()
        .checked_div(depth)
        .unwrap_or(out.len() / b.cols().max(1));
    assert_eq!(a.len(), rows * depth, "A must have whole rows");
    assert_eq!(out.len(), rows * b.cols(), "out must be rows x cols");
    rows
}

struct Multiply<'a, T, const P: usize> {
    a: &'a [T],
    b: &'a PackedColumns<T, P>,
    out: &'a mut [T],
    rows: usize,
    extent: Extent,
}

impl<T: Word, const P: usize> Kernel for Multiply<'_, T, P> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        let Multiply {
            a,
            b,
            out,
            rows,
            extent,
        } = self;
        let (depth, cols) = (b.depth(), b.cols());
        let panels = cols.div_ceil(P);
        let first_panel = |row| extent.first_panel(row, P);
        sweep(rows, panels, TILE_ROWS, first_panel, |row, tile, p| {
            let a_rows = &a[row * depth..(row + tile) * depth];
            let out_rows = &mut out[row * cols..(row + tile) * cols];
            let width = P.min(cols - p * P);
            if tile == TILE_ROWS {
                let sums = tile_sums::<T, TILE_ROWS, P>(a_rows, depth, b.panel(p));
                store(&sums, out_rows, cols, p * P, width);
            } else {
                let sums = tile_sums::<T, 1, P>(a_rows, depth, b.panel(p));
                store(&sums, out_rows, cols, p * P, width);
            }
        });
    }
}

/// The `R × P` products of `R` rows of `A` (row-major, `R × depth`) with
/// one panel.
#[inline(always)]
fn tile_sums<T: Word, const R: usize, const P: usize>(
    a: &[T],
    depth: usize,
    panel: &[T],
) -> [[T; P]; R] {
    let rows: [&[T]; R] = std::array::from_fn(|r| &a[r * depth..(r + 1) * depth]);
    let mut sums = [[T::default(); P]; R];
    for (k, b) in panel.chunks_exact(P).enumerate().take(depth) {
        for r in 0..R {
            let x = rows[r][k];
            for j in 0..P {
                sums[r][j] = sums[r][j].mul_add(x, b[j]);
            }
        }
    }
    sums
}

#[inline(always)]
fn store<T: Word, const R: usize, const P: usize>(
    sums: &[[T; P]; R],
    out: &mut [T],
    cols: usize,
    first_col: usize,
    width: usize,
) {
    for (r, row_sums) in sums.iter().enumerate() {
        let start = r * cols + first_col;
        out[start..start + width].copy_from_slice(&row_sums[..width]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(a: &[i64], b: &[i64], rows: usize, depth: usize, cols: usize) -> Vec<i64> {
        let mut out = vec![0i64; rows * cols];
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

    fn values(n: usize, seed: u64) -> Vec<i64> {
        (0..n as u64)
            .map(|i| ((i * 2_654_435_761 + seed * 97) % 201) as i64 - 100)
            .collect()
    }

    #[test]
    fn every_shape_around_the_tile_sizes() {
        for rows in [1, 3, 4, 5, 9] {
            for depth in [1, 2, 7] {
                for cols in [1, 15, 16, 17, 33] {
                    let a = values(rows * depth, 1);
                    let b = values(depth * cols, 2);
                    let expected = naive(&a, &b, rows, depth, cols);
                    let packed = PackedColumns::<i64, 8>::from_rows(&b, depth, cols);
                    let mut out = vec![0; rows * cols];
                    multiply(&a, &packed, &mut out, Extent::Full);
                    assert_eq!(out, expected, "{rows}x{depth}x{cols}");

                    let a32: Vec<i32> = a.iter().map(|&v| v as i32).collect();
                    let b32: Vec<i32> = b.iter().map(|&v| v as i32).collect();
                    let packed = PackedColumns::<i32, 16>::from_rows(&b32, depth, cols);
                    let mut out = vec![0i32; rows * cols];
                    multiply(&a32, &packed, &mut out, Extent::Full);
                    assert!(out.iter().zip(&expected).all(|(&o, &e)| i64::from(o) == e));
                }
            }
        }
    }

    #[test]
    fn wraps_like_two_complement_c() {
        let a = [i32::MAX, i32::MIN, 3];
        let b = [i32::MAX, 2, i32::MIN];
        let packed = PackedColumns::<i32, 16>::from_rows(&b, 3, 1);
        let mut out = [0i32];
        multiply(&a, &packed, &mut out, Extent::Full);
        let expected = i32::MAX
            .wrapping_mul(i32::MAX)
            .wrapping_add(i32::MIN.wrapping_mul(2))
            .wrapping_add(3i32.wrapping_mul(i32::MIN));
        assert_eq!(out[0], expected);
    }

    #[test]
    fn transposed_packing_gives_row_dot_products() {
        let (n, depth) = (11, 5);
        let c = values(n * depth, 3);
        let packed = PackedColumns::<i64, 8>::from_transposed(&c, n, depth);
        let mut out = vec![0; n * n];
        multiply(&c, &packed, &mut out, Extent::Full);
        for i in 0..n {
            for j in 0..n {
                let dot: i64 = (0..depth)
                    .map(|k| c[i * depth + k] * c[j * depth + k])
                    .sum();
                assert_eq!(out[i * n + j], dot);
            }
        }
    }

    #[test]
    fn upper_extent_computes_every_element_on_or_above_the_diagonal() {
        let (n, depth) = (21, 3);
        let c = values(n * depth, 4);
        let packed = PackedColumns::<i64, 8>::from_transposed(&c, n, depth);
        let mut full = vec![0; n * n];
        multiply(&c, &packed, &mut full, Extent::Full);
        for first_row in [0, 5, 13] {
            let rows = (n - first_row).min(6);
            let a = &c[first_row * depth..(first_row + rows) * depth];
            let mut out = vec![-1; rows * n];
            multiply(a, &packed, &mut out, Extent::UpperFrom { first_row });
            for r in 0..rows {
                for j in first_row + r..n {
                    assert_eq!(out[r * n + j], full[(first_row + r) * n + j]);
                }
            }
        }
    }

    #[test]
    fn narrow_products_equal_the_wide_kernel_at_the_limits_of_i32() {
        let limits = [
            i32::MIN as i64,
            i32::MIN as i64 + 1,
            -1,
            0,
            1,
            i32::MAX as i64,
        ];
        let pick = |n: usize, seed: usize| -> Vec<i64> {
            (0..n)
                .map(|i| limits[(i * 7 + seed * 3 + i / 5) % limits.len()])
                .collect()
        };
        for (rows, depth, cols) in [(1, 1, 1), (4, 9, 8), (7, 33, 17), (9, 2, 5)] {
            let a = pick(rows * depth, 1);
            let b = pick(depth * cols, 2);
            let expected = naive(&a, &b, rows, depth, cols);
            let packed = PackedColumns::<i64, NARROW_PANEL>::from_rows(&b, depth, cols);
            let mut out = vec![0; rows * cols];
            multiply_narrow(&a, &packed, &mut out, Extent::Full);
            assert_eq!(out, expected, "{rows}x{depth}x{cols}");
            for first_row in [0, 3] {
                let mut upper = vec![-1; rows * cols];
                multiply_narrow(&a, &packed, &mut upper, Extent::UpperFrom { first_row });
                let mut wide = vec![-1; rows * cols];
                multiply(&a, &packed, &mut wide, Extent::UpperFrom { first_row });
                assert_eq!(upper, wide);
            }
        }
        // A value past i32 takes the wide kernel and is still exact.
        let (a, b) = ([i64::MAX, 3], [2, i32::MAX as i64 + 1]);
        let packed = PackedColumns::<i64, NARROW_PANEL>::from_rows(&b, 2, 1);
        let mut out = [0];
        multiply_narrow(&a, &packed, &mut out, Extent::Full);
        assert_eq!(out[0], naive(&a, &b, 1, 2, 1)[0]);
    }

    #[test]
    fn zero_depth_gives_zeros() {
        let packed = PackedColumns::<i32, 16>::from_rows(&[], 0, 3);
        let mut out = vec![9; 6];
        multiply(&[], &packed, &mut out, Extent::Full);
        assert_eq!(out, [0; 6]);
    }
}
