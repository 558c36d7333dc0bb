//! The product kernel matrix multiply's baseline and job share: `B` packed
//! once ([`ProductKernel::new`]), then any block of output rows computed
//! in place ([`ProductKernel::fill_rows`]).
//!
//! When every value of `A` and `B` fits in 16 bits (the original's values
//! are 0 to 10) the 16-bit pair kernel ([`crate::numeric::pairs`]) runs,
//! `A`'s rows packed per block as they are needed; otherwise the 32-bit
//! kernel ([`crate::numeric::gemm`]). Both give the wrapping `int`
//! product. It does not split work among threads.

use crate::matrix_multiply::MatrixPair;
use crate::numeric::gemm::{self, Extent, PackedColumns};
use crate::numeric::pairs::{self, PackedPairs, PairRows};

/// Columns per panel of the 32-bit kernel (two AVX2 registers).
const WORD_PANEL: usize = 16;

/// `B` packed for the kernel that suits the values, and `A` to multiply.
#[derive(Clone, Debug)]
pub struct ProductKernel<'a> {
    a: &'a [i32],
    side: usize,
    packed: Packed,
}

#[derive(Clone, Debug)]
enum Packed {
    Pairs(PackedPairs),
    Words(PackedColumns<i32, WORD_PANEL>),
}

impl<'a> ProductKernel<'a> {
    /// Packs `pair`'s `B` for the narrowest kernel its values allow.
    pub fn new(pair: &'a MatrixPair) -> Self {
        let (a, b, side) = (pair.a().values(), pair.b().values(), pair.side());
        let packed = if pairs::fits_i16(a) && pairs::fits_i16(b) {
            Packed::Pairs(PackedPairs::from_rows(b, side, side, |v| v as i16))
        } else {
            Packed::Words(PackedColumns::from_rows(b, side, side))
        };
        ProductKernel { a, side, packed }
    }

    /// Whether the 16-bit pair kernel runs.
    pub fn uses_pairs(&self) -> bool {
        matches!(self.packed, Packed::Pairs(_))
    }

    /// Output rows `first..first + out.len() / side` into `out`.
    ///
    /// # Panics
    /// If `out` is not whole rows within the matrix.
    pub fn fill_rows(&self, first: usize, out: &mut [i32]) {
        let n = self.side;
        let end = first + out.len().checked_div(n).unwrap_or(0);
        assert!(
            out.len() == (end - first) * n && end <= n,
            "whole rows of the product"
        );
        let a_rows = &self.a[first * n..end * n];
        match &self.packed {
            Packed::Pairs(b) => {
                let a_pairs = PairRows::new(a_rows, end - first, n, |v| v as i16);
                pairs::multiply(a_pairs.rows_slice(0, end - first), b, out, Extent::Full);
            }
            Packed::Words(b) => gemm::multiply(a_rows, b, out, Extent::Full),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix_multiply::{gen, reference, SquareMatrix};

    fn blocks(pair: &MatrixPair, block: usize) -> (Vec<i32>, bool) {
        let kernel = ProductKernel::new(pair);
        let n = pair.side();
        let mut out = vec![0; n * n];
        for (b, rows) in out.chunks_mut((block * n).max(1)).enumerate() {
            kernel.fill_rows(b * block, rows);
        }
        (out, kernel.uses_pairs())
    }

    #[test]
    fn small_values_take_the_pair_kernel() {
        let pair = gen::generate(37, 4);
        let (out, pairs) = blocks(&pair, 5);
        assert!(pairs);
        assert_eq!(out, reference::multiply(&pair).values());
    }

    #[test]
    fn values_at_the_16_bit_limits() {
        let n = 6;
        let edge: Vec<i32> = (0..n * n)
            .map(|i| if i % 3 == 0 { -32_768 } else { 32_767 })
            .collect();
        let pair = MatrixPair::new(
            SquareMatrix::new(n, edge.clone()).unwrap(),
            SquareMatrix::new(n, edge).unwrap(),
        )
        .unwrap();
        let (out, pairs) = blocks(&pair, 4);
        assert!(pairs);
        assert_eq!(out, reference::multiply(&pair).values());
    }

    #[test]
    fn one_value_past_16_bits_takes_the_word_kernel() {
        let n = 6;
        let mut b: Vec<i32> = (0..(n * n) as i32).collect();
        b[35] = 32_768;
        let a: Vec<i32> = (0..(n * n) as i32).map(|v| -v).collect();
        let pair = MatrixPair::new(
            SquareMatrix::new(n, a).unwrap(),
            SquareMatrix::new(n, b).unwrap(),
        )
        .unwrap();
        let (out, pairs) = blocks(&pair, 4);
        assert!(!pairs);
        assert_eq!(out, reference::multiply(&pair).values());
    }
}
