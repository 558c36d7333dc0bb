//! The work of the benchmark's threads: a busy loop of a calibrated
//! length (inside and outside the critical section), and the shared state
//! every critical section updates and checks. It measures nothing itself.

use std::hint::black_box;
use std::time::Instant;

use numakit_topology::NodeId;

/// A busy loop of `iterations` dependent steps; returns its value.
#[inline]
pub(crate) fn spin(iterations: u64) -> u64 {
    let mut x = 1u64;
    for i in 0..iterations {
        x = black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(i));
    }
    x
}

/// Nanoseconds per step of [`spin`] on this thread: the fastest of 5
/// timings of 200,000 steps (in this build: a debug build is slower).
pub(crate) fn ns_per_step() -> f64 {
    const STEPS: u64 = 200_000;
    (0..5)
        .map(|_| {
            let start = Instant::now();
            black_box(spin(STEPS));
            start.elapsed().as_secs_f64() * 1e9 / STEPS as f64
        })
        .fold(f64::INFINITY, f64::min)
        .max(1e-3)
}

/// The steps of [`spin`] that take about `ns` nanoseconds.
pub(crate) fn steps_for(ns: u64, ns_per_step: f64) -> u64 {
    (ns as f64 / ns_per_step).round() as u64
}

/// No critical section yet.
const NO_NODE: NodeId = NodeId::MAX;

/// The data every critical section updates: a count (no update may be
/// lost), the handoffs between nodes as seen from inside, and a cache
/// line of payload that moves with the lock.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) count: u64,
    pub(crate) remote: u64,
    last_node: NodeId,
    payload: [u64; 6],
}

impl Shared {
    pub(crate) fn new() -> Self {
        Shared {
            count: 0,
            remote: 0,
            last_node: NO_NODE,
            payload: [0; 6],
        }
    }

    /// One critical section of a thread on `node`: the bookkeeping, then
    /// `steps` of busy work.
    #[inline]
    pub(crate) fn critical(&mut self, node: NodeId, steps: u64) {
        if self.last_node != node {
            if self.last_node != NO_NODE {
                self.remote += 1;
            }
            self.last_node = node;
        }
        self.count += 1;
        let i = (self.count % 6) as usize;
        self.payload[i] = self.payload[i].wrapping_add(spin(steps));
    }
}
