//! The covariance of rows as a packed matrix product: with `C` the matrix
//! of centred values (`v[i][k] - mean[i]`), the covariance sums are
//! `C · Cᵀ`, of which the upper triangle is needed. [`CovarianceKernel`]
//! centres the matrix and packs `Cᵀ` once; [`CovarianceKernel::fill_rows`]
//! then computes the triangle rows of any range of rows with
//! [`crate::numeric::gemm`], skipping column panels left of the diagonal,
//! and divides by `cols - 1`.
//!
//! The sums are the original's `long long` ones, wrapping. When every
//! partial sum is known to fit in 32 bits (`cols · max|c|² ≤ i32::MAX`,
//! true of the original's default grid of 100 for up to 219 000 columns)
//! the product runs on `i32`, twice the lanes per instruction, and is
//! exact; otherwise on wrapping `i64`. Either way the numbers are the
//! same.
//!
//! It does not compute the means (see [`crate::pca::row_mean`]) nor split
//! work among threads.

use crate::numeric::gemm::{multiply, Extent, PackedColumns};
use crate::pca::{triangle_offset, PcaMatrix};

/// Columns per packed panel for `i32` (two AVX2 registers).
const NARROW_PANEL: usize = 16;
/// Columns per packed panel for `i64`.
const WIDE_PANEL: usize = 8;

/// The centred matrix and its packed transpose, in the narrowest type
/// that keeps the sums exact.
#[derive(Clone, Debug)]
pub struct CovarianceKernel {
    rows: usize,
    cols: usize,
    centered: Centered,
}

#[derive(Clone, Debug)]
enum Centered {
    Narrow {
        values: Vec<i32>,
        packed: PackedColumns<i32, NARROW_PANEL>,
    },
    Wide {
        values: Vec<i64>,
        packed: PackedColumns<i64, WIDE_PANEL>,
    },
}

impl CovarianceKernel {
    /// Centres `matrix` by `means` (one per row) and packs it.
    ///
    /// # Panics
    /// If there is not one mean per row.
    pub fn new(matrix: &PcaMatrix, means: &[i64]) -> Self {
        assert_eq!(means.len(), matrix.rows(), "one mean per row");
        let (rows, cols) = (matrix.rows(), matrix.cols());
        let centered: Vec<i64> = (0..rows)
            .flat_map(|i| matrix.row(i).iter().map(move |&v| i64::from(v) - means[i]))
            .collect();
        let centered = if sums_fit_i32(&centered, cols) {
            let values: Vec<i32> = centered.iter().map(|&c| c as i32).collect();
            let packed = PackedColumns::from_transposed(&values, rows, cols);
            Centered::Narrow { values, packed }
        } else {
            let packed = PackedColumns::from_transposed(&centered, rows, cols);
            Centered::Wide {
                values: centered,
                packed,
            }
        };
        CovarianceKernel {
            rows,
            cols,
            centered,
        }
    }

    /// Whether the sums run in 32-bit arithmetic.
    pub fn is_narrow(&self) -> bool {
        matches!(self.centered, Centered::Narrow { .. })
    }

    /// Number of rows (the side of the covariance matrix).
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Triangle values of rows `first..first + n`, `n` being whatever
    /// `out` holds: `out` is that stretch of the whole triangle (from
    /// [`triangle_offset`]`(rows, first)`).
    ///
    /// # Panics
    /// If `out` does not end on a row boundary of the triangle.
    pub fn fill_rows(&self, first: usize, out: &mut [i64]) {
        let end = self.rows_covered(first, out.len());
        let divisor = self.cols as i64 - 1;
        match &self.centered {
            Centered::Narrow { values, packed } => {
                let sums = self.product_rows(values, packed, first, end);
                self.gather(first, end, &sums, |s| i64::from(s) / divisor, out);
            }
            Centered::Wide { values, packed } => {
                let sums = self.product_rows(values, packed, first, end);
                self.gather(first, end, &sums, |s| s / divisor, out);
            }
        }
    }

    /// The row after the last one `len` triangle values from `first`
    /// cover.
    fn rows_covered(&self, first: usize, len: usize) -> usize {
        let start = triangle_offset(self.rows, first);
        let end = (first..=self.rows)
            .find(|&r| triangle_offset(self.rows, r) >= start + len)
            .unwrap_or(self.rows);
        assert_eq!(
            triangle_offset(self.rows, end),
            start + len,
            "whole triangle rows"
        );
        end
    }

    fn product_rows<T: crate::numeric::gemm::Word, const P: usize>(
        &self,
        values: &[T],
        packed: &PackedColumns<T, P>,
        first: usize,
        end: usize,
    ) -> Vec<T> {
        let mut sums = vec![T::default(); (end - first) * self.rows];
        let rows_of_c = &values[first * self.cols..end * self.cols];
        multiply(
            rows_of_c,
            packed,
            &mut sums,
            Extent::UpperFrom { first_row: first },
        );
        sums
    }

    /// Copies the on-or-above-diagonal sums of rows `first..end`, each
    /// turned into a covariance by `finish`, into `out`.
    fn gather<T: Copy>(
        &self,
        first: usize,
        end: usize,
        sums: &[T],
        finish: impl Fn(T) -> i64,
        out: &mut [i64],
    ) {
        let mut next = 0;
        for i in first..end {
            let row = &sums[(i - first) * self.rows..(i - first + 1) * self.rows];
            for (slot, &s) in out[next..next + self.rows - i].iter_mut().zip(&row[i..]) {
                *slot = finish(s);
            }
            next += self.rows - i;
        }
    }
}

/// Whether `cols · max|c|²` fits in `i32`: then no partial sum of
/// products of centred values can leave 32 bits.
fn sums_fit_i32(centered: &[i64], cols: usize) -> bool {
    let largest = centered.iter().map(|c| c.unsigned_abs()).max().unwrap_or(0);
    u128::from(largest) * u128::from(largest) * cols as u128 <= i32::MAX as u128
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pca::{gen, reference, row_mean};

    fn triangle(matrix: &PcaMatrix, blocks: &[usize]) -> (Vec<i64>, bool) {
        let means: Vec<i64> = (0..matrix.rows())
            .map(|i| row_mean(matrix.row(i)))
            .collect();
        let kernel = CovarianceKernel::new(matrix, &means);
        let rows = matrix.rows();
        let mut out = vec![0; triangle_offset(rows, rows)];
        let mut first = 0;
        for &size in blocks.iter().chain(std::iter::repeat(&3)) {
            if first >= rows {
                break;
            }
            let end = (first + size).min(rows);
            let (a, b) = (triangle_offset(rows, first), triangle_offset(rows, end));
            kernel.fill_rows(first, &mut out[a..b]);
            first = end;
        }
        (out, kernel.is_narrow())
    }

    #[test]
    fn equals_the_reference_in_any_row_blocks() {
        for (rows, cols) in [(1, 2), (5, 3), (17, 40), (40, 17), (33, 100)] {
            let m = gen::generate(rows, cols, 100, 7).unwrap();
            let expected = reference::pca(&m).covariance;
            for blocks in [&[1usize][..], &[4, 1, 16], &[64]] {
                let (got, narrow) = triangle(&m, blocks);
                assert!(narrow);
                assert_eq!(got, expected, "{rows}x{cols} in blocks {blocks:?}");
            }
        }
    }

    #[test]
    fn large_values_take_the_wide_path_and_wrap_alike() {
        let mut rand = crate::numeric::CRand::new(3);
        let values: Vec<i32> = (0..9 * 13)
            .map(|_| rand.next_rand() as i32 * if rand.next_rand() % 2 == 0 { 1 } else { -1 })
            .collect();
        let m = PcaMatrix::new(9, 13, values).unwrap();
        let (got, narrow) = triangle(&m, &[2, 5]);
        assert!(!narrow);
        assert_eq!(got, reference::pca(&m).covariance);
    }

    #[test]
    fn the_narrow_bound_is_exact_at_its_limit() {
        // 2 columns, centred values ±c: sums up to 2c² must fit i32.
        assert!(sums_fit_i32(&[32_767, -32_767], 2));
        assert!(!sums_fit_i32(&[32_768, -32_768], 2));
        // Row (0, 65535): mean 32767, centred (-32767, 32768): wide.
        let m = PcaMatrix::new(1, 2, vec![0, 65_535]).unwrap();
        let (got, narrow) = triangle(&m, &[1]);
        assert!(!narrow);
        assert_eq!(got, reference::pca(&m).covariance);
        let m = PcaMatrix::new(1, 2, vec![0, 65_534]).unwrap();
        let (got, narrow) = triangle(&m, &[1]);
        assert!(narrow);
        assert_eq!(got, reference::pca(&m).covariance);
    }
}
