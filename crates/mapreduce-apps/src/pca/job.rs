//! PCA on numakit's MapReduce runtime: the original's two jobs on one
//! runtime.
//!
//! 1. **Means**: the matrix split into blocks of whole rows; map emits
//!    `(row, mean)` for each of its rows (the original's mean map), into an
//!    array container keyed by row; reduce keeps the one value; the output
//!    comes ordered by row.
//! 2. **Covariance**: the matrix split into blocks of rows holding about
//!    equal shares of the upper triangle (early rows have more
//!    elements); each map task computes its rows' covariances with the
//!    packed kernel ([`CovarianceKernel`]) straight into its stretch of the
//!    result (a map-only job on [`crate::numeric::slots::SplitSlots`])
//!    instead of emitting them one by one as the original does (half a
//!    million pairs at 1000 rows, for values that only need to land in
//!    place). `Cᵀ` is packed once between the jobs;
//!    that time is reported with the covariance job's split phase.

use std::ops::Range;
use std::time::Instant;

use numakit_mapreduce::{
    split, ContainerKind, Emitter, Job, JobError, JobOptions, OutputOrder, PhaseSeconds, Runtime,
    Split, Sum,
};

use crate::numeric::items_per_task;
use crate::numeric::map_only;
use crate::numeric::TASKS_PER_WORKER;
use crate::pca::covariance::{balanced_row_ends, CovarianceKernel};
use crate::pca::{row_mean, triangle_offset, PcaError, PcaMatrix, PcaOutput};

/// Fewest rows per task of the means job.
const MIN_ROWS_PER_MEAN_TASK: usize = 16;

/// The means job: row blocks in, `(row, mean)` out.
struct MeanJob {
    cols: usize,
    rows_per_task: usize,
}

impl<'a> Job<'a> for MeanJob {
    type Record = i32;
    type Key = usize;
    type Value = i64;
    type Combiner = Sum<i64>;
    type Output = i64;

    fn split(&self, matrix: &'a [i32], _target: usize) -> Vec<Range<usize>> {
        split::records(matrix.len(), self.cols, self.rows_per_task)
    }

    fn map(&self, split: Split<'a, i32>, out: &mut Emitter<'_, 'a, Self>) -> Result<(), JobError> {
        let first_row = split.start / self.cols;
        for (r, row) in split.records.chunks_exact(self.cols).enumerate() {
            out.emit(first_row + r, row_mean(row));
        }
        Ok(())
    }

    fn reduce(&self, _row: &usize, mean: Sum<i64>) -> Result<i64, JobError> {
        Ok(mean.0)
    }

    fn key_index(&self, row: &usize) -> Option<usize> {
        Some(*row)
    }
}

/// Means and covariance on the runtime, with the time of each phase
/// (both jobs together).
pub fn run(rt: &Runtime, matrix: &PcaMatrix) -> Result<(PcaOutput, PhaseSeconds), PcaError> {
    let (means, mut seconds) = means(rt, matrix)?;
    let (covariance, cov_seconds) = covariance(rt, matrix, &means)?;
    seconds.add(&cov_seconds);
    Ok((PcaOutput { means, covariance }, seconds))
}

/// The means job.
fn means(rt: &Runtime, matrix: &PcaMatrix) -> Result<(Vec<i64>, PhaseSeconds), PcaError> {
    let job = MeanJob {
        cols: matrix.cols(),
        rows_per_task: items_per_task(matrix.rows(), rt.pool().workers(), MIN_ROWS_PER_MEAN_TASK),
    };
    let opts = JobOptions {
        container: Some(ContainerKind::Array {
            keys: matrix.rows(),
        }),
        chunk_records: None,
        partitions: None,
        order: OutputOrder::ByKey,
        ..JobOptions::default()
    };
    let out = rt.run(&job, matrix.values(), &opts)?;
    Ok((
        out.pairs.into_iter().map(|(_, mean)| mean).collect(),
        out.stats.seconds,
    ))
}

/// The covariance job (map-only: each task writes its rows of the
/// triangle in place), `Cᵀ` packed first.
fn covariance(
    rt: &Runtime,
    matrix: &PcaMatrix,
    means: &[i64],
) -> Result<(Vec<i64>, PhaseSeconds), PcaError> {
    let started = Instant::now();
    let (rows, cols) = (matrix.rows(), matrix.cols());
    let kernel = CovarianceKernel::new(matrix, means);
    let tasks = (rt.pool().workers() * TASKS_PER_WORKER).min(rows);
    let mut blocks = Vec::with_capacity(tasks);
    let mut lengths = Vec::with_capacity(tasks);
    let mut first = 0;
    for end in balanced_row_ends(rows, tasks) {
        blocks.push(first * cols..end * cols);
        lengths.push(triangle_offset(rows, end) - triangle_offset(rows, first));
        first = end;
    }
    let mut covariance = vec![0i64; triangle_offset(rows, rows)];
    let prepared = started.elapsed().as_secs_f64();
    let seconds = map_only::run(
        rt,
        matrix.values(),
        (blocks, &lengths),
        &mut covariance,
        prepared,
        |block, stretch| kernel.fill_rows(block.start / cols, stretch),
    )?;
    Ok((covariance, seconds))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pca::{gen, reference};

    #[test]
    fn equals_the_reference_and_reuses_the_runtime() {
        let pool = crate::test_pool::pool(3);
        let rt = Runtime::new(&pool);
        for (rows, cols, grid) in [
            (0, 2, 10),
            (1, 2, 10),
            (7, 3, 100),
            (50, 40, 100),
            (40, 50, 1 << 30),
        ] {
            let m = gen::generate(rows, cols, grid, 9).unwrap();
            let (out, _) = run(&rt, &m).unwrap();
            assert_eq!(out, reference::pca(&m), "{rows}x{cols}");
        }
    }

    #[test]
    fn full_range_values_take_the_32_bit_products_and_equal_the_reference() {
        use crate::pca::covariance::{choose_arithmetic, Arithmetic};
        let pool = crate::test_pool::pool(2);
        let rt = Runtime::new(&pool);
        let full = crate::numeric::FULL_RANGE_MODULUS;
        // The full range (sums that wrap in 64 bits), and grids just past
        // what the 16-bit pairs allow.
        for (rows, cols, grid) in [
            (37, 45, full),
            (64, 3, full),
            (30, 200, 8000),
            (9, 3, 65_536),
        ] {
            let m = gen::generate(rows, cols, grid, 3).unwrap();
            let means: Vec<i64> = (0..rows).map(|i| crate::pca::row_mean(m.row(i))).collect();
            assert_eq!(
                choose_arithmetic(&m, &means),
                Arithmetic::Products32,
                "grid {grid}"
            );
            let (out, _) = run(&rt, &m).unwrap();
            assert_eq!(out, reference::pca(&m), "{rows}x{cols}, grid {grid}");
        }
    }
}
