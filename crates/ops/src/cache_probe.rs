//! How much of the shared last-level cache a worker can really count on,
//! measured once per process.
//!
//! sysfs reports the size of the cache the CPU has, not what a thread in a
//! virtual machine or on one chiplet of a big CPU gets: a development VM
//! reported 32 MiB and later 480 MiB of L3, while dependent random loads
//! stayed fast only up to about 4-6 MiB on the first and 8-16 MiB on the
//! second. So the operators size their tables by measurement: a pointer
//! chase over doubling working sets, each a random cycle through its cache
//! lines, finds the knee where the latency climbs to memory's. The usable
//! cache is the largest working set still well below memory latency.
//!
//! The probe costs a few tens of milliseconds and 64 MiB of memory, once;
//! its result is kept for the life of the process. It measures one thread
//! and does not model how threads share the cache: callers split the
//! result among the workers that share it.

use std::sync::OnceLock;
use std::time::Instant;

use crate::datagen::splitmix64;

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
const TIMED_LOADS: usize = 1 << 16;
const LINE_BYTES: u64 = 64;
/// `u32` slots per cache line: the chase stores one index per line.
const SLOTS_PER_LINE: usize = (LINE_BYTES / 4) as usize;

/// What the probe saw.
#[derive(Clone, Debug, PartialEq)]
pub struct CacheProbe {
    /// (working set bytes, nanoseconds per dependent load), ascending.
    pub latencies: Vec<(u64, f64)>,
    /// The largest working set that stayed cached (0: none did).
    pub usable_bytes: u64,
}

/// The process-wide measurement (made on first use).
pub fn measured() -> &'static CacheProbe {
    static PROBE: OnceLock<CacheProbe> = OnceLock::new();
    PROBE.get_or_init(|| {
        let latencies = measure_latencies();
        let usable_bytes = knee(&latencies);
        log::debug!("cache probe: {latencies:?} -> usable {usable_bytes} bytes");
        CacheProbe {
            latencies,
            usable_bytes,
        }
    })
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
    let mut next = vec![0u32; (PROBE_MAX_BYTES / 4) as usize];
    let mut latencies = Vec::new();
    let mut bytes = PROBE_MIN_BYTES;
    while bytes <= PROBE_MAX_BYTES {
        let lines = (bytes / LINE_BYTES) as usize;
        link_random_cycle(&mut next, lines, bytes);
        latencies.push((bytes, chase_ns(&next, lines)));
        bytes *= 2;
    }
    latencies
}

/// Links the first `lines` cache lines of `next` into one random cycle
/// (Sattolo's shuffle), each line's first slot holding the next line's.
fn link_random_cycle(next: &mut [u32], lines: usize, seed: u64) {
    let mut order: Vec<u32> = (0..lines as u32).collect();
    for i in (1..lines).rev() {
        let j = (splitmix64(seed ^ i as u64) % i as u64) as usize;
        order.swap(i, j);
    }
    // Successors in a compact array first (random writes that stay in the
    // cache), then one sequential pass over the probe's memory.
    let mut successor = vec![0u32; lines];
    for i in 0..lines {
        successor[order[i] as usize] = order[(i + 1) % lines];
    }
    for (line, &to) in successor.iter().enumerate() {
        next[line * SLOTS_PER_LINE] = to * SLOTS_PER_LINE as u32;
    }
}

/// Nanoseconds per load of a chase through the cycle.
fn chase_ns(next: &[u32], lines: usize) -> f64 {
    // Warm the cache with one sequential pass (the prefetcher makes it
    // cheap), not by chasing: chasing a set that does not fit would cost
    // a memory latency per line.
    let warm = next[..lines * SLOTS_PER_LINE]
        .iter()
        .step_by(SLOTS_PER_LINE)
        .fold(0u32, |a, &x| a ^ x);
    std::hint::black_box(warm);
    let mut at = 0u32;
    let start = Instant::now();
    for _ in 0..TIMED_LOADS {
        at = next[at as usize];
    }
    let ns = start.elapsed().as_nanos() as f64 / TIMED_LOADS as f64;
    std::hint::black_box(at);
    ns
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn the_cycle_visits_every_line_once() {
        let lines = 1000;
        let mut next = vec![0u32; lines * SLOTS_PER_LINE];
        link_random_cycle(&mut next, lines, 7);
        let mut seen = vec![false; lines];
        let mut at = 0usize;
        for _ in 0..lines {
            assert_eq!(at % SLOTS_PER_LINE, 0);
            assert!(
                !seen[at / SLOTS_PER_LINE],
                "line {} twice",
                at / SLOTS_PER_LINE
            );
            seen[at / SLOTS_PER_LINE] = true;
            at = next[at] as usize;
        }
        assert!(seen.iter().all(|&s| s) && at == 0);
    }

    #[test]
    fn the_measurement_is_ordered_and_bounded() {
        let probe = measured();
        let sizes: Vec<u64> = probe.latencies.iter().map(|&(b, _)| b).collect();
        assert_eq!(sizes.first(), Some(&PROBE_MIN_BYTES));
        assert_eq!(sizes.last(), Some(&PROBE_MAX_BYTES));
        assert!(sizes.windows(2).all(|w| w[1] == 2 * w[0]));
        assert!(probe.latencies.iter().all(|&(_, ns)| ns > 0.0));
        assert!(probe.usable_bytes <= PROBE_MAX_BYTES);
    }
}
