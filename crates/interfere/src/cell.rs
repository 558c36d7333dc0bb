//! One cell of a slowdown matrix: a victim's slowdown beside an
//! aggressor. It holds figures; [`crate::matrix`] measures them and
//! [`crate::classify`] reads them.

use serde::Serialize;

use crate::workload::Workload;

/// One (victim, aggressor) cell of a matrix.
#[derive(Clone, Debug, Serialize)]
pub struct Cell {
    /// The workload whose slowdown this is.
    pub victim: Workload,
    /// The workload running beside it.
    pub aggressor: Workload,
    /// Median over the repetitions of (throughput alone / throughput
    /// beside the aggressor): 1 is unaffected, 2 is half speed.
    pub slowdown: f64,
    /// The smallest and largest repetition's slowdown.
    pub min: f64,
    /// See `min`.
    pub max: f64,
}
