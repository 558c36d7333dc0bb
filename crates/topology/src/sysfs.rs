//! Discovery of the running machine from sysfs and procfs.
//!
//! Everything is read from plain files under a root directory (`/` on a real
//! machine, a prepared tree in tests), so no system library is needed and
//! every odd case can be reproduced: sparse node ids, memory-only and
//! CPU-only nodes, a missing distance table, node memory that does not add
//! up to `MemTotal`, and the affinity and cpuset limits that containers,
//! Slurm, `taskset` and `numactl` impose. This module only reads; it never
//! changes affinity or memory policy.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{Result, TopologyError};
use crate::idset::{CpuSet, IdSet, NodeSet};
use crate::model::{Allowed, Cache, CacheKind, Cpu, Node, NodeId, Origin, Topology};

/// Distances Linux assumes when the firmware gives no SLIT table.
pub const DEFAULT_LOCAL_DISTANCE: u32 = 10;
/// See [`DEFAULT_LOCAL_DISTANCE`].
pub const DEFAULT_REMOTE_DISTANCE: u32 = 20;

/// Discovers the machine this process runs on.
pub fn discover() -> Result<Topology> {
    discover_at(Path::new("/"))
}

/// Discovers a machine from a sysfs/procfs tree under `root`.
pub fn discover_at(root: &Path) -> Result<Topology> {
    let tree = Tree { root };
    let mut notes = Vec::new();
    let online_cpus = tree.online_cpus()?;
    let mut nodes = tree.nodes(&online_cpus, &mut notes)?;
    let (distances, distances_reported) = tree.distances(&nodes, &mut notes);
    let cpus = tree.cpus(&online_cpus, &nodes)?;
    assign_sockets(&mut nodes, &cpus);
    let caches = tree.caches(&online_cpus)?;
    let mem_total_bytes = tree.mem_total()?;
    check_memory_sum(&nodes, mem_total_bytes, &mut notes);
    let allowed = tree.allowed(&online_cpus, &nodes, &mut notes)?;
    Ok(Topology {
        origin: Origin::Discovered {
            root: root.display().to_string(),
        },
        nodes,
        cpus,
        caches,
        distances,
        distances_reported,
        links: Vec::new(),
        coherence: None,
        allowed,
        mem_total_bytes,
        notes,
    })
}

struct Tree<'a> {
    root: &'a Path,
}

impl Tree<'_> {
    fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    fn read_opt(&self, path: &Path) -> Option<String> {
        fs::read_to_string(path).ok()
    }

    fn online_cpus(&self) -> Result<CpuSet> {
        let online = self.path("sys/devices/system/cpu/online");
        if let Some(text) = self.read_opt(&online) {
            return IdSet::parse_list(&text);
        }
        let ids = numbered_entries(&self.path("sys/devices/system/cpu"), "cpu")?;
        if ids.is_empty() {
            return Err(TopologyError::Malformed {
                path: self.path("sys/devices/system/cpu"),
                why: "no CPUs found".into(),
            });
        }
        Ok(ids.into_iter().collect())
    }

    fn nodes(&self, online_cpus: &CpuSet, notes: &mut Vec<String>) -> Result<Vec<Node>> {
        let dir = self.path("sys/devices/system/node");
        let mut ids = numbered_entries(&dir, "node").unwrap_or_default();
        if let Some(online) = self.read_opt(&dir.join("online")) {
            let online = IdSet::parse_list(&online)?;
            ids.retain(|id| online.contains(*id));
        }
        if ids.is_empty() {
            notes.push("the kernel exposes no NUMA nodes; treating the machine as one node".into());
            return Ok(vec![Node {
                id: 0,
                cpus: online_cpus.clone(),
                memory_bytes: self.mem_total()?,
                memory_free_bytes: None,
                socket: None,
                memory_bandwidth_gbs: None,
                memory_latency_ns: None,
                thread_bandwidth_gbs: None,
            }]);
        }
        ids.iter()
            .map(|&id| self.node(&dir, id, online_cpus))
            .collect()
    }

    fn node(&self, dir: &Path, id: NodeId, online_cpus: &CpuSet) -> Result<Node> {
        let node_dir = dir.join(format!("node{id}"));
        let cpus = match self.read_opt(&node_dir.join("cpulist")) {
            Some(text) => IdSet::parse_list(&text)?.intersection(online_cpus),
            None => CpuSet::new(),
        };
        let meminfo = self.read_opt(&node_dir.join("meminfo")).unwrap_or_default();
        Ok(Node {
            id,
            cpus,
            memory_bytes: meminfo_field(&meminfo, "MemTotal:"),
            memory_free_bytes: meminfo_field(&meminfo, "MemFree:"),
            socket: None,
            memory_bandwidth_gbs: None,
            memory_latency_ns: None,
            thread_bandwidth_gbs: None,
        })
    }

    fn distances(&self, nodes: &[Node], notes: &mut Vec<String>) -> (Vec<Vec<u32>>, bool) {
        let dir = self.path("sys/devices/system/node");
        let rows: Option<Vec<Vec<u32>>> = nodes
            .iter()
            .map(|n| {
                let text = self.read_opt(&dir.join(format!("node{}/distance", n.id)))?;
                let row: Option<Vec<u32>> =
                    text.split_whitespace().map(|t| t.parse().ok()).collect();
                row.filter(|r| r.len() == nodes.len())
            })
            .collect();
        match rows {
            Some(rows) => (rows, true),
            None => {
                if nodes.len() > 1 {
                    notes.push(format!(
                        "no usable distance table; assuming {DEFAULT_LOCAL_DISTANCE} local and {DEFAULT_REMOTE_DISTANCE} remote"
                    ));
                }
                (default_distances(nodes.len()), false)
            }
        }
    }

    fn cpus(&self, online: &CpuSet, nodes: &[Node]) -> Result<Vec<Cpu>> {
        online
            .iter()
            .map(|id| {
                let dir = self.path(&format!("sys/devices/system/cpu/cpu{id}/topology"));
                let num = |file: &str| {
                    self.read_opt(&dir.join(file))
                        .and_then(|t| t.trim().parse::<i64>().ok())
                        .filter(|&v| v >= 0)
                        .map(|v| v as u32)
                };
                let siblings = match self.read_opt(&dir.join("thread_siblings_list")) {
                    Some(text) => IdSet::parse_list(&text)?.intersection(online),
                    None => IdSet::single(id),
                };
                Ok(Cpu {
                    id,
                    node: nodes.iter().find(|n| n.cpus.contains(id)).map(|n| n.id),
                    core: num("core_id").unwrap_or(id),
                    socket: num("physical_package_id").unwrap_or(0),
                    siblings,
                })
            })
            .collect()
    }

    fn caches(&self, online: &CpuSet) -> Result<Vec<Cache>> {
        let mut caches: Vec<Cache> = Vec::new();
        for cpu in online.iter() {
            let dir = self.path(&format!("sys/devices/system/cpu/cpu{cpu}/cache"));
            for index in numbered_entries(&dir, "index").unwrap_or_default() {
                let Some(cache) = self.cache(&dir.join(format!("index{index}")), cpu, online)?
                else {
                    continue;
                };
                let known = caches.iter().any(|c| {
                    c.level == cache.level && c.kind == cache.kind && c.cpus == cache.cpus
                });
                if !known {
                    caches.push(cache);
                }
            }
        }
        caches.sort_by_key(|c| (c.level, c.kind as u8, c.cpus.first()));
        Ok(caches)
    }

    fn cache(&self, dir: &Path, cpu: u32, online: &CpuSet) -> Result<Option<Cache>> {
        let field = |f: &str| self.read_opt(&dir.join(f)).map(|t| t.trim().to_string());
        let (Some(level), Some(kind), Some(size)) = (field("level"), field("type"), field("size"))
        else {
            return Ok(None);
        };
        let kind = match kind.as_str() {
            "Data" => CacheKind::Data,
            "Instruction" => CacheKind::Instruction,
            _ => CacheKind::Unified,
        };
        let malformed = |why: String| TopologyError::Malformed {
            path: dir.to_path_buf(),
            why,
        };
        let level: u8 = level
            .parse()
            .map_err(|_| malformed(format!("cache level `{level}`")))?;
        let size_bytes =
            parse_size(&size).ok_or_else(|| malformed(format!("cache size `{size}`")))?;
        let cpus = match field("shared_cpu_list") {
            Some(list) => IdSet::parse_list(&list)?.intersection(online),
            None => IdSet::single(cpu),
        };
        let line_bytes = field("coherency_line_size").and_then(|t| t.parse().ok());
        Ok(Some(Cache {
            level,
            kind,
            size_bytes,
            line_bytes,
            cpus,
        }))
    }

    fn mem_total(&self) -> Result<Option<u64>> {
        Ok(self
            .read_opt(&self.path("proc/meminfo"))
            .and_then(|t| meminfo_field(&t, "MemTotal:")))
    }

    fn allowed(&self, online: &CpuSet, nodes: &[Node], notes: &mut Vec<String>) -> Result<Allowed> {
        let node_ids: NodeSet = nodes.iter().map(|n| n.id).collect();
        let status_path = if self.root == Path::new("/") {
            PathBuf::from("/proc/thread-self/status")
        } else {
            self.path("proc/self/status")
        };
        let status = self
            .read_opt(&status_path)
            .or_else(|| self.read_opt(&self.path("proc/self/status")))
            .unwrap_or_default();
        let mut cpus = match status_field(&status, "Cpus_allowed_list:") {
            Some(list) => IdSet::parse_list(list)?.intersection(online),
            None => online.clone(),
        };
        let mut mems = match status_field(&status, "Mems_allowed_list:") {
            Some(list) => IdSet::parse_list(list)?.intersection(&node_ids),
            None => node_ids.clone(),
        };
        if let Some((cg_cpus, cg_mems)) = self.cgroup_cpuset()? {
            cpus = cpus.intersection(&cg_cpus);
            if !cg_mems.is_empty() {
                mems = mems.intersection(&cg_mems);
            }
        }
        if cpus.len() < online.len() {
            notes.push(format!(
                "this process may use CPUs {} of {} online (affinity or cpuset)",
                cpus, online
            ));
        }
        if mems.len() < node_ids.len() {
            notes.push(format!(
                "this process may use memory of nodes {} of {} (cpuset)",
                mems, node_ids
            ));
        }
        Ok(Allowed { cpus, nodes: mems })
    }

    /// The effective cpuset of this process's cgroup (v2), when there is one.
    fn cgroup_cpuset(&self) -> Result<Option<(CpuSet, NodeSet)>> {
        let Some(cgroup) = self.read_opt(&self.path("proc/self/cgroup")) else {
            return Ok(None);
        };
        let Some(rel) = cgroup.lines().find_map(|l| l.strip_prefix("0::")) else {
            return Ok(None);
        };
        let dir = self
            .path("sys/fs/cgroup")
            .join(rel.trim().trim_start_matches('/'));
        let Some(cpus) = self.read_opt(&dir.join("cpuset.cpus.effective")) else {
            return Ok(None);
        };
        let mems = self
            .read_opt(&dir.join("cpuset.mems.effective"))
            .unwrap_or_default();
        let cpus = IdSet::parse_list(&cpus)?;
        if cpus.is_empty() {
            return Ok(None);
        }
        Ok(Some((cpus, IdSet::parse_list(&mems)?)))
    }
}

/// The Linux default distance matrix for `n` nodes.
pub fn default_distances(n: usize) -> Vec<Vec<u32>> {
    (0..n)
        .map(|i| {
            (0..n)
                .map(|j| {
                    if i == j {
                        DEFAULT_LOCAL_DISTANCE
                    } else {
                        DEFAULT_REMOTE_DISTANCE
                    }
                })
                .collect()
        })
        .collect()
}

fn assign_sockets(nodes: &mut [Node], cpus: &[Cpu]) {
    for node in nodes {
        let mut sockets = cpus
            .iter()
            .filter(|c| node.cpus.contains(c.id))
            .map(|c| c.socket);
        if let Some(first) = sockets.next() {
            if sockets.all(|s| s == first) {
                node.socket = Some(first);
            }
        }
    }
}

fn check_memory_sum(nodes: &[Node], mem_total: Option<u64>, notes: &mut Vec<String>) {
    let Some(total) = mem_total else { return };
    if nodes.iter().any(|n| n.memory_bytes.is_none()) {
        notes.push("some nodes do not report their memory".into());
        return;
    }
    let sum: u64 = nodes.iter().filter_map(|n| n.memory_bytes).sum();
    let gap = sum.abs_diff(total);
    if gap > total / 50 {
        notes.push(format!(
            "node memory adds up to {} MiB but MemTotal is {} MiB (memory hidden from nodes, offline or hot-plugged)",
            sum >> 20,
            total >> 20
        ));
    }
}

/// Ids of directory entries named `{prefix}{number}`, ascending.
fn numbered_entries(dir: &Path, prefix: &str) -> Result<Vec<u32>> {
    let entries = fs::read_dir(dir).map_err(|source| TopologyError::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut ids: Vec<u32> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name();
            name.to_str()?.strip_prefix(prefix)?.parse().ok()
        })
        .collect();
    ids.sort_unstable();
    Ok(ids)
}

/// A `kB` field of a meminfo file (`Node 0 MemTotal:  1024 kB` or
/// `MemTotal:  1024 kB`), in bytes.
fn meminfo_field(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let mut words = line.split_whitespace().skip_while(|w| *w != key);
        words.next()?;
        let value: u64 = words.next()?.parse().ok()?;
        Some(match words.next() {
            Some("kB") => value * 1024,
            _ => value,
        })
    })
}

fn status_field<'t>(text: &'t str, key: &str) -> Option<&'t str> {
    text.lines()
        .find_map(|l| l.strip_prefix(key))
        .map(str::trim)
}

/// Parses sysfs cache sizes such as `32K`, `1024K`, `32M`.
fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, unit) = match text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => text.split_at(i),
        None => (text, ""),
    };
    let value: u64 = digits.parse().ok()?;
    let scale = match unit.trim() {
        "" | "B" => 1,
        "K" | "KB" | "KiB" => 1 << 10,
        "M" | "MB" | "MiB" => 1 << 20,
        "G" | "GB" | "GiB" => 1 << 30,
        _ => return None,
    };
    Some(value * scale)
}

/// Free memory of one node now (`MemFree` of the node's meminfo), when
/// the kernel reports it. Memory bound to a full node is not spilled
/// elsewhere: the process is killed, so callers that keep memory around
/// should look here first.
pub fn node_mem_free(node: crate::NodeId) -> Option<u64> {
    let path = format!("/sys/devices/system/node/node{node}/meminfo");
    fs::read_to_string(path)
        .ok()
        .and_then(|t| meminfo_field(&t, "MemFree:"))
}

/// Memory this process can still allocate, in bytes: `MemAvailable`,
/// lowered to what the cgroup v2 `memory.max` leaves (containers and Slurm
/// jobs get killed at their limit long before the machine runs out).
pub fn mem_available() -> Option<u64> {
    let machine = fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| meminfo_field(&t, "MemAvailable:"));
    let cgroup = cgroup_memory_left(Path::new("/"));
    match (machine, cgroup) {
        (Some(m), Some(c)) => Some(m.min(c)),
        (m, c) => m.or(c),
    }
}

/// `memory.max - memory.current` of this process's cgroup v2, if limited.
fn cgroup_memory_left(root: &Path) -> Option<u64> {
    let cgroup = fs::read_to_string(root.join("proc/self/cgroup")).ok()?;
    let rel = cgroup.lines().find_map(|l| l.strip_prefix("0::"))?;
    let dir = root
        .join("sys/fs/cgroup")
        .join(rel.trim().trim_start_matches('/'));
    let max: u64 = fs::read_to_string(dir.join("memory.max"))
        .ok()?
        .trim()
        .parse()
        .ok()?;
    let current: u64 = fs::read_to_string(dir.join("memory.current"))
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(0);
    Some(max.saturating_sub(current))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cgroup_memory_limit_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let cg = root.join("sys/fs/cgroup/job");
        fs::create_dir_all(&cg).unwrap();
        fs::create_dir_all(root.join("proc/self")).unwrap();
        fs::write(root.join("proc/self/cgroup"), "0::/job\n").unwrap();
        fs::write(cg.join("memory.max"), "1000\n").unwrap();
        fs::write(cg.join("memory.current"), "300\n").unwrap();
        assert_eq!(cgroup_memory_left(root), Some(700));
        fs::write(cg.join("memory.max"), "max\n").unwrap();
        assert_eq!(cgroup_memory_left(root), None, "unlimited");
    }

    #[test]
    fn parses_sizes_and_meminfo() {
        assert_eq!(parse_size("32K"), Some(32 << 10));
        assert_eq!(parse_size("36M"), Some(36 << 20));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("12Q"), None);
        let text = "Node 2 MemTotal:       2048 kB\nNode 2 MemFree:        1024 kB\n";
        assert_eq!(meminfo_field(text, "MemTotal:"), Some(2048 * 1024));
        assert_eq!(meminfo_field(text, "MemFree:"), Some(1024 * 1024));
        assert_eq!(meminfo_field("MemTotal: 10 kB", "MemTotal:"), Some(10240));
        assert_eq!(meminfo_field("", "MemTotal:"), None);
    }
}
