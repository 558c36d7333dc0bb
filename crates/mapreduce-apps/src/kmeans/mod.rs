//! k-means clustering of d-dimensional integer points, as Phoenix++'s
//! `kmeans` computes it.
//!
//! The semantics are the original's, down to its integer arithmetic:
//! - points and the initial means are drawn from the C `rand()` stream,
//!   every coordinate `rand() % grid_size`, all points first, then the
//!   means ([`gen`]);
//! - a point goes to the mean at the smallest squared distance, the lowest
//!   index winning ties; the distance is summed in 32-bit unsigned
//!   arithmetic from 32-bit differences, wrapping as the C code's `int` and
//!   `unsigned int` do;
//! - every iteration is one MapReduce run that assigns every point and sums
//!   each cluster's coordinates (wrapping `int` sums) and points; a cluster
//!   with points gets the truncated quotient as its new mean, an empty one
//!   keeps its mean;
//! - iterations repeat until one changes no point's cluster (points start
//!   in no cluster, so the first always does).
//!
//! Within coordinates whose squared distances and cluster sums fit in 32
//! bits (the original's defaults: grid 1000) the arithmetic is exact; past
//! that it wraps exactly as the original's does, so the outputs stay equal.
//!
//! The submodules: [`gen`] (inputs), [`reference`](mod@reference) (plain sequential),
//! [`encoding`] and [`nearest`] (the vectorised assignment kernel),
//! [`search`] (the two put together for one input), [`sums`] (per-cluster
//! sums and the new means), [`baseline`] (hand-written threads), and
//! [`job`] (on numakit's MapReduce runtime, [`run`]).

pub mod baseline;
pub mod encoding;
pub mod gen;
pub mod job;
pub mod nearest;
pub mod reference;
pub mod search;
pub mod sums;

pub use job::run;

use crate::numeric::IntFileError;

/// Largest number of points or clusters: the original counts both in C
/// `int`s.
pub const MAX_COUNT: usize = i32::MAX as usize;

/// The cluster of a point not yet assigned (the original's `-1`).
pub const UNASSIGNED: u32 = u32::MAX;

/// What can be wrong with a k-means input or its parameters.
#[derive(Debug, thiserror::Error)]
pub enum KmeansError {
    /// Points must have at least one coordinate.
    #[error("points need at least one dimension")]
    ZeroDimension,
    /// There must be at least one cluster.
    #[error("k-means needs at least one cluster")]
    NoClusters,
    /// Coordinates must be drawn from a non-empty range.
    #[error("the grid size must be at least 1")]
    ZeroGridSize,
    /// The flat coordinates are not a whole number of points.
    #[error("{len} coordinates are not a whole number of {dim}-dimensional points")]
    Ragged {
        /// Number of coordinates.
        len: usize,
        /// Dimensions per point.
        dim: usize,
    },
    /// Points and means have different dimensions.
    #[error("points have {points} dimensions but the means have {means}")]
    DimensionMismatch {
        /// Dimensions of the points.
        points: usize,
        /// Dimensions of the means.
        means: usize,
    },
    /// More points or clusters than the original's `int` counters hold.
    #[error("{count} {what} exceed the limit of {MAX_COUNT}")]
    TooMany {
        /// "points" or "clusters".
        what: &'static str,
        /// How many were given.
        count: usize,
    },
    /// A points file could not be read.
    #[error("points file: {0}")]
    File(#[from] IntFileError),
    /// The MapReduce run failed.
    #[error("kmeans: {0}")]
    Runtime(#[from] numakit_mapreduce::MapReduceError),
}

/// Points of one dimension, stored row-major (`dim` coordinates each).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Points {
    dim: usize,
    coords: Vec<i32>,
}

impl Points {
    /// Points from their flat row-major coordinates.
    pub fn new(dim: usize, coords: Vec<i32>) -> Result<Self, KmeansError> {
        if dim == 0 {
            return Err(KmeansError::ZeroDimension);
        }
        if coords.len() % dim != 0 {
            return Err(KmeansError::Ragged {
                len: coords.len(),
                dim,
            });
        }
        Ok(Points { dim, coords })
    }

    /// Coordinates per point.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.coords.len() / self.dim
    }

    /// Whether there are no points.
    pub fn is_empty(&self) -> bool {
        self.coords.is_empty()
    }

    /// The coordinates of point `i`.
    pub fn point(&self, i: usize) -> &[i32] {
        &self.coords[i * self.dim..(i + 1) * self.dim]
    }

    /// All coordinates, row-major.
    pub fn coords(&self) -> &[i32] {
        &self.coords
    }

    /// Mutable access to all coordinates (the shape stays fixed).
    pub fn coords_mut(&mut self) -> &mut [i32] {
        &mut self.coords
    }
}

/// The points to cluster and the means to start from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KmeansInput {
    points: Points,
    initial_means: Points,
}

impl KmeansInput {
    /// Checks that the dimensions agree, that there is a cluster, and that
    /// the counts fit the original's `int`s.
    pub fn new(points: Points, initial_means: Points) -> Result<Self, KmeansError> {
        if points.dim() != initial_means.dim() {
            return Err(KmeansError::DimensionMismatch {
                points: points.dim(),
                means: initial_means.dim(),
            });
        }
        if initial_means.is_empty() {
            return Err(KmeansError::NoClusters);
        }
        check_count("points", points.len())?;
        check_count("clusters", initial_means.len())?;
        Ok(KmeansInput {
            points,
            initial_means,
        })
    }

    /// The points.
    pub fn points(&self) -> &Points {
        &self.points
    }

    /// The means the first iteration assigns against.
    pub fn initial_means(&self) -> &Points {
        &self.initial_means
    }

    /// Number of clusters.
    pub fn clusters(&self) -> usize {
        self.initial_means.len()
    }
}

fn check_count(what: &'static str, count: usize) -> Result<(), KmeansError> {
    if count > MAX_COUNT {
        return Err(KmeansError::TooMany { what, count });
    }
    Ok(())
}

/// When to stop iterating.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KmeansLimits {
    /// Stop after this many iterations even if points still move (`None`:
    /// as the original, until nothing moves).
    pub max_iterations: Option<u32>,
}

/// The clustering an input converges to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KmeansOutput {
    /// The final means (one per cluster, in cluster order).
    pub means: Points,
    /// Each point's cluster.
    pub assignment: Vec<u32>,
    /// MapReduce runs (iterations), the last one changing nothing when
    /// `converged`.
    pub iterations: u32,
    /// Whether the last iteration moved no point (false only when
    /// [`KmeansLimits::max_iterations`] stopped it).
    pub converged: bool,
}

impl KmeansOutput {
    /// The final means as the original prints them after "Final means:"
    /// (`printf("%5d ")` per coordinate, a newline per mean).
    pub fn phoenix_dump(&self) -> String {
        let mut text = String::new();
        for j in 0..self.means.len() {
            for v in self.means.point(j) {
                text.push_str(&format!("{v:5} "));
            }
            text.push('\n');
        }
        text
    }
}
