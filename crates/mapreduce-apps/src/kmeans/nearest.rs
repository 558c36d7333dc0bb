//! The assignment step's kernel: the nearest mean of every point of a
//! chunk, with the original's wrapping 32-bit distance and lowest-index
//! tie-break (see [`crate::kmeans::reference::nearest_mean`]).
//!
//! The means are kept by dimension ([`MeansTable`]: all first
//! coordinates, then all second ones ...), so one point's distances to
//! every mean are a few loops over contiguous `i32`s that the compiler
//! vectorises; the smallest is then found in the distance buffer. Built
//! for AVX2 where the CPU has it ([`crate::numeric::wide`]).
//!
//! It neither records assignments nor sums clusters: that is the
//! caller's (the baseline's and the job's) business.

use crate::kmeans::Points;
use crate::numeric::wide::{self, Kernel};

#[cfg(target_arch = "x86_64")]
#[path = "nearest_avx2.rs"]
mod avx2;

/// Means per group the kernel compares at once (one AVX2 register of
/// `u32` distances).
pub(crate) const LANES: usize = 8;

/// The means, coordinate `d` of mean `j` at `d * padded + j`, where
/// `padded` rounds the number of means up to whole groups of [`LANES`].
/// The padding repeats mean 0: a copy is never nearer than mean 0 itself,
/// and ties go to the lower index, so a padding slot never wins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MeansTable {
    dim: usize,
    clusters: usize,
    padded: usize,
    by_dim: Vec<i32>,
}

impl MeansTable {
    /// The table of `means`.
    pub fn new(means: &Points) -> Self {
        let mut table = MeansTable {
            dim: means.dim(),
            clusters: means.len(),
            padded: 0,
            by_dim: Vec::new(),
        };
        table.refill(means);
        table
    }

    /// Replaces the means (same dimension), keeping the allocation.
    pub fn refill(&mut self, means: &Points) {
        self.dim = means.dim();
        self.clusters = means.len();
        self.padded = self.clusters.div_ceil(LANES) * LANES;
        self.by_dim.clear();
        self.by_dim.resize(self.dim * self.padded, 0);
        for j in 0..self.padded {
            let source = if j < self.clusters { j } else { 0 };
            for (d, &c) in means.point(source).iter().enumerate() {
                self.by_dim[d * self.padded + j] = c;
            }
        }
    }

    /// Coordinates per mean.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of means.
    pub fn clusters(&self) -> usize {
        self.clusters
    }

    /// Coordinate `d` of every mean of group `g`.
    #[inline(always)]
    fn group(&self, d: usize, g: usize) -> &[i32; LANES] {
        let start = d * self.padded + g * LANES;
        // The table holds whole groups, so this slice is always LANES long.
        <&[i32; LANES]>::try_from(&self.by_dim[start..start + LANES]).unwrap_or(&[0; LANES])
    }
}

/// Sets `nearest[i]` to the nearest mean of point `i` of `points` (flat,
/// `table.dim()` coordinates each).
///
/// # Panics
/// If `nearest` does not have one slot per point.
pub fn nearest_means(table: &MeansTable, points: &[i32], nearest: &mut [u32]) {
    assert_eq!(
        points.len(),
        nearest.len() * table.dim(),
        "one slot per point"
    );
    if table.clusters() == 0 {
        nearest.fill(0);
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if wide::available() {
        // SAFETY: the CPU has AVX2 (checked just above).
        unsafe { avx2::nearest_means(&table.by_dim, table.dim, table.padded, points, nearest) };
        return;
    }
    Nearest {
        table,
        points,
        nearest,
    }
    .run();
}

struct Nearest<'a> {
    table: &'a MeansTable,
    points: &'a [i32],
    nearest: &'a mut [u32],
}

impl Kernel for Nearest<'_> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        let Nearest {
            table,
            points,
            nearest,
        } = self;
        for (point, slot) in points.chunks_exact(table.dim()).zip(nearest.iter_mut()) {
            *slot = nearest_of(table, point);
        }
    }
}

/// The nearest mean of one point: every group of means at once, keeping
/// per lane the smallest distance and the first mean that reached it.
#[inline(always)]
fn nearest_of(table: &MeansTable, point: &[i32]) -> u32 {
    let mut best = [u32::MAX; LANES];
    let mut best_index = [0u32; LANES];
    for g in 0..table.padded / LANES {
        let distances = group_distances(table, point, g);
        for l in 0..LANES {
            let nearer = distances[l] < best[l];
            best[l] = if nearer { distances[l] } else { best[l] };
            best_index[l] = if nearer {
                (g * LANES + l) as u32
            } else {
                best_index[l]
            };
        }
    }
    first_of_lanes(&best, &best_index)
}

/// The wrapping squared distances of `point` to the means of group `g`.
#[inline(always)]
fn group_distances(table: &MeansTable, point: &[i32], g: usize) -> [u32; LANES] {
    let mut distances = [0u32; LANES];
    for (d, &x) in point.iter().enumerate() {
        let means = table.group(d, g);
        for l in 0..LANES {
            let diff = x.wrapping_sub(means[l]);
            distances[l] = distances[l].wrapping_add(diff.wrapping_mul(diff) as u32);
        }
    }
    distances
}

/// The index of the smallest distance over all lanes, the lowest index
/// among equals. A lane that never saw a distance below `u32::MAX` still
/// holds index 0, so when no lane did the answer is mean 0, as in the
/// original.
#[inline(always)]
pub(crate) fn first_of_lanes(best: &[u32; LANES], best_index: &[u32; LANES]) -> u32 {
    let mut winner = (best[0], best_index[0]);
    for l in 1..LANES {
        winner = winner.min((best[l], best_index[l]));
    }
    winner.1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kmeans::reference::nearest_mean;
    use crate::numeric::CRand;

    fn random_points(rand: &mut CRand, count: usize, dim: usize, grid: u32, offset: i32) -> Points {
        let coords = (0..count * dim)
            .map(|_| (rand.below(grid) as i32).wrapping_add(offset))
            .collect();
        Points::new(dim, coords).unwrap()
    }

    fn check(points: &Points, means: &Points) {
        let table = MeansTable::new(means);
        let mut nearest = vec![u32::MAX; points.len()];
        nearest_means(&table, points.coords(), &mut nearest);
        for (i, &n) in nearest.iter().enumerate() {
            assert_eq!(n, nearest_mean(points.point(i), means), "point {i}");
        }
    }

    #[test]
    fn agrees_with_the_reference_on_many_shapes() {
        let mut rand = CRand::new(3);
        for dim in [1, 2, 3, 5, 8] {
            for clusters in [1, 2, 7, 8, 9, 33, 100] {
                let points = random_points(&mut rand, 300, dim, 50, 0);
                let means = random_points(&mut rand, clusters, dim, 50, 0);
                check(&points, &means);
            }
        }
    }

    #[test]
    fn agrees_where_distances_wrap() {
        let mut rand = CRand::new(4);
        for offset in [0, i32::MAX - 1_000_000, i32::MIN] {
            let points = random_points(&mut rand, 500, 3, 1 << 31, offset);
            let means = random_points(&mut rand, 17, 3, 1 << 31, offset);
            check(&points, &means);
        }
    }

    #[test]
    fn ties_and_equal_means_pick_the_first() {
        let points = Points::new(2, vec![5, 5, 0, 0]).unwrap();
        let means = Points::new(2, vec![9, 9, 4, 4, 6, 6, 4, 4]).unwrap();
        check(&points, &means);
        let table = MeansTable::new(&means);
        let mut nearest = [9, 9];
        nearest_means(&table, points.coords(), &mut nearest);
        assert_eq!(nearest, [1, 1]);
    }

    #[test]
    fn refill_replaces_the_means() {
        let a = Points::new(1, vec![1, 2, 3]).unwrap();
        let b = Points::new(1, vec![7, 8]).unwrap();
        let mut table = MeansTable::new(&a);
        table.refill(&b);
        assert_eq!(table, MeansTable::new(&b));
    }
}
