//! Inputs for k-means: generated as the original generates them, or read
//! from a points file.
//!
//! The original fills every coordinate of every point with
//! `rand() % grid_size`, point after point, and then the means the same
//! way from the same stream; it never calls `srand`, so its inputs are
//! those of seed 1. [`generate`] does the same from any seed. A points
//! file is the raw integer format of [`crate::numeric::int_file`] (the
//! original reads none; this one lets the CLI take points from elsewhere),
//! `dim` integers per point; the means then come from the seed's stream
//! as the original draws them after its points.
//!
//! It does not cluster anything.

use std::path::Path;

use crate::kmeans::{KmeansError, KmeansInput, Points};
use crate::numeric::{int_file, CRand};

/// The original's default number of points.
pub const DEFAULT_POINTS: usize = 100_000;
/// The original's default number of clusters.
pub const DEFAULT_CLUSTERS: usize = 100;
/// The original's default dimension.
pub const DEFAULT_DIM: usize = 3;
/// The original's default grid size (coordinates in `0..1000`).
pub const DEFAULT_GRID_SIZE: u32 = 1000;
/// The seed of the original's inputs (it never calls `srand`).
pub const ORIGINAL_SEED: u32 = 1;

/// The shape of a generated input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KmeansParams {
    /// Number of points.
    pub points: usize,
    /// Coordinates per point.
    pub dim: usize,
    /// Number of clusters (means).
    pub clusters: usize,
    /// Coordinates are drawn from `0..grid_size`.
    pub grid_size: u32,
}

impl Default for KmeansParams {
    fn default() -> Self {
        KmeansParams {
            points: DEFAULT_POINTS,
            dim: DEFAULT_DIM,
            clusters: DEFAULT_CLUSTERS,
            grid_size: DEFAULT_GRID_SIZE,
        }
    }
}

/// The points and initial means the original computes on for `seed`.
pub fn generate(params: &KmeansParams, seed: u32) -> Result<KmeansInput, KmeansError> {
    check_shape(params)?;
    let mut rand = CRand::new(seed);
    let points = draw_points(&mut rand, params.points, params.dim, params.grid_size)?;
    let means = draw_points(&mut rand, params.clusters, params.dim, params.grid_size)?;
    KmeansInput::new(points, means)
}

/// Clusters given points from `clusters` means drawn as the original
/// draws them after its points: from the start of `seed`'s stream.
pub fn with_drawn_means(
    points: Points,
    clusters: usize,
    grid_size: u32,
    seed: u32,
) -> Result<KmeansInput, KmeansError> {
    check_shape(&KmeansParams {
        points: points.len(),
        dim: points.dim(),
        clusters,
        grid_size,
    })?;
    let means = draw_points(&mut CRand::new(seed), clusters, points.dim(), grid_size)?;
    KmeansInput::new(points, means)
}

fn check_shape(params: &KmeansParams) -> Result<(), KmeansError> {
    if params.dim == 0 {
        return Err(KmeansError::ZeroDimension);
    }
    if params.clusters == 0 {
        return Err(KmeansError::NoClusters);
    }
    if params.grid_size == 0 {
        return Err(KmeansError::ZeroGridSize);
    }
    for (what, count) in [("points", params.points), ("clusters", params.clusters)] {
        if count > crate::kmeans::MAX_COUNT {
            return Err(KmeansError::TooMany { what, count });
        }
    }
    Ok(())
}

fn draw_points(
    rand: &mut CRand,
    count: usize,
    dim: usize,
    grid_size: u32,
) -> Result<Points, KmeansError> {
    let coords = (0..count * dim)
        .map(|_| rand.below(grid_size) as i32)
        .collect();
    Points::new(dim, coords)
}

/// Points from the bytes of a points file.
pub fn points_from_le_bytes(bytes: &[u8], dim: usize) -> Result<Points, KmeansError> {
    if dim == 0 {
        return Err(KmeansError::ZeroDimension);
    }
    Points::new(dim, int_file::records_from_le_bytes(bytes, dim)?)
}

/// Reads a points file of `dim`-dimensional points.
pub fn read_points(path: &Path, dim: usize) -> Result<Points, KmeansError> {
    if dim == 0 {
        return Err(KmeansError::ZeroDimension);
    }
    Points::new(dim, int_file::read_records(path, dim)?)
}

/// Writes points as a points file (replacing `path` only when complete).
pub fn write_points(path: &Path, points: &Points) -> Result<(), KmeansError> {
    Ok(int_file::write_ints(path, points.coords())?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numeric::IntFileError;

    #[test]
    fn points_then_means_from_one_stream() {
        let params = KmeansParams {
            points: 5,
            dim: 2,
            clusters: 3,
            grid_size: 1000,
        };
        let input = generate(&params, 1).unwrap();
        let mut rand = CRand::new(1);
        let expected: Vec<i32> = (0..16).map(|_| (rand.next_rand() % 1000) as i32).collect();
        assert_eq!(input.points().coords(), &expected[..10]);
        assert_eq!(input.initial_means().coords(), &expected[10..]);
        // rand() with seed 1 starts 1804289383, 846930886.
        assert_eq!(input.points().point(0), [383, 886]);
    }

    #[test]
    fn coordinates_stay_on_the_grid() {
        let params = KmeansParams {
            points: 1000,
            dim: 3,
            clusters: 7,
            grid_size: 13,
        };
        let input = generate(&params, 9).unwrap();
        assert!(input
            .points()
            .coords()
            .iter()
            .all(|&c| (0..13).contains(&c)));
        assert_eq!(input.points().len(), 1000);
        assert_eq!(input.clusters(), 7);
    }

    #[test]
    fn bad_shapes_are_refused() {
        let ok = KmeansParams {
            points: 1,
            dim: 1,
            clusters: 1,
            grid_size: 1,
        };
        assert!(matches!(
            generate(&KmeansParams { dim: 0, ..ok }, 1),
            Err(KmeansError::ZeroDimension)
        ));
        assert!(matches!(
            generate(&KmeansParams { clusters: 0, ..ok }, 1),
            Err(KmeansError::NoClusters)
        ));
        assert!(matches!(
            generate(&KmeansParams { grid_size: 0, ..ok }, 1),
            Err(KmeansError::ZeroGridSize)
        ));
        assert!(generate(&KmeansParams { points: 0, ..ok }, 1)
            .unwrap()
            .points()
            .is_empty());
    }

    #[test]
    fn files_hold_whole_points() {
        let points = Points::new(3, vec![1, 2, 3, -4, i32::MAX, i32::MIN]).unwrap();
        let bytes = int_file::to_le_bytes(points.coords());
        assert_eq!(points_from_le_bytes(&bytes, 3).unwrap(), points);
        let err = points_from_le_bytes(&bytes[..bytes.len() - 4], 3).unwrap_err();
        assert!(matches!(
            err,
            KmeansError::File(IntFileError::PartialRecord { .. })
        ));
        let err = points_from_le_bytes(&bytes[..bytes.len() - 1], 3).unwrap_err();
        assert!(err.to_string().contains("points file"));
    }

    #[test]
    fn drawn_means_are_the_streams_first_values() {
        let points = Points::new(2, vec![0; 8]).unwrap();
        let input = with_drawn_means(points, 2, 1000, 1).unwrap();
        assert_eq!(input.initial_means().coords(), [383, 886, 777, 915]);
    }
}
