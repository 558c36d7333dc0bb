//! The main job's interference section: a short `numakit interfere` of
//! the scan, the cache-sized hash probe and the compute loop on two CPUs
//! of one node, each one's slowdown beside the others. `numakit
//! interfere` is the real measurement (every workload, longer runs,
//! medians); this shows what it does. Then the co-scheduler places four
//! jobs (two scans, the probe, the compute loop) by those figures and runs
//! its plan once against every job at once anywhere.

use std::time::Duration;

use anyhow::Result;
use numakit_interfere::matrix;
use numakit_interfere::plan::{self, Machine, PlanCheck, Predictor};
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
    /// The co-scheduler's plan for [`PLAN_JOBS`], one line per wave and
    /// node.
    pub plan: Vec<String>,
    /// The plan against every job at once anywhere.
    pub plan_check: PlanCheck,
}

/// The jobs the section plans.
const PLAN_JOBS: [Workload; 4] = [
    Workload::Scan,
    Workload::Scan,
    Workload::Probe,
    Workload::Compute,
];

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
    let report = match matrix::run(placer, &request, &|_| {}) {
        Ok(report) => report,
        Err(numakit_interfere::InterfereError::BadRequest(why)) => return Ok(Err(why)),
        Err(e) => return Err(e.into()),
    };
    let machine = Machine::of(placer.topology());
    let planned = plan::layout::make(
        &PLAN_JOBS,
        &machine,
        &Predictor::measured(&report.colocated),
    )?;
    let plan_check = plan::check::check(
        placer,
        &planned,
        &PLAN_JOBS,
        &request.sizes,
        (request.duration, 1),
        &|_| {},
    )?;
    let plan = planned
        .waves
        .iter()
        .enumerate()
        .flat_map(|(w, wave)| {
            wave.groups.iter().map(move |g| {
                let jobs: Vec<&str> = g.jobs.iter().map(|j| j.job.as_str()).collect();
                format!("wave {} node {}: {}", w + 1, g.node, jobs.join(" + "))
            })
        })
        .collect();
    Ok(Ok(InterfereSummary {
        cpus: (
            report.colocated_seats.victim.cpu,
            report.colocated_seats.aggressor.cpu,
        ),
        table_bytes: report.sizes.cache_bytes,
        cells: report.colocated,
        plan,
        plan_check,
    }))
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
    let c = &s.plan_check;
    out.push(format!(
        "   co-scheduler for scan, scan, probe, compute: {}; every job at once anywhere {:.3} s, as planned {:.3} s ({:.2}x)",
        s.plan.join("; "),
        c.naive_median,
        c.planned_median,
        c.gain
    ));
    out.push("   (numakit interfere for every workload, medians and each one's class; --plan JOBS to co-schedule)".into());
    out
}
