//! PCA's first two steps, as Phoenix++'s `pca` computes them: the mean of
//! every row of an integer matrix and the covariance matrix of the rows.
//!
//! The original treats each of the `rows` rows as a variable observed
//! `cols` times. It runs two MapReduce jobs:
//! - the mean of row `i`: the `long long` sum of its `int` values divided
//!   by `cols`, truncated ([`row_mean`]);
//! - the covariance of rows `i` and `j` for every `j >= i` (the upper
//!   triangle with the diagonal; the matrix is symmetric): the `long long`
//!   sum over `k` of `(v[i][k] - mean[i]) * (v[j][k] - mean[j])`, divided
//!   by `cols - 1`, truncated.
//!
//! Its `long long` arithmetic wraps, so sums are exact modulo 2^64 and do
//! not depend on the order of the terms; this version computes the same
//! numbers on every input. The input is `rand() % grid_size` per value
//! (grid 100 by default) from seed 1; the original prints the (wrapping)
//! sum of all covariances ([`PcaOutput::covariance_sum`]).
//!
//! Deliberate differences: the original keys covariance `(i, j)` as
//! `i * cols + j`, which collides when `rows > cols` (it then fails an
//! assertion), and sizes its containers for at most 1000 rows; here any
//! shape works and elements are addressed by `(i, j)`. A single column has
//! no covariance (the original divides by zero): it is an error.
//!
//! The submodules: [`gen`] (inputs and files), [`reference`](mod@reference) (plain
//! sequential), [`covariance`] (the packed covariance kernel),
//! [`baseline`] (hand-written threads), and [`job`] (the two MapReduce
//! jobs, [`run`]).

pub mod baseline;
pub mod covariance;
pub mod gen;
pub mod job;
pub mod reference;

pub use job::run;

use crate::numeric::IntFileError;

/// What can be wrong with PCA's input.
#[derive(Debug, thiserror::Error)]
pub enum PcaError {
    /// The values do not fill `rows × cols`.
    #[error("a {rows}x{cols} matrix needs {expected} values, found {found}", expected = .rows * .cols)]
    WrongSize {
        /// Rows asked for.
        rows: usize,
        /// Columns asked for.
        cols: usize,
        /// Values given.
        found: usize,
    },
    /// The covariance divides by `cols - 1`.
    #[error("the covariance needs at least 2 columns (observations), found {cols}")]
    TooFewColumns {
        /// Columns given.
        cols: usize,
    },
    /// Values must be drawn from a non-empty range.
    #[error("the grid size must be at least 1")]
    ZeroGridSize,
    /// A matrix file could not be read.
    #[error("matrix file: {0}")]
    File(#[from] IntFileError),
    /// The MapReduce run failed.
    #[error("pca: {0}")]
    Runtime(#[from] numakit_mapreduce::MapReduceError),
}

/// A `rows × cols` matrix of `i32`, row-major: `rows` variables of `cols`
/// observations each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PcaMatrix {
    rows: usize,
    cols: usize,
    values: Vec<i32>,
}

impl PcaMatrix {
    /// The matrix of these row-major values; at least two columns.
    pub fn new(rows: usize, cols: usize, values: Vec<i32>) -> Result<Self, PcaError> {
        if cols < 2 {
            return Err(PcaError::TooFewColumns { cols });
        }
        if Some(values.len()) != rows.checked_mul(cols) {
            return Err(PcaError::WrongSize {
                rows,
                cols,
                found: values.len(),
            });
        }
        Ok(PcaMatrix { rows, cols, values })
    }

    /// Number of rows (variables).
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Number of columns (observations).
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// All values, row-major.
    pub fn values(&self) -> &[i32] {
        &self.values
    }

    /// Row `i`.
    pub fn row(&self, i: usize) -> &[i32] {
        &self.values[i * self.cols..(i + 1) * self.cols]
    }
}

/// The mean of a row as the original computes it: the 64-bit sum divided
/// by the length, truncated toward zero. (The sum of at most 2^31 `int`s
/// cannot overflow 64 bits.)
pub fn row_mean(row: &[i32]) -> i64 {
    let sum: i64 = row.iter().map(|&v| i64::from(v)).sum();
    sum / row.len().max(1) as i64
}

/// Where row `i`'s part of an upper triangle of side `rows` starts, the
/// triangle stored row after row (`(i, i), (i, i+1) ... (i, rows-1)`).
pub fn triangle_offset(rows: usize, i: usize) -> usize {
    i * rows - i * i.saturating_sub(1) / 2
}

/// The row means and the upper triangle of the covariance matrix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PcaOutput {
    /// The mean of every row.
    pub means: Vec<i64>,
    /// Covariances `(i, j)` for `j >= i`, row after row (see
    /// [`triangle_offset`]).
    pub covariance: Vec<i64>,
}

impl PcaOutput {
    /// Number of rows (variables).
    pub fn rows(&self) -> usize {
        self.means.len()
    }

    /// The covariance of rows `i` and `j` (either order).
    pub fn covariance(&self, i: usize, j: usize) -> i64 {
        let (i, j) = (i.min(j), i.max(j));
        self.covariance[triangle_offset(self.rows(), i) + (j - i)]
    }

    /// The wrapping 64-bit sum of every covariance (the figure the
    /// original prints as "Covariance sum").
    pub fn covariance_sum(&self) -> i64 {
        self.covariance
            .iter()
            .fold(0i64, |sum, &c| sum.wrapping_add(c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_are_checked() {
        assert!(PcaMatrix::new(2, 2, vec![1, 2, 3, 4]).is_ok());
        assert!(PcaMatrix::new(0, 2, vec![]).is_ok());
        assert!(matches!(
            PcaMatrix::new(2, 2, vec![1]),
            Err(PcaError::WrongSize { found: 1, .. })
        ));
        assert!(matches!(
            PcaMatrix::new(3, 1, vec![1, 2, 3]),
            Err(PcaError::TooFewColumns { cols: 1 })
        ));
    }

    #[test]
    fn means_truncate_toward_zero() {
        assert_eq!(row_mean(&[1, 2]), 1);
        assert_eq!(row_mean(&[-1, -2]), -1);
        assert_eq!(
            row_mean(&[i32::MAX, i32::MAX, i32::MAX]),
            i64::from(i32::MAX)
        );
        assert_eq!(row_mean(&[i32::MIN, i32::MIN]), i64::from(i32::MIN));
    }

    #[test]
    fn triangle_offsets_count_the_rows_before() {
        let rows = 5;
        let mut expected = 0;
        for i in 0..rows {
            assert_eq!(triangle_offset(rows, i), expected);
            expected += rows - i;
        }
        assert_eq!(triangle_offset(rows, rows), rows * (rows + 1) / 2);
    }
}
