//! Will it fit? Memory checks made before a probe allocates anything, so
//! that a size too big for the machine, the cgroup or a node is one clear
//! error instead of an out-of-memory kill.
//!
//! Bound memory is not spilled to other nodes: a node that runs out kills
//! the process, so a node's free memory is checked too, where the kernel's
//! per-node figures can be trusted (they add up to the machine's). The
//! process as a whole is held to the placement layer's [`MemoryLimit`],
//! the limit every command shares. This module checks; it does not
//! reserve.

use numakit_placement::MemoryLimit;
use numakit_topology::units::human_bytes;
use numakit_topology::{sysfs, NodeId, Topology};

use crate::error::{ProbeError, Result};

/// Share of the free memory a probe may take (the rest is the system's).
const USABLE_SHARE: f64 = 0.9;

/// Refuses `bytes` on `node` when the limit or the node lacks them.
pub fn ensure_fits(
    limit: &MemoryLimit,
    topology: &Topology,
    node: Option<NodeId>,
    bytes: u64,
    what: &str,
) -> Result<()> {
    limit.check(what, bytes)?;
    if let Some(node) = node {
        if topology.node_memory_is_reliable() {
            let place = format!(" on node {node}");
            ensure_below(sysfs::node_mem_free(node), bytes, what, &place)?;
        }
    }
    Ok(())
}

fn ensure_below(left: Option<u64>, bytes: u64, what: &str, place: &str) -> Result<()> {
    match left {
        Some(left) if bytes as f64 > left as f64 * USABLE_SHARE => Err(ProbeError::DoesNotFit {
            what: what.to_string(),
            need: human_bytes(bytes),
            left: human_bytes(left),
            place: place.to_string(),
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_size_above_what_is_left_is_refused_with_both_sizes() {
        let err = ensure_below(Some(1 << 30), 2 << 30, "the latency buffer", " on node 3")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "the latency buffer needs 2 GiB but only 1 GiB is available on node 3"
        );
        assert!(ensure_below(Some(1 << 30), 1 << 20, "x", "").is_ok());
        assert!(ensure_below(None, u64::MAX, "x", "").is_ok());
    }

    #[test]
    fn an_absurd_size_never_fits_this_machine() {
        let topo = numakit_topology::discover().unwrap();
        let limit = MemoryLimit::default();
        let err = ensure_fits(&limit, &topo, None, u64::MAX / 2, "a test buffer").unwrap_err();
        assert!(err.to_string().contains("memory limit"), "{err}");
        let first = topo.compute_nodes().first().copied();
        assert!(ensure_fits(&limit, &topo, first, 1 << 20, "x").is_ok());
    }
}
