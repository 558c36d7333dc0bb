//! # numakit-topology
//!
//! What the machine is: NUMA nodes with their CPUs, cores, SMT siblings,
//! sockets, caches and memory; the SLIT distance matrix; the interconnect
//! links of described machines; and which CPUs and nodes this process may
//! actually use. A [`Topology`] is discovered from sysfs ([`discover`]),
//! loaded from a JSON description, or taken from a named preset
//! ([`presets`]). This is the lowest layer of numakit: it reads and
//! describes, and never pins threads or places memory.

// No unsafe code here: what needs it (syscalls, raw buffers) lives in the
// placement and pool crates behind safe wrappers.
#![forbid(unsafe_code)]

pub mod describe;
pub mod error;
pub mod idset;
pub mod model;
pub mod presets;
pub mod sysfs;
pub mod units;

use std::path::Path;

pub use describe::MachineDescription;
pub use error::{Result, TopologyError};
pub use idset::{CpuSet, IdSet, NodeSet};
pub use model::{
    Allowed, Cache, CacheKind, Coherence, Cpu, CpuId, Link, Node, NodeId, Origin, Topology,
};
pub use sysfs::{discover, discover_at};

/// Loads a described machine: a preset name, or a path to a JSON file
/// (anything containing `/` or ending in `.json` is taken as a path).
pub fn load(spec: &str) -> Result<Topology> {
    if spec.contains('/') || spec.ends_with(".json") {
        let path = Path::new(spec);
        let text = std::fs::read_to_string(path).map_err(|source| TopologyError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(MachineDescription::from_json(&text, spec)?.to_topology())
    } else {
        presets::topology(spec)
    }
}
