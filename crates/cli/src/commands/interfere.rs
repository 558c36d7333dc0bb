//! `numakit interfere`: the options, one call of the interfere crate's
//! matrix, and the report (tables or JSON). The workloads, the pinned
//! threads and the medians are the library's.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use clap::Args;
use numakit_interfere::matrix;
use numakit_interfere::Cell;
use numakit_interfere::{InterferenceReport, InterferenceRequest, Sizes, Workload};
use numakit_placement::{PlacementMode, Placer};

use crate::common::output;
use crate::common::progress::Spinner;
use crate::render::format::table;

/// The options of `numakit interfere`.
#[derive(Debug, Args)]
pub struct InterfereArgs {
    /// The workloads, run alone and in every ordered pair: scan, probe,
    /// chase, compute, join, aggregate (default: all).
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = workload)]
    pub workloads: Vec<Workload>,

    /// Milliseconds of each run.
    #[arg(long, default_value_t = 200, value_name = "MS", value_parser = crate::common::parse::positive)]
    pub ms: usize,

    /// Repetitions of every run (order alternating); medians reported.
    #[arg(long, default_value_t = 3, value_name = "N", value_parser = crate::common::parse::reps)]
    pub reps: usize,

    /// The probe's hash table, in MiB (default: the usable last-level
    /// cache this machine measures, which can be far below what sysfs
    /// says).
    #[arg(long, value_name = "MIB", value_parser = crate::common::parse::positive)]
    pub cache_mib: Option<usize>,

    /// The scan's and the chase's buffers, in MiB; they should be much
    /// larger than the last-level cache.
    #[arg(long, default_value_t = 128, value_name = "MIB", value_parser = crate::common::parse::positive)]
    pub buffer_mib: usize,

    /// Instead of the matrix: plan where these concurrent jobs should run
    /// so that they interfere least (one workload per job, repeats
    /// allowed, e.g. scan,scan,probe,compute), explain the choice and
    /// measure it against running every job at once anywhere.
    #[arg(long, value_name = "JOBS", value_delimiter = ',', value_parser = workload)]
    pub plan: Vec<Workload>,

    /// With --plan: predict interference from this machine's matrix of the
    /// jobs' workloads, measured first (`measured`), or from the
    /// workloads' declared characters (`declared`, no measuring).
    #[arg(long, default_value = "measured", value_name = "FROM", value_parser = ["measured", "declared"], requires = "plan")]
    pub predict: String,

    /// With --plan: only plan, do not measure the plan against naive
    /// placement.
    #[arg(long, requires = "plan")]
    pub no_check: bool,
}

fn workload(text: &str) -> Result<Workload, String> {
    text.parse()
}

/// The workloads' data sizes the options ask for.
pub fn sizes(args: &InterfereArgs) -> Sizes {
    let cache_bytes = match args.cache_mib {
        Some(mib) => (mib as u64) << 20,
        None => numakit_ops::cache_probe::measure().usable_bytes,
    };
    let buffer_bytes = (args.buffer_mib as u64) << 20;
    Sizes {
        scan_bytes: buffer_bytes,
        chase_bytes: buffer_bytes,
        ..Sizes::for_cache(cache_bytes)
    }
}

/// The request the options ask for.
pub fn request(args: &InterfereArgs) -> InterferenceRequest {
    InterferenceRequest {
        workloads: if args.workloads.is_empty() {
            Workload::ALL.to_vec()
        } else {
            args.workloads.clone()
        },
        duration: Duration::from_millis(args.ms as u64),
        reps: args.reps,
        sizes: sizes(args),
    }
}

/// Runs `numakit interfere`.
pub fn run(args: &InterfereArgs, mode: PlacementMode, json: bool, quiet: bool) -> Result<()> {
    let placer = Placer::new(Arc::new(numakit_topology::discover()?), mode);
    if !args.plan.is_empty() {
        return super::interfere_plan::run(args, &placer, json, quiet);
    }
    let spinner = Spinner::new(quiet || json);
    spinner.set_prefix("interfere");
    let request = request(args);
    let report = matrix::run(&placer, &request, &|what| {
        spinner.set_prefix(what.to_string())
    })
    .map_err(|e| crate::usage_error!("{e}"))?;
    spinner.finish();
    output::report(json, &report, || render(&report))?;
    Ok(())
}

/// A matrix as text: a row per victim, a column per aggressor.
pub fn matrix_text(cells: &[Cell], workloads: &[Workload]) -> String {
    let mut rows = vec![std::iter::once("victim \\ beside".to_string())
        .chain(workloads.iter().map(|w| w.to_string()))
        .collect::<Vec<_>>()];
    for v in workloads {
        let mut row = vec![v.to_string()];
        for a in workloads {
            let cell = cells.iter().find(|c| c.victim == *v && c.aggressor == *a);
            row.push(cell.map_or("-".into(), |c| format!("{:.2}x", c.slowdown)));
        }
        rows.push(row);
    }
    table(&rows)
}

/// The report as text.
pub fn render(r: &InterferenceReport) -> String {
    /// The co-located victims' hardware counts alone and beside each
    /// aggressor, as a table; or one line saying why there are none.
    fn counters_text(r: &InterferenceReport) -> Vec<String> {
        if let Some(reason) = &r.counters_unavailable {
            return vec![format!("hardware counters: unavailable ({reason})")];
        }
        if r.colocated_counters.is_empty() {
            return vec!["hardware counters: none of these victims works on its measuring thread (join and aggregate work on a pool's worker)".into()];
        }
        let two = |a: Option<f64>, b: Option<f64>| {
            let f = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2}"));
            format!("{} -> {}", f(a), f(b))
        };
        let mut rows = vec![
            ["victim", "beside", "slowdown", "LLC misses per unit", "IPC"]
                .map(String::from)
                .to_vec(),
        ];
        for c in &r.colocated_counters {
            let cell = r
                .colocated
                .iter()
                .find(|x| x.victim == c.victim && x.aggressor == c.aggressor);
            let unit = c.beside.work.map_or("unit", |w| w.unit);
            rows.push(vec![
                c.victim.to_string(),
                c.aggressor.to_string(),
                cell.map_or("-".into(), |x| format!("{:.2}x", x.slowdown)),
                format!(
                    "{} per {unit}",
                    two(
                        c.alone.llc_misses_per_unit(),
                        c.beside.llc_misses_per_unit()
                    )
                ),
                two(c.alone.ipc(), c.beside.ipc()),
            ]);
        }
        vec![
            "hardware counters of the co-located victim, alone -> beside (LLC: the kernel's generic cache events):".into(),
            table(&rows),
        ]
    }

    let workloads: Vec<Workload> = r.alone.iter().map(|a| a.workload).collect();
    let alone: Vec<String> = r
        .alone
        .iter()
        .map(|a| format!("{} {:.3e} {}/s", a.workload, a.per_second, a.unit))
        .collect();
    let mut out = vec![
        format!(
            "interference: {} ms per run, medians of {}; probe table {} MiB (the usable last-level cache)",
            r.run_ms,
            r.reps,
            r.sizes.cache_bytes >> 20
        ),
        format!("alone (CPU {}): {}", r.colocated_seats.victim.cpu, alone.join(", ")),
        format!(
            "slowdown co-located (CPUs {} and {}, node {}: shared last-level cache and memory):",
            r.colocated_seats.victim.cpu, r.colocated_seats.aggressor.cpu, r.colocated_seats.victim.node
        ),
        matrix_text(&r.colocated, &workloads),
    ];
    match (&r.isolated, &r.isolated_seats) {
        (Some(cells), Some(seats)) => {
            out.push(format!(
                "slowdown isolated (CPU {} on node {}, CPU {} on node {}):",
                seats.victim.cpu, seats.victim.node, seats.aggressor.cpu, seats.aggressor.node
            ));
            out.push(matrix_text(cells, &workloads));
        }
        _ => out.push(format!(
            "isolated: unavailable ({})",
            r.isolated_unavailable.as_deref().unwrap_or("?")
        )),
    }
    out.extend(counters_text(r));
    out.push(
        "classes (sensitivity: its slowdown beside scan; appetite: scan's slowdown beside it):"
            .into(),
    );
    for c in &r.classes {
        let figure = |x: Option<f64>| x.map_or("-".into(), |v| format!("{v:.2}x"));
        out.push(format!(
            "  {}: sensitivity {}, appetite {}: {} (declared: {})",
            c.workload,
            figure(c.cache_sensitivity),
            figure(c.bandwidth_appetite),
            c.measured,
            c.declared
        ));
    }
    if !r.placement_verified {
        out.push("warning: some measuring threads were not seen on their node".into());
    }
    out.join("\n")
}
