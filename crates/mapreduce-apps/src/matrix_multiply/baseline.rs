//! Hand-written multithreaded matrix multiply: the yardstick for the
//! runtime's overhead. `B` is packed once ([`ProductKernel`]), the output
//! rows are cut into one contiguous block per thread
//! (`std::thread::scope`), and each thread fills its block.
//!
//! No runtime, no pool, no placement.

use std::num::NonZeroUsize;

use crate::matrix_multiply::kernel::ProductKernel;
use crate::matrix_multiply::{MatrixPair, SquareMatrix};

/// `A · B` with `threads` threads.
pub fn multiply(pair: &MatrixPair, threads: NonZeroUsize) -> SquareMatrix {
    let n = pair.side();
    let kernel = ProductKernel::new(pair);
    let mut out = vec![0i32; n * n];
    let rows_per_thread = n.div_ceil(threads.get()).max(1);
    std::thread::scope(|scope| {
        for (t, rows) in out.chunks_mut((rows_per_thread * n).max(1)).enumerate() {
            let kernel = &kernel;
            scope.spawn(move || kernel.fill_rows(t * rows_per_thread, rows));
        }
    });
    SquareMatrix {
        side: n,
        values: out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix_multiply::{gen, reference};

    #[test]
    fn equals_the_reference() {
        for (n, threads) in [(0, 1), (1, 1), (1, 3), (5, 2), (33, 3), (64, 4)] {
            let pair = gen::generate(n, 11);
            let threads = NonZeroUsize::new(threads).unwrap();
            assert_eq!(
                multiply(&pair, threads),
                reference::multiply(&pair),
                "n = {n}"
            );
        }
    }

    #[test]
    fn equals_the_reference_where_it_wraps() {
        let n = 9;
        let values = |s: i32| {
            (0..81)
                .map(|i: i32| i32::MAX.wrapping_sub(i.wrapping_mul(s)))
                .collect::<Vec<_>>()
        };
        let pair = MatrixPair::new(
            SquareMatrix::new(n, values(7)).unwrap(),
            SquareMatrix::new(n, values(-1_000_003)).unwrap(),
        )
        .unwrap();
        assert_eq!(
            multiply(&pair, NonZeroUsize::new(2).unwrap()),
            reference::multiply(&pair)
        );
    }
}
