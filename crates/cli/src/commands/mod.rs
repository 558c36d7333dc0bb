//! One module per command; `dispatch` runs the one the user asked for.

pub mod aggregate;
pub mod bench;
pub mod cluster;
pub mod cluster_local;
pub mod cluster_report;
pub mod doctor;
pub mod figures;
pub mod join;
pub mod mapreduce;
pub mod mapreduce_numeric;
pub mod mr_output;
pub mod opcommon;
pub mod probe;
pub mod probe_render;
pub mod run;
pub mod run_cluster;
pub mod run_mapreduce;
pub mod run_ops;
pub mod run_probe;
pub mod shuffle;
pub mod simulate;
pub mod sort;
pub mod tables;
pub mod topo;

use anyhow::Result;

use crate::args::{Cli, Command};

/// Runs the command; `Ok(false)` means "completed, but report failure"
/// (the doctor found a failed check).
pub fn dispatch(cli: &Cli) -> Result<bool> {
    match &cli.command {
        Command::Run(args) => run::run(args, cli.placement, cli.json).map(|()| true),
        Command::Topo(args) => topo::run(args, cli.json).map(|()| true),
        Command::Doctor => doctor::run(cli.json),
        Command::Shuffle(args) => {
            shuffle::run(args, cli.placement, cli.json, cli.quiet).map(|()| true)
        }
        Command::Simulate(args) => simulate::run(args, cli.json).map(|()| true),
        Command::Join(args) => join::run(args, cli.placement, cli.json, cli.quiet).map(|()| true),
        Command::Aggregate(args) => {
            aggregate::run(args, cli.placement, cli.json, cli.quiet).map(|()| true)
        }
        Command::Mapreduce(args) => {
            mapreduce::run(args, cli.placement, cli.json, cli.quiet).map(|()| true)
        }
        Command::Sort(args) => sort::run(args, cli.placement, cli.json, cli.quiet).map(|()| true),
        Command::Probe(args) => probe::run(args, cli.placement, cli.json, cli.quiet).map(|()| true),
        Command::Cluster(which) => {
            cluster::run(which, cli.placement, cli.json, cli.quiet).map(|()| true)
        }
        Command::Bench(which) => {
            bench::run(which, cli.placement, cli.json, cli.quiet).map(|()| true)
        }
    }
}
