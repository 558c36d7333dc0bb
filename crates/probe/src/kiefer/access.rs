//! The access pattern of Kiefer et al.'s benchmark: one thread reading or
//! writing random words of an array, each access independent of the last
//! (so, unlike a pointer chase, the CPU overlaps their misses: the time per
//! access is below memory latency, 26 ns on Kiefer's machine).
//!
//! The array is shared memory ([`numakit_placement::AtomicWords`]): the cache-concurrency
//! experiment has several threads write one array at once, and relaxed
//! atomic loads and stores are plain moves. This module only accesses; who
//! runs where is the experiments'.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;

/// Reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    /// Load random words, summing them (relaxed atomic loads).
    Read,
    /// Store a random value to random words (relaxed atomic stores).
    Write,
}

impl Access {
    /// Both accesses, in the order Table 1 lists them.
    pub const BOTH: [Access; 2] = [Access::Read, Access::Write];

    /// `read` or `write`, as setup names and reports spell it.
    pub fn name(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::Write => "write",
        }
    }
}

/// A cheap random stream (xorshift64*), one per thread.
#[derive(Clone, Copy, Debug)]
pub struct Random(u64);

impl Random {
    /// A stream keyed by `seed` (any value, zero included).
    pub fn new(seed: u64) -> Self {
        // Never zero: xorshift stays at zero forever.
        Self(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    /// The next 64 random bits.
    #[inline(always)]
    pub fn next_word(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A uniform index below `len` (`len > 0`), by multiply and shift.
    #[inline(always)]
    pub fn below(&mut self, len: usize) -> usize {
        ((u128::from(self.next_word()) * len as u128) >> 64) as usize
    }
}

/// `count` random accesses to `words`; returns the time taken and a value
/// that depends on what was read (so that reads are not optimized away).
pub fn random_accesses(
    words: &[AtomicU64],
    count: u64,
    access: Access,
    random: &mut Random,
) -> (Duration, u64) {
    if words.is_empty() {
        return (Duration::ZERO, 0);
    }
    let len = words.len();
    let mut sum = 0u64;
    let started = Instant::now();
    match access {
        Access::Read => {
            for _ in 0..count {
                sum = sum.wrapping_add(words[random.below(len)].load(Ordering::Relaxed));
            }
        }
        Access::Write => {
            for _ in 0..count {
                let r = random.next_word();
                let at = ((u128::from(r) * len as u128) >> 64) as usize;
                words[at].store(r, Ordering::Relaxed);
            }
        }
    }
    (started.elapsed(), std::hint::black_box(sum))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_stay_in_range_and_spread() {
        let mut r = Random::new(0);
        let mut hits = [0u32; 10];
        for _ in 0..100_000 {
            hits[r.below(10)] += 1;
        }
        assert!(
            hits.iter().all(|&h| (9_000..11_000).contains(&h)),
            "{hits:?}"
        );
    }

    #[test]
    fn writes_land_and_reads_see_them() {
        let words: Vec<AtomicU64> = (0..64).map(|_| AtomicU64::new(0)).collect();
        let mut r = Random::new(5);
        random_accesses(&words, 10_000, Access::Write, &mut r);
        assert!(words.iter().all(|w| w.load(Ordering::Relaxed) != 0));
        let (_, sum) = random_accesses(&words, 1000, Access::Read, &mut r);
        assert_ne!(sum, 0);
        assert_eq!(random_accesses(&[], 10, Access::Read, &mut r).1, 0);
    }
}
