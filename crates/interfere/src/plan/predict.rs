//! How much one job slows another when they share a node: read from this
//! machine's co-located slowdown matrix where it was measured, and from
//! the workloads' declared characters where it was not.
//!
//! The declared figures are assumptions, stated here once: a
//! bandwidth-hungry neighbour slows whatever touches memory, a
//! cache-sensitive one competes for the last-level cache, a compute-bound
//! one slows nothing and is slowed by nothing. They let a plan be made
//! without measuring (in a guest, or for a quick answer); a measured
//! matrix replaces them pair by pair. Slowdowns below 1 (a measured
//! speed-up beside a neighbour is noise) count as 1. It predicts; it does
//! not measure or place.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::cell::Cell;
use crate::workload::Workload;

/// Where a prediction comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// This machine's co-located slowdown matrix.
    Measured,
    /// The workloads' declared characters (the table in this module).
    Declared,
}

impl Source {
    /// The word reports use.
    pub fn name(self) -> &'static str {
        match self {
            Source::Measured => "measured",
            Source::Declared => "declared",
        }
    }
}

/// What a workload is declared to need, coarsely.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Need {
    Bandwidth,
    Cache,
    Latency,
    Core,
    Mixed,
}

fn need(w: Workload) -> Need {
    match w {
        Workload::Scan => Need::Bandwidth,
        Workload::Probe => Need::Cache,
        Workload::Chase => Need::Latency,
        Workload::Compute => Need::Core,
        Workload::Join | Workload::Aggregate => Need::Mixed,
    }
}

/// The declared slowdown of a `victim` beside an `aggressor`.
fn declared(victim: Workload, aggressor: Workload) -> f64 {
    use Need::*;
    match (need(victim), need(aggressor)) {
        (Core, _) | (_, Core) => 1.0,
        (Bandwidth, Bandwidth) | (Cache, Bandwidth) => 1.5,
        (Latency, Bandwidth) | (Mixed, Bandwidth) => 1.3,
        (Cache, Cache) | (Cache, Mixed) => 1.3,
        (Bandwidth, Mixed) | (Mixed, Mixed) | (Latency, Mixed) => 1.2,
        (Mixed, Cache) | (Latency, Cache) => 1.1,
        (Bandwidth, Cache) | (Bandwidth, Latency) => 1.05,
        (Latency, Latency) | (Mixed, Latency) => 1.05,
        (Cache, Latency) => 1.1,
    }
}

/// Pairwise slowdowns, measured where known.
#[derive(Clone, Debug, Default)]
pub struct Predictor {
    measured: BTreeMap<(Workload, Workload), f64>,
}

impl Predictor {
    /// Predictions from the declared characters only.
    pub fn declared() -> Self {
        Self::default()
    }

    /// Predictions from `cells` (a co-located matrix), the declared
    /// characters for pairs it lacks.
    pub fn measured(cells: &[Cell]) -> Self {
        Predictor {
            measured: cells
                .iter()
                .map(|c| ((c.victim, c.aggressor), c.slowdown))
                .collect(),
        }
    }

    /// `victim`'s predicted slowdown beside `aggressor` (at least 1), and
    /// where the figure comes from.
    pub fn slowdown(&self, victim: Workload, aggressor: Workload) -> (f64, Source) {
        match self.measured.get(&(victim, aggressor)) {
            Some(&s) => (s.max(1.0), Source::Measured),
            None => (declared(victim, aggressor), Source::Declared),
        }
    }

    /// `victim`'s predicted slowdown beside all of `others` at once: the
    /// excess slowdowns add up.
    pub fn beside_all(&self, victim: Workload, others: impl Iterator<Item = Workload>) -> f64 {
        1.0 + others
            .map(|a| self.slowdown(victim, a).0 - 1.0)
            .sum::<f64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Workload::*;

    #[test]
    fn declared_characters_order_the_neighbours() {
        let p = Predictor::declared();
        let beside = |v, a| p.slowdown(v, a).0;
        assert!(beside(Probe, Scan) > beside(Probe, Compute));
        assert!(beside(Scan, Scan) > beside(Scan, Compute));
        assert_eq!(beside(Compute, Scan), 1.0);
        assert_eq!(p.slowdown(Probe, Scan).1, Source::Declared);
        for v in Workload::ALL {
            for a in Workload::ALL {
                assert!(beside(v, a) >= 1.0);
            }
        }
    }

    #[test]
    fn measured_cells_replace_the_declared_figures_and_noise_counts_as_none() {
        let cell = |victim, aggressor, slowdown| Cell {
            victim,
            aggressor,
            slowdown,
            min: slowdown,
            max: slowdown,
        };
        let p = Predictor::measured(&[cell(Probe, Scan, 1.24), cell(Probe, Compute, 0.89)]);
        assert_eq!(p.slowdown(Probe, Scan), (1.24, Source::Measured));
        assert_eq!(p.slowdown(Probe, Compute), (1.0, Source::Measured));
        assert_eq!(p.slowdown(Scan, Scan).1, Source::Declared);
        let all = p.beside_all(Probe, [Scan, Compute].into_iter());
        assert!((all - 1.24).abs() < 1e-12);
    }
}
