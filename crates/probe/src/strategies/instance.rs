//! One instance of partitioned work (Kiefer §4: one database instance per
//! socket): its own pool of workers on its node's CPUs and its own data,
//! placed as the strategy says.
//!
//! The pool is pinned to the instance's CPUs, except under `default`,
//! where placement is off and the kernel schedules the threads freely.
//! The data is generated on the instance's pool and then copied into
//! buffers placed by the strategy: on the instance's node (aligned), on
//! the next node (1-ahead), interleaved over all nodes, or wherever the
//! unpinned workers touch it first (default). Chunks keep the worker's
//! node as their home, so the operators run their tasks on the
//! instance's workers whatever the memory's node: that is the experiment.
//! Memory the operators allocate for themselves (hash tables, partitions)
//! they place as always, next to the worker; the strategy places the base
//! data, as Kiefer's numactl placed each instance's tables.

use std::sync::Arc;

use numakit_ops::datagen::{generate, GenSpec};
use numakit_ops::{Chunk, Relation};
use numakit_placement::{BufferOptions, NodeBuffer, Placement, PlacementMode};
use numakit_pool::{Pool, PoolBuilder};
use numakit_topology::{CpuSet, NodeId, NodeSet, Topology};
use serde::Serialize;

use super::PlacementStrategy;
use crate::error::Result;
use crate::latency::PageCheck;

/// Where an instance runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Seat {
    /// The node whose CPUs it gets (its partition's home).
    pub node: NodeId,
    /// Its share of the node's allowed CPUs, where its pool's workers run.
    pub cpus: CpuSet,
}

/// Splits the allowed CPUs among `instances` instances: instance i on the
/// i-th compute node (round-robin), sharing that node's CPUs evenly with
/// the other instances placed there.
pub fn seats(topology: &Topology, instances: usize) -> Result<Vec<Seat>> {
    let nodes = topology.compute_nodes();
    if nodes.is_empty() {
        return Err(crate::error::ProbeError::Nothing(
            "no allowed node has CPUs".into(),
        ));
    }
    let cpus = topology.allowed.cpus.len();
    if instances > cpus {
        return Err(crate::error::ProbeError::BadSize(format!(
            "{instances} instances (--instances) but this process may use only {cpus} CPUs; \
             each instance needs one"
        )));
    }
    let mut seats = Vec::with_capacity(instances);
    for i in 0..instances {
        let node = nodes[i % nodes.len()];
        let sharing = (0..instances)
            .filter(|j| j % nodes.len() == i % nodes.len())
            .count();
        let rank = i / nodes.len();
        let cpus: Vec<_> = topology.allowed_cpus_of(node)?.iter().collect();
        let mine: CpuSet = cpus
            .iter()
            .enumerate()
            .filter(|(k, _)| k % sharing == rank % sharing)
            .map(|(_, &c)| c)
            .collect();
        if mine.is_empty() {
            return Err(crate::error::ProbeError::TooManyThreads {
                node,
                threads: sharing,
                cpus: cpus.len(),
            });
        }
        seats.push(Seat { node, cpus: mine });
    }
    Ok(seats)
}

/// The memory placement a strategy gives an instance on `node`.
pub fn placement(strategy: PlacementStrategy, node: NodeId, memory_nodes: &[NodeId]) -> Placement {
    match strategy {
        PlacementStrategy::Default => Placement::Anywhere,
        PlacementStrategy::Aligned => Placement::OnNode(node),
        PlacementStrategy::OneAhead => Placement::OnNode(next_node(node, memory_nodes)),
        PlacementStrategy::Interleave => {
            Placement::Interleave(memory_nodes.iter().copied().collect::<NodeSet>())
        }
    }
}

/// The memory node after `node` in `memory_nodes`, cyclically (Kiefer:
/// the current socket id plus one, modulo the sockets).
pub fn next_node(node: NodeId, memory_nodes: &[NodeId]) -> NodeId {
    match memory_nodes.iter().position(|&n| n == node) {
        Some(i) => memory_nodes[(i + 1) % memory_nodes.len()],
        None => memory_nodes
            .iter()
            .copied()
            .find(|&n| n > node)
            .or(memory_nodes.first().copied())
            .unwrap_or(node),
    }
}

/// An instance's pool: pinned to its CPUs, or unpinned under `default`.
pub fn pool(
    topology: &Arc<Topology>,
    seat: &Seat,
    strategy: PlacementStrategy,
    mode: PlacementMode,
) -> Result<Pool> {
    let mode = if strategy == PlacementStrategy::Default {
        PlacementMode::Off
    } else {
        mode
    };
    Ok(PoolBuilder::new(topology.clone())
        .placement(mode)
        .cpus(seat.cpus.clone())
        .build()?)
}

/// `spec` generated on `pool`, then copied into chunks placed as
/// `placement` says (each chunk first touched by its own worker, which is
/// what places it under `Anywhere`).
pub fn placed_relation(pool: &Pool, spec: &GenSpec, placement: &Placement) -> Result<Relation> {
    let generated = generate(pool, spec)?;
    if let Placement::OnNode(n) = placement {
        if generated.chunks().iter().all(|c| c.node == *n)
            && pool.placer().mode() != PlacementMode::Off
        {
            return Ok(generated);
        }
    }
    let sources: Vec<&[numakit_ops::Tuple]> =
        generated.chunks().iter().map(|c| &c.tuples[..]).collect();
    let copies = pool.broadcast(|ctx| -> Result<Chunk> {
        let source = sources.get(ctx.index).copied().unwrap_or(&[]);
        let mut options = BufferOptions::new(placement.clone());
        options.prefault = false;
        let mut tuples = NodeBuffer::with_options(pool.placer(), source.len(), options)?;
        tuples.copy_from_slice(source);
        Ok(Chunk {
            node: ctx.node,
            worker: ctx.index,
            tuples,
        })
    })?;
    let chunks = copies.into_iter().collect::<Result<Vec<_>>>()?;
    Ok(Relation::from_chunks(chunks))
}

/// How many of the relation's pages lie where the placement asked:
/// on its node, or on one of its interleave nodes; `Anywhere` is not
/// checked (every page counts as placed).
pub fn page_check(relation: &Relation, placement: &Placement) -> Result<PageCheck> {
    let mut check = PageCheck::default();
    for chunk in relation.chunks() {
        let per_node = chunk.tuples.pages_per_node()?;
        let pages: usize = per_node.values().sum();
        let wanted: usize = match placement {
            Placement::Anywhere => pages,
            other => {
                let nodes = other.nodes();
                per_node
                    .iter()
                    .filter(|(n, _)| nodes.contains(**n))
                    .map(|(_, p)| p)
                    .sum()
            }
        };
        check.pages += pages;
        check.on_node += wanted;
    }
    Ok(check)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instances_share_a_node_s_cpus_evenly() {
        let topo = numakit_topology::load("opteron-istanbul-2s").unwrap();
        let two = seats(&topo, 2).unwrap();
        assert_eq!(two[0].node, 0);
        assert_eq!(two[1].node, 1);
        assert_eq!(two[0].cpus.len(), 6);
        let four = seats(&topo, 4).unwrap();
        assert_eq!(four[0].node, four[2].node);
        assert_eq!(four[0].cpus.len(), 3);
        assert!(four[0].cpus.intersection(&four[2].cpus).is_empty());
        assert!(seats(&topo, 13).is_err(), "more instances than CPUs");
    }

    #[test]
    fn one_ahead_is_the_next_memory_node() {
        assert_eq!(next_node(0, &[0, 1, 2, 3]), 1);
        assert_eq!(next_node(3, &[0, 1, 2, 3]), 0);
        assert_eq!(next_node(1, &[1, 3]), 3);
        assert_eq!(next_node(0, &[0]), 0);
        assert_eq!(next_node(2, &[1, 3]), 3, "a CPU-only node: the next one up");
    }
}
