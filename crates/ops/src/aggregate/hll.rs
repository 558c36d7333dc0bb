//! A HyperLogLog sketch: estimates how many distinct keys a stream holds
//! in `2^precision` bytes, with a relative standard error of about
//! `1.04 / sqrt(2^precision)` (0.8% at the default precision 14).
//!
//! Each worker fills its own sketch; sketches of the same precision merge
//! by taking the larger register, which gives the sketch of the union.
//! The estimate is Ertl's "improved raw estimator" (Ertl 2017, "New
//! cardinality estimation algorithms for HyperLogLog sketches"), which
//! needs neither the linear-counting switch nor empirical bias tables of
//! the original and of HLL++: it is unbiased from one key to 2^64.
//!
//! This module sketches hashes; deciding what to sample and what to do
//! with the estimate is `estimate.rs` and `choose.rs`.

use crate::error::{OpsError, Result};
use crate::hash::hash64;

/// Precision (index bits) used unless told otherwise.
pub const DEFAULT_PRECISION: u32 = 14;
const MIN_PRECISION: u32 = 4;
const MAX_PRECISION: u32 = 18;

/// A HyperLogLog sketch over 64-bit hashes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HyperLogLog {
    precision: u32,
    registers: Vec<u8>,
}

impl HyperLogLog {
    /// An empty sketch with `2^precision` registers (precision 4..=18).
    pub fn new(precision: u32) -> Result<Self> {
        if !(MIN_PRECISION..=MAX_PRECISION).contains(&precision) {
            return Err(OpsError::InvalidArgument(format!(
                "HyperLogLog precision {precision} is outside {MIN_PRECISION}..={MAX_PRECISION}"
            )));
        }
        Ok(Self {
            precision,
            registers: vec![0; 1 << precision],
        })
    }

    /// Index bits: the sketch has `2^precision` one-byte registers (4 to 18).
    pub fn precision(&self) -> u32 {
        self.precision
    }

    /// The relative standard error of the estimate.
    pub fn relative_error(&self) -> f64 {
        1.04 / (self.registers.len() as f64).sqrt()
    }

    /// Adds a key.
    #[inline]
    pub fn insert(&mut self, key: u64) {
        self.insert_hash(hash64(key));
    }

    /// Adds a well-mixed 64-bit hash: the top `precision` bits choose a
    /// register, which keeps the longest run of leading zeros (plus one)
    /// seen in the remaining bits.
    #[inline]
    pub fn insert_hash(&mut self, hash: u64) {
        let p = self.precision;
        let index = (hash >> (64 - p)) as usize;
        let rest = hash << p;
        let rank = (rest.leading_zeros() + 1).min(64 - p + 1) as u8;
        let register = &mut self.registers[index];
        if rank > *register {
            *register = rank;
        }
    }

    /// Makes this the sketch of the union of both streams.
    pub fn merge(&mut self, other: &HyperLogLog) -> Result<()> {
        if other.precision != self.precision {
            return Err(OpsError::InvalidArgument(format!(
                "cannot merge HyperLogLog sketches of precisions {} and {}",
                self.precision, other.precision
            )));
        }
        for (mine, theirs) in self.registers.iter_mut().zip(&other.registers) {
            *mine = (*mine).max(*theirs);
        }
        Ok(())
    }

    /// The estimated number of distinct hashes inserted.
    pub fn estimate(&self) -> f64 {
        let q = 64 - self.precision as usize;
        let m = self.registers.len() as f64;
        let mut histogram = vec![0u64; q + 2];
        for &r in &self.registers {
            histogram[r as usize] += 1;
        }
        let mut z = m * tau(1.0 - histogram[q + 1] as f64 / m);
        for k in (1..=q).rev() {
            z = 0.5 * (z + histogram[k] as f64);
        }
        z += m * sigma(histogram[0] as f64 / m);
        if z.is_infinite() {
            return 0.0;
        }
        let alpha_infinity = 0.5 / std::f64::consts::LN_2;
        alpha_infinity * m * m / z
    }
}

/// Ertl's sigma(x) = x + sum over k >= 1 of x^(2^k) 2^(k-1), for x in
/// [0, 1] (infinite at 1: every register still empty).
fn sigma(x: f64) -> f64 {
    if x >= 1.0 {
        return f64::INFINITY;
    }
    let (mut x, mut y, mut z) = (x, 1.0, x);
    loop {
        x *= x;
        let before = z;
        z += x * y;
        y += y;
        if z == before {
            return z;
        }
    }
}

/// Ertl's tau(x) = (1 - x - sum over k >= 1 of (1 - x^(2^-k))^2 2^-k) / 3,
/// for x in [0, 1].
fn tau(x: f64) -> f64 {
    if x <= 0.0 || x >= 1.0 {
        return 0.0;
    }
    let (mut x, mut y, mut z) = (x, 1.0, 1.0 - x);
    loop {
        x = x.sqrt();
        let before = z;
        y *= 0.5;
        z -= (1.0 - x).powi(2) * y;
        if z == before {
            return z / 3.0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datagen::splitmix64;

    fn sketch_of(keys: impl Iterator<Item = u64>) -> HyperLogLog {
        let mut s = HyperLogLog::new(DEFAULT_PRECISION).unwrap();
        keys.for_each(|k| s.insert(k));
        s
    }

    fn relative_error(estimate: f64, truth: u64) -> f64 {
        (estimate - truth as f64).abs() / truth as f64
    }

    #[test]
    fn empty_and_tiny_streams_are_nearly_exact() {
        assert_eq!(sketch_of(std::iter::empty()).estimate(), 0.0);
        for n in [1u64, 2, 10, 100] {
            let e = sketch_of(0..n).estimate();
            assert!((e - n as f64).abs() <= 1.0 + 0.01 * n as f64, "{n}: {e}");
        }
    }

    #[test]
    fn error_stays_within_four_standard_errors_across_ranges() {
        let bound = 4.0
            * HyperLogLog::new(DEFAULT_PRECISION)
                .unwrap()
                .relative_error();
        // Small (linear-counting range), the transition, and large.
        for n in [1_000u64, 10_000, 40_000, 100_000, 1_000_000] {
            for seed in 0..3u64 {
                let e = sketch_of((0..n).map(|i| splitmix64(i ^ (seed << 40)))).estimate();
                let err = relative_error(e, n);
                assert!(
                    err < bound,
                    "n={n} seed={seed}: {e} ({err:.4} >= {bound:.4})"
                );
            }
        }
    }

    #[test]
    fn mean_error_over_many_sketches_is_unbiased() {
        let n = 30_000u64;
        let mut total = 0.0;
        let runs = 20u64;
        for seed in 0..runs {
            total += sketch_of((0..n).map(|i| (seed << 32) | i)).estimate();
        }
        let mean = total / runs as f64;
        assert!(relative_error(mean, n) < 0.01, "mean {mean}");
    }

    #[test]
    fn duplicates_do_not_count_and_merging_is_union() {
        let a = sketch_of((0..50_000u64).chain(0..50_000));
        let b = sketch_of(25_000..75_000u64);
        let mut u = a.clone();
        u.merge(&b).unwrap();
        assert_eq!(u, sketch_of(0..75_000u64));
        assert!(relative_error(a.estimate(), 50_000) < 0.04);
        assert!(relative_error(u.estimate(), 75_000) < 0.04);
    }

    #[test]
    fn extreme_keys_and_bad_precisions() {
        let s = sketch_of([0, u64::MAX, 0, u64::MAX].into_iter());
        assert!((s.estimate() - 2.0).abs() < 0.1);
        assert!(HyperLogLog::new(3).is_err() && HyperLogLog::new(19).is_err());
        let mut a = HyperLogLog::new(10).unwrap();
        assert!(a.merge(&HyperLogLog::new(11).unwrap()).is_err());
    }
}
