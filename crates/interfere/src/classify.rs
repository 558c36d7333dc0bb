//! What each workload needs, read from the co-located matrix in the
//! spirit of MCC-DB (Lee et al.): its **cache sensitivity** is its
//! slowdown beside the scan (which streams through the shared cache and
//! evicts what others keep there), its **bandwidth appetite** is the
//! scan's slowdown beside it (the share of the memory system it takes).
//! A workload hurt by the scan relies on cached data (strong locality); one
//! that slows the scan competes for bandwidth; one that does neither is
//! bound by its own core (compute or latency).
//!
//! Without the scan among the workloads there is nothing to read these
//! from, and the classes say so. It classifies; it measures nothing.

use serde::Serialize;

use crate::cell::Cell;
use crate::workload::Workload;

/// A slowdown above this counts as an effect (the run-to-run noise of
/// these measurements is a few per cent).
pub const EFFECT: f64 = 1.10;

/// One workload's measured needs.
#[derive(Clone, Debug, Serialize)]
pub struct Class {
    /// The workload.
    pub workload: Workload,
    /// What it was declared to be.
    pub declared: &'static str,
    /// Its slowdown beside the scan (`None` without the scan).
    pub cache_sensitivity: Option<f64>,
    /// The scan's slowdown beside it (`None` without the scan).
    pub bandwidth_appetite: Option<f64>,
    /// What the measurements say, in words.
    pub measured: String,
}

fn cell(cells: &[Cell], victim: Workload, aggressor: Workload) -> Option<f64> {
    cells
        .iter()
        .find(|c| c.victim == victim && c.aggressor == aggressor)
        .map(|c| c.slowdown)
}

/// The words for a sensitivity and an appetite.
fn words(sensitivity: f64, appetite: f64) -> String {
    match (sensitivity > EFFECT, appetite > EFFECT) {
        (true, true) => "cache-sensitive and bandwidth-hungry".into(),
        (true, false) => "cache-sensitive (relies on cached data)".into(),
        (false, true) => "bandwidth-hungry, cache-insensitive".into(),
        (false, false) => {
            "bound by its own core (compute or latency); neither hurt by nor hurting a scan".into()
        }
    }
}

/// Each of `workloads` classified from `cells` (the co-located matrix).
pub fn classify(workloads: &[Workload], cells: &[Cell]) -> Vec<Class> {
    workloads
        .iter()
        .map(|&w| {
            // The scan beside a scan shares bandwidth; there is no cache
            // of its own to pollute, so it has an appetite only.
            let sensitivity = (w != Workload::Scan)
                .then(|| cell(cells, w, Workload::Scan))
                .flatten();
            let appetite = cell(cells, Workload::Scan, w);
            let measured = match (w, sensitivity, appetite) {
                (Workload::Scan, _, Some(a)) => words(1.0, a),
                (_, Some(s), Some(a)) => words(s, a),
                _ => "not classified: the scan was not among the workloads".into(),
            };
            Class {
                workload: w,
                declared: w.declared(),
                cache_sensitivity: sensitivity,
                bandwidth_appetite: appetite,
                measured,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(victim: Workload, aggressor: Workload, slowdown: f64) -> Cell {
        Cell {
            victim,
            aggressor,
            slowdown,
            min: slowdown,
            max: slowdown,
        }
    }

    #[test]
    fn the_scan_column_and_row_decide() {
        use Workload::*;
        let cells = [
            c(Probe, Scan, 1.8),
            c(Scan, Probe, 1.02),
            c(Compute, Scan, 1.01),
            c(Scan, Compute, 1.0),
            c(Scan, Scan, 1.6),
        ];
        let classes = classify(&[Probe, Compute, Scan], &cells);
        assert!(
            classes[0].measured.starts_with("cache-sensitive"),
            "{:?}",
            classes[0]
        );
        assert!(classes[1].measured.starts_with("bound by its own core"));
        assert!(
            classes[2].measured.contains("bandwidth-hungry"),
            "{:?}",
            classes[2]
        );
        assert_eq!(classes[0].cache_sensitivity, Some(1.8));
        let without = classify(&[Probe], &[c(Probe, Probe, 1.3)]);
        assert!(without[0].measured.starts_with("not classified"));
    }
}
