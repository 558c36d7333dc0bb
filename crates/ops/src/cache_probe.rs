//! How much of the shared last-level cache a worker can really count on,
//! measured once per pool.
//!
//! sysfs reports the size of the cache the CPU has, not what a thread in a
//! virtual machine or on one chiplet of a big CPU gets: a development VM
//! reported 32 MiB and later 480 MiB of L3, while dependent random loads
//! stayed fast only up to about 4-6 MiB on the first and 8-16 MiB on the
//! second. So the operators size their tables by measurement: a pointer
//! chase over doubling working sets, each a random cycle through its cache
//! lines ([`crate::chase`], the chase the memory probe walks too), finds
//! the knee where the latency climbs to memory's. The usable cache is the
//! largest working set still well below memory latency.
//!
//! The probe costs a few tens of milliseconds and 64 MiB of memory, once
//! per pool: its result is kept in the pool's runtime state
//! ([`numakit_pool::Pool::state`]) and dropped with the pool. Callers that
//! time operators call [`measured`] before the timed region, so that the
//! first operator does not pay for it. It measures the calling thread
//! and does not model how threads share the cache: callers split the
//! result among the workers that share it.

use std::sync::Arc;

use numakit_pool::Pool;

use crate::chase::{self, LINE_BYTES, LINE_WORDS};

/// The largest working set the probe walks; caches above it count as this.
pub const PROBE_MAX_BYTES: u64 = 64 << 20;
/// The smallest working set the probe walks.
const PROBE_MIN_BYTES: u64 = 1 << 20;
/// A working set counts as cached while its latency is at most this share
/// of the latency at [`PROBE_MAX_BYTES`] (one over it). Here cached sets
/// load in 35-47 ns, memory in 136-158 ns, and a set half in the cache
/// (32 MiB) in about 70 ns: 0.4 keeps the half-cached one out in every
/// run, where 0.5 let it in now and then.
const CACHED_BELOW_SHARE_OF_MEMORY: f64 = 0.4;
/// A curve whose largest set is less than this many times slower than
/// its smallest has no knee.
const FLAT_RATIO: f64 = 3.0;
/// Loads at most this slow (nanoseconds) come from a cache: memory takes
/// 60 ns and more even on one socket.
const CACHE_FAST_NS: f64 = 30.0;
/// Timed loads per working set.
const TIMED_LOADS: u64 = 1 << 16;

/// What the probe saw.
#[derive(Clone, Debug, PartialEq)]
pub struct CacheProbe {
    /// (working set bytes, nanoseconds per dependent load), ascending.
    pub latencies: Vec<(u64, f64)>,
    /// The largest working set that stayed cached (0: none did).
    pub usable_bytes: u64,
}

/// The measurement for `pool`: made on the calling thread on the pool's
/// first call, then kept in the pool's state (keyed by [`CacheProbe`])
/// and returned to every later call. Call it before a timed region to
/// keep the measurement out of it. A caller that knows the answer (a
/// test, a saved measurement) may put its own `CacheProbe` in the pool's
/// state first, with [`Pool::state_or_init`].
pub fn measured(pool: &Pool) -> Arc<CacheProbe> {
    pool.state_or_init(measure)
}

/// A new measurement on the calling thread.
fn measure() -> CacheProbe {
    let latencies = measure_latencies();
    let usable_bytes = knee(&latencies);
    log::debug!("cache probe: {latencies:?} -> usable {usable_bytes} bytes");
    CacheProbe {
        latencies,
        usable_bytes,
    }
}

/// The largest working set whose latency is at most 0.4 of the latency of
/// the largest one, with every smaller one also below that. A flat curve
/// (the largest set within [`FLAT_RATIO`] of the smallest) is all cached
/// (a cache beyond what the probe walks) when its loads are cache-fast,
/// else none is.
pub fn knee(latencies: &[(u64, f64)]) -> u64 {
    let (Some(&(_, first_ns)), Some(&(largest, memory_ns))) = (latencies.first(), latencies.last())
    else {
        return 0;
    };
    if memory_ns < first_ns * FLAT_RATIO {
        return if first_ns <= CACHE_FAST_NS {
            largest
        } else {
            0
        };
    }
    let limit = memory_ns * CACHED_BELOW_SHARE_OF_MEMORY;
    let mut usable = 0;
    for &(bytes, ns) in latencies {
        if ns > limit {
            return usable;
        }
        usable = bytes;
    }
    largest
}

fn measure_latencies() -> Vec<(u64, f64)> {
    let mut words = vec![0u64; PROBE_MAX_BYTES as usize / 8];
    let mut latencies = Vec::new();
    let mut bytes = PROBE_MIN_BYTES;
    while bytes <= PROBE_MAX_BYTES {
        let lines = (bytes / LINE_BYTES as u64) as usize;
        let start = chase::link_random_cycle(&mut words, lines, bytes);
        latencies.push((bytes, chase_ns(&words, lines, start)));
        bytes *= 2;
    }
    latencies
}

/// Nanoseconds per load of a chase from `start` through the cycle of the
/// first `lines` lines of `words`.
fn chase_ns(words: &[u64], lines: usize, start: usize) -> f64 {
    // Warm the cache with one sequential pass (the prefetcher makes it
    // cheap), not by chasing: chasing a set that does not fit would cost
    // a memory latency per line.
    let warm = words[..lines * LINE_WORDS]
        .iter()
        .step_by(LINE_WORDS)
        .fold(0u64, |a, &x| a ^ x);
    std::hint::black_box(warm);
    let (taken, _) = chase::chase(words, start, TIMED_LOADS);
    taken.as_nanos() as f64 / TIMED_LOADS as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::pool;

    const MIB: u64 = 1 << 20;

    #[test]
    fn the_knee_is_where_latency_climbs_to_memory() {
        // This VM in November 2026: L3-like latency up to 16 MiB.
        let curve = [
            (MIB, 5.1),
            (2 * MIB, 16.3),
            (4 * MIB, 37.0),
            (8 * MIB, 40.0),
            (16 * MIB, 49.8),
            (32 * MIB, 141.9),
            (64 * MIB, 174.0),
        ];
        assert_eq!(knee(&curve), 16 * MIB);
    }

    #[test]
    fn no_cache_flat_curves_and_empty_probes() {
        let slow = [(MIB, 150.0), (2 * MIB, 160.0), (4 * MIB, 170.0)];
        assert_eq!(knee(&slow), 0);
        let cached = [(MIB, 5.0), (2 * MIB, 6.0), (4 * MIB, 7.0)];
        assert_eq!(knee(&cached), 4 * MIB);
        assert_eq!(knee(&[]), 0);
        // A noisy point above the limit ends the cached range.
        let noisy = [
            (MIB, 5.0),
            (2 * MIB, 90.0),
            (4 * MIB, 8.0),
            (8 * MIB, 100.0),
        ];
        // Half in the cache is not in it.
        let half = [
            (MIB, 5.0),
            (16 * MIB, 47.0),
            (32 * MIB, 71.0),
            (64 * MIB, 152.0),
        ];
        assert_eq!(knee(&half), 16 * MIB);
        assert_eq!(knee(&noisy), MIB);
    }

    #[test]
    fn the_measurement_is_ordered_and_bounded_and_made_once_per_pool() {
        let pool = pool(1);
        let probe = measured(&pool);
        assert!(Arc::ptr_eq(&probe, &measured(&pool)), "kept by the pool");
        let sizes: Vec<u64> = probe.latencies.iter().map(|&(b, _)| b).collect();
        assert_eq!(sizes.first(), Some(&PROBE_MIN_BYTES));
        assert_eq!(sizes.last(), Some(&PROBE_MAX_BYTES));
        assert!(sizes.windows(2).all(|w| w[1] == 2 * w[0]));
        assert!(probe.latencies.iter().all(|&(_, ns)| ns > 0.0));
        assert!(probe.usable_bytes <= PROBE_MAX_BYTES);
    }
}
