//! k-means on numakit's MapReduce runtime: one run per iteration on one
//! runtime (one pool), as the original runs one MapReduce per iteration
//! on one MapReduce object.
//!
//! The input is the points, split into blocks of whole points. Each map
//! task finds the nearest mean of its points ([`NearestSearch`]), stores
//! their new clusters in place — the original's map writes `p.cluster`;
//! here each split owns its stretch of the assignment ([`SplitSlots`]) —
//! raises the "modified" flag if one moved, sums its points per cluster
//! and emits `(cluster, sums)` for every cluster it touched (folding its
//! own points first, as the original's per-thread combiner does). The
//! container is an array keyed by cluster and [`ClusterSum`] the
//! combiner: wrapping `int` sums and a count. Between runs the means move
//! ([`ClusterSums::update_means`]); the loop ends after a run that moved
//! no point. Encoding the points for the kernel happens once, reported
//! with the first run's split phase.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use numakit_mapreduce::{
    split, Combiner, ContainerKind, Emitter, Job, JobError, JobOptions, OutputOrder, PhaseSeconds,
    Runtime, Split,
};

use crate::kmeans::nearest::MeansTable;
use crate::kmeans::search::NearestSearch;
use crate::kmeans::sums::ClusterSums;
use crate::kmeans::{KmeansError, KmeansInput, KmeansLimits, KmeansOutput, Points, UNASSIGNED};
use crate::numeric::items_per_task;
use crate::numeric::slots::SplitSlots;

/// Fewest points per map task.
const MIN_POINTS_PER_TASK: usize = 1024;

/// What map emits per cluster and the container folds: coordinate sums
/// (wrapping, as the original's `int`s) and the number of points.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterSum {
    /// Coordinate sums.
    pub sum: Vec<i32>,
    /// Points summed.
    pub count: i32,
}

impl Combiner<ClusterSum> for ClusterSum {
    fn start(value: ClusterSum) -> Self {
        value
    }

    fn add(&mut self, value: ClusterSum) {
        for (a, b) in self.sum.iter_mut().zip(value.sum) {
            *a = a.wrapping_add(b);
        }
        self.count += value.count;
    }

    fn merge(&mut self, other: Self) {
        self.add(other);
    }
}

/// One iteration's job.
struct AssignJob<'r, 's> {
    search: &'r NearestSearch<'r>,
    table: &'r MeansTable,
    assignment: SplitSlots<'s, u32>,
    moved: AtomicBool,
}

impl<'a> Job<'a> for AssignJob<'_, '_> {
    type Record = i32;
    type Key = u32;
    type Value = ClusterSum;
    type Combiner = ClusterSum;
    type Output = ClusterSum;

    /// The blocks of points the assignment was cut for.
    fn split(&self, _coords: &'a [i32], _target: usize) -> Vec<Range<usize>> {
        self.assignment.ranges()
    }

    fn map(&self, split: Split<'a, i32>, out: &mut Emitter<'_, 'a, Self>) -> Result<(), JobError> {
        let dim = self.search.dim();
        let first = split.start / dim;
        let mut sums = ClusterSums::new(self.table.clusters(), dim);
        let changed = self.assignment.with(split.start, |assigned| {
            let changed = self.search.nearest(self.table, first, assigned);
            sums.add_points(split.records, assigned);
            changed
        })?;
        if changed > 0 {
            self.moved.store(true, Ordering::Relaxed);
        }
        for cluster in 0..sums.clusters() {
            let count = sums.count(cluster);
            if count > 0 {
                let sum = sums.sum(cluster).to_vec();
                out.emit(cluster as u32, ClusterSum { sum, count });
            }
        }
        Ok(())
    }

    fn reduce(&self, _cluster: &u32, combined: ClusterSum) -> Result<ClusterSum, JobError> {
        Ok(combined)
    }

    fn key_index(&self, cluster: &u32) -> Option<usize> {
        Some(*cluster as usize)
    }
}

/// Clusters `input` on the runtime, one run per iteration, with the time
/// of each phase summed over the runs.
pub fn run(
    rt: &Runtime,
    input: &KmeansInput,
    limits: KmeansLimits,
) -> Result<(KmeansOutput, PhaseSeconds), KmeansError> {
    let started = Instant::now();
    let search = NearestSearch::new(input);
    let points = input.points();
    let per_task = items_per_task(points.len(), rt.pool().workers(), MIN_POINTS_PER_TASK);
    let blocks = split::records(points.coords().len(), points.dim(), per_task);
    let lengths: Vec<usize> = blocks.iter().map(|b| b.len() / points.dim()).collect();
    let opts = JobOptions {
        container: Some(ContainerKind::Array {
            keys: input.clusters(),
        }),
        chunk_records: None,
        partitions: Some(1),
        order: OutputOrder::Unordered,
        ..JobOptions::default()
    };
    let mut means = input.initial_means().clone();
    let mut assignment = vec![UNASSIGNED; points.len()];
    let mut seconds = PhaseSeconds {
        split: started.elapsed().as_secs_f64(),
        ..PhaseSeconds::default()
    };
    let mut iterations = 0;
    loop {
        iterations += 1;
        let table = search.table(&means);
        let job = AssignJob {
            search: &search,
            table: &table,
            assignment: SplitSlots::new(blocks.clone(), &mut assignment, &lengths),
            moved: AtomicBool::new(false),
        };
        let out = rt.run(&job, points.coords(), &opts)?;
        seconds.add(&out.stats.seconds);
        let moved = job.moved.into_inner();
        move_means(&mut means, out.pairs);
        if !moved || limits.max_iterations.is_some_and(|m| iterations >= m) {
            let output = KmeansOutput {
                means,
                assignment,
                iterations,
                converged: !moved,
            };
            return Ok((output, seconds));
        }
    }
}

/// Each cluster with points to the truncated mean of its sums (the
/// original's `normalize`); clusters without points keep their mean.
fn move_means(means: &mut Points, reduced: Vec<(u32, ClusterSum)>) {
    let mut sums = ClusterSums::new(means.len(), means.dim());
    for (cluster, part) in reduced {
        sums.add_sum(cluster as usize, &part.sum, part.count);
    }
    sums.update_means(means);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kmeans::gen::{generate, KmeansParams};
    use crate::kmeans::reference;

    #[test]
    fn equals_the_reference_and_reuses_the_runtime() {
        let pool = crate::test_pool::pool(3);
        let rt = Runtime::new(&pool);
        for (points, dim, clusters) in [
            (5000, 3, 10),
            (3000, 2, 40),
            (0, 3, 2),
            (1, 1, 1),
            (9, 5, 9),
        ] {
            let params = KmeansParams {
                points,
                dim,
                clusters,
                grid_size: 1000,
            };
            let input = generate(&params, 4).unwrap();
            let (out, _) = run(&rt, &input, KmeansLimits::default()).unwrap();
            assert_eq!(out, reference::kmeans(&input, KmeansLimits::default()));
        }
        let wide = KmeansInput::new(
            Points::new(1, vec![i32::MIN, i32::MAX, 0, 1 << 20, -(1 << 24)]).unwrap(),
            Points::new(1, vec![0, 5]).unwrap(),
        )
        .unwrap();
        let limits = KmeansLimits {
            max_iterations: Some(50),
        };
        assert_eq!(
            run(&rt, &wide, limits).unwrap().0,
            reference::kmeans(&wide, limits)
        );
    }

    #[test]
    fn wide_generated_values_leave_the_pairs_and_equal_the_reference() {
        let pool = crate::test_pool::pool(2);
        let rt = Runtime::new(&pool);
        // Past 16 bits: the widest grid whose 3-d squared distances fit 32
        // bits, and the full range, whose distances and sums wrap (and
        // whose iterations need not end: a limit stops them).
        let limits = KmeansLimits {
            max_iterations: Some(30),
        };
        for grid in [37_838, crate::numeric::FULL_RANGE_MODULUS] {
            let params = KmeansParams {
                points: 4000,
                dim: 3,
                clusters: 20,
                grid_size: grid,
            };
            let input = generate(&params, 2).unwrap();
            assert!(!crate::kmeans::search::NearestSearch::new(&input).uses_pairs());
            let (out, _) = run(&rt, &input, limits).unwrap();
            assert_eq!(out, reference::kmeans(&input, limits), "grid {grid}");
        }
    }
}
