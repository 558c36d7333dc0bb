//! `numakit probe`: the memory probe's matrices, Kiefer's experiments and
//! the placement strategies, from options to report. Measuring is the
//! probe crate's; the text is [`render`]'s.

pub mod args;
pub mod render;

use std::path::Path;
use std::sync::Arc;

use anyhow::{ensure, Context, Result};
use numakit_placement::{PlacementMode, Placer};
use numakit_probe::chase::ChaseOrder;
use numakit_probe::kiefer::{self, Experiment, KieferOptions};
use numakit_probe::strategies::{self, PlacementStrategy, Sizes, StrategyOptions};
use numakit_probe::{describe, matrix, MatrixOptions, MatrixReport};
use numakit_topology::{IdSet, Topology};

use crate::commands::probe::args::{
    AllRemoteArgs, KieferArgs, MatrixArgs, ProbeArgs, ProbeCommand, StrategyArgs,
};
use crate::common::files::write_whole;
use crate::common::progress::Spinner;
use crate::common::{budget, output};

const MIB: u64 = 1 << 20;

/// Runs `numakit probe`: the latency and bandwidth matrices, or the
/// experiment named (one of Kiefer's, all four, or the placement
/// strategies), and prints its report.
pub fn run(args: &ProbeArgs, mode: PlacementMode, json: bool, quiet: bool) -> Result<()> {
    let topology = Arc::new(numakit_topology::discover()?);
    let placer = Placer::new(topology, mode);
    let spinner = Spinner::new(quiet || json);
    spinner.set_prefix("probe");
    let result = match &args.experiment {
        None => matrices(&placer, &args.matrix, json, &spinner),
        Some(ProbeCommand::RemoteAccess(a)) => {
            experiments(&placer, &[Experiment::RemoteAccess], a, json, &spinner)
        }
        Some(ProbeCommand::ThreadMigration(a)) => {
            experiments(&placer, &[Experiment::ThreadMigration], a, json, &spinner)
        }
        Some(ProbeCommand::CacheMigration(a)) => {
            experiments(&placer, &[Experiment::CacheMigration], a, json, &spinner)
        }
        Some(ProbeCommand::CacheConcurrency(a)) => {
            experiments(&placer, &[Experiment::CacheConcurrency], a, json, &spinner)
        }
        Some(ProbeCommand::Kiefer(a)) => experiments(&placer, &Experiment::ALL, a, json, &spinner),
        Some(ProbeCommand::Strategies(a)) => compare_strategies(&placer, a, mode, json, &spinner),
        Some(ProbeCommand::AllRemote(a)) => all_remote(&placer, a, json, &spinner),
    };
    spinner.finish();
    result
}

/// The matrix options the command line asks for, with default sizes
/// fitted to this machine's caches and memory.
pub fn matrix_options(args: &MatrixArgs, topology: &Topology) -> Result<MatrixOptions> {
    let mut o = if args.full {
        MatrixOptions::full()
    } else {
        MatrixOptions::quick()
    };
    o.memory_limit = crate::common::budget::limit();
    o.huge_pages = !args.no_huge_pages;
    o.cross_traffic = !args.no_cross_traffic;
    o.fixed_threads = args.no_sweep;
    o.chase_order = ChaseOrder::parse(&args.chase_order).unwrap_or_default();
    o.latency = args.only.as_deref() != Some("bandwidth");
    o.bandwidth = args.only.as_deref() != Some("latency");
    let fitted = o.clone().fitted_to(topology);
    o.latency_bytes = fitted.latency_bytes;
    o.bandwidth_bytes = fitted.bandwidth_bytes;
    o.pass_bytes = fitted.pass_bytes;
    let ids = |set: &IdSet| set.iter().collect::<Vec<_>>();
    o.cpu_nodes = args.cpu_nodes.as_ref().or(args.nodes.as_ref()).map(ids);
    o.memory_nodes = args.memory_nodes.as_ref().or(args.nodes.as_ref()).map(ids);
    crate::usage_ensure!(
        args.threads_renamed.is_none(),
        "the probe's --threads is now --threads-per-node (the most threads per node)"
    );
    if let Some(t) = args.threads_per_node {
        crate::usage_ensure!(t > 0, "--threads-per-node must be at least 1");
        o.max_threads = Some(t);
    }
    if let Some(mib) = args.latency_mib {
        crate::usage_ensure!(mib > 0, "--latency-mib must be at least 1");
        o.latency_bytes = mib.saturating_mul(MIB);
        budget::check(
            &format!("the latency buffer (--latency-mib {mib})"),
            o.latency_bytes,
        )?;
    }
    if let Some(mib) = args.bandwidth_mib {
        crate::usage_ensure!(mib > 0, "--bandwidth-mib must be at least 1");
        o.bandwidth_bytes = mib.saturating_mul(MIB);
        budget::check(
            &format!("the bandwidth buffers (--bandwidth-mib {mib})"),
            o.bandwidth_bytes.saturating_mul(2),
        )?;
        o.pass_bytes = o.pass_bytes.max(o.bandwidth_bytes);
    }
    if let Some(mib) = args.pass_mib {
        crate::usage_ensure!(mib > 0, "--pass-mib must be at least 1");
        o.pass_bytes = mib.saturating_mul(MIB);
    }
    if let Some(loads) = args.loads {
        crate::usage_ensure!(loads > 0, "--loads must be at least 1");
        o.chase.loads = loads;
        o.chase.warm = o.chase.warm.min(loads);
    }
    if let Some(reps) = args.reps {
        crate::usage_ensure!(reps > 0, "--reps must be at least 1");
        o.reps = reps;
        o.chase.reps = reps;
    }
    Ok(o)
}

fn matrices(placer: &Placer, args: &MatrixArgs, json: bool, spinner: &Spinner) -> Result<()> {
    let options = matrix_options(args, placer.topology())?;
    let report = matrix::run(placer, &options, spinner)?;
    spinner.finish();
    if let Some(path) = &args.chart {
        let svg = render::matrix_chart(&report);
        write_whole(path, svg.as_bytes())
            .with_context(|| format!("writing the chart {}", path.display()))?;
    }
    if let Some(path) = &args.save {
        save(placer, &report, path, args.name.as_deref())?;
    }
    let value = serde_json::json!({
        "report": report,
        "placement_verified": report.placement_verified(),
        "chart": args.chart,
        "saved": args.save,
    });
    output::report(json, &value, || {
        let mut text = render::matrix_text(&report, args.full)
            .trim_end_matches('\n')
            .to_string();
        if let Some(path) = &args.chart {
            text.push_str(&format!("\nheat maps: {}", path.display()));
        }
        if let Some(path) = &args.save {
            text.push_str(&format!(
                "\nsaved the measured machine to {0} (numakit simulate --machine {0}; numakit shuffle --plan --machine {0})",
                path.display()
            ));
        }
        text
    })
}

/// Writes the measured machine as a description, whole or not at all.
fn save(placer: &Placer, report: &MatrixReport, path: &Path, name: Option<&str>) -> Result<()> {
    let default_name = format!(
        "probed-{}",
        std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string())
            .unwrap_or_else(|_| "machine".into())
    );
    let description = describe::describe(placer.topology(), report, name.unwrap_or(&default_name))?;
    let text = serde_json::to_string_pretty(&description)? + "\n";
    write_whole(path, text.as_bytes())
        .with_context(|| format!("saving the machine to {}", path.display()))
}

fn experiments(
    placer: &Placer,
    which: &[Experiment],
    args: &KieferArgs,
    json: bool,
    spinner: &Spinner,
) -> Result<()> {
    let options = KieferOptions {
        memory_limit: crate::common::budget::limit(),
        accesses: args.accesses,
        small_bytes: args.small_mib.saturating_mul(MIB),
        large_bytes: args.large_mib.saturating_mul(MIB),
        migrations: args.migrations,
        threads: args.threads,
        groups: args.groups,
        group_threads: args.group_threads,
        ..KieferOptions::default()
    };
    crate::usage_ensure!(
        args.small_mib > 0 && args.large_mib > 0,
        "array sizes must be at least 1 MiB"
    );
    for (option, mib) in [
        ("--small-mib", args.small_mib),
        ("--large-mib", args.large_mib),
    ] {
        budget::check(
            &format!("an experiment's array ({option} {mib})"),
            mib.saturating_mul(MIB),
        )?;
    }
    let report = kiefer::run(placer, which, &options, spinner)?;
    spinner.finish();
    let value =
        serde_json::json!({ "report": report, "placement_verified": report.placement_verified() });
    output::report(json, &value, || render::kiefer_text(&report))?;
    Ok(())
}

fn compare_strategies(
    placer: &Placer,
    args: &StrategyArgs,
    mode: PlacementMode,
    json: bool,
    spinner: &Spinner,
) -> Result<()> {
    let mut strategies: Vec<PlacementStrategy> = args.strategies.clone();
    if !strategies.contains(&PlacementStrategy::Default) {
        strategies.insert(0, PlacementStrategy::Default);
    }
    crate::usage_ensure!(args.rows > 0, "--rows must be at least 1");
    crate::usage_ensure!(args.groups > 0, "--groups must be at least 1");
    crate::usage_ensure!(args.build_rows > 0, "--build-rows must be at least 1");
    let options = StrategyOptions {
        memory_limit: crate::common::budget::limit(),
        instances: args.instances,
        sizes: Sizes {
            rows: args.rows,
            groups: args.groups,
            build_rows: args.build_rows,
        },
        workloads: args.workloads.clone(),
        strategies,
        reps: args.reps,
        mode,
        ..StrategyOptions::default()
    };
    let report = strategies::run(placer, &options, spinner)?;
    spinner.finish();
    ensure!(
        report.consistent,
        "the strategies computed different results: {:?}",
        report.outcomes
    );
    output::report(json, &report, || render::strategies_text(&report))?;
    Ok(())
}

/// `numakit probe all-remote`: Li §2's every node reading at once, local
/// then remote.
fn all_remote(placer: &Placer, args: &AllRemoteArgs, json: bool, spinner: &Spinner) -> Result<()> {
    let compute = placer.topology().compute_nodes();
    let nodes: Vec<_> = match &args.nodes {
        Some(set) => {
            let asked: Vec<_> = set.iter().collect();
            if let Some(n) = asked.iter().find(|n| !compute.contains(n)) {
                crate::usage_bail!(
                    "--nodes {n}: not a node with CPUs this process may use (those are {})",
                    IdSet::from_iter(compute.iter().copied()).to_list_string()
                );
            }
            asked
        }
        None => compute,
    };
    let options = numakit_probe::all_remote::AllRemoteOptions {
        threads_per_node: args.threads_per_node,
        buffer_bytes: args.buffer_mib.saturating_mul(MIB),
        passes: args.passes,
        reps: args.reps,
    };
    budget::check(
        &format!(
            "the all-remote buffers (--buffer-mib {} on {} nodes)",
            args.buffer_mib,
            nodes.len()
        ),
        budget::times(nodes.len(), options.buffer_bytes),
    )?;
    spinner.set_prefix("probe all-remote");
    let report = numakit_probe::all_remote::measure(placer, &nodes, &options)?;
    spinner.finish();
    output::report(json, &report, || render::all_remote_text(&report))?;
    Ok(())
}
