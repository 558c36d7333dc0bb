//! The model of a machine that lacks figures: a discovered topology knows
//! its nodes, CPUs, caches and SLIT distances, but not how fast its memory
//! and interconnect are, and the simulator needs both. This module fills
//! the gaps with stated assumptions so that a relative judgement (which
//! schedule moves less, where a table outgrows the cache) can still be
//! made, and lists every assumption so that reports can print them.
//!
//! The assumptions come from the one machine the model is calibrated on,
//! Li et al.'s Nehalem-EX (Table 1): 24.7 GB/s of local memory per node,
//! and a one-hop link carrying 10.9 GB/s, 0.44 of it, at SLIT distance
//! 21; links at other distances are scaled by 21 / distance (a farther
//! node is slower in proportion), and every pair of nodes is joined
//! directly (the wiring is unknown, so no flows share a link). Figures a
//! topology does describe (a preset, or a machine `numakit probe --save`
//! measured) are kept as they are.
//!
//! It also narrows a machine to the nodes a pool runs on
//! ([`on_nodes`]), since a schedule spans only those.
//!
//! It does not measure anything and claims no accuracy: predictions made
//! on assumed figures are marked as such by the callers.

use numakit_topology::{Link, NodeId, NodeSet, Topology};

use crate::error::SimError;

/// Local memory bandwidth assumed per node, GB/s (Li Table 1, one socket).
pub const ASSUMED_MEMORY_GBS: f64 = 24.7;
/// A one-hop link's bandwidth as a share of local memory bandwidth (Li
/// Table 1: 10.9 of 24.7 GB/s).
pub const ASSUMED_LINK_SHARE: f64 = 10.9 / 24.7;
/// The SLIT distance of Li's one-hop links, which [`ASSUMED_LINK_SHARE`]
/// was measured at.
pub const ONE_HOP_DISTANCE: f64 = 21.0;

/// A topology the simulator can run, and what was assumed to make it so.
#[derive(Clone, Debug)]
pub struct ModelMachine {
    /// The topology with every figure the simulator needs.
    pub topology: Topology,
    /// One line per assumption made (empty when the topology described
    /// everything).
    pub assumptions: Vec<String>,
}

impl ModelMachine {
    /// Whether any figure was assumed rather than described or measured.
    pub fn is_assumed(&self) -> bool {
        !self.assumptions.is_empty()
    }
}

/// `topo` with missing memory bandwidths and links assumed (see the
/// module docs); figures it has are kept.
pub fn with_assumed_figures(topo: &Topology) -> ModelMachine {
    let mut topology = topo.clone();
    let mut assumptions = Vec::new();
    let compute = topology.compute_nodes();
    let mut filled = 0;
    for node in topology
        .nodes
        .iter_mut()
        .filter(|n| compute.contains(&n.id))
    {
        if node.memory_bandwidth_gbs.is_none() {
            node.memory_bandwidth_gbs = Some(ASSUMED_MEMORY_GBS);
            filled += 1;
        }
    }
    if filled > 0 {
        assumptions.push(format!(
            "memory bandwidth of {filled} node(s) assumed {ASSUMED_MEMORY_GBS} GB/s (Li's Nehalem-EX socket)"
        ));
    }
    if topology.nodes.len() > 1 && topology.links.is_empty() {
        topology.links = assumed_links(&topology);
        assumptions.push(format!(
            "links assumed between every pair of nodes, each carrying {ASSUMED_LINK_SHARE:.2} of local \
             memory bandwidth at SLIT distance {ONE_HOP_DISTANCE} and less in proportion farther away \
             (Li's Nehalem-EX one-hop ratio)"
        ));
    }
    ModelMachine {
        topology,
        assumptions,
    }
}

/// One link per pair of nodes, from the SLIT distances.
fn assumed_links(topo: &Topology) -> Vec<Link> {
    let memory = |i: usize| {
        topo.nodes[i]
            .memory_bandwidth_gbs
            .unwrap_or(ASSUMED_MEMORY_GBS)
    };
    let mut links = Vec::new();
    for i in 0..topo.nodes.len() {
        for j in i + 1..topo.nodes.len() {
            let distance = topo
                .distances
                .get(i)
                .and_then(|row| row.get(j))
                .map_or(2.0 * ONE_HOP_DISTANCE, |&d| f64::from(d.max(11)));
            let local = memory(i).min(memory(j));
            links.push(Link {
                a: topo.nodes[i].id,
                b: topo.nodes[j].id,
                bandwidth_gbs: local * ASSUMED_LINK_SHARE * ONE_HOP_DISTANCE / distance,
                latency_ns: None,
            });
        }
    }
    links
}

/// `topo` narrowed to `nodes` (the nodes a pool runs on): only they have
/// workers in the model. Fails when one of them is not in the topology.
pub fn on_nodes(topo: &Topology, nodes: &[NodeId]) -> Result<Topology, SimError> {
    if let Some(&missing) = nodes.iter().find(|&&n| topo.node_index(n).is_none()) {
        let known: Vec<String> = topo.nodes.iter().map(|n| n.id.to_string()).collect();
        return Err(SimError::BadOption(format!(
            "the model machine has no node {missing} (it has {})",
            known.join(", ")
        )));
    }
    let mut narrowed = topo.clone();
    narrowed.allowed.nodes = nodes.iter().copied().collect::<NodeSet>();
    if narrowed.compute_nodes().len() != nodes.len() {
        return Err(SimError::BadOption(format!(
            "the model machine has no allowed CPUs on some of nodes {nodes:?}"
        )));
    }
    Ok(narrowed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::Machine;
    use numakit_topology::presets;

    /// A preset stripped of what discovery cannot know.
    fn discovered_like(name: &str) -> Topology {
        let mut t = presets::topology(name).unwrap();
        t.links.clear();
        for n in &mut t.nodes {
            n.memory_bandwidth_gbs = None;
            n.memory_latency_ns = None;
            n.thread_bandwidth_gbs = None;
        }
        t
    }

    #[test]
    fn a_bare_topology_becomes_simulable_and_says_why() {
        let bare = discovered_like("nehalem-ex-4s");
        assert!(Machine::new(&bare).is_err());
        let model = with_assumed_figures(&bare);
        assert_eq!(model.assumptions.len(), 2, "{:?}", model.assumptions);
        assert!(Machine::new(&model.topology).is_ok());
        // Farther nodes get slower links.
        let far = model
            .topology
            .links
            .iter()
            .map(|l| l.bandwidth_gbs)
            .fold(f64::INFINITY, f64::min);
        let near = model
            .topology
            .links
            .iter()
            .map(|l| l.bandwidth_gbs)
            .fold(0.0, f64::max);
        assert!(near <= ASSUMED_MEMORY_GBS * ASSUMED_LINK_SHARE * 21.0 / 11.0);
        assert!(far <= near, "{far} {near}");
    }

    #[test]
    fn described_figures_are_kept() {
        let preset = presets::topology("nehalem-ex-4s").unwrap();
        let model = with_assumed_figures(&preset);
        assert!(!model.is_assumed(), "{:?}", model.assumptions);
        assert_eq!(model.topology, preset);
    }

    #[test]
    fn narrowing_keeps_only_the_pool_nodes() {
        let preset = presets::topology("nehalem-ex-8s").unwrap();
        let two = on_nodes(&preset, &[0, 1]).unwrap();
        assert_eq!(two.compute_nodes(), vec![0, 1]);
        assert_eq!(Machine::new(&two).unwrap().socket_count(), 2);
        let err = on_nodes(&preset, &[0, 42]).unwrap_err().to_string();
        assert!(err.contains("no node 42"), "{err}");
    }
}
