//! The covariance of rows as a packed matrix product: with `C` the matrix
//! of centred values (`v[i][k] - mean[i]`), the covariance sums are
//! `C · Cᵀ`, of which the upper triangle is needed. [`CovarianceKernel`]
//! packs `Cᵀ` once; [`CovarianceKernel::fill_rows`] then centres the rows
//! of any block, multiplies them skipping column panels left of the
//! diagonal, and divides by `cols - 1`.
//!
//! The sums are the original's `long long` ones, wrapping. When
//! `cols · max|c|²` fits `i32`, no partial sum can leave 32 bits, and the
//! centred values then fit `i16` (with two or more columns, `|c| ≤
//! 32767`): the 16-bit pair kernel ([`crate::numeric::pairs`],
//! [`Arithmetic::Pairs`]) computes the same numbers four times as fast as
//! 32-bit multiplies would. The original's default grid of 100 is there
//! for up to 219 000 columns. Otherwise the sums run in wrapping `i64`,
//! exactly the original's: when every centred value fits `i32` (values
//! drawn from 0..2^31, the widest grid the original accepts), each
//! product is an exact 32 × 32 → 64-bit one, a `vpmuldq` lane with AVX2
//! ([`crate::numeric::gemm::multiply_narrow`], [`Arithmetic::Products32`]);
//! past that, full 64-bit multiplies ([`crate::numeric::gemm`],
//! [`Arithmetic::Wide`]).
//!
//! It does not compute the means (see [`crate::pca::row_mean`]) nor split
//! work among threads.

use crate::numeric::gemm::{self, Extent, PackedColumns};

use crate::numeric::pairs::{self, PackedPairs, PairRows};
use crate::pca::{triangle_offset, PcaMatrix};

/// Columns per packed panel for `i64`.
const WIDE_PANEL: usize = gemm::NARROW_PANEL;

/// Which arithmetic the covariance sums run in (all give the same
/// numbers; see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arithmetic {
    /// 16-bit values, multiplied in pairs into 32-bit sums.
    Pairs,
    /// Values that fit 32 bits, multiplied into 64-bit sums (wrapping).
    Products32,
    /// 64-bit values and sums, wrapping.
    Wide,
}

/// `Cᵀ` packed for the arithmetic the values allow, and what is needed
/// to centre any block of rows.
#[derive(Clone, Debug)]
pub struct CovarianceKernel<'a> {
    matrix: &'a PcaMatrix,
    means: &'a [i64],
    packed: Packed,
}

#[derive(Clone, Debug)]
enum Packed {
    Pairs(PackedPairs),
    Wide(PackedColumns<i64, WIDE_PANEL>, Arithmetic),
}

impl<'a> CovarianceKernel<'a> {
    /// Chooses the arithmetic and packs `Cᵀ`.
    ///
    /// # Panics
    /// If there is not one mean per row.
    pub fn new(matrix: &'a PcaMatrix, means: &'a [i64]) -> Self {
        assert_eq!(means.len(), matrix.rows(), "one mean per row");
        let (rows, cols) = (matrix.rows(), matrix.cols());
        let centred = |k: usize, j: usize| i64::from(matrix.row(j)[k]) - means[j];
        let packed = match choose_arithmetic(matrix, means) {
            narrow_or_wide @ (Arithmetic::Products32 | Arithmetic::Wide) => {
                Packed::Wide(PackedColumns::from_fn(cols, rows, centred), narrow_or_wide)
            }
            Arithmetic::Pairs => {
                Packed::Pairs(PackedPairs::from_columns(cols, rows, |j, column| {
                    for (slot, &v) in column.iter_mut().zip(matrix.row(j)) {
                        *slot = (i64::from(v) - means[j]) as i16;
                    }
                }))
            }
        };
        CovarianceKernel {
            matrix,
            means,
            packed,
        }
    }

    /// The arithmetic the sums run in.
    pub fn arithmetic(&self) -> Arithmetic {
        match self.packed {
            Packed::Pairs(_) => Arithmetic::Pairs,
            Packed::Wide(_, arithmetic) => arithmetic,
        }
    }

    /// Triangle values of rows `first..`, as many rows as `out` holds:
    /// `out` is that stretch of the whole triangle (from
    /// [`triangle_offset`]`(rows, first)`).
    ///
    /// # Panics
    /// If `out` does not end on a row boundary of the triangle.
    pub fn fill_rows(&self, first: usize, out: &mut [i64]) {
        let end = self.rows_covered(first, out.len());
        let divisor = self.matrix.cols() as i64 - 1;
        let rows = end - first;
        match &self.packed {
            Packed::Pairs(b) => {
                let block: Vec<i32> = self.centred_block(first, end);
                let a = PairRows::new(&block, rows, self.matrix.cols(), |c| c as i16);
                let mut sums = vec![0i32; rows * self.matrix.rows()];
                pairs::multiply(
                    a.rows_slice(0, rows),
                    b,
                    &mut sums,
                    Extent::UpperFrom { first_row: first },
                );
                self.gather(first, end, &sums, |s| i64::from(s) / divisor, out);
            }
            Packed::Wide(b, arithmetic) => {
                let block = self.centred_block::<i64>(first, end);
                let mut sums = vec![0i64; rows * self.matrix.rows()];
                let extent = Extent::UpperFrom { first_row: first };
                if *arithmetic == Arithmetic::Products32 {
                    gemm::multiply_narrow(&block, b, &mut sums, extent);
                } else {
                    gemm::multiply(&block, b, &mut sums, extent);
                }
                self.gather(first, end, &sums, |s| s / divisor, out);
            }
        }
    }

    /// The row after the last one `len` triangle values from `first`
    /// cover.
    fn rows_covered(&self, first: usize, len: usize) -> usize {
        let rows = self.matrix.rows();
        let start = triangle_offset(rows, first);
        let end = (first..=rows)
            .find(|&r| triangle_offset(rows, r) >= start + len)
            .unwrap_or(rows);
        assert_eq!(
            triangle_offset(rows, end),
            start + len,
            "whole triangle rows"
        );
        end
    }

    /// Rows `first..end` centred, in a type the chosen arithmetic has
    /// shown them to fit.
    fn centred_block<T: TryFrom<i64> + Default>(&self, first: usize, end: usize) -> Vec<T> {
        (first..end)
            .flat_map(|i| {
                let mean = self.means[i];
                self.matrix
                    .row(i)
                    .iter()
                    .map(move |&v| T::try_from(i64::from(v) - mean).unwrap_or_default())
            })
            .collect()
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
        let rows = self.matrix.rows();
        let mut next = 0;
        for i in first..end {
            let row = &sums[(i - first) * rows..(i - first + 1) * rows];
            for (slot, &s) in out[next..next + rows - i].iter_mut().zip(&row[i..]) {
                *slot = finish(s);
            }
            next += rows - i;
        }
    }
}

/// Where each of (at most) `parts` non-empty stretches of triangle rows
/// ends, so that they hold about equal numbers of elements.
pub fn balanced_row_ends(rows: usize, parts: usize) -> Vec<usize> {
    let total = triangle_offset(rows, rows);
    let mut ends = Vec::with_capacity(parts);
    let mut row = 0;
    for p in 1..=parts {
        let target = total * p / parts;
        while row < rows && triangle_offset(rows, row) < target {
            row += 1;
        }
        if row > ends.last().copied().unwrap_or(0) {
            ends.push(row);
        }
    }
    ends
}

/// The narrowest arithmetic whose sums provably equal the original's
/// (see the module docs).
pub fn choose_arithmetic(matrix: &PcaMatrix, means: &[i64]) -> Arithmetic {
    let largest = (0..matrix.rows())
        .map(|i| {
            let row = matrix.row(i);
            let (low, high) = row
                .iter()
                .fold((i32::MAX, i32::MIN), |(l, h), &v| (l.min(v), h.max(v)));
            (i64::from(low) - means[i])
                .unsigned_abs()
                .max((i64::from(high) - means[i]).unsigned_abs())
        })
        .max()
        .unwrap_or(0);
    let sums_fit_i32 =
        u128::from(largest) * u128::from(largest) * matrix.cols() as u128 <= i32::MAX as u128;
    // With cols >= 2 the bound implies largest <= 32767; checked anyway.
    if sums_fit_i32 && largest <= i16::MAX as u64 {
        Arithmetic::Pairs
    } else if largest <= i32::MAX as u64 {
        Arithmetic::Products32
    } else {
        Arithmetic::Wide
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pca::{gen, reference, row_mean};

    fn triangle(matrix: &PcaMatrix, blocks: &[usize]) -> (Vec<i64>, Arithmetic) {
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
        (out, kernel.arithmetic())
    }

    #[test]
    fn equals_the_reference_in_any_row_blocks() {
        for (rows, cols) in [(1, 2), (5, 3), (17, 40), (40, 17), (33, 100)] {
            let m = gen::generate(rows, cols, 100, 7).unwrap();
            let expected = reference::pca(&m).covariance;
            for blocks in [&[1usize][..], &[4, 1, 16], &[64]] {
                let (got, arithmetic) = triangle(&m, blocks);
                assert_eq!(arithmetic, Arithmetic::Pairs);
                assert_eq!(got, expected, "{rows}x{cols} in blocks {blocks:?}");
            }
        }
    }

    #[test]
    fn large_values_take_the_64_bit_kernels_and_wrap_alike() {
        let mut rand = crate::numeric::CRand::new(3);
        let values: Vec<i32> = (0..9 * 13)
            .map(|_| {
                (rand.next_rand() % (1 << 30)) as i32
                    * if rand.next_rand() % 2 == 0 { 1 } else { -1 }
            })
            .collect();
        let m = PcaMatrix::new(9, 13, values).unwrap();
        let (got, arithmetic) = triangle(&m, &[2, 5]);
        assert_eq!(arithmetic, Arithmetic::Products32);
        assert_eq!(got, reference::pca(&m).covariance);
        // Centred values at both limits of i32 still take the 32-bit
        // products; one past them takes full 64-bit multiplies.
        let limits = PcaMatrix::new(1, 2, vec![i32::MIN + 1, i32::MAX]).unwrap();
        assert_eq!(
            triangle(&limits, &[1]),
            (reference::pca(&limits).covariance, Arithmetic::Products32)
        );
        let extremes = PcaMatrix::new(2, 2, vec![i32::MIN, i32::MAX, i32::MAX, i32::MIN]).unwrap();
        assert_eq!(
            triangle(&extremes, &[1]),
            (reference::pca(&extremes).covariance, Arithmetic::Wide)
        );
        let wide: Vec<i32> = (0..6 * 40)
            .map(|i| {
                if i % 3 == 0 {
                    i32::MIN + i
                } else {
                    i32::MAX - i * 7
                }
            })
            .collect();
        let m = PcaMatrix::new(6, 40, wide).unwrap();
        assert_eq!(
            triangle(&m, &[4]),
            (reference::pca(&m).covariance, Arithmetic::Wide)
        );
    }

    #[test]
    fn the_bounds_are_exact_at_their_limits() {
        // Row (0, 65534): mean 32767, centred ±32767: 2·32767² fits i32.
        let m = PcaMatrix::new(1, 2, vec![0, 65_534]).unwrap();
        assert_eq!(
            triangle(&m, &[1]),
            (reference::pca(&m).covariance, Arithmetic::Pairs)
        );
        // Row (0, 65535): mean 32767, centred (-32767, 32768): too wide
        // for the pairs.
        let m = PcaMatrix::new(1, 2, vec![0, 65_535]).unwrap();
        assert_eq!(
            triangle(&m, &[1]),
            (reference::pca(&m).covariance, Arithmetic::Products32)
        );
    }

    #[test]
    fn stretches_balance_the_triangle() {
        let ends = balanced_row_ends(1000, 2);
        assert_eq!(ends.last(), Some(&1000));
        // Half of the elements lie in the first ~29% of the rows.
        assert!((280..300).contains(&ends[0]), "{ends:?}");
        assert_eq!(balanced_row_ends(3, 8), [1, 2, 3]);
        assert!(balanced_row_ends(0, 4).is_empty());
    }
}
