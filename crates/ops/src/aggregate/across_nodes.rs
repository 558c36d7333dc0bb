//! The automatic choice on a pool that spans several NUMA nodes: Li
//! §4.3's estimate-driven pick between shuffling the data (ring), moving
//! the threads to it (migration) and moving them with their tables
//! (migration & copy).
//!
//! The first question is the one-node one ([`choose::local_fit`]): when
//! a worker's table over its own chunk fits its cache, local
//! pre-aggregation moves no rows at all and no exchange can beat it.
//! Otherwise rows must move between nodes, and the three methods are
//! weighed by the simulator's cost model ([`numakit_sim::aggregation`]),
//! fed with this run's HyperLogLog estimate (groups per partition, rows)
//! and the cache this machine measured usable per worker. The model
//! machine is a described one when the caller gives it (a preset, or a
//! machine `numakit probe --save` measured), otherwise the pool's own
//! topology with the figures discovery cannot know assumed and listed
//! ([`numakit_sim::assume`]). The fastest predicted method runs; the
//! reason names every prediction, the model and its assumptions.
//!
//! The node-oblivious `Partitioned` method is not weighed here: its
//! partitions read from every node without a schedule, which Li's naive
//! shuffle stands for and the ring beats on every modelled machine.
//!
//! This module decides; it runs nothing.

use numakit_sim::aggregation::{self as model, Method};
use numakit_sim::assume;
use numakit_sim::{Calibration, ModelFit};
use numakit_topology::{NodeId, Topology};

use crate::aggregate::choose::{self, AggregationPlan, CacheBudget};
use crate::aggregate::estimate::GroupEstimate;
pub use crate::aggregate::prediction::{ExchangePrediction, PredictedMethod, TIE_SHARE};
use crate::aggregate::AggMethod;

/// Li's three methods, as the operators and the simulator name them, in
/// the order ties are broken: the shuffle moves no state, migration moves
/// threads only, migration & copy moves their tables too.
const WEIGHED: [(AggMethod, Method); 3] = [
    (AggMethod::Shuffle, Method::RingShuffle),
    (AggMethod::Migration, Method::Migration),
    (AggMethod::MigrationCopy, Method::MigrationCopy),
];

/// Where the workers are: what the choice needs of the pool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolShape {
    /// Workers in all.
    pub workers: usize,
    /// The nodes they run on, ascending.
    pub nodes: Vec<NodeId>,
}

/// The automatic choice on several nodes. `described` is the model
/// machine when the caller has one; `None` models the pool's topology
/// with assumed figures. Falls back to the one-node choice, saying why,
/// when the simulator cannot model the machine.
pub fn choose(
    est: &GroupEstimate,
    pool: &PoolShape,
    pool_topology: &Topology,
    described: Option<&Topology>,
    budget: &CacheBudget,
) -> AggregationPlan {
    let fit = choose::local_fit(est, pool.workers, budget);
    if fit.fits {
        let mut plan = fit.plan;
        plan.reason = format!(
            "{} fits the {}: local pre-aggregation of each chunk, then a merge; no rows move \
             between the {} nodes, so no exchange is weighed",
            fit.head,
            fit.cache,
            pool.nodes.len()
        );
        return plan;
    }
    match predict(est, pool, pool_topology, described, budget) {
        Ok(prediction) => {
            let Some(best) = prediction.chosen() else {
                return fallback(est, pool, budget, "the model predicted nothing");
            };
            let mut plan = choose::fixed(best.method, est, pool.workers, budget);
            plan.reason = format!(
                "{} exceeds the {}: rows must move between {} nodes. {}",
                fit.head,
                fit.cache,
                pool.nodes.len(),
                explain(&prediction, best)
            );
            plan.prediction = Some(prediction);
            plan
        }
        Err(why) => fallback(est, pool, budget, &why.to_string()),
    }
}

/// The one-node choice, with why the nodes were not weighed.
fn fallback(
    est: &GroupEstimate,
    pool: &PoolShape,
    budget: &CacheBudget,
    why: &str,
) -> AggregationPlan {
    let mut plan = choose::choose(est, pool.workers, budget);
    plan.reason = format!(
        "{}; chosen as on one node, since the simulator could not weigh Li's methods here: {why}",
        plan.reason
    );
    plan
}

/// The three methods' predicted times on the model machine.
pub fn predict(
    est: &GroupEstimate,
    pool: &PoolShape,
    pool_topology: &Topology,
    described: Option<&Topology>,
    budget: &CacheBudget,
) -> Result<ExchangePrediction, numakit_sim::SimError> {
    let machine = match described {
        Some(topology) => assume::ModelMachine {
            topology: topology.clone(),
            assumptions: Vec::new(),
        },
        None => assume::with_assumed_figures(pool_topology),
    };
    let topology = assume::on_nodes(&machine.topology, &pool.nodes)?;
    let nodes = pool.nodes.len().max(1);
    let workers_per_node = pool.workers.div_ceil(nodes).max(1);
    let keys_per_partition =
        (choose::expected_groups(est) as f64 / (workers_per_node * nodes) as f64).max(1.0);
    let cache = budget.per_worker_bytes();
    let opts = model::AggOptions {
        rows: est.rows.max(1) as f64,
        calibration: Calibration {
            latency_scaled_remote_cap: true,
            ..Calibration::for_machine(&topology)
        },
        cache_bytes_per_thread: Some(cache as f64),
        ..model::AggOptions::default()
    };
    let methods: Vec<Method> = WEIGHED.iter().map(|&(_, m)| m).collect();
    let point = model::predict_methods(
        &topology,
        Some(workers_per_node),
        keys_per_partition,
        &methods,
        &opts,
    )?;
    let methods = WEIGHED
        .iter()
        .zip(&point.methods)
        .map(|(&(method, _), p)| PredictedMethod {
            method,
            seconds: p.seconds,
        })
        .collect();
    Ok(ExchangePrediction {
        model: model_name(&topology, described.is_some()),
        assumptions: machine.assumptions,
        fit: ModelFit::of(&topology),
        nodes,
        workers_per_node,
        keys_per_partition,
        rows: est.rows,
        cache_bytes_per_worker: cache,
        methods,
    })
}

fn model_name(topology: &Topology, described: bool) -> String {
    match (&topology.origin, described) {
        (numakit_topology::Origin::Described { name, .. }, _) => name.clone(),
        (_, true) => "the given machine".to_string(),
        (_, false) => "this machine's topology".to_string(),
    }
}

/// "The simulator predicts ...: migration 0.41 s, ...; migration is
/// fastest by 1.15x", with the model's assumptions and fit.
fn explain(p: &ExchangePrediction, best: PredictedMethod) -> String {
    let times: Vec<String> = p
        .methods
        .iter()
        .map(|m| format!("{} {:.3} s", m.method.name(), m.seconds))
        .collect();
    let tied = p.tied();
    let verdict = if tied.len() > 1 {
        let names: Vec<&str> = tied.iter().map(|m| m.method.name()).collect();
        format!(
            "{} are within {:.0}% of each other, the model's resolution, and {} moves the least state",
            names.join(" and "),
            TIE_SHARE * 100.0,
            best.method.name()
        )
    } else {
        let runner_up = p
            .methods
            .iter()
            .filter(|m| m.method != best.method)
            .map(|m| m.seconds)
            .fold(f64::INFINITY, f64::min);
        format!(
            "{} is fastest by {:.2}x",
            best.method.name(),
            runner_up / best.seconds.max(f64::MIN_POSITIVE)
        )
    };
    let mut text = format!(
        "The simulator on {} ({} node(s) x {} worker(s)), with ~{:.0} keys per partition over {} rows \
         and {} of cache per worker, predicts {}; {verdict}",
        p.model,
        p.nodes,
        p.workers_per_node,
        p.keys_per_partition,
        p.rows,
        choose::size(p.cache_bytes_per_worker),
        times.join(", "),
    );
    if !p.assumptions.is_empty() {
        text.push_str(&format!(" (assumed: {})", p.assumptions.join("; ")));
    }
    if !p.fit.calibrated {
        text.push_str(&format!(" ({})", p.fit.note));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use numakit_topology::presets;

    fn budget(cache_per_worker: u64) -> CacheBudget {
        CacheBudget {
            private_bytes: 256 << 10,
            shared_reported_bytes: 24 << 20,
            shared_usable_bytes: cache_per_worker - (256 << 10),
            shared_usable_spread: (0, 0),
            sharers: 1,
        }
    }

    fn est(groups: u64, rows: u64) -> GroupEstimate {
        GroupEstimate::exact(groups, rows, (1 << 40, 1 << 62))
    }

    fn shape(nodes: u32, per_node: usize) -> PoolShape {
        PoolShape {
            workers: nodes as usize * per_node,
            nodes: (0..nodes).collect(),
        }
    }

    /// The method chosen for `groups` on `preset`, over `nodes` of its
    /// nodes with `per_node` workers each.
    fn chosen(preset: &str, nodes: u32, per_node: usize, groups: u64) -> AggregationPlan {
        let topo = presets::topology(preset).unwrap();
        choose(
            &est(groups, 1 << 30),
            &shape(nodes, per_node),
            &topo,
            None,
            &budget(3 << 20),
        )
    }

    #[test]
    fn few_groups_stay_local_and_weigh_nothing() {
        let plan = chosen("nehalem-ex-4s", 4, 8, 1_000);
        assert_eq!(plan.method, AggMethod::Local);
        assert!(plan.prediction.is_none());
        assert!(plan.reason.contains("no rows move"), "{}", plan.reason);
    }

    #[test]
    fn the_choice_follows_the_estimate_on_2_4_and_8_nodes() {
        for (preset, nodes) in [
            ("nehalem-ex-4s", 2),
            ("nehalem-ex-4s", 4),
            ("nehalem-ex-8s", 8),
        ] {
            let per_node = 8;
            let partitions = u64::from(nodes) * per_node as u64;
            // Tables of 16K groups per partition fit a worker's 3 MiB:
            // migration keeps them in cache while it reads locally.
            let small = chosen(preset, nodes, per_node, 16_384 * partitions);
            // 8M per partition: every method misses the cache, and
            // migration's misses are remote.
            let large = chosen(preset, nodes, per_node, (8 << 20) * partitions);
            for plan in [&small, &large] {
                let p = plan.prediction.as_ref().expect("weighed");
                assert_eq!(p.nodes, nodes as usize);
                let best = p.fastest().unwrap();
                let chosen = p.methods.iter().find(|m| m.method == plan.method).unwrap();
                assert!(
                    chosen.seconds <= best.seconds * (1.0 + TIE_SHARE),
                    "{}",
                    plan.reason
                );
                assert!(plan.reason.contains("predicts shuffle"), "{}", plan.reason);
            }
            assert_ne!(
                small.method,
                AggMethod::Shuffle,
                "{preset}/{nodes}: {}",
                small.reason
            );
            assert_eq!(
                large.method,
                AggMethod::Shuffle,
                "{preset}/{nodes}: {}",
                large.reason
            );
            let k = small.prediction.as_ref().unwrap().keys_per_partition;
            assert!((k - 16_384.0).abs() < 1.0, "{k}");
        }
    }

    #[test]
    fn a_bare_topology_is_modelled_with_stated_assumptions() {
        let mut topo = presets::topology("nehalem-ex-4s").unwrap();
        topo.links.clear();
        for n in &mut topo.nodes {
            n.memory_bandwidth_gbs = None;
        }
        let plan = choose(
            &est(64 << 20, 1 << 30),
            &shape(4, 2),
            &topo,
            None,
            &budget(3 << 20),
        );
        let p = plan.prediction.as_ref().expect("weighed");
        assert_eq!(p.assumptions.len(), 2);
        assert!(plan.reason.contains("assumed"), "{}", plan.reason);
    }

    #[test]
    fn an_unmodellable_machine_falls_back_and_says_why() {
        let topo = presets::topology("nehalem-ex-4s").unwrap();
        let plan = choose(
            &est(64 << 20, 1 << 30),
            &PoolShape {
                workers: 4,
                nodes: vec![0, 9],
            },
            &topo,
            None,
            &budget(3 << 20),
        );
        assert_eq!(plan.method, AggMethod::Partitioned);
        assert!(plan.reason.contains("no node 9"), "{}", plan.reason);
    }
}
