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
/// Timed chases per working set: each size's latency is their median, and
/// each repetition's curve gives its own knee (the spread reported).
pub const REPEATS: usize = 3;
/// The least usable cache counted on whatever the probe saw: every machine
/// numakit runs on caches at least this much, and a knee of 0 is noise.
pub const FLOOR_BYTES: u64 = PROBE_MIN_BYTES;
/// Timed loads per working set.
const TIMED_LOADS: u64 = 1 << 16;

/// What the probe saw.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CacheProbe {
    /// (working set bytes, median nanoseconds per dependent load over
    /// [`REPEATS`] chases), ascending.
    pub latencies: Vec<(u64, f64)>,
    /// The knee of each repetition's curve, in bytes: their spread says
    /// how much to trust `usable_bytes`.
    pub runs: Vec<u64>,
    /// The largest working set that stayed cached on the median curve,
    /// at least [`FLOOR_BYTES`].
    pub usable_bytes: u64,
    /// Where the figure comes from when it was not measured just now
    /// (`measured 2026-11-20, cached`); empty when it was.
    pub source: String,
}

impl CacheProbe {
    /// The smallest and largest knee of the repetitions.
    pub fn spread(&self) -> (u64, u64) {
        let min = self.runs.iter().copied().min().unwrap_or(self.usable_bytes);
        let max = self.runs.iter().copied().max().unwrap_or(self.usable_bytes);
        (min, max)
    }

    /// The probe of one set of curves (one per repetition, each ascending
    /// in working-set size, all of the same sizes): each size's median
    /// latency, each curve's knee, and the median curve's knee, floored.
    pub fn of_curves(curves: &[Vec<(u64, f64)>]) -> CacheProbe {
        let sizes: Vec<u64> = curves
            .first()
            .map(|c| c.iter().map(|&(b, _)| b).collect())
            .unwrap_or_default();
        let latencies: Vec<(u64, f64)> = sizes
            .iter()
            .enumerate()
            .map(|(i, &bytes)| {
                let mut ns: Vec<f64> = curves
                    .iter()
                    .filter_map(|c| c.get(i))
                    .map(|p| p.1)
                    .collect();
                ns.sort_by(f64::total_cmp);
                (bytes, ns.get(ns.len() / 2).copied().unwrap_or(f64::NAN))
            })
            .collect();
        CacheProbe {
            runs: curves.iter().map(|c| knee(c)).collect(),
            usable_bytes: knee(&latencies).max(FLOOR_BYTES),
            latencies,
            source: String::new(),
        }
    }
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

/// A new measurement on the calling thread: [`REPEATS`] curves, one
/// cycle per working set shared by all of them.
pub fn measure() -> CacheProbe {
    let probe = CacheProbe::of_curves(&measure_curves());
    log::debug!(
        "cache probe: {:?} -> usable {} bytes (runs {:?})",
        probe.latencies,
        probe.usable_bytes,
        probe.runs
    );
    probe
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

fn measure_curves() -> Vec<Vec<(u64, f64)>> {
    let mut words = vec![0u64; PROBE_MAX_BYTES as usize / 8];
    let mut curves = vec![Vec::new(); REPEATS];
    let mut bytes = PROBE_MIN_BYTES;
    while bytes <= PROBE_MAX_BYTES {
        let lines = (bytes / LINE_BYTES as u64) as usize;
        let start = chase::link_random_cycle(&mut words, lines, bytes);
        for curve in &mut curves {
            curve.push((bytes, chase_ns(&words, lines, start)));
        }
        bytes *= 2;
    }
    curves
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
        assert!(probe.usable_bytes >= FLOOR_BYTES);
        assert_eq!(probe.runs.len(), REPEATS);
        assert!(probe.source.is_empty(), "measured just now");
    }

    #[test]
    fn the_median_curve_decides_and_the_runs_give_the_spread() {
        let curve = |knee_at: u64, noise: f64| -> Vec<(u64, f64)> {
            (0..7)
                .map(|i| {
                    let bytes = MIB << i;
                    (bytes, if bytes <= knee_at { 40.0 } else { 150.0 } + noise)
                })
                .collect()
        };
        let probe = CacheProbe::of_curves(&[
            curve(16 * MIB, 0.0),
            curve(MIB / 2, 0.0), // a disturbed run: nothing cached
            curve(16 * MIB, 1.0),
        ]);
        assert_eq!(probe.usable_bytes, 16 * MIB, "one bad run does not decide");
        assert_eq!(probe.spread(), (0, 16 * MIB));
        let all_bad = CacheProbe::of_curves(&[curve(0, 0.0), curve(0, 0.0), curve(0, 0.0)]);
        assert_eq!(all_bad.usable_bytes, FLOOR_BYTES, "never below the floor");
    }
}
