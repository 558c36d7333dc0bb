//! Runs the command the user asked for: sets the memory budget, checks
//! that every output path can be written before any work starts, and
//! calls the command's module. It sits above both the command line
//! ([`crate::args`]) and the commands, so neither imports the other's way
//! back.

use anyhow::Result;

use std::path::PathBuf;

use crate::args::{BenchCommand, Cli, Command};
use crate::commands::cluster::args::ClusterCommand;
use crate::commands::{
    bench, cluster, doctor, interfere, mapreduce, ops, paper, probe, run, shuffle, simulate, topo,
};

/// Runs the command; `Ok(false)` means "completed, but report failure"
/// (the doctor found a failed check).
pub fn dispatch(cli: &Cli) -> Result<bool> {
    crate::common::budget::set(cli.memory_limit);
    let outputs = output_paths(&cli.command);
    crate::common::files::check_writable(
        outputs
            .iter()
            .map(|(option, path)| (*option, path.as_path())),
    )?;
    match &cli.command {
        Command::Run(args) => run::run(args, cli.placement, cli.json, cli.quiet).map(|()| true),
        Command::Topo(args) => topo::run(args, cli.json).map(|()| true),
        Command::Doctor => doctor::run(cli.json),
        Command::Shuffle(args) => {
            shuffle::run(args, cli.placement, cli.json, cli.quiet).map(|()| true)
        }
        Command::Simulate(args) => simulate::run(args, cli.json).map(|()| true),
        Command::Join(args) => {
            ops::join::run(args, cli.placement, cli.json, cli.quiet).map(|()| true)
        }
        Command::Aggregate(args) => {
            ops::aggregate::run(args, cli.placement, cli.json, cli.quiet).map(|()| true)
        }
        Command::Mapreduce(args) => {
            mapreduce::run(args, cli.placement, cli.json, cli.quiet).map(|()| true)
        }
        Command::Sort(args) => {
            ops::sort::run(args, cli.placement, cli.json, cli.quiet).map(|()| true)
        }
        Command::Probe(args) => probe::run(args, cli.placement, cli.json, cli.quiet).map(|()| true),
        Command::Cluster(which) => {
            cluster::run(which, cli.placement, cli.json, cli.quiet).map(|()| true)
        }
        Command::Bench(which) => {
            bench::run(which, cli.placement, cli.json, cli.quiet).map(|()| true)
        }
        Command::Interfere(args) => {
            interfere::run(args, cli.placement, cli.json, cli.quiet).map(|()| true)
        }
        Command::Paper(args) => paper::run(args, cli.json, cli.quiet).map(|()| true),
    }
}

/// Every file the command will write, with the option that named it, so
/// that a path in a missing or read-only folder fails before the work
/// starts rather than after it. (A matrix input written with `--generate`
/// may be a folder; the cluster's `--sink files:DIR` checks its own.)
fn output_paths(command: &Command) -> Vec<(&'static str, PathBuf)> {
    let mut paths = Vec::new();
    let mut add = |option, path: &Option<PathBuf>| {
        if let Some(path) = path {
            paths.push((option, path.clone()));
        }
    };
    match command {
        Command::Shuffle(a) => add("--chart", &a.chart),
        Command::Simulate(a) => add("--chart", &a.chart),
        Command::Paper(a) => add("--chart", &a.chart),
        Command::Join(a) => add("--out", &a.common.out),
        Command::Aggregate(a) => add("--out", &a.common.out),
        Command::Sort(a) => add("--out", &a.common.out),
        Command::Mapreduce(a) => {
            let common = a.app.common();
            add("--out", &common.output);
            if !matches!(
                a.app,
                crate::commands::mapreduce::args::MapReduceApp::MatrixMultiply(_)
            ) {
                add("--generate", &common.generate);
            }
        }
        Command::Probe(a) if a.experiment.is_none() => {
            add("--chart", &a.matrix.chart);
            add("--save", &a.matrix.save);
        }
        Command::Cluster(ClusterCommand::Join(a)) => add("--chart", &a.chart),
        Command::Bench(BenchCommand::Locks(a)) => add("--chart", &a.chart),
        Command::Probe(_)
        | Command::Interfere(_)
        | Command::Run(_)
        | Command::Topo(_)
        | Command::Doctor
        | Command::Bench(BenchCommand::Pool(_)) => {}
    }
    paths
}
