//! Plain sequential PCA means and covariance with the original's
//! arithmetic, one element at a time: the yardstick for the jobs and the
//! baseline. It shares only [`row_mean`] and the output type with them.

use crate::pca::{row_mean, PcaMatrix, PcaOutput};

/// Means and the upper triangle of the covariance matrix.
pub fn pca(matrix: &PcaMatrix) -> PcaOutput {
    let means: Vec<i64> = (0..matrix.rows())
        .map(|i| row_mean(matrix.row(i)))
        .collect();
    let mut covariance = Vec::with_capacity(matrix.rows() * (matrix.rows() + 1) / 2);
    for i in 0..matrix.rows() {
        for j in i..matrix.rows() {
            covariance.push(covariance_of(matrix, &means, i, j));
        }
    }
    PcaOutput { means, covariance }
}

/// The original's `long long` covariance of rows `i` and `j`, wrapping.
fn covariance_of(matrix: &PcaMatrix, means: &[i64], i: usize, j: usize) -> i64 {
    let mut sum = 0i64;
    for (&a, &b) in matrix.row(i).iter().zip(matrix.row(j)) {
        let product = (i64::from(a) - means[i]).wrapping_mul(i64::from(b) - means[j]);
        sum = sum.wrapping_add(product);
    }
    sum / (matrix.cols() as i64 - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_case_by_hand() {
        // Rows (1, 2, 3) and (2, 4, 7): means 2 and 4 (13/3 truncated);
        // centred (-1, 0, 1) and (-2, 0, 3).
        let m = PcaMatrix::new(2, 3, vec![1, 2, 3, 2, 4, 7]).unwrap();
        let out = pca(&m);
        assert_eq!(out.means, [2, 4]);
        // (1 + 0 + 1)/2, (2 + 0 + 3)/2 = 2 (truncated), (4 + 0 + 9)/2 = 6.
        assert_eq!(out.covariance, [1, 2, 6]);
        assert_eq!(out.covariance(1, 0), 2);
        assert_eq!(out.covariance_sum(), 9);
    }

    #[test]
    fn negative_covariances_truncate_toward_zero() {
        let m = PcaMatrix::new(2, 2, vec![0, 3, 3, 0]).unwrap();
        // means 1 and 1; centred (-1, 2) and (2, -1): sum -4, / 1.
        assert_eq!(pca(&m).covariance, [5, -4, 5]);
    }

    #[test]
    fn extreme_values_wrap_like_long_long() {
        let m = PcaMatrix::new(2, 2, vec![i32::MIN, i32::MAX, i32::MAX, i32::MIN]).unwrap();
        let out = pca(&m);
        assert_eq!(out.means, [0, 0]);
        let expected = (i64::from(i32::MIN) * i64::from(i32::MIN))
            .wrapping_add(i64::from(i32::MAX) * i64::from(i32::MAX));
        assert_eq!(out.covariance[0], expected);
    }

    #[test]
    fn no_rows_no_output() {
        let out = pca(&PcaMatrix::new(0, 4, vec![]).unwrap());
        assert!(out.means.is_empty() && out.covariance.is_empty());
    }
}
