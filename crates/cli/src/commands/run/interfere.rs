//! The main job's interference section: a short `numakit interfere` of
//! the scan, the cache-sized hash probe and the compute loop on two CPUs
//! of one node, each one's slowdown beside the others. `numakit
//! interfere` is the real measurement (every workload, longer runs,
//! medians); this shows what it does.

use std::time::Duration;

use anyhow::Result;
use numakit_interfere::matrix;
use numakit_interfere::Cell;
use numakit_interfere::{InterferenceRequest, Sizes, Workload};
use numakit_placement::Placer;
use serde::Serialize;

/// What the section measured.
#[derive(Serialize)]
pub struct InterfereSummary {
    /// The two CPUs the pairs ran on.
    pub cpus: (u32, u32),
    /// The probe's table, in bytes.
    pub table_bytes: u64,
    /// Every (victim, aggressor) slowdown.
    pub cells: Vec<Cell>,
}

const WORKLOADS: [Workload; 3] = [Workload::Scan, Workload::Probe, Workload::Compute];

/// Runs the short measurement; `Ok(None)` with a reason when this
/// process has fewer than two CPUs of one node.
pub fn interfere(placer: &Placer, cache_bytes: u64) -> Result<Result<InterfereSummary, String>> {
    let request = InterferenceRequest {
        workloads: WORKLOADS.to_vec(),
        duration: Duration::from_millis(40),
        reps: 1,
        sizes: Sizes {
            scan_bytes: 32 << 20,
            chase_bytes: 8 << 20,
            ..Sizes::for_cache(cache_bytes)
        },
    };
    match matrix::run(placer, &request, &|_| {}) {
        Ok(report) => Ok(Ok(InterfereSummary {
            cpus: (
                report.colocated_seats.victim.cpu,
                report.colocated_seats.aggressor.cpu,
            ),
            table_bytes: report.sizes.cache_bytes,
            cells: report.colocated,
        })),
        Err(numakit_interfere::InterfereError::BadRequest(why)) => Ok(Err(why)),
        Err(e) => Err(e.into()),
    }
}

/// The section's lines.
pub fn lines(s: &InterfereSummary) -> Vec<String> {
    let slowdown = |v: Workload, a: Workload| {
        s.cells
            .iter()
            .find(|c| c.victim == v && c.aggressor == a)
            .map_or("-".into(), |c| format!("{:.2}x", c.slowdown))
    };
    let row = |v: Workload| {
        format!(
            "   {v} slowed {} beside scan, {} beside probe, {} beside compute",
            slowdown(v, Workload::Scan),
            slowdown(v, Workload::Probe),
            slowdown(v, Workload::Compute)
        )
    };
    let mut out = vec![format!(
        "11. interference on CPUs {} and {} (one node, shared last-level cache; probe table {} MiB, 40 ms runs):",
        s.cpus.0,
        s.cpus.1,
        s.table_bytes >> 20
    )];
    out.extend(WORKLOADS.map(row));
    out.push("   (numakit interfere for every workload, medians and each one's class)".into());
    out
}
