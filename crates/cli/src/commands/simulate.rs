//! `numakit simulate` and `numakit shuffle --plan`: the interconnect
//! simulator's predictions and recommendation, for a described machine or
//! this one.

use anyhow::Result;
use clap::Args;
use numakit_sim::aggregation::{self, AggOptions, AggReport};
use numakit_sim::{plan as sim_plan, predict_machine, render_report, Calibration, MachineReport};
use numakit_topology::{presets, Topology};

use crate::commands::figures::{schedule_bar, sweep_path};
use crate::common::output;
use crate::render::chart::{self, Bar, Series};
use crate::render::format::Spread;
use anyhow::Context;

fn machine(spec: Option<&str>) -> Result<Topology> {
    Ok(match spec {
        Some(spec) => numakit_topology::load(spec)?,
        None => numakit_topology::discover()?,
    })
}

/// Threads per socket from a total: default every hardware thread.
fn per_socket(topo: &Topology, threads: Option<usize>) -> Result<Option<usize>> {
    let sockets = topo.compute_nodes().len().max(1);
    let total = threads.unwrap_or(topo.allowed.cpus.len());
    crate::usage_ensure!(total > 0, "--threads must be at least 1");
    crate::usage_ensure!(
        total % sockets == 0,
        "{total} threads do not spread evenly over {sockets} sockets"
    );
    Ok(Some((total / sockets).max(1)))
}

fn report_for(topo: &Topology, threads: Option<usize>) -> Result<MachineReport> {
    Ok(predict_machine(
        topo,
        per_socket(topo, threads)?,
        &Calibration::for_machine(topo),
    )?)
}

/// Runs `numakit simulate`: predicts every shuffle schedule and the thread
/// sweep (or Li Figure 10 with `--aggregation`) on each chosen machine,
/// writes the charts and prints the reports.
pub fn run(args: &SimulateArgs, json: bool) -> Result<()> {
    let topos: Vec<Topology> = if args.all_presets {
        presets::names()
            .into_iter()
            .map(presets::topology)
            .collect::<Result<_, _>>()?
    } else {
        vec![machine(args.machine.as_deref())?]
    };
    if args.aggregation {
        return run_aggregation(&topos, args, json);
    }
    let reports = topos
        .iter()
        .map(|t| report_for(t, args.threads))
        .collect::<Result<Vec<_>>>()?;
    if let Some(path) = &args.chart {
        write_charts(path, &reports[0])?;
    }
    let value = if args.all_presets {
        serde_json::to_value(&reports)?
    } else {
        serde_json::to_value(&reports[0])?
    };
    output::report(json, &value, || {
        let texts: Vec<String> = reports.iter().map(render_report).collect();
        texts.join("\n\n")
    })?;
    Ok(())
}

/// `numakit simulate --aggregation`: Li Figure 10 predicted on each machine.
fn run_aggregation(topos: &[Topology], args: &SimulateArgs, json: bool) -> Result<()> {
    let reports = topos
        .iter()
        .map(|t| {
            // Default: one partition per core (Li Sec. 4.3), not every
            // hardware thread.
            let per = match args.threads {
                Some(_) => per_socket(t, args.threads)?,
                None => None,
            };
            let keys = aggregation::default_keys();
            Ok(aggregation::sweep(t, per, &keys, &AggOptions::default())?)
        })
        .collect::<Result<Vec<AggReport>>>()?;
    let value = if args.all_presets {
        serde_json::to_value(&reports)?
    } else {
        serde_json::to_value(&reports[0])?
    };
    output::report(json, &value, || {
        let texts: Vec<String> = reports
            .iter()
            .map(aggregation::render_aggregation)
            .collect();
        texts.join("\n\n")
    })?;
    Ok(())
}

/// `numakit shuffle --plan`: the recommended schedule and why.
pub fn plan(spec: Option<&str>, threads: Option<usize>, json: bool) -> Result<()> {
    let topo = machine(spec)?;
    if topo.compute_nodes().len() <= 1 {
        let why = "one node: every schedule reads local memory, so they are equivalent; ring (tight) is the default (`numakit shuffle` measures them here)";
        let value = serde_json::json!({ "strategy": "ring", "sync": "tight", "why": why });
        output::report(json, &value, || {
            format!("recommended shuffle on this machine: ring (tight)\n{why}")
        })?;
        return Ok(());
    }
    let plan = sim_plan(
        &topo,
        per_socket(&topo, threads)?,
        &Calibration::for_machine(&topo),
    )?;
    output::report(json, &plan, || {
        format!(
            "recommended shuffle on {}: {} ({}), {:.1} GB/s predicted\n{}",
            plan.machine, plan.strategy, plan.sync, plan.predicted_gbs, plan.why
        )
    })?;
    Ok(())
}

fn write_charts(path: &std::path::Path, report: &MachineReport) -> Result<()> {
    let bars: Vec<Bar> = report
        .rows
        .iter()
        .map(|r| {
            let point = Spread {
                min: r.gbs,
                median: r.gbs,
                max: r.gbs,
            };
            schedule_bar(r.strategy, r.sync, &point)
        })
        .collect();
    let title = format!(
        "Predicted shuffle bandwidth on {} ({} threads)",
        report.machine,
        report.layout.threads()
    );
    std::fs::write(path, chart::bars(&title, "GB/s (predicted)", &bars, None))
        .with_context(|| format!("writing {}", path.display()))?;
    let series = [
        (
            "naive",
            report
                .sweep
                .iter()
                .map(|p| (p.threads as f64, p.naive_gbs))
                .collect(),
        ),
        (
            "ring",
            report
                .sweep
                .iter()
                .map(|p| (p.threads as f64, p.ring_gbs))
                .collect(),
        ),
        (
            "migration",
            report
                .sweep
                .iter()
                .map(|p| (p.threads as f64, p.migration_gbs))
                .collect(),
        ),
    ]
    .into_iter()
    .map(|(name, points)| Series {
        name: name.into(),
        points,
    })
    .collect::<Vec<_>>();
    let sweep = sweep_path(path);
    let svg = chart::lines(
        &format!("Predicted by thread count on {} (tight)", report.machine),
        "threads",
        "GB/s (predicted)",
        &series,
    );
    std::fs::write(&sweep, svg).with_context(|| format!("writing {}", sweep.display()))?;
    Ok(())
}

/// The options of `numakit simulate`.
#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// The machine: a preset name (see `numakit topo --list-presets`) or a
    /// JSON description. Default: this machine.
    #[arg(long, value_name = "PRESET|FILE", conflicts_with = "all_presets")]
    pub machine: Option<String>,

    /// Every built-in preset, one after the other.
    #[arg(long)]
    pub all_presets: bool,

    /// Total threads, spread evenly over the sockets (default: every
    /// hardware thread, the configuration of "maximum bandwidth").
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,

    /// Write the predictions as SVG charts: FILE (Figure 6 style) and FILE
    /// with `-sweep` before the extension (Figure 7). One machine only.
    #[arg(long, value_name = "FILE", conflicts_with = "all_presets")]
    pub chart: Option<std::path::PathBuf>,

    /// Predict Li's Figure 10 instead: group-by aggregation by shuffling
    /// (naive, ring) vs thread migration (with and without copying the
    /// table), from 1K to 64M distinct keys per partition, and where the
    /// ring shuffle overtakes migration. One partition per core unless
    /// `--threads` says otherwise.
    #[arg(long, conflicts_with = "chart")]
    pub aggregation: bool,
}
