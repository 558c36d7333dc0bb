//! What a probe measures and how hard: the options, their quick and full
//! presets, buffer sizes fitted to the caches and to the memory left, and
//! the checks that refuse options no measurement can come from. It sizes
//! and checks; it measures nothing.

use numakit_placement::MemoryLimit;
use numakit_topology::{NodeId, Topology};
use serde::Serialize;

use crate::bandwidth::Effort;
use crate::chase::{ChaseOrder, LINE_BYTES};
use crate::error::{ProbeError, Result};
use crate::latency::ChaseLength;

const MIB: u64 = 1 << 20;
/// Fitted buffers are never smaller than this.
const MIN_FITTED_BYTES: u64 = 16 * MIB;

/// Bandwidth buffers a memory node holds at once: a source and a target,
/// and as many again for cross traffic (which needs two nodes).
pub(crate) fn buffer_copies(options: &MatrixOptions, memory_nodes: usize) -> u64 {
    if options.cross_traffic && memory_nodes > 1 {
        4
    } else {
        2
    }
}

/// Memory left to the process, or on its most constrained node when the
/// kernel's node figures can be trusted.
fn memory_left(topology: &Topology) -> Option<u64> {
    let machine = numakit_topology::sysfs::mem_available();
    let node = topology
        .node_memory_is_reliable()
        .then(|| {
            topology
                .memory_nodes()
                .into_iter()
                .filter_map(numakit_topology::sysfs::node_mem_free)
                .min()
        })
        .flatten();
    match (machine, node) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// What to measure and how hard.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MatrixOptions {
    /// Rows: CPU nodes (default: every allowed node with CPUs).
    pub cpu_nodes: Option<Vec<NodeId>>,
    /// The process's memory limit, checked before any buffer is placed.
    pub memory_limit: MemoryLimit,
    /// Columns: memory nodes (default: every allowed node with memory).
    pub memory_nodes: Option<Vec<NodeId>>,
    /// Size of the pointer chase, in bytes.
    pub latency_bytes: u64,
    /// Dependent loads per latency measurement: untimed, timed, and
    /// repetitions.
    pub chase: ChaseLength,
    /// The order of the chase's loads.
    pub chase_order: ChaseOrder,
    /// Also measure latency with transparent huge pages.
    pub huge_pages: bool,
    /// Size of each bandwidth buffer, in bytes (copies use two).
    pub bandwidth_bytes: u64,
    /// Bytes each bandwidth measurement moves at least (passes over the buffer).
    pub pass_bytes: u64,
    /// Repetitions of each bandwidth setting (the median is reported).
    pub reps: usize,
    /// Most threads per node (default: all its allowed CPUs).
    pub max_threads: Option<usize>,
    /// Sweep every pair and kernel (full), or each node's local reads (quick).
    pub sweep_every_pair: bool,
    /// No sweep at all: every measurement with the most threads each node
    /// may use (to compare with a tool run at a fixed thread count).
    pub fixed_threads: bool,
    /// Also measure read bandwidth beside cross traffic (needs two nodes
    /// with CPUs).
    pub cross_traffic: bool,
    /// Measure the latency matrices.
    pub latency: bool,
    /// Measure the bandwidth matrices, sweeps and cross traffic.
    pub bandwidth: bool,
    /// Seed of the chase's random order (mixed with each memory node's id).
    pub seed: u64,
}

impl MatrixOptions {
    /// A few seconds on one node: 256 MiB chases, 128 MiB bandwidth buffers.
    pub fn quick() -> Self {
        Self {
            cpu_nodes: None,
            memory_limit: MemoryLimit::default(),
            memory_nodes: None,
            latency_bytes: 256 * MIB,
            chase: ChaseLength {
                warm: 50_000,
                loads: 200_000,
                reps: 3,
            },
            chase_order: ChaseOrder::Random,
            huge_pages: true,
            bandwidth_bytes: 128 * MIB,
            pass_bytes: 512 * MIB,
            reps: 3,
            max_threads: None,
            sweep_every_pair: false,
            fixed_threads: false,
            cross_traffic: true,
            latency: true,
            bandwidth: true,
            seed: 42,
        }
    }

    /// Larger buffers, more loads and repetitions, every pair swept.
    pub fn full() -> Self {
        Self {
            latency_bytes: 1024 * MIB,
            chase: ChaseLength {
                warm: 200_000,
                loads: 2_000_000,
                reps: 5,
            },
            bandwidth_bytes: 512 * MIB,
            pass_bytes: 4096 * MIB,
            reps: 5,
            sweep_every_pair: true,
            ..Self::quick()
        }
    }

    /// Grows the buffers to at least twice the largest cache sysfs
    /// reports (four times in full mode), up to 1 GiB (4 GiB in full
    /// mode), and shrinks them to an eighth of the memory left (per node,
    /// where the kernel's node figures can be trusted), so that neither a
    /// large cache nor a small machine spoils the default sizes. Bandwidth
    /// and latency both need buffers far beyond the cache: on a virtual
    /// machine whose host reports 480 MiB of L3, 128 MiB was read at 33
    /// GB/s and 1 GiB at 26 GB/s.
    pub fn fitted_to(self, topology: &Topology) -> Self {
        let left = memory_left(topology);
        self.fitted_with_memory(topology, left)
    }

    /// [`MatrixOptions::fitted_to`] with the memory left given (`None`:
    /// unknown), so that the fitting can be tested apart from what the
    /// machine has free at the moment.
    fn fitted_with_memory(mut self, topology: &Topology, left: Option<u64>) -> Self {
        let cache = topology
            .caches
            .iter()
            .map(|c| c.size_bytes)
            .max()
            .unwrap_or(0);
        let (factor, ceiling) = if self.sweep_every_pair {
            (4, 4096 * MIB)
        } else {
            (2, 1024 * MIB)
        };
        let copies = buffer_copies(&self, topology.memory_nodes().len());
        let fit = |base: u64, copies: u64| {
            let want = base
                .max(cache.saturating_mul(factor))
                .min(ceiling.max(base));
            match left {
                Some(left) => want.min(left / 8 / copies).max(MIN_FITTED_BYTES),
                None => want,
            }
        };
        self.latency_bytes = fit(self.latency_bytes, 1);
        self.bandwidth_bytes = fit(self.bandwidth_bytes, copies);
        self.pass_bytes = self.pass_bytes.max(self.bandwidth_bytes);
        self
    }

    pub(crate) fn effort(&self) -> Effort {
        let passes = self.pass_bytes.div_ceil(self.bandwidth_bytes.max(1)).max(1);
        Effort {
            passes: u32::try_from(passes).unwrap_or(u32::MAX),
            reps: self.reps,
        }
    }
}

/// Refuses options that cannot give a measurement.
pub(crate) fn validate(options: &MatrixOptions) -> Result<()> {
    if options.reps == 0 || options.chase.reps == 0 {
        return Err(ProbeError::Zero {
            what: "repetitions",
        });
    }
    if options.max_threads == Some(0) {
        return Err(ProbeError::Zero { what: "threads" });
    }
    if options.chase.loads == 0 {
        return Err(ProbeError::Zero {
            what: "dependent loads",
        });
    }
    if !options.latency && !options.bandwidth {
        return Err(ProbeError::Nothing(
            "neither latency nor bandwidth was asked for".into(),
        ));
    }
    if options.latency_bytes < 2 * LINE_BYTES as u64 {
        return Err(ProbeError::BadSize(format!(
            "the latency buffer needs at least {} bytes",
            2 * LINE_BYTES
        )));
    }
    if options.bandwidth_bytes < 4096 {
        return Err(ProbeError::BadSize(
            "the bandwidth buffer needs at least 4 KiB".into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A described machine whose largest cache is `cache_mib`.
    fn machine_with_cache(cache_mib: u64) -> Topology {
        let mut topo = numakit_topology::load("nehalem-ex-4s").unwrap();
        topo.caches.iter_mut().for_each(|c| c.size_bytes = 1 << 10);
        topo.caches[0].size_bytes = cache_mib * MIB;
        topo
    }

    /// Plenty of memory left: fitting is bound by the cache and ceiling.
    const PLENTY: Option<u64> = Some(1 << 40);

    #[test]
    fn buffers_grow_past_a_large_cache_up_to_the_ceiling() {
        let topo = machine_with_cache(300);
        let quick = MatrixOptions::quick().fitted_with_memory(&topo, PLENTY);
        assert_eq!(quick.latency_bytes, 600 * MIB);
        let copies = buffer_copies(&quick, topo.memory_nodes().len());
        assert_eq!(copies, 4, "cross traffic on four nodes");
        assert_eq!(quick.bandwidth_bytes, 600 * MIB);
        assert!(quick.pass_bytes >= quick.bandwidth_bytes);

        let full = MatrixOptions::full().fitted_with_memory(&topo, PLENTY);
        assert_eq!(full.latency_bytes, 1200 * MIB);

        let huge = machine_with_cache(900);
        let capped = MatrixOptions::quick().fitted_with_memory(&huge, PLENTY);
        assert_eq!(capped.latency_bytes, 1024 * MIB);
        let unknown = MatrixOptions::quick().fitted_with_memory(&huge, None);
        assert_eq!(unknown.latency_bytes, 1024 * MIB);
    }

    #[test]
    fn buffers_shrink_to_an_eighth_of_the_memory_left() {
        let topo = machine_with_cache(300);
        let left = Some(2048 * MIB);
        let quick = MatrixOptions::quick().fitted_with_memory(&topo, left);
        assert_eq!(quick.latency_bytes, 256 * MIB, "2 GiB / 8");
        assert_eq!(quick.bandwidth_bytes, 64 * MIB, "2 GiB / 8 over 4 copies");
        let tiny = MatrixOptions::quick().fitted_with_memory(&topo, Some(MIB));
        assert_eq!(
            tiny.latency_bytes, MIN_FITTED_BYTES,
            "never below the floor"
        );
    }

    #[test]
    fn small_caches_keep_the_default_sizes() {
        let topo = machine_with_cache(8);
        let quick = MatrixOptions::quick().fitted_with_memory(&topo, PLENTY);
        assert_eq!(quick.latency_bytes, 256 * MIB);
        assert_eq!(quick.pass_bytes, 512 * MIB);
    }

    #[test]
    fn options_that_measure_nothing_are_refused() {
        let mut o = MatrixOptions::quick();
        o.reps = 0;
        assert!(matches!(validate(&o), Err(ProbeError::Zero { .. })));
        let mut o = MatrixOptions::quick();
        (o.latency, o.bandwidth) = (false, false);
        assert!(matches!(validate(&o), Err(ProbeError::Nothing(_))));
        let mut o = MatrixOptions::quick();
        o.bandwidth_bytes = 1024;
        assert!(matches!(validate(&o), Err(ProbeError::BadSize(_))));
        assert!(validate(&MatrixOptions::quick()).is_ok());
    }
}
