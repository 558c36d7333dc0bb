//! Hand-written multithreaded PCA: the yardstick for the runtime's
//! overhead. The means are computed by one contiguous block of rows per
//! thread; the covariance kernel is prepared once
//! ([`CovarianceKernel`]), and its triangle is cut into one stretch of
//! rows per thread holding about the same number of elements (early rows
//! have more), each thread filling its stretch in place, a block of rows
//! at a time
//! (`std::thread::scope` throughout).
//!
//! No runtime, no pool, no placement.

use std::num::NonZeroUsize;

use crate::pca::covariance::{balanced_row_ends, CovarianceKernel};
use crate::pca::{row_mean, triangle_offset, PcaMatrix, PcaOutput};

/// Means and covariance with `threads` threads.
pub fn pca(matrix: &PcaMatrix, threads: NonZeroUsize) -> PcaOutput {
    let means = means(matrix, threads);
    let rows = matrix.rows();
    let mut covariance = vec![0i64; triangle_offset(rows, rows)];
    let kernel = CovarianceKernel::new(matrix, &means);
    std::thread::scope(|scope| {
        let mut rest: &mut [i64] = &mut covariance;
        let mut first = 0;
        for end in balanced_row_ends(rows, threads.get()) {
            let len = triangle_offset(rows, end) - triangle_offset(rows, first);
            let (stretch, tail) = std::mem::take(&mut rest).split_at_mut(len);
            rest = tail;
            let kernel = &kernel;
            scope.spawn(move || fill_in_blocks(kernel, rows, first, end, stretch));
            first = end;
        }
    });
    PcaOutput { means, covariance }
}

/// Rows a thread computes at a time (the product's scratch rows stay in
/// cache).
const BLOCK_ROWS: usize = 32;

/// Fills the triangle rows `first..end` (`stretch`) a block of rows at a
/// time.
fn fill_in_blocks(
    kernel: &CovarianceKernel<'_>,
    rows: usize,
    first: usize,
    end: usize,
    stretch: &mut [i64],
) {
    let base = triangle_offset(rows, first);
    let mut row = first;
    while row < end {
        let next = (row + BLOCK_ROWS).min(end);
        let (a, b) = (
            triangle_offset(rows, row) - base,
            triangle_offset(rows, next) - base,
        );
        kernel.fill_rows(row, &mut stretch[a..b]);
        row = next;
    }
}

fn means(matrix: &PcaMatrix, threads: NonZeroUsize) -> Vec<i64> {
    let mut means = vec![0i64; matrix.rows()];
    let block = matrix.rows().div_ceil(threads.get()).max(1);
    std::thread::scope(|scope| {
        for (b, out) in means.chunks_mut(block).enumerate() {
            scope.spawn(move || {
                for (r, mean) in out.iter_mut().enumerate() {
                    *mean = row_mean(matrix.row(b * block + r));
                }
            });
        }
    });
    means
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pca::{gen, reference};

    #[test]
    fn equals_the_reference() {
        for (rows, cols, threads) in [
            (0, 2, 2),
            (1, 2, 1),
            (2, 5, 3),
            (31, 7, 2),
            (64, 64, 4),
            (10, 300, 16),
        ] {
            let m = gen::generate(rows, cols, 100, 13).unwrap();
            let threads = NonZeroUsize::new(threads).unwrap();
            assert_eq!(pca(&m, threads), reference::pca(&m), "{rows}x{cols}");
        }
    }
}
