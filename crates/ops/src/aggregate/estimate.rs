//! How many groups will there be? Every worker sketches a sample of its
//! own chunk with a [`HyperLogLog`], the sketches merge into one for the
//! whole sample, and the sample's distinct count is scaled up to the
//! input.
//!
//! Why a sample: a full pass over the keys costs as much as reading the
//! input once, which is most of the time of a few-group aggregation; a
//! stratified random sample of 2^17 rows per worker, in blocks of 64
//! consecutive rows, costs a millisecond or two. The scaling assumes keys
//! are drawn uniformly from D groups, so that n sampled rows show
//! D (1 - e^(-n/D)) distinct keys; it is exact when the sample is the
//! whole input, accurate for keys in random order, and too low for
//! heavily skewed keys (rare keys hide from a sample) and for inputs
//! clustered by key (a block then shows fewer keys than random rows
//! would). [`GroupEstimate::groups_high`] is the same scaling of the
//! sketch's count plus two standard errors: the most groups the sample
//! is consistent with. A saturated sample (nearly every key distinct) is
//! retaken four times larger, which tells 16M groups from 64M.
//! The estimate only steers the choice of method and table sizes; results
//! never depend on it.
//!
//! This module estimates; it does not choose (that is `choose.rs`).

use serde::Serialize;

use numakit_pool::Pool;

use crate::aggregate::hll::{HyperLogLog, DEFAULT_PRECISION};
use crate::aggregate::source::ColumnSource;
use crate::datagen::splitmix64;
use crate::error::Result;
use crate::relation::Relation;

/// Rows each worker sketches.
pub const SAMPLE_ROWS_PER_WORKER: usize = 1 << 17;
/// A sample whose distinct keys are at least this share of its rows is
/// saturated (it shows about n / (2 D) repeats, near the sketch's error).
pub const SATURATED_SHARE: f64 = 0.9;
/// How much larger the second sample of a saturated first one is.
pub const RESAMPLE_FACTOR: usize = 4;
/// Consecutive rows sampled together: random single rows would cost a
/// TLB miss each (a nested page walk on a virtual machine, about 300 ns
/// here), a block of 1 KiB costs one.
pub const SAMPLE_BLOCK: usize = 64;

/// An estimate of the number of groups.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct GroupEstimate {
    /// Estimated distinct keys of the input.
    pub groups: u64,
    /// The most groups the sample is consistent with (two standard
    /// errors of the sketch above `groups`).
    pub groups_high: u64,
    /// Rows sketched.
    pub sample_rows: u64,
    /// The sketch's estimate of distinct keys among them.
    pub sample_distinct: f64,
    /// Rows of the input.
    pub rows: u64,
    /// The smallest and largest sampled keys (None when nothing was).
    pub key_bounds: Option<(u64, u64)>,
}

impl GroupEstimate {
    /// Whether every row was sketched (the estimate is then the sketch's).
    pub fn is_full_scan(&self) -> bool {
        self.sample_rows == self.rows
    }

    /// An estimate that is exactly `groups` over `rows` rows whose keys
    /// span `key_bounds`: what the choosers' tests decide from.
    #[cfg(test)]
    pub(crate) fn exact(groups: u64, rows: u64, key_bounds: (u64, u64)) -> Self {
        GroupEstimate {
            groups,
            groups_high: groups,
            sample_rows: rows.min(1 << 18),
            sample_distinct: groups.min(1 << 18) as f64,
            rows,
            key_bounds: Some(key_bounds),
        }
    }
}

/// Estimates the groups of `input`, sketching at most `per_worker` rows
/// of every chunk (all of it when the chunk is that small). When nearly
/// every sampled key is distinct, the sample cannot tell many groups
/// from very many, so a sample [`RESAMPLE_FACTOR`] times larger is taken.
pub fn estimate_groups(pool: &Pool, input: &Relation, per_worker: usize) -> Result<GroupEstimate> {
    let chunks = input.chunks();
    estimate_with(pool, input.len(), per_worker, |w, sample, want| {
        let tuples = &chunks[w].tuples;
        sample.take(tuples.len(), want, |i| Some(tuples[i].key));
    })
}

/// [`estimate_groups`] of an input still in its columns: each worker
/// samples its segments in proportion to their keyed rows (rows without
/// a key are passed over).
pub fn estimate_groups_of_source(
    pool: &Pool,
    source: &ColumnSource<'_>,
    per_worker: usize,
) -> Result<GroupEstimate> {
    source.check_pool(pool)?;
    estimate_with(pool, source.rows(), per_worker, |w, sample, want| {
        let total = source.worker_rows(w).max(1);
        for segment in source.segments(w) {
            let share = (want * segment.keyed_rows()).div_ceil(total);
            sample.take(segment.keys.len(), share, |i| {
                let keyless = !segment.keyless.is_empty()
                    && segment.keyless.binary_search(&(i as u32)).is_ok();
                (!keyless).then(|| segment.keys[i])
            });
        }
    })
}

/// The estimate from every worker's sample of `want` rows (`take(w,
/// sample, want)`), over `rows` rows; a saturated sample is retaken
/// larger.
fn estimate_with(
    pool: &Pool,
    rows: usize,
    per_worker: usize,
    take: impl Fn(usize, &mut Sample, usize) + Sync,
) -> Result<GroupEstimate> {
    let first = sketch_sample(pool, rows, per_worker, &take)?;
    let saturated = first.sample_distinct >= SATURATED_SHARE * first.sample_rows as f64;
    if saturated && !first.is_full_scan() {
        return sketch_sample(
            pool,
            rows,
            per_worker.saturating_mul(RESAMPLE_FACTOR),
            &take,
        );
    }
    Ok(first)
}

fn sketch_sample(
    pool: &Pool,
    rows: usize,
    per_worker: usize,
    take: &(impl Fn(usize, &mut Sample, usize) + Sync),
) -> Result<GroupEstimate> {
    let samples = pool.broadcast(|ctx| -> Result<Sample> {
        let mut sample = Sample {
            sketch: HyperLogLog::new(DEFAULT_PRECISION)?,
            rows: 0,
            bounds: None,
        };
        take(ctx.index, &mut sample, per_worker);
        Ok(sample)
    })?;
    let mut merged = HyperLogLog::new(DEFAULT_PRECISION)?;
    let mut sample_rows = 0;
    let mut key_bounds: Option<(u64, u64)> = None;
    for sample in samples {
        let sample = sample?;
        merged.merge(&sample.sketch)?;
        sample_rows += sample.rows;
        key_bounds = widen(key_bounds, sample.bounds);
    }
    let rows = rows as u64;
    let sample_distinct = merged.estimate().min(sample_rows as f64);
    let high = sample_distinct * (1.0 + 2.0 * merged.relative_error());
    Ok(GroupEstimate {
        groups: scale_up(sample_distinct, sample_rows, rows),
        groups_high: scale_up(high, sample_rows, rows),
        sample_rows,
        sample_distinct,
        rows,
        key_bounds,
    })
}

/// One worker's sample: its sketch, size and key bounds.
struct Sample {
    sketch: HyperLogLog,
    rows: u64,
    bounds: Option<(u64, u64)>,
}

impl Sample {
    /// Takes every one of `len` rows, or when there are more than `want`,
    /// one block of [`SAMPLE_BLOCK`] consecutive rows at a random place in
    /// each of `want / SAMPLE_BLOCK` equal strata; row i's key is
    /// `key_at(i)` (`None`: a row without a key, passed over).
    fn take(&mut self, len: usize, want: usize, key_at: impl Fn(usize) -> Option<u64>) {
        let mut add = |i: usize| {
            if let Some(key) = key_at(i) {
                self.add(key);
            }
        };
        if len <= want.max(SAMPLE_BLOCK) {
            (0..len).for_each(add);
            return;
        }
        let strata = (want / SAMPLE_BLOCK).max(1);
        let stride = len / strata;
        for i in 0..strata {
            let jitter = splitmix64(i as u64) as usize % (stride - SAMPLE_BLOCK + 1);
            let start = i * stride + jitter;
            (start..start + SAMPLE_BLOCK).for_each(&mut add);
        }
    }

    #[inline]
    fn add(&mut self, key: u64) {
        self.sketch.insert(key);
        self.rows += 1;
        self.bounds = widen(self.bounds, Some((key, key)));
    }
}

/// The smallest interval holding both.
fn widen(a: Option<(u64, u64)>, b: Option<(u64, u64)>) -> Option<(u64, u64)> {
    match (a, b) {
        (Some((lo, hi)), Some((l, h))) => Some((lo.min(l), hi.max(h))),
        (x, None) | (None, x) => x,
    }
}

/// The D for which `sample` uniform draws from D groups are expected to
/// show `distinct` of them, within `distinct..=rows`.
pub fn scale_up(distinct: f64, sample: u64, rows: u64) -> u64 {
    if rows == 0 || sample == 0 {
        return 0;
    }
    let distinct = distinct.clamp(1.0, sample as f64);
    if sample >= rows {
        return (distinct.round() as u64).clamp(1, rows);
    }
    let n = sample as f64;
    let seen = |groups: f64| groups * -(-n / groups).exp_m1();
    if seen(rows as f64) <= distinct {
        return rows;
    }
    let (mut lo, mut hi) = (distinct.ln(), (rows as f64).ln());
    for _ in 0..64 {
        let mid = 0.5 * (lo + hi);
        if seen(mid.exp()) < distinct {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (hi.exp().round() as u64).clamp(distinct as u64, rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::pool;
    use crate::tuple::Tuple;

    #[test]
    fn scaling_inverts_the_uniform_model() {
        let n = 100_000u64;
        for groups in [1_000u64, 64_000, 1_000_000, 4_000_000] {
            let g = groups as f64;
            let seen = g * -(-(n as f64) / g).exp_m1();
            let back = scale_up(seen, n, 64_000_000) as f64;
            assert!((back / g - 1.0).abs() < 1e-3, "{groups}: {back}");
        }
        assert_eq!(scale_up(500.0, 500, 500), 500);
        assert_eq!(scale_up(100_000.0, 100_000, 64_000_000), 64_000_000);
        assert_eq!(scale_up(0.0, 0, 0), 0);
        assert_eq!(scale_up(0.3, 10, 1000), 1);
    }

    fn estimate(rows: usize, distinct: u64, per_worker: usize) -> GroupEstimate {
        let pool = pool(2);
        let input = Relation::from_fn(&pool, rows, |i| {
            Tuple::new(splitmix64(i as u64 ^ 77) % distinct, 0)
        })
        .unwrap();
        estimate_groups(&pool, &input, per_worker).unwrap()
    }

    #[test]
    fn small_inputs_are_sketched_whole() {
        let e = estimate(20_000, 1_000, SAMPLE_ROWS_PER_WORKER);
        assert!(e.is_full_scan());
        assert!((e.groups as f64 / 1000.0 - 1.0).abs() < 0.03, "{e:?}");
        let (lo, hi) = e.key_bounds.unwrap();
        assert!(lo < 10 && (990..1000).contains(&hi), "{e:?}");
    }

    #[test]
    fn samples_scale_up_for_uniform_keys() {
        for distinct in [500u64, 50_000, 400_000] {
            let e = estimate(1_000_000, distinct, 40_000);
            assert!(!e.is_full_scan());
            // The model estimates the key universe the rows are drawn from.
            let ratio = e.groups as f64 / distinct as f64;
            assert!((0.8..1.25).contains(&ratio), "{distinct}: {e:?}");
            assert!(e.groups_high >= e.groups);
        }
    }

    #[test]
    fn saturated_samples_are_retaken_larger() {
        // Whole blocks of SAMPLE_BLOCK rows per worker.
        let e = estimate(1_000_000, 400_000, 2_048);
        assert_eq!(e.sample_rows, 2 * 2_048 * RESAMPLE_FACTOR as u64);
        let few = estimate(1_000_000, 100, 2_048);
        assert_eq!(few.sample_rows, 2 * 2_048);
    }

    #[test]
    fn empty_input_has_no_groups() {
        let pool = pool(2);
        let input = Relation::from_tuples(&pool, &[]).unwrap();
        let e = estimate_groups(&pool, &input, 10).unwrap();
        assert_eq!((e.groups, e.sample_rows, e.key_bounds), (0, 0, None));
        assert_eq!(e.groups_high, 0);
    }
}
