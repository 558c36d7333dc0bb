//! The workers a command's pool gets: one set of options (`--threads`,
//! `--nodes`, `--cpus`, `--oversubscribe`) flattened into every command
//! that runs on a pool, and one rule for them.
//!
//! The rule: `--threads` is the pool's total, spread evenly over the chosen
//! nodes (default: one per allowed CPU of those nodes). More threads than
//! those CPUs is refused unless `--oversubscribe` says it is meant (timings
//! of an oversubscribed pool measure the scheduler, not the machine), and
//! never more than [`numakit_pool::MAX_THREADS_PER_CPU`] per CPU.
//!
//! It does not size the work or choose the placement mode (the global
//! `--placement` does that); it only builds the pool.

use std::collections::BTreeSet;
use std::sync::Arc;

use anyhow::Result;
use clap::Args;
use numakit_placement::PlacementMode;
use numakit_pool::{Pool, PoolBuilder, PoolError};
use numakit_topology::{IdSet, Topology};

/// Which workers a command's pool gets.
#[derive(Debug, Clone, Default, Args)]
pub struct PoolArgs {
    /// Worker threads in all (default: one per allowed CPU of the chosen
    /// nodes), spread evenly over the nodes.
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,

    /// Only these NUMA nodes, as a list such as `0,2-3`.
    #[arg(long, value_name = "LIST", value_parser = crate::common::parse::ids)]
    pub nodes: Option<IdSet>,

    /// Only these CPUs, as a list such as `0-7,16`.
    #[arg(long, value_name = "LIST", value_parser = crate::common::parse::ids)]
    pub cpus: Option<IdSet>,

    /// Allow more threads than the chosen CPUs (they then share CPUs;
    /// at most 64 threads per CPU).
    #[arg(long)]
    pub oversubscribe: bool,
}

impl PoolArgs {
    /// The same options with `threads` instead of `--threads` (a sweep's
    /// step); `None` keeps `--threads`.
    pub fn with_threads(&self, threads: Option<usize>) -> PoolArgs {
        PoolArgs {
            threads: threads.or(self.threads),
            ..self.clone()
        }
    }

    /// A pool on this machine, as the options ask.
    pub fn build(&self, mode: PlacementMode) -> Result<Pool> {
        self.build_on(&Arc::new(numakit_topology::discover()?), mode)
    }

    /// A pool on `topology`, as the options ask.
    pub fn build_on(&self, topology: &Arc<Topology>, mode: PlacementMode) -> Result<Pool> {
        Ok(self.builder(topology, mode)?.build()?)
    }

    /// A checked builder: the options applied, the thread count refused
    /// (as a usage error naming `--threads`) where it breaks the rule.
    pub fn builder(&self, topology: &Arc<Topology>, mode: PlacementMode) -> Result<PoolBuilder> {
        let mut builder = PoolBuilder::new(topology.clone()).placement(mode);
        if let Some(threads) = self.threads {
            crate::usage_ensure!(threads > 0, "--threads must be at least 1");
            builder = builder.threads(threads);
        }
        if let Some(nodes) = &self.nodes {
            builder = builder.nodes(nodes.clone());
        }
        if let Some(cpus) = &self.cpus {
            builder = builder.cpus(cpus.clone());
        }
        let plan = builder.plan().map_err(too_many_threads)?;
        let cpus = plan.iter().map(|&(_, cpu)| cpu).collect::<BTreeSet<_>>();
        check_oversubscription(plan.len(), cpus.len(), self.oversubscribe)?;
        Ok(builder)
    }
}

/// Refuses `threads` on fewer `cpus` unless `oversubscribe` allows it.
pub fn check_oversubscription(threads: usize, cpus: usize, oversubscribe: bool) -> Result<()> {
    crate::usage_ensure!(
        threads <= cpus || oversubscribe,
        "--threads {threads} is more than the {cpus} CPUs this pool may use (add --oversubscribe to share them)"
    );
    Ok(())
}

/// The pool's refusal of a thread count beyond its per-CPU cap, as a
/// usage error naming the option.
fn too_many_threads(error: PoolError) -> anyhow::Error {
    match error {
        PoolError::TooManyThreads {
            asked,
            cpus,
            per_cpu,
            max,
        } => crate::usage_error!(
            "--threads {asked} is more than {max}, the most even with --oversubscribe ({per_cpu} per CPU, {cpus} CPUs)"
        ),
        other => other.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(threads: Option<usize>, oversubscribe: bool) -> PoolArgs {
        PoolArgs {
            threads,
            oversubscribe,
            ..PoolArgs::default()
        }
    }

    #[test]
    fn more_threads_than_cpus_needs_oversubscribe() {
        let topology = Arc::new(numakit_topology::discover().expect("topology"));
        let cpus = topology.allowed.cpus.len();
        let mode = PlacementMode::Off;
        assert!(args(Some(cpus), false).builder(&topology, mode).is_ok());
        let refused = args(Some(cpus + 1), false)
            .builder(&topology, mode)
            .expect_err("refused");
        assert!(refused.to_string().contains("--oversubscribe"), "{refused}");
        assert!(args(Some(cpus + 1), true).builder(&topology, mode).is_ok());
        let cap = cpus * numakit_pool::MAX_THREADS_PER_CPU + 1;
        let capped = args(Some(cap), true)
            .builder(&topology, mode)
            .expect_err("capped");
        assert!(
            capped.to_string().contains("the most even with"),
            "{capped}"
        );
        let zero = args(Some(0), true)
            .builder(&topology, mode)
            .expect_err("zero");
        assert!(zero.to_string().contains("at least 1"), "{zero}");
    }

    #[test]
    fn the_cpus_counted_are_those_of_the_chosen_nodes() {
        let topology =
            Arc::new(numakit_topology::presets::topology("nehalem-ex-4s").expect("preset"));
        let node0 = topology.allowed_cpus_of(0).expect("node 0").len();
        let on = |nodes: &str, threads: usize| PoolArgs {
            threads: Some(threads),
            nodes: Some(crate::common::parse::ids(nodes).expect("list")),
            ..PoolArgs::default()
        };
        let mode = PlacementMode::Off;
        assert!(on("0", node0).builder(&topology, mode).is_ok());
        assert!(on("0", node0 + 1).builder(&topology, mode).is_err());
        assert!(on("0-1", node0 + 1).builder(&topology, mode).is_ok());
    }

    #[test]
    fn a_sweep_step_overrides_only_the_thread_count() {
        let base = PoolArgs {
            threads: Some(4),
            oversubscribe: true,
            ..PoolArgs::default()
        };
        assert_eq!(base.with_threads(Some(1)).threads, Some(1));
        assert_eq!(base.with_threads(None).threads, Some(4));
        assert!(base.with_threads(Some(1)).oversubscribe);
    }
}
