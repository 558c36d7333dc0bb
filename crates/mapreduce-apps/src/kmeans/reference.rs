//! Plain sequential k-means with the original's semantics, written for
//! obviousness rather than speed: the yardstick the MapReduce job and the
//! baseline are tested against.
//!
//! It shares no code with them beyond the input types.

use crate::kmeans::{KmeansInput, KmeansLimits, KmeansOutput, Points, UNASSIGNED};

/// Clusters `input` one point and one mean at a time.
pub fn kmeans(input: &KmeansInput, limits: KmeansLimits) -> KmeansOutput {
    let points = input.points();
    let mut means = input.initial_means().clone();
    let mut assignment = vec![UNASSIGNED; points.len()];
    let mut iterations = 0u32;
    loop {
        iterations += 1;
        let moved = assign(points, &means, &mut assignment);
        update_means(points, &assignment, &mut means);
        let converged = !moved;
        if converged || limits.max_iterations.is_some_and(|m| iterations >= m) {
            return KmeansOutput {
                means,
                assignment,
                iterations,
                converged,
            };
        }
    }
}

/// The original's `sq_dist`: `int` differences squared and summed into an
/// `unsigned int`, wrapping.
pub fn squared_distance(a: &[i32], b: &[i32]) -> u32 {
    let mut sum = 0u32;
    for (&x, &y) in a.iter().zip(b) {
        let diff = x.wrapping_sub(y);
        sum = sum.wrapping_add(diff.wrapping_mul(diff) as u32);
    }
    sum
}

/// The original's map: the first mean at a distance below every earlier
/// one, searching from `u32::MAX`.
pub fn nearest_mean(point: &[i32], means: &Points) -> u32 {
    let mut min_dist = u32::MAX;
    let mut min_index = 0;
    for j in 0..means.len() {
        let dist = squared_distance(point, means.point(j));
        if dist < min_dist {
            min_dist = dist;
            min_index = j as u32;
        }
    }
    min_index
}

/// Assigns every point; whether any changed cluster.
fn assign(points: &Points, means: &Points, assignment: &mut [u32]) -> bool {
    let mut moved = false;
    for (i, cluster) in assignment.iter_mut().enumerate() {
        let nearest = nearest_mean(points.point(i), means);
        if *cluster != nearest {
            *cluster = nearest;
            moved = true;
        }
    }
    moved
}

/// Each cluster with points gets the truncated mean of its points (sums
/// wrapping as `int`s); an empty cluster keeps its mean.
fn update_means(points: &Points, assignment: &[u32], means: &mut Points) {
    for j in 0..means.len() {
        let mut sum = vec![0i32; points.dim()];
        let mut count = 0i32;
        for (i, &cluster) in assignment.iter().enumerate() {
            if cluster as usize == j {
                count += 1;
                for (s, &c) in sum.iter_mut().zip(points.point(i)) {
                    *s = s.wrapping_add(c);
                }
            }
        }
        if count > 0 {
            let dim = points.dim();
            for (m, s) in means.coords_mut()[j * dim..(j + 1) * dim]
                .iter_mut()
                .zip(sum)
            {
                *m = s / count;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(dim: usize, points: Vec<i32>, means: Vec<i32>) -> KmeansInput {
        KmeansInput::new(
            Points::new(dim, points).unwrap(),
            Points::new(dim, means).unwrap(),
        )
        .unwrap()
    }

    #[test]
    fn two_obvious_clusters() {
        let data = input(1, vec![0, 1, 2, 100, 101, 105], vec![50, 60]);
        let out = kmeans(&data, KmeansLimits::default());
        assert_eq!(out.means.coords(), [1, 102]);
        assert_eq!(out.assignment, [0, 0, 0, 1, 1, 1]);
        assert!(out.converged);
        // 1: all move, 2: {0,1,2} -> 0 ... settle; the last changes nothing.
        assert!(out.iterations >= 2);
    }

    #[test]
    fn ties_go_to_the_lowest_index_and_empty_clusters_keep_their_mean() {
        let data = input(1, vec![5, 5], vec![4, 6, 6, 1000]);
        let out = kmeans(&data, KmeansLimits::default());
        assert_eq!(out.assignment, [0, 0]);
        assert_eq!(out.means.coords(), [5, 6, 6, 1000]);
        assert_eq!(out.iterations, 2);
    }

    #[test]
    fn means_truncate_toward_zero() {
        let data = input(1, vec![-3, -4], vec![0]);
        let out = kmeans(&data, KmeansLimits::default());
        assert_eq!(out.means.coords(), [-3]); // -7 / 2 in C
    }

    #[test]
    fn distances_wrap_like_the_c_code() {
        // diff = 65536: its square wraps to 0 in `int`.
        assert_eq!(squared_distance(&[65_536], &[0]), 0);
        assert_eq!(squared_distance(&[i32::MAX], &[i32::MIN]), 1);
        // 65535² + 362² + 5² + 1² = u32::MAX: the largest distance there is,
        // still found as the nearest when it is the only one.
        let far = [65_535, 362, 5, 1];
        assert_eq!(squared_distance(&far, &[0; 4]), u32::MAX);
        let means = Points::new(4, vec![0, 0, 0, 0, 0, 0, 0, 0]).unwrap();
        assert_eq!(nearest_mean(&far, &means), 0);
    }

    #[test]
    fn no_points_is_one_iteration_without_change() {
        let data = input(2, vec![], vec![1, 2]);
        let out = kmeans(&data, KmeansLimits::default());
        assert_eq!((out.iterations, out.converged), (1, true));
        assert_eq!(out.means.coords(), [1, 2]);
    }

    #[test]
    fn the_iteration_limit_stops_early() {
        let data = input(1, vec![0, 1, 2, 100, 101, 105], vec![50, 60]);
        let out = kmeans(
            &data,
            KmeansLimits {
                max_iterations: Some(1),
            },
        );
        assert_eq!((out.iterations, out.converged), (1, false));
    }
}
