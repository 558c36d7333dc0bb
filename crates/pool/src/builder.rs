//! Building a pool: which workers, on which CPUs, grouped by which node.
//!
//! By default there is one worker per allowed CPU, pinned to it, and the
//! workers of a node are numbered together. Asking for fewer threads takes
//! CPUs round-robin across nodes so every node gets its share. Each worker
//! pins itself as it starts and reports back; in strict mode a refused pin
//! fails the build, in best-effort mode it runs unpinned after one warning.

use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::mpsc;
use std::sync::Arc;

use crossbeam_deque::Injector;
use crossbeam_utils::CachePadded;

use numakit_placement::{Outcome, PlacementError, PlacementMode, Placer};
use numakit_topology::{CpuId, CpuSet, NodeId, NodeSet, Topology};

use crate::context::WorkerContext;
use crate::error::{PoolError, Result};
use crate::pool::{worker_main, NodeQueue, Pool, Shared, WorkerSlot};
use crate::sleep::Sleep;
use crate::stats::Counters;

/// Oversubscription stops here: more workers than this many per allowed
/// CPU would only add switching (and each costs a thread and its stack),
/// so a larger request is an error, not an attempt to start millions of
/// threads.
pub const MAX_THREADS_PER_CPU: usize = 64;

/// Configures and builds a [`Pool`].
#[derive(Clone, Debug)]
pub struct PoolBuilder {
    topology: Arc<Topology>,
    mode: PlacementMode,
    threads: Option<usize>,
    nodes: Option<NodeSet>,
    cpus: Option<CpuSet>,
}

impl PoolBuilder {
    /// A builder for `topology` with strict placement and one worker per
    /// allowed CPU.
    pub fn new(topology: Arc<Topology>) -> Self {
        Self {
            topology,
            mode: PlacementMode::Strict,
            threads: None,
            nodes: None,
            cpus: None,
        }
    }

    /// Strict, best-effort or no pinning.
    pub fn placement(mut self, mode: PlacementMode) -> Self {
        self.mode = mode;
        self
    }

    /// Total worker count (default: one per allowed CPU). More threads than
    /// CPUs oversubscribe them, pinned round-robin.
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = Some(threads);
        self
    }

    /// Restricts the pool to these nodes.
    pub fn nodes(mut self, nodes: NodeSet) -> Self {
        self.nodes = Some(nodes);
        self
    }

    /// Restricts the pool to these CPUs (which must be allowed).
    pub fn cpus(mut self, cpus: CpuSet) -> Self {
        self.cpus = Some(cpus);
        self
    }

    /// The allowed CPUs of `node`, narrowed by [`PoolBuilder::cpus`].
    fn node_cpus(&self, node: NodeId) -> Result<Vec<CpuId>> {
        let cpus = self
            .topology
            .allowed_cpus_of(node)
            .map_err(|e| PoolError::Placement(e.into()))?;
        Ok(match &self.cpus {
            Some(wanted) => cpus.intersection(wanted).iter().collect(),
            None => cpus.iter().collect(),
        })
    }

    fn check_cpus(&self) -> Result<()> {
        let Some(wanted) = &self.cpus else {
            return Ok(());
        };
        if wanted.is_empty() {
            return Err(PlacementError::EmptyCpuSet.into());
        }
        let allowed = &self.topology.allowed.cpus;
        if !wanted.is_subset(allowed) {
            return Err(PlacementError::DisallowedCpus {
                cpus: wanted.difference(allowed).to_list_string(),
                allowed: allowed.to_list_string(),
            }
            .into());
        }
        Ok(())
    }

    /// The (node, CPU) of every worker, node-major.
    pub fn plan(&self) -> Result<Vec<(NodeId, CpuId)>> {
        let topo = &self.topology;
        let mut node_ids = topo.compute_nodes();
        if let Some(wanted) = &self.nodes {
            if let Some(bad) = wanted.iter().find(|n| topo.node_index(*n).is_none()) {
                return Err(PoolError::UnknownNode {
                    node: bad,
                    known: topo.node_ids().to_list_string(),
                });
            }
            if let Some(idle) = wanted.iter().find(|n| !node_ids.contains(n)) {
                return Err(if topo.allowed.nodes.contains(idle) {
                    PlacementError::NoCpusOnNode { node: idle }
                } else {
                    PlacementError::DisallowedNode {
                        node: idle,
                        allowed: topo.allowed.nodes.to_list_string(),
                    }
                }
                .into());
            }
            node_ids.retain(|n| wanted.contains(*n));
        }
        self.check_cpus()?;
        let per_node: Vec<Vec<CpuId>> = node_ids
            .iter()
            .map(|&n| self.node_cpus(n))
            .collect::<Result<_>>()?;
        let total: usize = per_node.iter().map(Vec::len).sum();
        if total == 0 {
            return Err(PoolError::NoWorkers);
        }
        let threads = self.threads.unwrap_or(total);
        if threads == 0 {
            return Err(PoolError::BadThreadCount(0));
        }
        let max = total.saturating_mul(MAX_THREADS_PER_CPU);
        if threads > max {
            return Err(PoolError::TooManyThreads {
                asked: threads,
                cpus: total,
                per_cpu: MAX_THREADS_PER_CPU,
                max,
            });
        }
        let mut plan = Vec::with_capacity(threads);
        let mut round = 0;
        while plan.len() < threads {
            for (node, cpus) in node_ids.iter().zip(&per_node) {
                if plan.len() < threads && !cpus.is_empty() {
                    plan.push((*node, cpus[round % cpus.len()]));
                }
            }
            round += 1;
        }
        plan.sort_by_key(|&(node, _)| node_ids.iter().position(|&n| n == node));
        Ok(plan)
    }

    /// Starts the workers.
    pub fn build(self) -> Result<Pool> {
        let plan = self.plan()?;
        let placer = Placer::new(self.topology.clone(), self.mode);
        let shared = Arc::new(self.shared(&plan, placer)?);
        let (ready_tx, ready_rx) = mpsc::channel();
        let mut handles = Vec::with_capacity(plan.len());
        for (index, &(_, cpu)) in plan.iter().enumerate() {
            let shared = shared.clone();
            let ready = ready_tx.clone();
            let handle = std::thread::Builder::new()
                .name(format!("numakit-w{index}"))
                .spawn(move || {
                    let pinned = shared.placer.pin_to_cpu(cpu);
                    let ok = pinned.is_ok();
                    let _ = ready.send(pinned);
                    if ok {
                        worker_main(shared, index);
                    }
                })
                .map_err(PoolError::Spawn)?;
            handles.push(handle);
        }
        drop(ready_tx);
        let mut first_error = None;
        let mut pinned = 0;
        for _ in 0..plan.len() {
            match ready_rx.recv() {
                Ok(Ok(Outcome::Applied)) => pinned += 1,
                Ok(Ok(Outcome::Skipped)) => {}
                Ok(Err(e)) => first_error = first_error.or(Some(PoolError::Placement(e))),
                Err(_) => first_error = first_error.or(Some(PoolError::NoWorkers)),
            }
        }
        let pool = Pool::from_parts(shared, handles);
        match first_error {
            Some(e) => Err(e), // dropping `pool` stops the workers that started
            None => {
                log::debug!("pool of {} workers, {pinned} pinned", plan.len());
                Ok(pool)
            }
        }
    }

    fn shared(&self, plan: &[(NodeId, CpuId)], placer: Placer) -> Result<Shared> {
        let mut node_ids: Vec<NodeId> = plan.iter().map(|&(n, _)| n).collect();
        node_ids.dedup();
        let topo = &self.topology;
        let nodes = node_ids
            .iter()
            .map(|&id| {
                let order = topo
                    .nodes_by_distance(id)
                    .map_err(|e| PoolError::Placement(e.into()))?;
                let steal_order = order
                    .iter()
                    .filter_map(|n| node_ids.iter().position(|m| m == n))
                    .collect();
                Ok(NodeQueue {
                    id,
                    queue: Injector::new(),
                    steal_order,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let pinned = self.mode != PlacementMode::Off;
        let workers = plan
            .iter()
            .enumerate()
            .map(|(index, &(node, cpu))| {
                let node_index = node_ids.iter().position(|&n| n == node).unwrap_or(0);
                let index_in_node = plan[..index].iter().filter(|&&(n, _)| n == node).count();
                WorkerSlot {
                    ctx: WorkerContext {
                        index,
                        node,
                        node_index,
                        index_in_node,
                        cpu: pinned.then_some(cpu),
                        workers: plan.len(),
                    },
                    private: Injector::new(),
                    counters: CachePadded::new(Counters::default()),
                }
            })
            .collect();
        Ok(Shared {
            placer,
            nodes,
            workers,
            sleep: Sleep::default(),
            shutdown: AtomicBool::new(false),
            next_node: AtomicUsize::new(0),
            broadcast_turn: std::sync::Mutex::new(()),
        })
    }
}
