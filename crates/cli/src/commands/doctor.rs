//! `numakit doctor`: placement and pool checks, verified by observation.

use std::sync::Arc;

use anyhow::Result;
use numakit_placement::doctor::{self, Report, Status};
use numakit_topology::Topology;
use serde::Serialize;

use crate::common::output;
use crate::render::format::table;

#[derive(Serialize)]
struct DoctorOutput<'a> {
    topology: &'a Topology,
    report: &'a Report,
}

/// All checks of placement and pool against the discovered machine.
pub fn checks(topology: Arc<Topology>) -> Report {
    doctor::run(topology.clone()).extend(numakit_pool::checks::run(topology))
}

/// Runs the doctor; returns whether every check passed or was unavailable.
pub fn run(json: bool) -> Result<bool> {
    let topology = Arc::new(numakit_topology::discover()?);
    let report = checks(topology.clone());
    let out = DoctorOutput {
        topology: &topology,
        report: &report,
    };
    output::report(json, &out, || render(&report))?;
    Ok(report.ok())
}

/// The report as text: one `pass`/`FAIL`/`n/a` row per check with its
/// detail, then the verdict line.
pub fn render(report: &Report) -> String {
    let mut rows = Vec::new();
    for c in &report.checks {
        let status = match c.status {
            Status::Pass => "pass",
            Status::Fail => "FAIL",
            Status::Unavailable => "n/a",
        };
        rows.push(vec![status.to_string(), c.name.clone(), c.detail.clone()]);
    }
    format!("{}\n\n{}", table(&rows), verdict(report))
}

/// One line: counts and what they mean.
pub fn verdict(report: &Report) -> String {
    let meaning = if report.failed > 0 {
        "numakit cannot trust placement here; see the failed checks"
    } else if report.unavailable > 0 {
        "usable; unavailable checks need more nodes or permissions"
    } else {
        "NUMA control works"
    };
    format!(
        "doctor: {} pass, {} fail, {} unavailable: {meaning}",
        report.passed, report.failed, report.unavailable
    )
}
