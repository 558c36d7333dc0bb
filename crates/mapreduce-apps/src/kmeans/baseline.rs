//! Hand-written multithreaded k-means: the yardstick for the runtime's
//! overhead. Every iteration splits the points into one contiguous chunk
//! per thread (`std::thread::scope`), each thread assigns its chunk
//! ([`NearestSearch`]) and sums its clusters,
//! and the main thread merges the sums and moves the means.
//!
//! No runtime, no pool, no placement: a plain single-purpose program, the
//! way one would write it by hand.

use std::num::NonZeroUsize;

use crate::kmeans::nearest::MeansTable;
use crate::kmeans::search::NearestSearch;
use crate::kmeans::sums::ClusterSums;
use crate::kmeans::{KmeansInput, KmeansLimits, KmeansOutput, UNASSIGNED};

/// Clusters `input` with `threads` threads per iteration.
pub fn kmeans(input: &KmeansInput, limits: KmeansLimits, threads: NonZeroUsize) -> KmeansOutput {
    let points = input.points();
    let dim = points.dim();
    let search = NearestSearch::new(input);
    let mut means = input.initial_means().clone();
    let mut assignment = vec![UNASSIGNED; points.len()];
    let chunk = points.len().div_ceil(threads.get()).max(1);
    let mut iterations = 0;
    loop {
        iterations += 1;
        let table = search.table(&means);
        let (moved, sums) = std::thread::scope(|scope| {
            let workers: Vec<_> = assignment
                .chunks_mut(chunk)
                .enumerate()
                .map(|(c, assigned)| {
                    let (search, table) = (&search, &table);
                    scope.spawn(move || assign_chunk(search, table, c * chunk, assigned))
                })
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

/// Assigns the points from `first` on, one per slot of `assigned`;
/// whether a point moved, and the chunk's sums.
fn assign_chunk(
    search: &NearestSearch<'_>,
    table: &MeansTable,
    first: usize,
    assigned: &mut [u32],
) -> (bool, ClusterSums) {
    let moved = search.nearest(table, first, assigned) > 0;
    let mut sums = ClusterSums::new(table.clusters(), search.dim());
    sums.add_points(search.coords(first, assigned.len()), assigned);
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
