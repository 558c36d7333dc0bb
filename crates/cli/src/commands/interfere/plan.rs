//! `numakit interfere --plan JOBS`: one call of the interfere crate's
//! co-scheduler, and its report (the plan, why, and how it measured
//! against naive placement; or JSON). The predictions, the search and the
//! measuring are the library's.

use std::time::Duration;

use anyhow::Result;
use numakit_interfere::plan::{self, PlanCheck, PlanReport, PlanRequest, Source};
use numakit_placement::Placer;

use super::render::matrix_text;
use super::{sizes, InterfereArgs};
use crate::common::output;
use crate::common::progress::Spinner;

/// The request the options ask for.
pub fn request(args: &InterfereArgs) -> PlanRequest {
    PlanRequest {
        jobs: args.plan.clone(),
        prediction: if args.predict == "declared" {
            Source::Declared
        } else {
            Source::Measured
        },
        duration: Duration::from_millis(args.ms as u64),
        reps: args.reps,
        check: !args.no_check,
        sizes: sizes(args),
    }
}

/// Runs `numakit interfere --plan`.
pub fn run(args: &InterfereArgs, placer: &Placer, json: bool, quiet: bool) -> Result<()> {
    let spinner = Spinner::new(quiet || json);
    spinner.set_prefix("plan");
    let report = plan::run(placer, &request(args), &|what| {
        spinner.set_prefix(what.to_string())
    })
    .map_err(|e| crate::usage_error!("{e}"))?;
    spinner.finish();
    output::report(json, &report, || render(&report))?;
    Ok(())
}

/// The plan's placement, one line per wave and node.
pub fn placement_lines(r: &PlanReport) -> Vec<String> {
    let waves = r.plan.waves.len();
    let mut out = Vec::new();
    for (w, wave) in r.plan.waves.iter().enumerate() {
        for group in &wave.groups {
            let jobs: Vec<String> = group
                .jobs
                .iter()
                .map(|j| format!("{} on CPU {} ({:.2}x)", j.job, j.cpu, j.predicted_slowdown))
                .collect();
            let wave = if waves > 1 {
                format!("wave {}, ", w + 1)
            } else {
                String::new()
            };
            out.push(format!("  {wave}node {}: {}", group.node, jobs.join(", ")));
        }
    }
    out
}

/// The check's line.
pub fn check_line(c: &PlanCheck) -> String {
    let verdict = if c.gain >= 1.0 {
        "the plan finished sooner"
    } else {
        "naive placement finished sooner"
    };
    format!(
        "measured (each job the work it does alone in {} ms; medians of {}): every job at once anywhere {:.3} s, as planned {:.3} s: {:.2}x, {verdict}",
        c.work_ms,
        c.planned_seconds.len(),
        c.naive_median,
        c.planned_median,
        c.gain
    )
}

/// The report as text.
pub fn render(r: &PlanReport) -> String {
    let mut out = vec![format!(
        "co-scheduling {} (predictions {}):",
        r.jobs.join(", "),
        r.prediction.name()
    )];
    if let Some(cells) = &r.matrix {
        let mut workloads: Vec<_> = cells.iter().map(|c| c.victim).collect();
        workloads.dedup();
        out.push("measured co-located slowdowns (rows: the victim):".into());
        out.push(matrix_text(cells, &workloads));
    }
    out.push("plan (each job's predicted slowdown):".into());
    out.extend(placement_lines(r));
    out.push("why:".into());
    out.extend(r.plan.explanation.iter().map(|l| format!("  {l}")));
    match &r.check {
        Some(c) => {
            out.push(check_line(c));
            if !c.placement_verified {
                out.push("warning: some planned threads were not seen on their node".into());
            }
        }
        None => out.push("not measured (--no-check)".into()),
    }
    out.join("\n")
}
