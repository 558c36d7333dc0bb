//! The [`Placer`]: the one object that pins threads and sets memory
//! policies, after checking every node and CPU against the topology.
//!
//! It carries the placement mode: strict (every refusal is an error),
//! best effort (a system that refuses NUMA control gets one warning and the
//! work runs unplaced) and off (no pinning and no policies at all, a real
//! off switch for comparisons and for hostile containers). It deliberately
//! holds no buffers and no threads; `buffer` and the pool use it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use numakit_topology::{CpuId, CpuSet, NodeId, NodeSet, Topology};

use crate::error::{PlacementError, Result};
use crate::policy::MemPolicy;
use crate::sys;

/// How strictly placement requests are enforced.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PlacementMode {
    /// Refusals are errors.
    #[default]
    Strict,
    /// Refusals (EPERM, ENOSYS, EINVAL) give one warning; work runs unplaced.
    BestEffort,
    /// Never pin, never set a policy.
    Off,
}

impl std::str::FromStr for PlacementMode {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "strict" => Ok(Self::Strict),
            "best-effort" => Ok(Self::BestEffort),
            "off" => Ok(Self::Off),
            other => Err(format!(
                "unknown placement mode `{other}` (strict, best-effort, off)"
            )),
        }
    }
}

/// Whether a request was carried out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The system call succeeded: the thread is pinned or the policy set.
    Applied,
    /// Skipped: placement is off, or the system refused in best-effort mode.
    Skipped,
}

/// Pins threads and sets memory policies for one topology.
///
/// # Examples
///
/// Place a buffer on a node of this machine, then give a thread pinned to
/// that node a local memory policy. Best-effort mode keeps the example
/// working where a container refuses the NUMA system calls (the work then
/// runs unplaced and [`Placer::degraded`] says so); no root is needed.
///
/// ```
/// use std::sync::Arc;
///
/// use numakit_placement::{MemPolicy, NodeBuffer, Placement, PlacementMode, Placer};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let topology = Arc::new(numakit_topology::discover()?);
/// let placer = Placer::new(topology.clone(), PlacementMode::BestEffort);
/// let node = topology.memory_nodes()[0];
///
/// // 1024 zeroed u64 bound to `node`, every page already touched there.
/// let mut buffer = NodeBuffer::<u64>::new(&placer, 1024, Placement::OnNode(node))?;
/// buffer.iter_mut().enumerate().for_each(|(i, v)| *v = i as u64);
/// assert_eq!(buffer.iter().sum::<u64>(), 1023 * 1024 / 2);
///
/// // A thread on the CPUs of a node, allocating from the node it runs on.
/// let cpu_node = topology.compute_nodes()[0];
/// std::thread::scope(|s| {
///     s.spawn(|| -> numakit_placement::Result<()> {
///         placer.pin_to_node(cpu_node)?;
///         placer.set_thread_policy(&MemPolicy::Local)?;
///         Ok(())
///     })
///     .join()
///     .expect("the pinned thread panicked")
/// })?;
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct Placer {
    topology: Arc<Topology>,
    mode: PlacementMode,
    warned: Arc<AtomicBool>,
}

impl Placer {
    /// A placer for `topology` that enforces requests as `mode` says.
    pub fn new(topology: Arc<Topology>, mode: PlacementMode) -> Self {
        Self {
            topology,
            mode,
            warned: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The topology every node and CPU id is checked against.
    pub fn topology(&self) -> &Arc<Topology> {
        &self.topology
    }

    /// How strictly requests are enforced (fixed at construction).
    pub fn mode(&self) -> PlacementMode {
        self.mode
    }

    /// Whether a best-effort refusal has happened (work ran unplaced).
    pub fn degraded(&self) -> bool {
        self.warned.load(Ordering::Relaxed)
    }

    /// Checks that `node` exists and this process may use its memory.
    pub fn check_node(&self, node: NodeId) -> Result<()> {
        let topo = &self.topology;
        if topo.node_index(node).is_none() {
            return Err(PlacementError::UnknownNode {
                node,
                known: topo.node_ids().to_list_string(),
            });
        }
        if !topo.allowed.nodes.contains(node) {
            return Err(PlacementError::DisallowedNode {
                node,
                allowed: topo.allowed.nodes.to_list_string(),
            });
        }
        Ok(())
    }

    /// Checks every node of a set (and that the set is not empty).
    pub fn check_nodes(&self, nodes: &NodeSet) -> Result<()> {
        if nodes.is_empty() {
            return Err(PlacementError::UnknownNode {
                node: u32::MAX,
                known: self.topology.node_ids().to_list_string(),
            });
        }
        nodes.iter().try_for_each(|n| self.check_node(n))
    }

    /// The CPUs of `node` this process may run on (never empty).
    pub fn cpus_of_node(&self, node: NodeId) -> Result<CpuSet> {
        self.check_node(node)?;
        let cpus = self.topology.allowed_cpus_of(node)?;
        if cpus.is_empty() {
            return Err(PlacementError::NoCpusOnNode { node });
        }
        Ok(cpus)
    }

    /// Pins the calling thread to one CPU.
    pub fn pin_to_cpu(&self, cpu: CpuId) -> Result<Outcome> {
        self.pin_to_cpus(&CpuSet::single(cpu))
    }

    /// Pins the calling thread to a set of allowed CPUs.
    pub fn pin_to_cpus(&self, cpus: &CpuSet) -> Result<Outcome> {
        if cpus.is_empty() {
            return Err(PlacementError::EmptyCpuSet);
        }
        let allowed = &self.topology.allowed.cpus;
        if !cpus.is_subset(allowed) {
            return Err(PlacementError::DisallowedCpus {
                cpus: cpus.difference(allowed).to_list_string(),
                allowed: allowed.to_list_string(),
            });
        }
        if self.mode == PlacementMode::Off {
            return Ok(Outcome::Skipped);
        }
        let result = sys::set_thread_affinity(cpus)
            .map_err(|e| PlacementError::from_os("sched_setaffinity", e, None, 0));
        self.tolerate(result)
    }

    /// Pins the calling thread to the allowed CPUs of a node.
    pub fn pin_to_node(&self, node: NodeId) -> Result<Outcome> {
        let cpus = self.cpus_of_node(node)?;
        self.pin_to_cpus(&cpus)
    }

    /// Sets the calling thread's memory policy.
    pub fn set_thread_policy(&self, policy: &MemPolicy) -> Result<Outcome> {
        self.check_policy(policy)?;
        if self.mode == PlacementMode::Off {
            return Ok(Outcome::Skipped);
        }
        let (mode, nodes) = policy.kernel_args();
        let result = sys::set_mempolicy(mode, &nodes)
            .map_err(|e| PlacementError::from_os("set_mempolicy", e, None, 0));
        self.tolerate(result)
    }

    /// Sets the policy of a mapped, page-aligned region (used by buffers).
    pub(crate) fn bind_region(
        &self,
        addr: *mut u8,
        len: usize,
        policy: &MemPolicy,
    ) -> Result<Outcome> {
        self.check_policy(policy)?;
        if self.mode == PlacementMode::Off || len == 0 {
            return Ok(Outcome::Skipped);
        }
        let (mode, nodes) = policy.kernel_args();
        let result = sys::mbind(addr, len, mode, &nodes, 0)
            .map_err(|e| PlacementError::from_os("mbind", e, nodes.first(), len));
        self.tolerate(result)
    }

    pub(crate) fn check_policy(&self, policy: &MemPolicy) -> Result<()> {
        match policy {
            MemPolicy::Default | MemPolicy::Local => Ok(()),
            MemPolicy::Preferred(n) => self.check_memory_node(*n),
            MemPolicy::Bind(nodes) | MemPolicy::Interleave(nodes) => {
                self.check_nodes(nodes)?;
                nodes.iter().try_for_each(|n| self.check_memory_node(n))
            }
        }
    }

    fn check_memory_node(&self, node: NodeId) -> Result<()> {
        self.check_node(node)?;
        match self.topology.node(node)?.memory_bytes {
            Some(0) => Err(PlacementError::NoMemoryOnNode { node }),
            _ => Ok(()),
        }
    }

    /// In best-effort mode turns a refusal into one warning and `Skipped`.
    pub(crate) fn tolerate(&self, result: Result<()>) -> Result<Outcome> {
        match result {
            Ok(()) => Ok(Outcome::Applied),
            Err(e) if self.mode == PlacementMode::BestEffort && e.is_refusal() => {
                if !self.warned.swap(true, Ordering::Relaxed) {
                    log::warn!("NUMA placement refused ({e}); continuing unplaced");
                }
                Ok(Outcome::Skipped)
            }
            Err(e) => Err(e),
        }
    }
}

/// The CPU the calling thread runs on now, and its node as the kernel sees it.
pub fn current_cpu() -> Result<(CpuId, NodeId)> {
    sys::current_cpu_and_node().map_err(|e| PlacementError::from_os("getcpu", e, None, 0))
}

/// The calling thread's current affinity mask.
pub fn current_affinity() -> Result<CpuSet> {
    sys::thread_affinity().map_err(|e| PlacementError::from_os("sched_getaffinity", e, None, 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_effort_turns_refusals_into_one_warning() {
        let topo = Arc::new(numakit_topology::presets::topology("opteron-istanbul-2s").unwrap());
        let refused = || Err(PlacementError::NotPermitted { call: "mbind" });
        let lenient = Placer::new(topo.clone(), PlacementMode::BestEffort);
        assert_eq!(lenient.tolerate(refused()).unwrap(), Outcome::Skipped);
        assert!(lenient.degraded());
        assert_eq!(lenient.tolerate(refused()).unwrap(), Outcome::Skipped);
        let mistake = Err(PlacementError::EmptyCpuSet);
        assert!(
            lenient.tolerate(mistake).is_err(),
            "a wrong request is never tolerated"
        );
        let strict = Placer::new(topo, PlacementMode::Strict);
        assert!(matches!(
            strict.tolerate(refused()),
            Err(PlacementError::NotPermitted { .. })
        ));
        assert!(!strict.degraded());
    }

    #[test]
    fn modes_parse() {
        assert_eq!(
            "best-effort".parse::<PlacementMode>().unwrap(),
            PlacementMode::BestEffort
        );
        assert!("maybe"
            .parse::<PlacementMode>()
            .unwrap_err()
            .contains("strict"));
    }

    #[test]
    fn errno_maps_to_variants() {
        let e =
            |n| PlacementError::from_os("mbind", std::io::Error::from_raw_os_error(n), Some(2), 10);
        assert!(matches!(
            e(libc::EPERM),
            PlacementError::NotPermitted { .. }
        ));
        assert!(matches!(
            e(libc::ENOSYS),
            PlacementError::NotSupported { .. }
        ));
        assert!(matches!(
            e(libc::ENOMEM),
            PlacementError::OutOfMemory { node: Some(2), .. }
        ));
        assert!(e(libc::EINVAL).is_refusal());
        assert!(!e(libc::EFAULT).is_refusal());
    }
}
