//! The simulated machine: one memory controller per node, directed links,
//! fixed routes, and the resources each read loads (data and snoops).
//!
//! Built from a [`Topology`]: every node is a memory controller whose
//! capacity is `memory_bandwidth_gbs`; every described link gives two
//! directed links (parallel links between the same pair are merged into
//! one of summed bandwidth). Routes are shortest paths in hops, found by a
//! breadth-first search that visits neighbours in ascending node order, so
//! ties go to the path through the lowest node ids. Sockets are the nodes
//! with CPUs, in node order (a memory-only node is a memory controller and a
//! router, but it runs no consumer and holds no cache to snoop).
//!
//! It does not model caches, prefetchers, cores or DRAM banks, and it does
//! not share anything: [`crate::fairshare`] does that.

use std::collections::{BTreeMap, BTreeSet};

use numakit_topology::{NodeId, Origin, Topology};

use crate::calibration::Calibration;
use crate::error::SimError;
use crate::fairshare::{fair_share, Allocation, Group, Use};

/// One node as the simulator sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeModel {
    /// NUMA node id, as the topology numbers it.
    pub id: NodeId,
    /// Capacity of the memory controller in GB/s (infinite for a node whose
    /// memory is never read and that has no described bandwidth).
    pub memory_gbs: f64,
    /// Local dependent-load latency in ns, when the topology describes it.
    pub memory_latency_ns: Option<f64>,
    /// Physical cores (one consumer thread per core is the default layout).
    pub cores: usize,
    /// Hardware threads: beyond this many consumers, a socket's threads share.
    pub hw_threads: usize,
}

/// One direction of a link.
#[derive(Clone, Debug, PartialEq)]
pub struct DirectedLink {
    /// Positions (in [`Machine::nodes`]) of the two ends.
    pub from: usize,
    /// Position of the receiving end.
    pub to: usize,
    /// The described bandwidth per direction: what one flow alone gets.
    pub described_gbs: f64,
    /// Latency of one hop in ns, when described (the smallest of merged parallel links).
    pub latency_ns: Option<f64>,
}

/// The machine: nodes, sockets, directed links and routes.
#[derive(Clone, Debug)]
pub struct Machine {
    /// The preset or description name, or `this machine` for a discovered topology.
    pub name: String,
    /// Every node of the topology, in the topology's node order.
    pub nodes: Vec<NodeModel>,
    /// Node positions of the sockets (nodes with CPUs), in node order.
    pub sockets: Vec<usize>,
    /// Two directed links per described node pair; resource `nodes.len() + i` is link `i`.
    pub links: Vec<DirectedLink>,
    /// `routes[a][b]`: directed links from node position a to b, in order.
    routes: Vec<Vec<Vec<usize>>>,
}

impl Machine {
    /// Models `topo`; refuses a machine it cannot simulate honestly.
    pub fn new(topo: &Topology) -> Result<Self, SimError> {
        let sockets: Vec<usize> = topo
            .compute_nodes()
            .into_iter()
            .filter_map(|id| topo.node_index(id))
            .collect();
        if sockets.is_empty() {
            return Err(SimError::NoComputeNodes);
        }
        let nodes = node_models(topo, &sockets)?;
        if nodes.len() > 1 && topo.links.is_empty() {
            return Err(SimError::NoLinks { nodes: nodes.len() });
        }
        let links = directed_links(topo)?;
        let routes = all_routes(nodes.len(), &links);
        let machine = Self {
            name: machine_name(topo),
            nodes,
            sockets,
            links,
            routes,
        };
        machine.check_reachable()?;
        Ok(machine)
    }

    fn check_reachable(&self) -> Result<(), SimError> {
        for &a in &self.sockets {
            for &b in &self.sockets {
                if a != b && self.routes[a][b].is_empty() {
                    let (from, to) = (self.nodes[a].id, self.nodes[b].id);
                    return Err(SimError::Unreachable { from, to });
                }
            }
        }
        Ok(())
    }

    /// Number of sockets (nodes with CPUs).
    pub fn socket_count(&self) -> usize {
        self.sockets.len()
    }

    /// The node model of socket `s`.
    pub fn socket(&self, s: usize) -> &NodeModel {
        &self.nodes[self.sockets[s]]
    }

    /// The socket index of node `id`, if it has CPUs.
    pub fn socket_of_node(&self, id: NodeId) -> Option<usize> {
        self.sockets.iter().position(|&p| self.nodes[p].id == id)
    }

    /// Number of resources: one memory controller per node, then the
    /// directed links.
    pub fn resource_count(&self) -> usize {
        self.nodes.len() + self.links.len()
    }

    /// Capacity of every resource in GB/s. A directed link's raw capacity is
    /// `described × (1 + response coefficient)`: one remote flow alone then
    /// gets exactly the described bandwidth, since the snoop responses for
    /// its own reads travel with its data (see the crate docs).
    pub fn capacities(&self, cal: &Calibration) -> Vec<f64> {
        let memory = self.nodes.iter().map(|n| n.memory_gbs);
        let links = self
            .links
            .iter()
            .map(|l| l.described_gbs * (1.0 + cal.coherence_response));
        memory.chain(links).collect()
    }

    /// A readable name: `memory of node 2` or `link 0->1`.
    pub fn resource_name(&self, r: usize) -> String {
        match r.checked_sub(self.nodes.len()) {
            None => format!("memory of node {}", self.nodes[r].id),
            Some(l) => {
                let link = &self.links[l];
                format!(
                    "link {}->{}",
                    self.nodes[link.from].id, self.nodes[link.to].id
                )
            }
        }
    }

    /// Whether resource `r` is a memory controller.
    pub fn is_memory(&self, r: usize) -> bool {
        r < self.nodes.len()
    }

    /// Directed links from socket `a` to socket `b` (empty when equal).
    fn route(&self, a: usize, b: usize) -> &[usize] {
        &self.routes[self.sockets[a]][self.sockets[b]]
    }

    /// Hops from socket `a` to socket `b`.
    pub fn hops(&self, a: usize, b: usize) -> usize {
        self.route(a, b).len()
    }

    /// Resources loaded per GB/s read from the memory of socket `src` by a
    /// consumer running on socket `dst`: the memory of `src` and the links
    /// of the route (data, coefficient 1); snoop requests from `dst` to
    /// every other socket and responses back (coherence coefficients).
    ///
    /// Snoops travel along the routes, but a directed link carries a read's
    /// snoops once, however many sockets lie beyond it (the union of the
    /// routes is a broadcast tree). Table 1 demands it: on the 4-link ring a
    /// local read reaches 24.7 GB/s, yet one request per destination would
    /// put `2 × 0.38 × 24.7 = 18.8` GB/s on the link towards the 2-hop socket,
    /// above its 10.9. On a fully connected machine both readings agree.
    pub fn read_uses(&self, src: usize, dst: usize, cal: &Calibration) -> Vec<Use> {
        let mut load: BTreeMap<usize, (f64, f64)> = BTreeMap::new();
        load.entry(self.sockets[src]).or_default().0 += 1.0;
        for &l in self.route(src, dst) {
            load.entry(self.nodes.len() + l).or_default().0 += 1.0;
        }
        let others = (0..self.socket_count()).filter(|&x| x != dst);
        let requests: BTreeSet<usize> = others
            .clone()
            .flat_map(|x| self.route(dst, x))
            .copied()
            .collect();
        let responses: BTreeSet<usize> = others.flat_map(|x| self.route(x, dst)).copied().collect();
        for l in requests {
            load.entry(self.nodes.len() + l).or_default().1 += cal.coherence_request;
        }
        for l in responses {
            load.entry(self.nodes.len() + l).or_default().1 += cal.coherence_response;
        }
        load.into_iter()
            .filter(|(_, (data, snoop))| data + snoop > 0.0)
            .map(|(resource, (data, snoop))| Use {
                resource,
                data,
                snoop,
            })
            .collect()
    }

    /// Resources loaded per GB/s of dirty cache lines that a consumer on
    /// socket `dst` writes back to the memory of socket `src`: that memory
    /// and the links of the route `dst -> src`, data only (an eviction sends
    /// no snoops). Used for hash-table lines updated away from their home.
    pub fn writeback_uses(&self, src: usize, dst: usize) -> Vec<Use> {
        let memory = std::iter::once(self.sockets[src]);
        let links = self.route(dst, src).iter().map(|&l| self.nodes.len() + l);
        memory
            .chain(links)
            .map(|resource| Use {
                resource,
                data: 1.0,
                snoop: 0.0,
            })
            .collect()
    }

    /// The most one consumer thread on socket `dst` reads from socket `src`
    /// when it has a core of its own: the calibrated per-thread rate, scaled
    /// by local/route latency when the calibration asks for it and the
    /// latencies are described.
    pub fn thread_cap(&self, src: usize, dst: usize, cal: &Calibration) -> f64 {
        if !cal.latency_scaled_remote_cap || src == dst {
            return cal.per_thread_gbs;
        }
        let local = self.socket(src).memory_latency_ns;
        let hops: Option<f64> = self
            .route(src, dst)
            .iter()
            .map(|&l| self.links[l].latency_ns)
            .sum();
        match (local, hops) {
            (Some(local), Some(extra)) if local > 0.0 => {
                cal.per_thread_gbs * local / (local + extra)
            }
            _ => cal.per_thread_gbs,
        }
    }
}

/// What each kind of read costs on a machine under a calibration: the
/// resources per (source socket, consumer socket) pair and the thread caps.
#[derive(Clone, Debug)]
pub struct ReadTable {
    /// `uses[src][dst]`.
    uses: Vec<Vec<Vec<Use>>>,
    /// `caps[src][dst]`: per-thread cap with a core of its own.
    caps: Vec<Vec<f64>>,
    /// Capacity of every resource.
    pub capacity: Vec<f64>,
    /// Hardware threads per socket.
    hw_threads: Vec<usize>,
}

impl ReadTable {
    /// Precomputes every (source, consumer) socket pair of `machine` under `cal`.
    pub fn new(machine: &Machine, cal: &Calibration) -> Self {
        let s = machine.socket_count();
        Self {
            uses: (0..s)
                .map(|a| (0..s).map(|b| machine.read_uses(a, b, cal)).collect())
                .collect(),
            caps: (0..s)
                .map(|a| (0..s).map(|b| machine.thread_cap(a, b, cal)).collect())
                .collect(),
            capacity: machine.capacities(cal),
            hw_threads: (0..s).map(|x| machine.socket(x).hw_threads).collect(),
        }
    }

    /// Shares the machine among `flows`, each `((src, dst), threads)`; the
    /// result is the rate of one thread of each entry. Threads beyond a
    /// socket's hardware threads share them: each thread's cap shrinks by
    /// `hw_threads / consumers on the socket`.
    pub fn share(&self, flows: &[((usize, usize), usize)]) -> Vec<Allocation> {
        let mut running = vec![0usize; self.hw_threads.len()];
        for &((_, dst), count) in flows {
            running[dst] += count;
        }
        let groups: Vec<Group> = flows
            .iter()
            .map(|&((src, dst), count)| {
                let crowding = self.hw_threads[dst] as f64 / running[dst].max(1) as f64;
                Group {
                    count: count as f64,
                    cap: self.caps[src][dst] * crowding.min(1.0),
                    uses: &self.uses[src][dst],
                }
            })
            .collect();
        fair_share(&self.capacity, &groups)
    }

    /// The resources one GB/s read from `src` on `dst` loads.
    pub fn uses(&self, src: usize, dst: usize) -> &[Use] {
        &self.uses[src][dst]
    }
}

fn machine_name(topo: &Topology) -> String {
    match &topo.origin {
        Origin::Described { name, .. } => name.clone(),
        Origin::Discovered { .. } => "this machine".to_string(),
    }
}

fn node_models(topo: &Topology, sockets: &[usize]) -> Result<Vec<NodeModel>, SimError> {
    topo.nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let memory_gbs = match (n.memory_bandwidth_gbs, sockets.contains(&i)) {
                (Some(b), _) => positive(b, || format!("memory bandwidth of node {}", n.id))?,
                (None, true) => return Err(SimError::MissingBandwidth { node: n.id }),
                (None, false) => f64::INFINITY,
            };
            let mut cores: Vec<(u32, u32)> = topo
                .cpus
                .iter()
                .filter(|c| c.node == Some(n.id))
                .map(|c| (c.socket, c.core))
                .collect();
            cores.sort_unstable();
            cores.dedup();
            Ok(NodeModel {
                id: n.id,
                memory_gbs,
                memory_latency_ns: n.memory_latency_ns,
                cores: cores.len().max(usize::from(!n.cpus.is_empty())),
                hw_threads: n.cpus.len(),
            })
        })
        .collect()
}

fn positive(value: f64, what: impl Fn() -> String) -> Result<f64, SimError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(SimError::BadCapacity {
            what: what(),
            value,
        })
    }
}

/// Two directed links per described node pair, parallel links merged.
fn directed_links(topo: &Topology) -> Result<Vec<DirectedLink>, SimError> {
    let mut pairs: BTreeMap<(usize, usize), (f64, Option<f64>)> = BTreeMap::new();
    for l in &topo.links {
        let what = || format!("link {}-{}", l.a, l.b);
        let bw = positive(l.bandwidth_gbs, what)?;
        let (a, b) = match (topo.node_index(l.a), topo.node_index(l.b)) {
            (Some(a), Some(b)) if a != b => (a.min(b), a.max(b)),
            _ => {
                let why = format!("link {}-{} does not join two distinct nodes", l.a, l.b);
                return Err(SimError::BadOption(why));
            }
        };
        let entry = pairs.entry((a, b)).or_insert((0.0, l.latency_ns));
        entry.0 += bw;
        entry.1 = match (entry.1, l.latency_ns) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
    }
    Ok(pairs
        .into_iter()
        .flat_map(|((a, b), (bw, lat))| {
            let one = |from, to| DirectedLink {
                from,
                to,
                described_gbs: bw,
                latency_ns: lat,
            };
            [one(a, b), one(b, a)]
        })
        .collect())
}

/// Shortest routes between every pair of node positions.
fn all_routes(n: usize, links: &[DirectedLink]) -> Vec<Vec<Vec<usize>>> {
    let mut out_links: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, l) in links.iter().enumerate() {
        out_links[l.from].push(i);
    }
    for list in &mut out_links {
        list.sort_by_key(|&i| links[i].to);
    }
    (0..n).map(|a| routes_from(a, &out_links, links)).collect()
}

/// Breadth-first search from `a`; the first path found to a node is kept,
/// and neighbours are visited in ascending order.
fn routes_from(a: usize, out_links: &[Vec<usize>], links: &[DirectedLink]) -> Vec<Vec<usize>> {
    let n = out_links.len();
    let mut via: Vec<Option<usize>> = vec![None; n];
    let mut seen = vec![false; n];
    seen[a] = true;
    let mut frontier = vec![a];
    while !frontier.is_empty() {
        let mut next = Vec::new();
        for &u in &frontier {
            for &l in &out_links[u] {
                let v = links[l].to;
                if !seen[v] {
                    seen[v] = true;
                    via[v] = Some(l);
                    next.push(v);
                }
            }
        }
        frontier = next;
    }
    (0..n)
        .map(|b| {
            let mut path = Vec::new();
            let mut at = b;
            while let Some(l) = via[at] {
                path.push(l);
                at = links[l].from;
            }
            path.reverse();
            path
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use numakit_topology::{presets, MachineDescription};

    fn preset(name: &str) -> Machine {
        let topo = presets::topology(name).unwrap();
        Machine::new(&topo).unwrap()
    }

    #[test]
    fn snoops_cross_each_link_once_per_read() {
        let m = preset("nehalem-ex-4s-4link");
        let cal = Calibration::li_nehalem();
        let uses = m.read_uses(0, 0, &cal);
        let link01 = uses
            .iter()
            .find(|u| m.resource_name(u.resource) == "link 0->1")
            .unwrap();
        assert!(
            (link01.snoop - cal.coherence_request).abs() < 1e-12,
            "requests to 1 and to 3 share it: {link01:?}"
        );
        let link31 = uses
            .iter()
            .find(|u| m.resource_name(u.resource) == "link 3->1")
            .unwrap();
        assert!(
            (link31.snoop - cal.coherence_response).abs() < 1e-12,
            "node 3 answers over 1"
        );
        assert_eq!(uses.iter().filter(|u| u.snoop > 0.0).count(), 6);
    }

    #[test]
    fn ring_routes_are_shortest_with_low_id_ties() {
        let m = preset("nehalem-ex-4s-4link");
        assert_eq!(m.hops(0, 1), 1);
        assert_eq!(m.hops(0, 3), 2);
        let names: Vec<String> = m
            .route(3, 0)
            .iter()
            .map(|&l| m.resource_name(m.nodes.len() + l))
            .collect();
        assert_eq!(
            names,
            ["link 3->1", "link 1->0"],
            "tie broken through node 1"
        );
        let full = preset("nehalem-ex-4s");
        assert!((0..4).all(|a| (0..4).all(|b| full.hops(a, b) == usize::from(a != b))));
        assert_eq!(full.links.len(), 12);
    }

    #[test]
    fn a_remote_read_loads_memory_route_and_snoops() {
        let m = preset("nehalem-ex-4s");
        let cal = Calibration {
            coherence_request: 0.4,
            coherence_response: 0.1,
            ..Calibration::li_nehalem()
        };
        let uses = m.read_uses(1, 0, &cal);
        let get = |name: &str| {
            uses.iter()
                .find(|u| m.resource_name(u.resource) == name)
                .map(|u| (u.data, u.snoop))
        };
        assert_eq!(get("memory of node 1"), Some((1.0, 0.0)));
        assert_eq!(
            get("memory of node 0"),
            None,
            "the reader's own memory is not read"
        );
        assert_eq!(
            get("link 1->0"),
            Some((1.0, 0.1)),
            "data plus node 1's snoop response"
        );
        assert_eq!(get("link 0->1"), Some((0.0, 0.4)));
        assert_eq!(get("link 0->2"), Some((0.0, 0.4)));
        assert_eq!(get("link 3->0"), Some((0.0, 0.1)));
        assert_eq!(get("link 1->2"), None);
        let caps = m.capacities(&cal);
        assert!((caps[m.nodes.len()] - 10.9 * 1.1).abs() < 1e-9);
    }

    #[test]
    fn a_write_back_loads_the_home_memory_and_the_way_back() {
        let m = preset("nehalem-ex-4s");
        let names: Vec<(String, f64, f64)> = m
            .writeback_uses(1, 0)
            .iter()
            .map(|u| (m.resource_name(u.resource), u.data, u.snoop))
            .collect();
        assert_eq!(
            names,
            [
                ("memory of node 1".to_string(), 1.0, 0.0),
                ("link 0->1".to_string(), 1.0, 0.0)
            ]
        );
        assert_eq!(m.writeback_uses(2, 2).len(), 1, "local: memory only");
    }

    #[test]
    fn refuses_machines_it_cannot_model() {
        let mut topo = presets::topology("nehalem-ex-4s").unwrap();
        topo.links.clear();
        assert_eq!(
            Machine::new(&topo).unwrap_err(),
            SimError::NoLinks { nodes: 4 }
        );
        let mut topo = presets::topology("nehalem-ex-4s").unwrap();
        topo.nodes[2].memory_bandwidth_gbs = None;
        assert_eq!(
            Machine::new(&topo).unwrap_err(),
            SimError::MissingBandwidth { node: 2 }
        );
        let mut topo = presets::topology("nehalem-ex-4s-4link").unwrap();
        topo.links.retain(|l| l.a != 3 && l.b != 3);
        assert!(matches!(
            Machine::new(&topo),
            Err(SimError::Unreachable { .. })
        ));
        let mut topo = presets::topology("nehalem-ex-4s").unwrap();
        topo.links[0].bandwidth_gbs = 0.0;
        assert!(matches!(
            Machine::new(&topo),
            Err(SimError::BadCapacity { .. })
        ));
    }

    #[test]
    fn one_node_needs_no_links() {
        let json = r#"{"name": "one", "description": "", "source": "",
            "nodes": [{"id": 0, "socket": 0, "cores": 2, "threads_per_core": 1,
                       "memory_bandwidth_gbs": 20.0}]}"#;
        let topo = MachineDescription::from_json(json, "test")
            .unwrap()
            .to_topology();
        let m = Machine::new(&topo).unwrap();
        assert_eq!(m.socket_count(), 1);
        assert_eq!(m.socket(0).cores, 2);
        let uses = m.read_uses(0, 0, &Calibration::li_nehalem());
        assert_eq!(uses.len(), 1, "only the memory controller: {uses:?}");
    }
}
