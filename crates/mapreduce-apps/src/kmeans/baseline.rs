//! Hand-written multithreaded k-means: the yardstick for the runtime's
//! overhead. Every iteration splits the points into one contiguous chunk
//! per thread (`std::thread::scope`), each thread assigns its chunk with
//! the [`nearest`](crate::kmeans::nearest) kernel and sums its clusters,
//! and the main thread merges the sums and moves the means.
//!
//! No runtime, no pool, no placement: a plain single-purpose program, the
//! way one would write it by hand.

use std::num::NonZeroUsize;

use crate::kmeans::nearest::{nearest_means, MeansTable};
use crate::kmeans::sums::ClusterSums;
use crate::kmeans::{KmeansInput, KmeansLimits, KmeansOutput, UNASSIGNED};

/// Clusters `input` with `threads` threads per iteration.
pub fn kmeans(input: &KmeansInput, limits: KmeansLimits, threads: NonZeroUsize) -> KmeansOutput {
    let points = input.points();
    let dim = points.dim();
    let mut means = input.initial_means().clone();
    let mut table = MeansTable::new(&means);
    let mut assignment = vec![UNASSIGNED; points.len()];
    let chunk = points.len().div_ceil(threads.get()).max(1);
    let mut iterations = 0;
    loop {
        iterations += 1;
        let (moved, sums) = std::thread::scope(|scope| {
            let workers: Vec<_> = points
                .coords()
                .chunks(chunk * dim)
                .zip(assignment.chunks_mut(chunk))
                .map(|(coords, assigned)| scope.spawn(|| assign_chunk(&table, coords, assigned)))
                .collect();
            let mut total = ClusterSums::new(means.len(), dim);
            let mut moved = false;
            for worker in workers {
                let (chunk_moved, sums) = worker
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p));
                moved |= chunk_moved;
                total.merge(&sums);
            }
            (moved, total)
        });
        sums.update_means(&mut means);
        table.refill(&means);
        if !moved || limits.max_iterations.is_some_and(|m| iterations >= m) {
            return KmeansOutput {
                means,
                assignment,
                iterations,
                converged: !moved,
            };
        }
    }
}

/// Assigns one chunk; whether a point moved, and the chunk's sums.
fn assign_chunk(table: &MeansTable, coords: &[i32], assigned: &mut [u32]) -> (bool, ClusterSums) {
    let mut nearest = vec![0u32; assigned.len()];
    nearest_means(table, coords, &mut nearest);
    let moved = nearest != assigned;
    assigned.copy_from_slice(&nearest);
    let mut sums = ClusterSums::new(table.clusters(), table.dim());
    sums.add_points(coords, &nearest);
    (moved, sums)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kmeans::gen::{generate, KmeansParams};
    use crate::kmeans::reference;

    #[test]
    fn equals_the_reference() {
        for (points, clusters, threads) in [
            (2000, 10, 1),
            (2000, 10, 3),
            (7, 7, 4),
            (1, 1, 2),
            (3, 5, 8),
        ] {
            let params = KmeansParams {
                points,
                dim: 3,
                clusters,
                grid_size: 1000,
            };
            let input = generate(&params, 5).unwrap();
            let threads = NonZeroUsize::new(threads).unwrap();
            assert_eq!(
                kmeans(&input, KmeansLimits::default(), threads),
                reference::kmeans(&input, KmeansLimits::default())
            );
        }
    }
}
