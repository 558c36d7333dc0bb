//! Helpers for the crate's unit tests: a pool on this machine.

use std::sync::Arc;

use numakit_placement::PlacementMode;
use numakit_pool::{Pool, PoolBuilder};

/// A pool of `threads` workers (best-effort placement, so that tests run
/// in containers that forbid pinning too).
pub(crate) fn pool(threads: usize) -> Pool {
    let topo = Arc::new(numakit_topology::discover().expect("topology"));
    let threads = threads.min(topo.allowed.cpus.len().max(1));
    PoolBuilder::new(topo)
        .threads(threads)
        .placement(PlacementMode::BestEffort)
        .build()
        .expect("pool")
}
