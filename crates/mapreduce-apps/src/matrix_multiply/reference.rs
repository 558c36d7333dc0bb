//! Plain sequential matrix multiply: the textbook triple loop with the
//! original's wrapping `int` arithmetic, the yardstick for the job and the
//! baseline. It shares no code with them.

use crate::matrix_multiply::{MatrixPair, SquareMatrix};

/// `A · B`, one dot product per element.
pub fn multiply(pair: &MatrixPair) -> SquareMatrix {
    let n = pair.side();
    let (a, b) = (pair.a().values(), pair.b().values());
    let mut out = vec![0i32; n * n];
    for i in 0..n {
        for j in 0..n {
            let mut sum = 0i32;
            for k in 0..n {
                sum = sum.wrapping_add(a[i * n + k].wrapping_mul(b[k * n + j]));
            }
            out[i * n + j] = sum;
        }
    }
    SquareMatrix {
        side: n,
        values: out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(n: usize, a: Vec<i32>, b: Vec<i32>) -> MatrixPair {
        MatrixPair::new(
            SquareMatrix::new(n, a).unwrap(),
            SquareMatrix::new(n, b).unwrap(),
        )
        .unwrap()
    }

    #[test]
    fn two_by_two() {
        let p = pair(2, vec![1, 2, 3, 4], vec![5, 6, 7, 8]);
        assert_eq!(multiply(&p).values(), [19, 22, 43, 50]);
    }

    #[test]
    fn one_by_one_wraps() {
        let p = pair(1, vec![65_536], vec![65_536]);
        assert_eq!(multiply(&p).values(), [0]);
        let p = pair(1, vec![i32::MIN], vec![-1]);
        assert_eq!(multiply(&p).values(), [i32::MIN]);
    }

    #[test]
    fn empty_is_empty() {
        assert!(multiply(&pair(0, vec![], vec![])).values().is_empty());
    }
}
