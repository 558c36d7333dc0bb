//! Matrix multiply on numakit's MapReduce runtime, mapped as the original
//! maps it: the input is `A`, split into blocks of whole rows; each map
//! task computes its block's rows of the product straight into the
//! output matrix and emits nothing (Phoenix++'s map writes its row of
//! `output` and its container stays empty). The original hands out one
//! row per task; blocks of rows cost the same arithmetic with fewer
//! tasks and let each task reuse the packed `B` from cache.
//!
//! `B` is packed once before the run ([`ProductKernel`]); that time is
//! reported with the split phase. The output rows are owned per split
//! ([`crate::numeric::slots::SplitSlots`]), so tasks write in place
//! without `unsafe` or copies.

use std::ops::Range;
use std::time::Instant;

use numakit_mapreduce::{split, PhaseSeconds, Runtime};

use crate::matrix_multiply::kernel::ProductKernel;
use crate::matrix_multiply::{MatrixError, MatrixPair, SquareMatrix};
use crate::numeric::items_per_task;
use crate::numeric::map_only;

/// Fewest rows per map task (below this, task overhead shows).
const MIN_ROWS_PER_TASK: usize = 4;

/// `A · B` on the runtime, with the time of each phase: a map-only job
/// over blocks of `A`'s rows, each filling its rows of the product.
pub fn run(rt: &Runtime, pair: &MatrixPair) -> Result<(SquareMatrix, PhaseSeconds), MatrixError> {
    let started = Instant::now();
    let n = pair.side();
    let side = n.max(1);
    let kernel = ProductKernel::new(pair);
    let rows_per_task = items_per_task(n, rt.pool().workers(), MIN_ROWS_PER_TASK);
    let blocks = split::records(n * n, side, rows_per_task);
    let lengths: Vec<usize> = blocks.iter().map(Range::len).collect();
    let mut product = vec![0i32; n * n];
    let prepared = started.elapsed().as_secs_f64();
    let seconds = map_only::run(
        rt,
        pair.a().values(),
        (blocks, &lengths),
        &mut product,
        prepared,
        |block, rows| kernel.fill_rows(block.start / side, rows),
    )?;
    Ok((SquareMatrix::new(n, product)?, seconds))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix_multiply::{gen, reference};
    use crate::test_pool::pool;

    #[test]
    fn equals_the_reference_and_reuses_the_runtime() {
        let pool = pool(3);
        let rt = Runtime::new(&pool);
        for (n, seed) in [(0, 1), (1, 2), (5, 3), (64, 4), (97, 5)] {
            let pair = gen::generate(n, seed);
            let (product, seconds) = run(&rt, &pair).unwrap();
            assert_eq!(product, reference::multiply(&pair), "n = {n}");
            let total = seconds.total();
            assert!(total.is_finite() && total >= 0.0, "n = {n}: {total} s");
            if n > 0 {
                assert!(seconds.map > 0.0, "n = {n}: the map took no time");
            }
        }
    }

    #[test]
    fn full_range_values_leave_the_pair_kernel_and_wrap_as_the_reference() {
        let pool = pool(2);
        let rt = Runtime::new(&pool);
        let full = crate::numeric::FULL_RANGE_MODULUS;
        for (n, modulus) in [(33, full), (70, full), (41, 1 << 16), (20, 1 << 20)] {
            let pair = gen::generate_below(n, modulus, 7).unwrap();
            assert!(
                !crate::matrix_multiply::kernel::ProductKernel::new(&pair).uses_pairs(),
                "n = {n}, modulus {modulus}: values past 16 bits"
            );
            let (product, _) = run(&rt, &pair).unwrap();
            assert_eq!(product, reference::multiply(&pair), "n = {n}");
        }
    }
}
