//! Described machines: a topology written down instead of discovered.
//!
//! A description (JSON, see [`MachineDescription`]) names nodes, their cores,
//! memory and bandwidth, the cache hierarchy and the interconnect links. It
//! is how numakit reasons about machines it does not run on: the papers'
//! servers (see [`crate::presets`]) or a user's cluster node measured by the
//! probe. CPU ids of a described machine are synthetic: node-major, then
//! core, then hardware thread. This module only converts; it never touches
//! the running system.

use serde::{Deserialize, Serialize};

use crate::error::{Result, TopologyError};
use crate::idset::{CpuSet, IdSet};
use crate::model::{
    hop_count, Allowed, Cache, CacheKind, Coherence, Cpu, Link, Node, NodeId, Origin, Topology,
};
use crate::sysfs::{DEFAULT_LOCAL_DISTANCE, DEFAULT_REMOTE_DISTANCE};

/// The JSON form of a described machine (version 1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineDescription {
    /// Short name of the machine (a preset's name, e.g. `nehalem-ex-4s`).
    pub name: String,
    /// One line saying what the machine is (processors, sockets, links).
    pub description: String,
    /// Where the figures come from (a paper, a data sheet, the probe).
    pub source: String,
    /// Core clock in GHz, when known (above 0, at most 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_ghz: Option<f64>,
    /// The nodes, in any order; ids must be unique and below 1024.
    pub nodes: Vec<NodeDescription>,
    /// The cache hierarchy, one entry per level and kind (same on every node).
    #[serde(default)]
    pub caches: Vec<CacheDescription>,
    /// SLIT distances (10 is local), rows and columns in the order of
    /// `nodes` as written; `None` derives them (10 + 10 per link hop, 20
    /// everywhere when there are no links).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distances: Option<Vec<Vec<u32>>>,
    /// Interconnect links between nodes (may be empty).
    #[serde(default)]
    pub links: Vec<LinkDescription>,
    /// How the sockets keep coherence: `source-snoop` or `directory`
    /// (optional; the simulator marks its predictions uncalibrated unless
    /// it is `source-snoop`, the protocol its model was fitted on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coherence: Option<Coherence>,
    /// Remarks carried into [`Topology::notes`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// One node of a described machine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeDescription {
    /// NUMA node id (0 to 1023; ids may be sparse).
    pub id: NodeId,
    /// Socket (package) the node's cores sit on; several nodes may share one.
    pub socket: u32,
    /// Physical cores (0 for a memory-only node).
    pub cores: u32,
    /// Hardware threads per core (1 without SMT, at most 16; ignored when `cores` is 0).
    pub threads_per_core: u32,
    /// Memory of the node in GiB (0 for a CPU-only node); `None` when unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_gib: Option<f64>,
    /// Local sequential read bandwidth of the whole node in GB/s, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_bandwidth_gbs: Option<f64>,
    /// Local dependent-load latency in ns, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_latency_ns: Option<f64>,
    /// What one thread reads of local memory, sequentially (the probe
    /// measures it; the simulator caps each thread at it), in GB/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_bandwidth_gbs: Option<f64>,
}

/// Which CPUs share one instance of a described cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SharedBy {
    /// One instance per hardware thread.
    Thread,
    /// One instance per physical core, shared by its SMT siblings.
    Core,
    /// One instance per NUMA node.
    Node,
    /// One instance per socket, shared by all nodes on it.
    Socket,
}

/// One level of the cache hierarchy (the same on every node).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheDescription {
    /// Cache level, 1 for the cache nearest the core (0 is refused).
    pub level: u8,
    /// Whether it holds data, instructions or both.
    pub kind: CacheKind,
    /// Capacity of one instance in KiB (above 0, at most 2^30).
    pub size_kib: u64,
    /// Which CPUs share one instance.
    pub shared_by: SharedBy,
}

/// An undirected interconnect link.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkDescription {
    /// Id of one end (a node of the description).
    pub a: NodeId,
    /// Id of the other end (a different node of the description).
    pub b: NodeId,
    /// Bandwidth per direction in GB/s (above 0).
    pub bandwidth_gbs: f64,
    /// Latency added by one hop over the link in ns, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ns: Option<f64>,
}

/// The bounds of a described machine: Linux's own limits where it has
/// them (node ids, distances), generous ones elsewhere.
const MAX_NODES: usize = 1024;
const MAX_HARDWARE_THREADS: u64 = 65_536;
const MAX_THREADS_PER_CORE: u32 = 16;
const MAX_MEMORY_GIB: f64 = (1u64 << 20) as f64;
const MAX_GBS: f64 = 1e5;
const MAX_LATENCY_NS: f64 = 1e6;
const MAX_CLOCK_GHZ: f64 = 100.0;
const MAX_CACHE_KIB: u64 = 1 << 30;
const MAX_DISTANCE: u32 = 255;

/// One node's counts and sizes against the bounds.
fn check_node(n: &NodeDescription) -> std::result::Result<(), String> {
    if n.id as usize >= MAX_NODES {
        return Err(format!(
            "node id {}; ids go from 0 to {}",
            n.id,
            MAX_NODES - 1
        ));
    }
    if n.threads_per_core > MAX_THREADS_PER_CORE {
        return Err(format!(
            "node {} has {} threads_per_core; at most {MAX_THREADS_PER_CORE}",
            n.id, n.threads_per_core
        ));
    }
    if u64::from(n.cores) > MAX_HARDWARE_THREADS {
        return Err(format!(
            "node {} has {} cores; at most {MAX_HARDWARE_THREADS}",
            n.id, n.cores
        ));
    }
    let node = |field: &str| format!("node {} {field}", n.id);
    if n.memory_gib != Some(0.0) {
        // 0 GiB is a memoryless node, a real thing.
        in_range(&node("memory_gib"), n.memory_gib, MAX_MEMORY_GIB)?;
    }
    in_range(
        &node("memory_bandwidth_gbs"),
        n.memory_bandwidth_gbs,
        MAX_GBS,
    )?;
    in_range(
        &node("thread_bandwidth_gbs"),
        n.thread_bandwidth_gbs,
        MAX_GBS,
    )?;
    in_range(
        &node("memory_latency_ns"),
        n.memory_latency_ns,
        MAX_LATENCY_NS,
    )
}

/// A finite positive `value` of at most `max`, when given.
fn in_range(field: &str, value: Option<f64>, max: f64) -> std::result::Result<(), String> {
    match value {
        Some(v) if !(v > 0.0 && v <= max) => Err(format!(
            "{field} is {v:?}; it must be above 0 and at most {max}"
        )),
        _ => Ok(()),
    }
}

impl MachineDescription {
    /// Parses a description; `origin` names it in errors (a path or preset).
    pub fn from_json(text: &str, origin: &str) -> Result<Self> {
        let desc: Self = serde_json::from_str(text).map_err(|e| TopologyError::BadDescription {
            origin: origin.to_string(),
            why: e.to_string(),
        })?;
        desc.validate(origin)?;
        Ok(desc)
    }

    /// Checks what JSON types alone cannot: unique ids, links between known
    /// nodes, a square distance matrix, positive sizes.
    pub fn validate(&self, origin: &str) -> Result<()> {
        let bad = |why: String| TopologyError::BadDescription {
            origin: origin.to_string(),
            why,
        };
        if self.nodes.is_empty() {
            return Err(bad("it has no nodes".into()));
        }
        self.check_bounds().map_err(bad)?;
        let ids: IdSet = self.nodes.iter().map(|n| n.id).collect();
        if ids.len() != self.nodes.len() {
            return Err(bad("two nodes share an id".into()));
        }
        if self.nodes.iter().all(|n| n.cores == 0) {
            return Err(bad("no node has cores".into()));
        }
        if let Some(n) = self
            .nodes
            .iter()
            .find(|n| n.cores > 0 && n.threads_per_core == 0)
        {
            return Err(bad(format!(
                "node {} has cores but 0 threads_per_core",
                n.id
            )));
        }
        for l in &self.links {
            if !ids.contains(l.a) || !ids.contains(l.b) || l.a == l.b {
                return Err(bad(format!(
                    "link {}-{} does not join two known nodes",
                    l.a, l.b
                )));
            }
            if l.bandwidth_gbs.is_nan() || l.bandwidth_gbs <= 0.0 {
                return Err(bad(format!(
                    "link {}-{} has no positive bandwidth",
                    l.a, l.b
                )));
            }
        }
        if let Some(d) = &self.distances {
            if d.len() != self.nodes.len() || d.iter().any(|row| row.len() != self.nodes.len()) {
                return Err(bad(format!(
                    "distances must be a {0}x{0} matrix",
                    self.nodes.len()
                )));
            }
        }
        if let Some(c) = self.caches.iter().find(|c| c.size_kib == 0 || c.level == 0) {
            return Err(bad(format!("cache L{} has size 0 or level 0", c.level)));
        }
        Ok(())
    }

    /// Checks that every count and size is one a real machine could have,
    /// before anything is built from them (a node id or a core count in
    /// the billions would otherwise be allocated, and `1e300` GiB would
    /// turn into nonsense).
    fn check_bounds(&self) -> std::result::Result<(), String> {
        if self.nodes.len() > MAX_NODES {
            return Err(format!("{} nodes; at most {MAX_NODES}", self.nodes.len()));
        }
        let mut hardware_threads: u64 = 0;
        for n in &self.nodes {
            check_node(n)?;
            hardware_threads += u64::from(n.cores) * u64::from(n.threads_per_core);
        }
        if hardware_threads > MAX_HARDWARE_THREADS {
            return Err(format!(
                "{hardware_threads} hardware threads in all; at most {MAX_HARDWARE_THREADS}"
            ));
        }
        if self.links.len() > MAX_NODES * MAX_NODES {
            return Err(format!(
                "{} links; at most one per pair of nodes",
                self.links.len()
            ));
        }
        for l in &self.links {
            in_range(
                &format!("link {}-{} bandwidth_gbs", l.a, l.b),
                Some(l.bandwidth_gbs),
                MAX_GBS,
            )?;
            in_range(
                &format!("link {}-{} latency_ns", l.a, l.b),
                l.latency_ns,
                MAX_LATENCY_NS,
            )?;
        }
        in_range("clock_ghz", self.clock_ghz, MAX_CLOCK_GHZ)?;
        if let Some(c) = self.caches.iter().find(|c| c.size_kib > MAX_CACHE_KIB) {
            return Err(format!(
                "cache L{} of {} KiB; at most {MAX_CACHE_KIB}",
                c.level, c.size_kib
            ));
        }
        let distances = self.distances.iter().flatten().flatten();
        if let Some(d) = distances.copied().find(|&d| d > MAX_DISTANCE) {
            return Err(format!(
                "distance {d}; at most {MAX_DISTANCE} (the kernel's scale: 10 is local)"
            ));
        }
        Ok(())
    }

    /// Builds the topology this description describes.
    pub fn to_topology(&self) -> Topology {
        let mut nodes: Vec<&NodeDescription> = self.nodes.iter().collect();
        nodes.sort_by_key(|n| n.id);
        let (cpus, node_cpus) = synthesize_cpus(&nodes);
        let caches = self.synthesize_caches(&cpus);
        let (distances, distances_reported) = match &self.distances {
            Some(d) => (self.reorder(d, &nodes), true),
            None => (self.derived_distances(&nodes), false),
        };
        let all_cpus: CpuSet = cpus.iter().map(|c| c.id).collect();
        let topo_nodes: Vec<Node> = nodes
            .iter()
            .zip(node_cpus)
            .map(|(n, cpus)| Node {
                id: n.id,
                cpus,
                memory_bytes: n.memory_gib.map(|g| (g * (1u64 << 30) as f64) as u64),
                memory_free_bytes: None,
                socket: Some(n.socket),
                memory_bandwidth_gbs: n.memory_bandwidth_gbs,
                memory_latency_ns: n.memory_latency_ns,
                thread_bandwidth_gbs: n.thread_bandwidth_gbs,
            })
            .collect();
        let mem_total_bytes = topo_nodes.iter().map(|n| n.memory_bytes).sum();
        Topology {
            origin: Origin::Described {
                name: self.name.clone(),
                description: self.description.clone(),
                source: self.source.clone(),
            },
            allowed: Allowed {
                cpus: all_cpus,
                nodes: topo_nodes.iter().map(|n| n.id).collect(),
            },
            nodes: topo_nodes,
            cpus,
            caches,
            distances,
            distances_reported,
            links: self.model_links(),
            coherence: self.coherence,
            mem_total_bytes,
            notes: self.notes.clone(),
        }
    }

    fn model_links(&self) -> Vec<Link> {
        self.links
            .iter()
            .map(|l| Link {
                a: l.a,
                b: l.b,
                bandwidth_gbs: l.bandwidth_gbs,
                latency_ns: l.latency_ns,
            })
            .collect()
    }

    /// The distance matrix given in file order, re-ordered by ascending id.
    fn reorder(&self, d: &[Vec<u32>], sorted: &[&NodeDescription]) -> Vec<Vec<u32>> {
        let pos = |id: NodeId| self.nodes.iter().position(|n| n.id == id).unwrap_or(0);
        sorted
            .iter()
            .map(|a| sorted.iter().map(|b| d[pos(a.id)][pos(b.id)]).collect())
            .collect()
    }

    /// 10 locally, 10 + 10 x hops over links, 20 without links, 255 when
    /// unreachable (Linux's "no path").
    fn derived_distances(&self, nodes: &[&NodeDescription]) -> Vec<Vec<u32>> {
        let links = self.model_links();
        nodes
            .iter()
            .map(|a| {
                nodes
                    .iter()
                    .map(|b| match (a.id == b.id, links.is_empty()) {
                        (true, _) => DEFAULT_LOCAL_DISTANCE,
                        (false, true) => DEFAULT_REMOTE_DISTANCE,
                        (false, false) => hop_count(&links, a.id, b.id)
                            .map_or(255, |h| DEFAULT_LOCAL_DISTANCE + 10 * h),
                    })
                    .collect()
            })
            .collect()
    }

    fn synthesize_caches(&self, cpus: &[Cpu]) -> Vec<Cache> {
        let mut caches = Vec::new();
        for desc in &self.caches {
            let mut groups: Vec<(u64, CpuSet)> = Vec::new();
            for cpu in cpus {
                let key = match desc.shared_by {
                    SharedBy::Thread => u64::from(cpu.id),
                    SharedBy::Core => (u64::from(cpu.socket) << 32) | u64::from(cpu.core),
                    SharedBy::Node => u64::from(cpu.node.unwrap_or(0)),
                    SharedBy::Socket => u64::from(cpu.socket),
                };
                match groups.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, set)) => {
                        set.insert(cpu.id);
                    }
                    None => groups.push((key, IdSet::single(cpu.id))),
                }
            }
            caches.extend(groups.into_iter().map(|(_, set)| Cache {
                level: desc.level,
                kind: desc.kind,
                size_bytes: desc.size_kib * 1024,
                line_bytes: Some(64),
                cpus: set,
            }));
        }
        caches.sort_by_key(|c| (c.level, c.kind as u8, c.cpus.first()));
        caches
    }
}

/// CPU ids node-major, then core, then thread; core ids count per socket.
fn synthesize_cpus(nodes: &[&NodeDescription]) -> (Vec<Cpu>, Vec<CpuSet>) {
    let mut cpus = Vec::new();
    let mut per_node = Vec::new();
    let mut next_id = 0u32;
    let mut cores_seen_per_socket: Vec<(u32, u32)> = Vec::new();
    for n in nodes {
        let mut set = CpuSet::new();
        let core_base = match cores_seen_per_socket
            .iter_mut()
            .find(|(s, _)| *s == n.socket)
        {
            Some((_, seen)) => {
                let base = *seen;
                *seen += n.cores;
                base
            }
            None => {
                cores_seen_per_socket.push((n.socket, n.cores));
                0
            }
        };
        for core in 0..n.cores {
            let siblings: CpuSet = (next_id..next_id + n.threads_per_core).collect();
            for _ in 0..n.threads_per_core {
                set.insert(next_id);
                cpus.push(Cpu {
                    id: next_id,
                    node: Some(n.id),
                    core: core_base + core,
                    socket: n.socket,
                    siblings: siblings.clone(),
                });
                next_id += 1;
            }
        }
        per_node.push(set);
    }
    (cpus, per_node)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measured_figures_load_back_bit_for_bit() {
        // A probed bandwidth once came back one unit in the last place off
        // (serde_json parses floats exactly only with `float_roundtrip`).
        for x in [
            0.485_647_600_436_171_17_f64,
            0.1 + 0.2,
            1e-300,
            123.456_789_012_345_68,
        ] {
            let text = serde_json::to_string(&x).unwrap();
            let back: f64 = serde_json::from_str(&text).unwrap();
            assert_eq!(back.to_bits(), x.to_bits(), "{text}");
        }
    }

    fn two_node_json() -> &'static str {
        r#"{
          "name": "t", "description": "test", "source": "unit test",
          "nodes": [
            {"id": 2, "socket": 1, "cores": 2, "threads_per_core": 2, "memory_gib": 1},
            {"id": 0, "socket": 0, "cores": 2, "threads_per_core": 2, "memory_gib": 1,
             "memory_bandwidth_gbs": 20.0}
          ],
          "caches": [{"level": 3, "kind": "unified", "size_kib": 1024, "shared_by": "socket"},
                     {"level": 1, "kind": "data", "size_kib": 32, "shared_by": "core"}],
          "links": [{"a": 0, "b": 2, "bandwidth_gbs": 10.0}]
        }"#
    }

    #[test]
    fn builds_sorted_nodes_and_cpus() {
        let topo = MachineDescription::from_json(two_node_json(), "t")
            .unwrap()
            .to_topology();
        assert_eq!(
            topo.nodes.iter().map(|n| n.id).collect::<Vec<_>>(),
            vec![0, 2]
        );
        assert_eq!(topo.node(0).unwrap().cpus.to_list_string(), "0-3");
        assert_eq!(topo.node(2).unwrap().cpus.to_list_string(), "4-7");
        assert_eq!(topo.cpus[1].siblings.to_list_string(), "0-1");
        assert_eq!(topo.core_count(), 4);
        assert_eq!(topo.distance(0, 2).unwrap(), 20);
        assert!(!topo.distances_reported);
        assert_eq!(topo.mem_total_bytes, Some(2 << 30));
        let l3: Vec<_> = topo.caches.iter().filter(|c| c.level == 3).collect();
        assert_eq!(l3.len(), 2);
        assert_eq!(topo.caches.iter().filter(|c| c.level == 1).count(), 4);
        assert_eq!(topo.cache_of(5, 3).unwrap().cpus.to_list_string(), "4-7");
    }

    #[test]
    fn rejects_bad_descriptions() {
        let cases = [
            ("{", "EOF"),
            (
                r#"{"name":"x","description":"","source":"","nodes":[]}"#,
                "no nodes",
            ),
            (
                r#"{"name":"x","description":"","source":"","nodes":[{"id":0,"socket":0,"cores":1,"threads_per_core":1}],"links":[{"a":0,"b":3,"bandwidth_gbs":1}]}"#,
                "link 0-3",
            ),
            (
                r#"{"name":"x","description":"","source":"","nodes":[{"id":0,"socket":0,"cores":1,"threads_per_core":1}],"distances":[[10,20]]}"#,
                "1x1",
            ),
            (
                r#"{"name":"x","description":"","source":"","nodes":[{"id":0,"socket":0,"cores":1,"threads_per_core":1,"colour":"red"}]}"#,
                "unknown field",
            ),
        ];
        for (json, expected) in cases {
            let err = MachineDescription::from_json(json, "case")
                .unwrap_err()
                .to_string();
            assert!(err.contains(expected), "{err} should mention {expected}");
        }
    }

    #[test]
    fn given_distances_follow_id_order() {
        let json = r#"{"name":"x","description":"","source":"",
          "nodes":[{"id":1,"socket":1,"cores":1,"threads_per_core":1},
                   {"id":0,"socket":0,"cores":1,"threads_per_core":1}],
          "distances":[[10,30],[31,10]]}"#;
        let topo = MachineDescription::from_json(json, "x")
            .unwrap()
            .to_topology();
        assert_eq!(topo.distance(1, 0).unwrap(), 30);
        assert_eq!(topo.distance(0, 1).unwrap(), 31);
    }
}
