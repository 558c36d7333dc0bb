//! Plumbing shared by the three numeric applications (k-means, PCA, matrix
//! multiply): the C library's `rand()` stream their Phoenix++ originals
//! draw their inputs from, the raw integer file format, the dispatch to
//! wide vector instructions, the packed integer matrix products (32/64-bit
//! words and 16-bit pairs) that matrix multiply and PCA's covariance
//! reduce to, the per-split output slots their jobs write in place, the
//! map-only job that matrix multiply and PCA's covariance run on them, and
//! how many map tasks to cut.
//!
//! It holds no application logic.

pub mod c_rand;
pub mod gemm;
pub mod int_file;
pub(crate) mod map_only;
pub mod pairs;
pub mod slots;
pub mod wide;

pub use c_rand::CRand;
pub use int_file::IntFileError;

/// The widest value range the generators draw, as a modulus of `rand()`:
/// `rand() % 2147483647`, every value from 0 to 2^31 - 2 (all that
/// `rand()` returns but its largest, which becomes 0). It is the largest
/// grid the Phoenix++ k-means and PCA programs accept (`-s`, a C `int`),
/// so they draw the same values from it. Such values need the kernels'
/// 32- and 64-bit paths: their 16-bit multiply-adds no longer apply.
pub const FULL_RANGE_MODULUS: u32 = i32::MAX as u32;

/// Map tasks per worker the numeric jobs aim for (enough to balance
/// uneven tasks and stolen time, few enough that each task is a few
/// hundred microseconds at the reference sizes).
pub const TASKS_PER_WORKER: usize = 8;

/// Items per task to cut `items` into about [`TASKS_PER_WORKER`] tasks per
/// worker, but no fewer than `minimum` items per task.
pub fn items_per_task(items: usize, workers: usize, minimum: usize) -> usize {
    items
        .div_ceil(workers.max(1) * TASKS_PER_WORKER)
        .max(minimum)
        .max(1)
}
