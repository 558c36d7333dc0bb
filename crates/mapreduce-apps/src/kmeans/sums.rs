//! Per-cluster sums of an assignment step and the means they give: what
//! the original's combiner adds up (`int` coordinate sums, wrapping, and a
//! point count) and its `normalize` (the truncated quotient).
//!
//! Sums of disjoint sets of points merge by addition, in any order (the
//! wrapping sums are the same whatever the order). It does not assign.

use crate::kmeans::Points;

/// Coordinate sums and point counts of every cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterSums {
    dim: usize,
    coords: Vec<i32>,
    counts: Vec<i32>,
}

impl ClusterSums {
    /// All-zero sums for `clusters` clusters of `dim` coordinates.
    pub fn new(clusters: usize, dim: usize) -> Self {
        ClusterSums {
            dim,
            coords: vec![0; clusters * dim],
            counts: vec![0; clusters],
        }
    }

    /// Back to all zeros.
    pub fn clear(&mut self) {
        self.coords.fill(0);
        self.counts.fill(0);
    }

    /// Number of clusters.
    pub fn clusters(&self) -> usize {
        self.counts.len()
    }

    /// Points counted in cluster `j`.
    pub fn count(&self, j: usize) -> i32 {
        self.counts[j]
    }

    /// The coordinate sums of cluster `j`.
    pub fn sum(&self, j: usize) -> &[i32] {
        &self.coords[j * self.dim..(j + 1) * self.dim]
    }

    /// Adds point `point` to cluster `cluster`.
    #[inline]
    pub fn add_point(&mut self, cluster: usize, point: &[i32]) {
        self.counts[cluster] += 1;
        let sum = &mut self.coords[cluster * self.dim..(cluster + 1) * self.dim];
        for (s, &c) in sum.iter_mut().zip(point) {
            *s = s.wrapping_add(c);
        }
    }

    /// Adds every point of `points` (flat) to its cluster in `clusters`.
    pub fn add_points(&mut self, points: &[i32], clusters: &[u32]) {
        match self.dim {
            1 => self.add_fixed::<1>(points, clusters),
            2 => self.add_fixed::<2>(points, clusters),
            3 => self.add_fixed::<3>(points, clusters),
            4 => self.add_fixed::<4>(points, clusters),
            _ => {
                for (point, &cluster) in points.chunks_exact(self.dim.max(1)).zip(clusters) {
                    self.add_point(cluster as usize, point);
                }
            }
        }
    }

    /// [`Self::add_points`] with the dimension known to the compiler.
    fn add_fixed<const D: usize>(&mut self, points: &[i32], clusters: &[u32]) {
        for (point, &cluster) in points.chunks_exact(D).zip(clusters) {
            let c = cluster as usize;
            self.counts[c] += 1;
            let sum = &mut self.coords[c * D..c * D + D];
            for d in 0..D {
                sum[d] = sum[d].wrapping_add(point[d]);
            }
        }
    }

    /// Adds `count` points whose coordinates sum to `sum` to cluster
    /// `cluster`.
    pub fn add_sum(&mut self, cluster: usize, sum: &[i32], count: i32) {
        self.counts[cluster] += count;
        let mine = &mut self.coords[cluster * self.dim..(cluster + 1) * self.dim];
        for (a, &b) in mine.iter_mut().zip(sum) {
            *a = a.wrapping_add(b);
        }
    }

    /// Adds another set of sums (of the same shape).
    pub fn merge(&mut self, other: &ClusterSums) {
        for (a, &b) in self.coords.iter_mut().zip(&other.coords) {
            *a = a.wrapping_add(b);
        }
        for (a, &b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
    }

    /// Sets the mean of every cluster with points to its sums divided by
    /// its count (truncated, as C's `/`); empty clusters keep theirs.
    pub fn update_means(&self, means: &mut Points) {
        let dim = self.dim;
        for (j, mean) in means.coords_mut().chunks_exact_mut(dim.max(1)).enumerate() {
            let count = self.counts[j];
            if count > 0 {
                for (m, &s) in mean.iter_mut().zip(&self.coords[j * dim..(j + 1) * dim]) {
                    *m = s / count;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_merge_and_divide() {
        let mut a = ClusterSums::new(3, 2);
        a.add_points(&[1, 2, 3, 4, -9, -9], &[0, 0, 2]);
        let mut b = ClusterSums::new(3, 2);
        b.add_point(0, &[10, 20]);
        a.merge(&b);
        assert_eq!((a.count(0), a.sum(0)), (3, &[14, 26][..]));
        let mut means = Points::new(2, vec![0, 0, 7, 7, 0, 0]).unwrap();
        a.update_means(&mut means);
        // 14/3 = 4, 26/3 = 8; cluster 1 is empty and keeps (7, 7).
        assert_eq!(means.coords(), [4, 8, 7, 7, -9, -9]);
    }

    #[test]
    fn coordinate_sums_wrap_like_int() {
        let mut s = ClusterSums::new(1, 1);
        s.add_points(&[i32::MAX, 2], &[0, 0]);
        assert_eq!(s.sum(0), [i32::MIN + 1]);
        let mut means = Points::new(1, vec![0]).unwrap();
        s.update_means(&mut means);
        assert_eq!(means.coords(), [(i32::MIN + 1) / 2]);
        s.clear();
        assert_eq!((s.count(0), s.sum(0)), (0, &[0][..]));
    }
}
