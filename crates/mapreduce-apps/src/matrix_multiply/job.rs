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
//! ([`SplitSlots`]), so tasks write in place without `unsafe` or copies.

use std::ops::Range;
use std::time::Instant;

use numakit_mapreduce::{
    split, ContainerKind, Count, Emitter, Job, JobError, JobOptions, OutputOrder, PhaseSeconds,
    Runtime, Split,
};

use crate::matrix_multiply::kernel::ProductKernel;
use crate::matrix_multiply::{MatrixError, MatrixPair, SquareMatrix};
use crate::numeric::items_per_task;
use crate::numeric::slots::SplitSlots;

/// Fewest rows per map task (below this, task overhead shows).
const MIN_ROWS_PER_TASK: usize = 4;

/// One run's job: blocks of `A`'s rows, each filling its rows of the
/// product.
struct ProductJob<'k, 's> {
    kernel: &'k ProductKernel<'k>,
    side: usize,
    rows_out: SplitSlots<'s, i32>,
}

impl<'a> Job<'a> for ProductJob<'_, '_> {
    type Record = i32;
    type Key = u32;
    type Value = ();
    type Combiner = Count;
    type Output = u64;

    /// The row blocks the output slots were cut for (whatever `target`).
    fn split(&self, _a: &'a [i32], _target: usize) -> Vec<Range<usize>> {
        self.rows_out.ranges()
    }

    fn map(&self, split: Split<'a, i32>, _out: &mut Emitter<'_, 'a, Self>) -> Result<(), JobError> {
        let first_row = split.start / self.side;
        self.rows_out
            .with(split.start, |rows| self.kernel.fill_rows(first_row, rows))?;
        Ok(())
    }

    fn reduce(&self, _key: &u32, emitted: Count) -> Result<u64, JobError> {
        Ok(emitted.0)
    }
}

/// `A · B` on the runtime, with the time of each phase.
pub fn run(rt: &Runtime, pair: &MatrixPair) -> Result<(SquareMatrix, PhaseSeconds), MatrixError> {
    let started = Instant::now();
    let n = pair.side();
    let kernel = ProductKernel::new(pair);
    let rows_per_task = items_per_task(n, rt.pool().workers(), MIN_ROWS_PER_TASK);
    let blocks = split::records(n * n, n.max(1), rows_per_task);
    let lengths: Vec<usize> = blocks.iter().map(Range::len).collect();
    let mut product = vec![0i32; n * n];
    let prepared = started.elapsed().as_secs_f64();
    let stats = {
        let job = ProductJob {
            kernel: &kernel,
            side: n.max(1),
            rows_out: SplitSlots::new(blocks, &mut product, &lengths),
        };
        let opts = JobOptions {
            container: ContainerKind::Array { keys: 0 },
            chunk_records: None,
            partitions: Some(1),
            order: OutputOrder::Unordered,
        };
        rt.run(&job, pair.a().values(), &opts)?.stats
    };
    let mut seconds = stats.seconds;
    seconds.split += prepared;
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
            assert!(seconds.total() >= 0.0);
        }
    }
}
