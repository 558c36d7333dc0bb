//! The pool the unit tests run their jobs on: this machine's topology,
//! best-effort placement, a given number of workers (more than the cores
//! is fine: the tests check results, not speed).

use std::sync::Arc;

use numakit_pool::{Pool, PoolBuilder};

pub(crate) fn pool(threads: usize) -> Pool {
    let topology = Arc::new(numakit_topology::discover().expect("this machine's topology"));
    PoolBuilder::new(topology)
        .placement(numakit_placement::PlacementMode::BestEffort)
        .threads(threads)
        .build()
        .expect("a pool")
}
