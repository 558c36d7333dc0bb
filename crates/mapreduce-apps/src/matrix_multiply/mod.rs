//! Matrix multiply of two square integer matrices, as Phoenix++'s
//! `matrix_multiply` computes it.
//!
//! The original multiplies two `n × n` matrices of C `int`s read from two
//! raw files (`matrix_file_A.txt`, `matrix_file_B.txt`, which it writes
//! itself when asked, every value `rand() % 11`). Each map task computes
//! whole rows of the product (one row per task there) straight into the
//! output matrix, walking `A`'s row and `B` row by row; the MapReduce run
//! emits nothing. Its `int` arithmetic wraps, so the product is exact
//! modulo 2^32 — and the same whatever order the terms are added in,
//! which is what lets this version block the work differently and still
//! produce the original's numbers on every input. The original prints the
//! (wrapping `int`) sum of all output elements; [`SquareMatrix::total_sum`]
//! is that figure.
//!
//! The submodules: [`gen`] (inputs and files), [`reference`](mod@reference) (plain
//! sequential), [`kernel`] (the packed product of a block of rows),
//! [`baseline`] (hand-written threads), and [`job`] (on numakit's
//! MapReduce runtime, [`run`]).

pub mod baseline;
pub mod gen;
pub mod job;
pub mod kernel;
pub mod reference;

pub use job::run;

use crate::numeric::IntFileError;

/// What can be wrong with matrix multiply's input.
#[derive(Debug, thiserror::Error)]
pub enum MatrixError {
    /// A matrix's values are not `n × n` for the `n` required.
    #[error("a {side}x{side} matrix needs {expected} values, found {found}")]
    WrongSize {
        /// The side length required.
        side: usize,
        /// `side * side`.
        expected: usize,
        /// Values given.
        found: usize,
    },
    /// A file's values do not make a square matrix.
    #[error("{values} values do not make a square matrix")]
    NotSquare {
        /// Values in the file.
        values: usize,
    },
    /// The two matrices have different sides.
    #[error("A is {a}x{a} but B is {b}x{b}")]
    SideMismatch {
        /// Side of A.
        a: usize,
        /// Side of B.
        b: usize,
    },
    /// Values must be drawn from a non-empty range.
    #[error("the value modulus must be at least 1")]
    ZeroModulus,
    /// A matrix file could not be read or written.
    #[error("matrix file: {0}")]
    File(#[from] IntFileError),
    /// The MapReduce run failed.
    #[error("matrix multiply: {0}")]
    Runtime(#[from] numakit_mapreduce::MapReduceError),
}

/// An `n × n` matrix of `i32`, row-major.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SquareMatrix {
    side: usize,
    values: Vec<i32>,
}

impl SquareMatrix {
    /// The matrix with these row-major values, which must be `side²`.
    pub fn new(side: usize, values: Vec<i32>) -> Result<Self, MatrixError> {
        let expected = side.saturating_mul(side);
        if values.len() != expected {
            return Err(MatrixError::WrongSize {
                side,
                expected,
                found: values.len(),
            });
        }
        Ok(SquareMatrix { side, values })
    }

    /// The square matrix these values make, its side inferred.
    pub fn from_values(values: Vec<i32>) -> Result<Self, MatrixError> {
        let side = integer_sqrt(values.len()).ok_or(MatrixError::NotSquare {
            values: values.len(),
        })?;
        SquareMatrix::new(side, values)
    }

    /// Rows (and columns).
    pub fn side(&self) -> usize {
        self.side
    }

    /// All values, row-major.
    pub fn values(&self) -> &[i32] {
        &self.values
    }

    /// Row `i`.
    pub fn row(&self, i: usize) -> &[i32] {
        &self.values[i * self.side..(i + 1) * self.side]
    }

    /// The wrapping `int` sum of every element (the figure the original
    /// prints as "total sum").
    pub fn total_sum(&self) -> i32 {
        self.values.iter().fold(0i32, |sum, &v| sum.wrapping_add(v))
    }
}

/// The two factors of a product.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatrixPair {
    a: SquareMatrix,
    b: SquareMatrix,
}

impl MatrixPair {
    /// `a` and `b`, which must have the same side.
    pub fn new(a: SquareMatrix, b: SquareMatrix) -> Result<Self, MatrixError> {
        if a.side() != b.side() {
            return Err(MatrixError::SideMismatch {
                a: a.side(),
                b: b.side(),
            });
        }
        Ok(MatrixPair { a, b })
    }

    /// The left factor.
    pub fn a(&self) -> &SquareMatrix {
        &self.a
    }

    /// The right factor.
    pub fn b(&self) -> &SquareMatrix {
        &self.b
    }

    /// The common side.
    pub fn side(&self) -> usize {
        self.a.side()
    }
}

/// `Some(r)` when `r * r == n`.
fn integer_sqrt(n: usize) -> Option<usize> {
    let guess = (n as f64).sqrt().round() as usize;
    (guess.saturating_sub(1)..=guess + 1).find(|&r| r.checked_mul(r) == Some(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_are_checked() {
        assert!(SquareMatrix::new(2, vec![1, 2, 3, 4]).is_ok());
        assert!(matches!(
            SquareMatrix::new(2, vec![1, 2, 3]),
            Err(MatrixError::WrongSize {
                expected: 4,
                found: 3,
                ..
            })
        ));
        assert_eq!(SquareMatrix::from_values(vec![0; 9]).unwrap().side(), 3);
        assert_eq!(SquareMatrix::from_values(vec![]).unwrap().side(), 0);
        assert!(matches!(
            SquareMatrix::from_values(vec![0; 8]),
            Err(MatrixError::NotSquare { values: 8 })
        ));
        let a = SquareMatrix::new(1, vec![1]).unwrap();
        let b = SquareMatrix::new(2, vec![1; 4]).unwrap();
        assert!(matches!(
            MatrixPair::new(a, b),
            Err(MatrixError::SideMismatch { a: 1, b: 2 })
        ));
    }

    #[test]
    fn total_sum_wraps_like_int() {
        let m = SquareMatrix::new(1, vec![i32::MAX]).unwrap();
        assert_eq!(m.total_sum(), i32::MAX);
        let m = SquareMatrix::new(2, vec![i32::MAX, 1, 0, 0]).unwrap();
        assert_eq!(m.total_sum(), i32::MIN);
    }

    #[test]
    fn integer_square_roots() {
        for r in [0usize, 1, 2, 3, 1000, 46_341, 3_037_000_499] {
            assert_eq!(integer_sqrt(r * r), Some(r));
            if r > 1 {
                assert_eq!(integer_sqrt(r * r - 1), None);
            }
        }
    }
}
