//! One cell of a slowdown matrix: a victim's slowdown beside an
//! aggressor, and, where the kernel offers hardware counters, what the
//! victim's work cost alone and beside it ([`CellCounters`]). It holds
//! figures; [`crate::matrix`] measures them and [`crate::classify`] reads
//! them.

use numakit_placement::counters::Counts;
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

/// The victim's hardware counts in one cell: over its runs alone and
/// over its runs beside the aggressor, each per unit of its work (LLC
/// misses per lookup alone against beside a scan, say). Kept apart from
/// [`Cell`] so that a matrix without counters is the same matrix.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct CellCounters {
    /// The workload counted.
    pub victim: Workload,
    /// The workload running beside it.
    pub aggressor: Workload,
    /// Its counts alone on the same CPU, every repetition together.
    pub alone: Counts,
    /// Its counts beside `aggressor`, every repetition together.
    pub beside: Counts,
}
