//! Generated relations: the key distributions of the join and aggregation
//! literature, reproducible from a seed.
//!
//! Tuple i is a function of (seed, i) only, so the same seed gives the
//! same relation for any number of workers (and the comparison scripts can
//! regenerate it). Payloads are the row number unless the distribution
//! says otherwise, which makes every row identifiable in results.
//!
//! Distributions:
//! - `uniform`: keys uniform in `1..=max`;
//! - `dense`: the keys `1..=n` each once, in random order (a primary key);
//! - `fk`: keys uniform over `1..=n_build`: joined with a `dense` relation
//!   of `n_build` rows, every row matches exactly once (Balkesen et al.'s
//!   workload A);
//! - `zipf`: keys `1..=n` with P(k) proportional to 1/k^s;
//! - `sequential`: keys `1..=n` in order (an adversary for naive hashing);
//! - `sparse`: keys drawn from G random 64-bit values;
//! - `pqrs`: Wang et al.'s PQRS model ([`pqrs`]), bursts in time and hot
//!   key ranges at every scale, as Chakraborty et al. generate their joins.
//!
//! This module makes data; it does not read or write files.

use rand::rngs::SmallRng;
use rand::SeedableRng;
use rand_distr::{Distribution, Zipf};
use serde::Serialize;

use numakit_pool::Pool;

use crate::error::{OpsError, Result};
use crate::relation::Relation;
use crate::tuple::Tuple;

pub mod pqrs;

pub use pqrs::Pqrs;

/// The key domain of `pqrs:P:Q:R` when none is given: Chakraborty et al.'s
/// D (Table I).
pub const PQRS_DOMAIN: u64 = 800_000;

/// A key distribution.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum KeyDist {
    /// Keys drawn uniformly from `1..=max` (`uniform:MAX`).
    Uniform {
        /// The largest key, at least 1.
        max: u64,
    },
    /// The keys `1..=rows` each once, in random order: a primary key
    /// (`dense`).
    Dense,
    /// Keys drawn uniformly from `1..=build_rows`: every row matches one
    /// row of a [`KeyDist::Dense`] relation of `build_rows` rows
    /// (`fk:BUILD_ROWS`).
    ForeignKey {
        /// Rows of the build side the keys refer to, at least 1.
        build_rows: u64,
    },
    /// Keys from `1..=distinct` with P(k) proportional to `1 / k^exponent`
    /// (`zipf:S[:DISTINCT]`).
    Zipf {
        /// Number of possible keys, at least 1 (default: the rows).
        distinct: u64,
        /// The skew s, finite and at least 0 (0 is uniform).
        exponent: f64,
    },
    /// The keys `1..=rows` in row order (`sequential`).
    Sequential,
    /// Keys drawn uniformly from `groups` distinct random 64-bit values
    /// spread over the whole range (`sparse:GROUPS`): the shape of real
    /// group-by keys, which no direct-indexed array can hold, where
    /// `uniform:MAX` gives the dense keys `1..=MAX`.
    Sparse {
        /// Number of distinct keys, at least 1.
        groups: u64,
    },
    /// Keys of the PQRS model in `1..=domain`, rows in time order
    /// (`pqrs:P:Q:R[:DOMAIN]`, S = 1 - P - Q - R; see [`pqrs`]).
    Pqrs(Pqrs),
}

impl KeyDist {
    /// Parses `uniform:MAX`, `dense`, `fk:BUILD_ROWS`, `zipf:S` or
    /// `zipf:S:DISTINCT`, `sequential`, `sparse:GROUPS` and
    /// `pqrs:P:Q:R[:DOMAIN]` (domain default [`PQRS_DOMAIN`]). `rows` is the
    /// relation's size, the default number of distinct Zipf keys.
    pub fn parse(spec: &str, rows: u64) -> Result<Self> {
        let bad = || {
            OpsError::InvalidArgument(format!(
                "bad key distribution `{spec}` (uniform:MAX, sparse:GROUPS, dense, fk:BUILD_ROWS, zipf:S[:DISTINCT], sequential, pqrs:P:Q:R[:DOMAIN])"
            ))
        };
        let parts: Vec<&str> = spec.split(':').collect();
        let num = |s: &str| s.replace('_', "").parse::<u64>().map_err(|_| bad());
        let dist = match parts.as_slice() {
            ["uniform", max] => KeyDist::Uniform { max: num(max)? },
            ["dense"] => KeyDist::Dense,
            ["sequential"] => KeyDist::Sequential,
            ["sparse", g] => KeyDist::Sparse { groups: num(g)? },
            ["fk", n] => KeyDist::ForeignKey {
                build_rows: num(n)?,
            },
            ["pqrs", p, q, r] | ["pqrs", p, q, r, _] => {
                let share = |x: &str| x.parse::<f64>().map_err(|_| bad());
                KeyDist::Pqrs(Pqrs {
                    p: share(p)?,
                    q: share(q)?,
                    r: share(r)?,
                    domain: match parts.get(4) {
                        Some(d) => num(d)?,
                        None => PQRS_DOMAIN,
                    },
                })
            }
            ["zipf", s] | ["zipf", s, _] => KeyDist::Zipf {
                exponent: s.parse().map_err(|_| bad())?,
                distinct: match parts.get(2) {
                    Some(d) => num(d)?,
                    None => rows.max(1),
                },
            },
            _ => return Err(bad()),
        };
        dist.validate()?;
        Ok(dist)
    }

    fn validate(&self) -> Result<()> {
        let bad = |why: &str| Err(OpsError::InvalidArgument(why.to_string()));
        match *self {
            KeyDist::Uniform { max: 0 } => bad("uniform:MAX needs MAX >= 1"),
            KeyDist::ForeignKey { build_rows: 0 } => bad("fk:BUILD_ROWS needs BUILD_ROWS >= 1"),
            KeyDist::Sparse { groups: 0 } => bad("sparse:GROUPS needs GROUPS >= 1"),
            KeyDist::Zipf { distinct: 0, .. } => bad("zipf needs at least one distinct key"),
            KeyDist::Zipf { exponent, .. } if !(exponent >= 0.0 && exponent.is_finite()) => {
                bad("the zipf exponent must be a finite number >= 0")
            }
            KeyDist::Pqrs(model) => match model.problem() {
                Some(why) => bad(why),
                None => Ok(()),
            },
            _ => Ok(()),
        }
    }
}

/// What to generate.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct GenSpec {
    /// Number of tuples in the whole relation.
    pub rows: u64,
    /// How the keys are drawn.
    pub keys: KeyDist,
    /// Seed of the generator: the same seed gives the same relation.
    pub seed: u64,
}

/// The `n`-th key of [`KeyDist::Sparse`]: a bijection of `n`, so `G`
/// values of `n` give `G` distinct keys, spread over the 64-bit range.
#[inline]
pub fn sparse_key(n: u64) -> u64 {
    splitmix64(n ^ 0x5DEE_CE66_D1CE_4E5B)
}

/// SplitMix64: a fast, well-mixed function of one 64-bit word.
#[inline]
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A random permutation of `0..n` evaluated pointwise: a 4-round Feistel
/// network on the next power of four, cycle-walking until the value falls
/// inside `0..n`.
pub struct Permutation {
    n: u64,
    half_bits: u32,
    keys: [u64; 4],
}

impl Permutation {
    /// The permutation of `0..n` that `seed` picks.
    pub fn new(n: u64, seed: u64) -> Self {
        let bits = 64 - n.saturating_sub(1).leading_zeros();
        let half_bits = bits.div_ceil(2).max(1);
        let keys = [1, 2, 3, 4].map(|r| splitmix64(seed ^ (r * 0x1234_5678_9abc_def1)));
        Self { n, half_bits, keys }
    }

    fn round(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half_bits) - 1;
        let (mut l, mut r) = (x >> self.half_bits, x & mask);
        for k in self.keys {
            let f = splitmix64(r ^ k) & mask;
            (l, r) = (r, l ^ f);
        }
        (l << self.half_bits) | r
    }

    /// The image of `i` (which must be below `n`).
    pub fn at(&self, i: u64) -> u64 {
        let mut x = self.round(i);
        while x >= self.n {
            x = self.round(x);
        }
        x
    }
}

/// Generates `spec` on `pool`.
pub fn generate(pool: &Pool, spec: &GenSpec) -> Result<Relation> {
    generate_rows(pool, spec, 0..spec.rows)
}

/// Generates only the tuples `rows` (a range of row numbers below
/// `spec.rows`) of the relation `spec` describes: tuple j of the result is
/// tuple `rows.start + j` of [`generate`]'s. The slices of a partition of
/// `0..spec.rows` therefore add up to the whole relation, however many
/// parts there are (the distributed join generates each process's share
/// this way).
pub fn generate_rows(pool: &Pool, spec: &GenSpec, rows: std::ops::Range<u64>) -> Result<Relation> {
    spec.keys.validate()?;
    if rows.start > rows.end || rows.end > spec.rows {
        return Err(OpsError::InvalidArgument(format!(
            "rows {}..{} are not inside a relation of {} rows",
            rows.start, rows.end, spec.rows
        )));
    }
    let len = usize::try_from(rows.end - rows.start)
        .map_err(|_| OpsError::InvalidArgument(format!("{} rows do not fit", spec.rows)))?;
    let first = rows.start;
    let seed = splitmix64(spec.seed);
    match spec.keys {
        KeyDist::Uniform { max } => Relation::from_fn(pool, len, |j| {
            let i = first + j as u64;
            Tuple::new(splitmix64(seed ^ i) % max + 1, i)
        }),
        KeyDist::ForeignKey { build_rows } => Relation::from_fn(pool, len, |j| {
            let i = first + j as u64;
            Tuple::new(splitmix64(seed ^ i) % build_rows + 1, i)
        }),
        KeyDist::Dense => {
            let perm = Permutation::new(spec.rows, seed);
            Relation::from_fn(pool, len, |j| {
                let i = first + j as u64;
                Tuple::new(perm.at(i) + 1, i)
            })
        }
        KeyDist::Sequential => Relation::from_fn(pool, len, |j| {
            let i = first + j as u64;
            Tuple::new(i + 1, i)
        }),
        KeyDist::Sparse { groups } => Relation::from_fn(pool, len, |j| {
            let i = first + j as u64;
            Tuple::new(sparse_key(splitmix64(seed ^ i) % groups), i)
        }),
        KeyDist::Pqrs(model) => Relation::from_fn(pool, len, |j| {
            let i = first + j as u64;
            Tuple::new(model.key(i, spec.rows, seed ^ splitmix64(i)), i)
        }),
        KeyDist::Zipf { distinct, exponent } => {
            let zipf = Zipf::new(distinct as f64, exponent)
                .map_err(|e| OpsError::InvalidArgument(format!("zipf: {e}")))?;
            Relation::from_fn(pool, len, |j| {
                let i = first + j as u64;
                let mut rng = SmallRng::seed_from_u64(seed ^ splitmix64(i));
                let k: f64 = zipf.sample(&mut rng);
                Tuple::new(k as u64, i)
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::testing::pool;

    #[test]
    fn slices_add_up_to_the_whole_relation() {
        let pool = pool(2);
        let dists = [
            KeyDist::Uniform { max: 50 },
            KeyDist::Dense,
            KeyDist::ForeignKey { build_rows: 7 },
            KeyDist::Zipf {
                distinct: 100,
                exponent: 1.2,
            },
            KeyDist::Sequential,
            KeyDist::Sparse { groups: 40 },
            KeyDist::Pqrs(Pqrs {
                p: 0.4,
                q: 0.1,
                r: 0.2,
                domain: 500,
            }),
        ];
        for keys in dists {
            let spec = GenSpec {
                rows: 1001,
                keys,
                seed: 9,
            };
            let whole = generate(&pool, &spec).unwrap().to_vec();
            let mut parts = Vec::new();
            for r in [0..0, 0..333, 333..334, 334..1001] {
                parts.extend(generate_rows(&pool, &spec, r).unwrap().to_vec());
            }
            assert_eq!(parts, whole, "{keys:?}");
        }
        let spec = GenSpec {
            rows: 10,
            keys: KeyDist::Dense,
            seed: 1,
        };
        assert!(generate_rows(&pool, &spec, 5..11).is_err());
    }

    #[test]
    fn permutation_is_a_bijection() {
        for n in [1u64, 2, 3, 7, 64, 1000, 4097] {
            let p = Permutation::new(n, 9);
            let seen: HashSet<u64> = (0..n).map(|i| p.at(i)).collect();
            assert_eq!(seen.len() as u64, n);
            assert!(seen.iter().all(|&x| x < n));
        }
    }

    #[test]
    fn dense_and_fk_make_workload_a() {
        let pool = pool(2);
        let build = generate(
            &pool,
            &GenSpec {
                rows: 5000,
                keys: KeyDist::Dense,
                seed: 1,
            },
        )
        .unwrap();
        let mut keys: Vec<u64> = build.to_vec().iter().map(|t| t.key).collect();
        keys.sort_unstable();
        assert_eq!(keys, (1..=5000).collect::<Vec<_>>());
        let probe = generate(
            &pool,
            &GenSpec {
                rows: 20000,
                keys: KeyDist::ForeignKey { build_rows: 5000 },
                seed: 2,
            },
        )
        .unwrap();
        assert!(probe.to_vec().iter().all(|t| (1..=5000).contains(&t.key)));
    }

    #[test]
    fn zipf_is_skewed_and_in_range() {
        let pool = pool(2);
        let spec = GenSpec {
            rows: 20000,
            keys: KeyDist::parse("zipf:1.5:1000", 0).unwrap(),
            seed: 3,
        };
        let r = generate(&pool, &spec).unwrap().to_vec();
        assert!(r.iter().all(|t| (1..=1000).contains(&t.key)));
        let ones = r.iter().filter(|t| t.key == 1).count();
        assert!(
            ones > 20000 / 4,
            "key 1 should be the most frequent: {ones}"
        );
    }

    #[test]
    fn same_seed_same_data_any_worker_count() {
        let spec = GenSpec {
            rows: 3333,
            keys: KeyDist::Uniform { max: 100 },
            seed: 7,
        };
        let a = generate(&pool(1), &spec).unwrap().to_vec();
        let b = generate(&pool(2), &spec).unwrap().to_vec();
        assert_eq!(a, b);
    }

    #[test]
    fn bad_specs_are_refused() {
        for bad in [
            "uniform",
            "uniform:0",
            "zipf:-1",
            "zipf:x",
            "fk:0",
            "nope",
            "zipf:1:0",
            "pqrs:0.5:0.5",
            "pqrs:0.5:0.5:0.5",
            "pqrs:0.1:0.1:0.1:0",
            "pqrs:x:0.1:0.1",
        ] {
            assert!(KeyDist::parse(bad, 10).is_err(), "{bad}");
        }
        assert_eq!(
            KeyDist::parse("pqrs:0.4:0.1:0.2", 1).unwrap(),
            KeyDist::Pqrs(Pqrs {
                p: 0.4,
                q: 0.1,
                r: 0.2,
                domain: PQRS_DOMAIN
            })
        );
        assert_eq!(
            KeyDist::parse("pqrs:0.25:0.25:0.25:1024", 1).unwrap(),
            KeyDist::Pqrs(Pqrs {
                p: 0.25,
                q: 0.25,
                r: 0.25,
                domain: 1024
            })
        );
        assert_eq!(
            KeyDist::parse("fk:16_000", 1).unwrap(),
            KeyDist::ForeignKey { build_rows: 16000 }
        );
    }

    #[test]
    fn sparse_keys_are_that_many_distinct_values_over_the_whole_range() {
        let pool = pool(2);
        let spec = GenSpec {
            rows: 50_000,
            keys: KeyDist::parse("sparse:1000", 0).expect("grammar"),
            seed: 5,
        };
        let rel = generate(&pool, &spec).expect("generated");
        let keys: HashSet<u64> = rel.to_vec().iter().map(|t| t.key).collect();
        assert_eq!(keys.len(), 1000, "every one of the groups drawn");
        assert!(keys.iter().any(|&k| k > u64::MAX / 2), "high keys too");
        assert!(
            keys.iter().all(|&k| k > 1 << 20),
            "none small enough for an array"
        );
        assert!(KeyDist::parse("sparse:0", 0).is_err());
    }
}
