//! The topology data model: nodes, CPUs, caches, distances, links, and what
//! this process is allowed to use.
//!
//! A [`Topology`] is a plain value: it is built by discovery
//! ([`crate::sysfs`]) or from a description ([`crate::describe`]) and then
//! only queried. It does not pin threads or place memory; the placement
//! layer does that with the ids found here.

use serde::{Deserialize, Serialize};

use crate::error::{Result, TopologyError};
use crate::idset::{CpuSet, NodeSet};

/// A NUMA node id as the kernel numbers it (ids may be sparse).
pub type NodeId = u32;
/// A logical CPU id as the kernel numbers it.
pub type CpuId = u32;

/// Where a topology came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Origin {
    /// Read from this machine's sysfs and procfs.
    Discovered {
        /// The root the tree was read under (`/` on a real machine).
        root: String,
    },
    /// Built from a machine description (a preset or a JSON file).
    Described {
        /// Short name of the machine (the preset name, e.g. `nehalem-ex-4s`).
        name: String,
        /// One line saying what the machine is (processors, sockets, links).
        description: String,
        /// Where the figures come from (a paper, a data sheet, the probe).
        source: String,
    },
}

/// How the sockets keep their caches coherent: what decides the snoop
/// traffic a remote read puts on the links (the simulator's coherence
/// model is fitted on source snooping only).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Coherence {
    /// Every read broadcasts snoops to the other sockets (Nehalem-EX and
    /// Westmere-EX with QPI source snooping, Li et al. §2).
    SourceSnoop,
    /// A directory or probe filter (or a central coherence hub) sends
    /// snoops only where a line may be cached.
    Directory,
}

/// One NUMA node.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Node {
    /// NUMA node id, as the kernel numbers it (0-based, possibly sparse).
    pub id: NodeId,
    /// Online CPUs of the node (empty for a memory-only node).
    pub cpus: CpuSet,
    /// Memory of the node in bytes, when known (zero for a CPU-only node).
    pub memory_bytes: Option<u64>,
    /// Free memory in bytes at discovery time, when known.
    pub memory_free_bytes: Option<u64>,
    /// Socket (package) of the node's CPUs, when they share one.
    pub socket: Option<u32>,
    /// Local sequential read bandwidth in GB/s (described machines, probe).
    pub memory_bandwidth_gbs: Option<f64>,
    /// Local dependent-load latency in ns (described machines, probe).
    pub memory_latency_ns: Option<f64>,
    /// What one thread reads of local memory, sequentially, in GB/s
    /// (machines the probe measured).
    #[serde(default)]
    pub thread_bandwidth_gbs: Option<f64>,
}

/// One logical CPU (a hardware thread).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cpu {
    /// Logical CPU id, as the kernel numbers it (the `N` of `cpuN`).
    pub id: CpuId,
    /// The node whose cpulist holds this CPU; `None` when no node lists it.
    pub node: Option<NodeId>,
    /// Core id within the socket (`topology/core_id`; the CPU id when
    /// sysfs does not say).
    pub core: u32,
    /// Socket (`topology/physical_package_id`; 0 when sysfs does not say).
    pub socket: u32,
    /// SMT siblings sharing the core, this CPU included.
    pub siblings: CpuSet,
}

/// What a cache holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheKind {
    /// Holds data only (an L1d).
    Data,
    /// Holds instructions only (an L1i); never used for capacity budgets.
    Instruction,
    /// Holds both (L2 and L3 on most machines; also any type sysfs names otherwise).
    Unified,
}

/// One cache instance and the CPUs that share it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cache {
    /// Cache level, 1 for the cache nearest the core.
    pub level: u8,
    /// Whether it holds data, instructions or both.
    pub kind: CacheKind,
    /// Capacity of this one instance, in bytes.
    pub size_bytes: u64,
    /// Coherency line size in bytes; `None` when sysfs does not report it
    /// (described machines assume 64).
    pub line_bytes: Option<u32>,
    /// The online CPUs that share this instance.
    pub cpus: CpuSet,
}

/// An interconnect link between two nodes (described machines).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Link {
    /// One end of the link (links are undirected: `a` and `b` may be swapped).
    pub a: NodeId,
    /// The other end of the link.
    pub b: NodeId,
    /// Bandwidth per direction in GB/s.
    pub bandwidth_gbs: f64,
    /// Latency added by one hop over this link, in ns; `None` when not given.
    pub latency_ns: Option<f64>,
}

/// What this process may use: the affinity mask and the cpuset's
/// `Mems_allowed`, already intersected with what is online.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Allowed {
    /// Online CPUs this process may run on (affinity mask and cgroup cpuset).
    pub cpus: CpuSet,
    /// Nodes this process may allocate memory on (`Mems_allowed` and cgroup cpuset).
    pub nodes: NodeSet,
}

/// The whole machine as numakit sees it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Topology {
    /// Whether the topology was discovered (and under which root) or described.
    pub origin: Origin,
    /// Nodes in ascending id order.
    pub nodes: Vec<Node>,
    /// Online CPUs in ascending id order.
    pub cpus: Vec<Cpu>,
    /// Distinct cache instances, by level then first CPU.
    pub caches: Vec<Cache>,
    /// SLIT distances, row and column in the order of `nodes`.
    pub distances: Vec<Vec<u32>>,
    /// False when the machine gave no distance table and 10/20 was assumed
    /// (or, for described machines, derived from link hops).
    pub distances_reported: bool,
    /// Interconnect links (empty for discovered machines).
    pub links: Vec<Link>,
    /// How coherence is kept between sockets, where the description says
    /// (`None` for discovered machines).
    pub coherence: Option<Coherence>,
    /// The CPUs and nodes this process may use (everything, for described machines).
    pub allowed: Allowed,
    /// `MemTotal` of the machine in bytes; `None` when `/proc/meminfo` is
    /// unreadable or, for described machines, a node gives no memory size.
    pub mem_total_bytes: Option<u64>,
    /// Things discovery noticed that a user may want to know.
    pub notes: Vec<String>,
}

impl Topology {
    /// The node with this id.
    pub fn node(&self, id: NodeId) -> Result<&Node> {
        self.nodes
            .iter()
            .find(|n| n.id == id)
            .ok_or_else(|| TopologyError::UnknownNode {
                node: id,
                known: self.node_ids().to_list_string(),
            })
    }

    /// All node ids.
    pub fn node_ids(&self) -> NodeSet {
        self.nodes.iter().map(|n| n.id).collect()
    }

    /// Position of a node in `nodes` (and in the distance matrix).
    pub fn node_index(&self, id: NodeId) -> Option<usize> {
        self.nodes.iter().position(|n| n.id == id)
    }

    /// SLIT distance from node `a` to node `b`.
    pub fn distance(&self, a: NodeId, b: NodeId) -> Result<u32> {
        let (ia, ib) = (self.index_or_err(a)?, self.index_or_err(b)?);
        Ok(self.distances[ia][ib])
    }

    fn index_or_err(&self, id: NodeId) -> Result<usize> {
        self.node_index(id)
            .ok_or_else(|| TopologyError::UnknownNode {
                node: id,
                known: self.node_ids().to_list_string(),
            })
    }

    /// The other nodes, nearest first (ties broken by id): the order in which
    /// a worker of `from` should steal.
    pub fn nodes_by_distance(&self, from: NodeId) -> Result<Vec<NodeId>> {
        let row = &self.distances[self.index_or_err(from)?];
        let mut others: Vec<(u32, NodeId)> = self
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.id != from)
            .map(|(i, n)| (row[i], n.id))
            .collect();
        others.sort_unstable();
        Ok(others.into_iter().map(|(_, id)| id).collect())
    }

    /// The node a CPU belongs to.
    pub fn node_of_cpu(&self, cpu: CpuId) -> Option<NodeId> {
        self.cpus.iter().find(|c| c.id == cpu).and_then(|c| c.node)
    }

    /// CPUs of `node` that this process may run on.
    pub fn allowed_cpus_of(&self, node: NodeId) -> Result<CpuSet> {
        Ok(self.node(node)?.cpus.intersection(&self.allowed.cpus))
    }

    /// Allowed nodes that have at least one allowed CPU, ascending: the nodes
    /// a worker pool puts workers on.
    pub fn compute_nodes(&self) -> Vec<NodeId> {
        self.nodes
            .iter()
            .filter(|n| self.allowed.nodes.contains(n.id))
            .filter(|n| !n.cpus.intersection(&self.allowed.cpus).is_empty())
            .map(|n| n.id)
            .collect()
    }

    /// Allowed nodes that have memory: where buffers may be placed.
    pub fn memory_nodes(&self) -> Vec<NodeId> {
        self.nodes
            .iter()
            .filter(|n| self.allowed.nodes.contains(n.id))
            .filter(|n| n.memory_bytes != Some(0))
            .map(|n| n.id)
            .collect()
    }

    /// Distinct socket ids, ascending.
    pub fn sockets(&self) -> Vec<u32> {
        let mut s: Vec<u32> = self.cpus.iter().map(|c| c.socket).collect();
        s.sort_unstable();
        s.dedup();
        s
    }

    /// Number of physical cores (distinct socket/core pairs).
    pub fn core_count(&self) -> usize {
        let mut cores: Vec<(u32, u32)> = self.cpus.iter().map(|c| (c.socket, c.core)).collect();
        cores.sort_unstable();
        cores.dedup();
        cores.len()
    }

    /// The largest cache of `level` that `cpu` uses, if the topology knows it.
    pub fn cache_of(&self, cpu: CpuId, level: u8) -> Option<&Cache> {
        self.caches
            .iter()
            .filter(|c| c.level == level && c.kind != CacheKind::Instruction)
            .find(|c| c.cpus.contains(cpu))
    }

    /// Whether per-node memory sizes can be trusted for capacity checks:
    /// every node reports one and they add up to `MemTotal` within 2%.
    /// Some virtual machines and sandboxes report node sizes that do not.
    pub fn node_memory_is_reliable(&self) -> bool {
        let sizes: Option<Vec<u64>> = self.nodes.iter().map(|n| n.memory_bytes).collect();
        match (sizes, self.mem_total_bytes) {
            (Some(sizes), Some(total)) => sizes.iter().sum::<u64>().abs_diff(total) <= total / 50,
            (Some(_), None) => true,
            (None, _) => false,
        }
    }

    /// Number of link hops from `a` to `b` (breadth-first over `links`);
    /// `None` when unreachable or when the topology has no links.
    pub fn hops(&self, a: NodeId, b: NodeId) -> Option<u32> {
        hop_count(&self.links, a, b)
    }
}

/// Breadth-first hop count over undirected links.
pub(crate) fn hop_count(links: &[Link], a: NodeId, b: NodeId) -> Option<u32> {
    if a == b {
        return Some(0);
    }
    let mut frontier = vec![a];
    let mut seen = vec![a];
    let mut depth = 0;
    while !frontier.is_empty() {
        depth += 1;
        let mut next = Vec::new();
        for &n in &frontier {
            for l in links {
                let other = match (l.a == n, l.b == n) {
                    (true, _) => l.b,
                    (_, true) => l.a,
                    _ => continue,
                };
                if other == b {
                    return Some(depth);
                }
                if !seen.contains(&other) {
                    seen.push(other);
                    next.push(other);
                }
            }
        }
        frontier = next;
    }
    None
}
