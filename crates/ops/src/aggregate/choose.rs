//! The automatic choice of an aggregation method, from the estimated
//! number of groups and the cache sizes, with a one-line reason.
//!
//! The rule follows Li §4.3: moving the computation wins while the
//! per-thread state is small, shuffling the data wins once it is large.
//! On one machine the extreme of "small state" is a cache-resident table
//! per worker over its own chunk, merged at the end ([`AggMethod::Local`]:
//! no row moves at all, only the small tables); large states are split
//! into more partitions than workers so that each partition's table stays
//! in a worker's private cache ([`AggMethod::Partitioned`]). When the
//! sampled keys span a range not much wider than the groups (dictionary
//! codes, ids), tables are direct-indexed arrays of that range and
//! partitions are runs of consecutive keys (`dense.rs`).
//!
//! Cache sizes come from the pool's topology, but the shared last-level
//! cache is not taken at its word: a virtual machine shares it with its
//! neighbours and a chiplet CPU splits it between core complexes (the
//! development VM reported 32 MiB, later 480 MiB, of which about 4-6 MiB
//! and 8-16 MiB were really usable). We count on what [`crate::cache_probe`]
//! measures, at most the reported size, split among the pool's workers
//! that share it.
//!
//! This module decides; it runs nothing.

use numakit_pool::Pool;
use numakit_topology::Topology;

use crate::aggregate::dense::{KeyRange, CELL_BYTES};
use crate::aggregate::estimate::GroupEstimate;
use crate::aggregate::prediction::ExchangePrediction;
use crate::aggregate::table::bytes_for;
use crate::aggregate::AggMethod;

/// [`AggMethod::Local`] runs while a worker's table is at most this many
/// times its cache budget. Measured here (2 workers, 16M rows, dense
/// keys): local wins at 64K groups (a 2.4 MiB array, 160 vs 240 ms),
/// partitioned from 128K (4.9 MiB, 250 vs 203 ms), so the budget itself.
pub const LOCAL_BUDGET_FACTOR: u64 = 1;
/// A partition's table should take at most this share of the private
/// cache (the rest holds the rows streaming through).
pub const PARTITION_TABLE_SHARE: u64 = 2;
/// Partitions per worker at most (a wider scatter thrashes the TLB and
/// the write buffers).
pub const MAX_PARTS_PER_WORKER: usize = 2048;
/// Keys count as dense when their sampled range is at most this many
/// times the estimated groups, plus [`DENSE_SLACK`].
pub const DENSE_SPREAD: u64 = 2;
/// Keys a dense range may span beyond [`DENSE_SPREAD`] times the
/// estimated groups, so that few groups still count as dense.
pub const DENSE_SLACK: u64 = 4096;

/// Fallbacks when the topology knows no caches.
const DEFAULT_PRIVATE_BYTES: u64 = 256 << 10;
const DEFAULT_SHARED_BYTES: u64 = 8 << 20;

/// The cache one worker can count on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct CacheBudget {
    /// The worker's private cache (its L2), bytes.
    pub private_bytes: u64,
    /// The last-level cache as the topology reports it, bytes.
    pub shared_reported_bytes: u64,
    /// What we count on of it, for all workers sharing it: what the
    /// probe measured, at most the reported size.
    pub shared_usable_bytes: u64,
    /// The smallest and largest usable size the probe's repetitions saw
    /// (both `shared_usable_bytes` when it was given, not measured).
    pub shared_usable_spread: (u64, u64),
    /// Pool workers sharing it.
    pub sharers: usize,
}

impl CacheBudget {
    /// The private cache plus this worker's share of the usable shared one.
    pub fn per_worker_bytes(&self) -> u64 {
        self.private_bytes + self.shared_usable_bytes / self.sharers.max(1) as u64
    }
}

/// The cache budget of the pool's first worker (workers are alike), with
/// the shared cache measured by [`crate::cache_probe::measured`].
pub fn cache_budget(pool: &Pool) -> CacheBudget {
    let probe = crate::cache_probe::measured(pool);
    CacheBudget {
        shared_usable_spread: probe.spread(),
        ..budget_with_usable_shared(pool, probe.usable_bytes)
    }
}

/// The cache budget with `usable_shared` bytes of the last level counted
/// on (capped at the reported size).
pub fn budget_with_usable_shared(pool: &Pool, usable_shared: u64) -> CacheBudget {
    let topo = pool.topology();
    let contexts = pool.worker_contexts();
    let cpu = contexts
        .iter()
        .find_map(|c| c.cpu)
        .or_else(|| topo.allowed.cpus.first());
    let size_of = |level: u8| -> Option<(u64, &numakit_topology::CpuSet)> {
        let cache = match cpu {
            Some(cpu) => topo.cache_of(cpu, level),
            None => topo.caches.iter().find(|c| c.level == level),
        }?;
        Some((cache.size_bytes, &cache.cpus))
    };
    let private_bytes = size_of(2).map_or(DEFAULT_PRIVATE_BYTES, |(b, _)| b);
    let (shared_reported_bytes, sharers) = match last_level(topo).and_then(size_of) {
        Some((bytes, cpus)) => {
            let sharing = contexts
                .iter()
                .filter(|c| c.cpu.is_none_or(|cpu| cpus.contains(cpu)))
                .count();
            (bytes, sharing.max(1))
        }
        None => (DEFAULT_SHARED_BYTES, contexts.len().max(1)),
    };
    CacheBudget {
        private_bytes,
        shared_reported_bytes,
        shared_usable_bytes: usable_shared.min(shared_reported_bytes),
        shared_usable_spread: (usable_shared, usable_shared),
        sharers,
    }
}

/// The highest cache level above L2 the topology knows.
fn last_level(topo: &Topology) -> Option<u8> {
    topo.caches.iter().map(|c| c.level).filter(|&l| l > 2).max()
}

/// How tables find a key's group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyLayout {
    /// A hash table.
    Hashed,
    /// Keys of the range in a direct-indexed array, the rest hashed.
    Dense(KeyRange),
}

/// What to run and why.
#[derive(Clone, Debug, PartialEq)]
pub struct AggregationPlan {
    /// The method to run (never [`AggMethod::Auto`]).
    pub method: AggMethod,
    /// How tables find groups; [`KeyLayout::Dense`] only for `Local` and
    /// `Partitioned` on dense keys.
    pub keys: KeyLayout,
    /// [`AggMethod::Partitioned`]: partitions. With hashed keys, split by
    /// hash (a multiple of the workers); with dense keys, runs of
    /// `2^part_bits` keys of the range, plus one for keys outside it.
    pub parts: usize,
    /// With dense keys, log2 of the keys per range partition; 0 with
    /// hashed keys.
    pub part_bits: u32,
    /// Groups to size tables for (the estimate).
    pub expected_groups: u64,
    /// One line on why [`choose`] picked the method, naming the estimate
    /// and the cache budget; empty for a [`fixed`] plan.
    pub reason: String,
    /// On several nodes, what the simulator predicted for Li's methods
    /// when the automatic choice weighed them.
    pub prediction: Option<ExchangePrediction>,
}

/// The sampled key range, padded by a few sampling gaps on either side,
/// if it is dense: at most [`DENSE_SPREAD`] times the groups (the most
/// the sample is consistent with, plus [`DENSE_SLACK`] keys), so that an
/// array of it costs no more memory than a hash table of the groups.
pub fn dense_range(est: &GroupEstimate) -> Option<KeyRange> {
    let (lo, hi) = est.key_bounds?;
    let gap = (hi - lo) / est.sample_rows.max(1);
    let pad = gap.saturating_mul(4).max(16);
    let (base, last) = (lo.saturating_sub(pad), hi.saturating_add(pad));
    let len = (last - base).checked_add(1)?;
    let limit = est
        .groups_high
        .saturating_mul(DENSE_SPREAD)
        .saturating_add(DENSE_SLACK);
    (len <= limit).then_some(KeyRange { base, len })
}

/// Partitions so that one partition's hash table fits its share of the
/// private cache: workers times a power of two, at most
/// [`MAX_PARTS_PER_WORKER`] per worker.
pub fn hash_parts(groups: u64, workers: usize, budget: &CacheBudget) -> usize {
    let workers = workers.max(1);
    let target = (budget.private_bytes / PARTITION_TABLE_SHARE).max(1);
    let mut per_worker = 1usize;
    while per_worker < MAX_PARTS_PER_WORKER
        && bytes_for(groups / (per_worker * workers) as u64) > target
    {
        per_worker *= 2;
    }
    per_worker * workers
}

/// (partitions, bits) for range partitioning: runs of `2^bits` keys whose
/// array fits its share of the private cache, plus the overflow part; the
/// runs grow when there would be too many.
pub fn range_parts(range: &KeyRange, workers: usize, budget: &CacheBudget) -> (usize, u32) {
    let target = (budget.private_bytes / PARTITION_TABLE_SHARE).max(CELL_BYTES as u64);
    let mut bits = (target / CELL_BYTES as u64).ilog2();
    let max_parts = (MAX_PARTS_PER_WORKER * workers.max(1)) as u64;
    while bits < 63 && range.len.div_ceil(1 << bits) > max_parts {
        bits += 1;
    }
    (range.len.div_ceil(1 << bits) as usize + 1, bits)
}

/// Bytes of one worker's state for the whole input.
fn local_bytes(est: &GroupEstimate, keys: &KeyLayout, workers: usize) -> u64 {
    match keys {
        KeyLayout::Dense(range) => range.len.saturating_mul(CELL_BYTES as u64),
        KeyLayout::Hashed => bytes_for(est.groups.min(est.rows.div_ceil(workers.max(1) as u64))),
    }
}

/// Groups to size tables for: the estimate, capped by the sampled key
/// range when that is dense (there are no more keys than that, strays
/// aside).
pub fn expected_groups(est: &GroupEstimate) -> u64 {
    match dense_range(est) {
        Some(range) => est.groups.min(range.len),
        None => est.groups,
    }
}

/// A plan for `method` (any but `Auto`), sized by the estimate. Local and
/// partitioned aggregation use dense arrays when the keys are dense; the
/// exchange-driven methods keep Li's hash tables.
pub fn fixed(
    method: AggMethod,
    est: &GroupEstimate,
    workers: usize,
    budget: &CacheBudget,
) -> AggregationPlan {
    let keys = match (method, dense_range(est)) {
        (AggMethod::Local | AggMethod::Partitioned, Some(range)) => KeyLayout::Dense(range),
        _ => KeyLayout::Hashed,
    };
    let (parts, part_bits) = match keys {
        KeyLayout::Dense(range) => range_parts(&range, workers, budget),
        KeyLayout::Hashed => (hash_parts(est.groups, workers, budget), 0),
    };
    AggregationPlan {
        method,
        keys,
        parts,
        part_bits,
        expected_groups: expected_groups(est),
        reason: String::new(),
        prediction: None,
    }
}

/// Whether one worker's table over its own chunk fits its cache: the
/// first question of every automatic choice.
pub(crate) struct LocalFit {
    /// The local plan, its reason still empty.
    pub(crate) plan: AggregationPlan,
    /// Whether the table fits the budget.
    pub(crate) fits: bool,
    /// The estimate, the key layout and the table's size, for reasons.
    pub(crate) head: String,
    /// The cache budget, for reasons.
    pub(crate) cache: String,
}

/// Sizes the local method's table against the cache budget.
pub(crate) fn local_fit(est: &GroupEstimate, workers: usize, budget: &CacheBudget) -> LocalFit {
    let plan = fixed(AggMethod::Local, est, workers, budget);
    let state = local_bytes(est, &plan.keys, workers);
    let allowed = budget.per_worker_bytes() * LOCAL_BUDGET_FACTOR;
    let head = format!(
        "~{} groups ({}), {}; a {} {} per worker",
        plan.expected_groups,
        describe_source(est, &plan),
        describe_keys(&plan.keys),
        size(state),
        unit(&plan.keys),
    );
    LocalFit {
        fits: state <= allowed,
        cache: describe_budget(budget, allowed),
        head,
        plan,
    }
}

/// What one table is called in reasons.
fn unit(keys: &KeyLayout) -> &'static str {
    match keys {
        KeyLayout::Dense(_) => "array",
        KeyLayout::Hashed => "hash table",
    }
}

/// The automatic choice between [`AggMethod::Local`] and
/// [`AggMethod::Partitioned`], with its reason (the choice on one node;
/// `across_nodes` weighs Li's methods when the pool spans several).
pub fn choose(est: &GroupEstimate, workers: usize, budget: &CacheBudget) -> AggregationPlan {
    let LocalFit {
        mut plan,
        fits,
        head,
        cache,
    } = local_fit(est, workers, budget);
    if fits {
        plan.reason = format!(
            "{head} fits the {cache}: local pre-aggregation of each chunk, then a merge (no rows move)"
        );
        return plan;
    }
    plan.method = AggMethod::Partitioned;
    let per_part = match plan.keys {
        KeyLayout::Dense(_) => (1u64 << plan.part_bits) * CELL_BYTES as u64,
        KeyLayout::Hashed => bytes_for(est.groups / plan.parts as u64),
    };
    plan.reason = format!(
        "{head} exceeds the {cache}: {} partitions with a {} {} each (within 1/{PARTITION_TABLE_SHARE} of L2), aggregated one at a time",
        plan.parts,
        size(per_part),
        unit(&plan.keys),
    );
    plan
}

fn describe_source(est: &GroupEstimate, plan: &AggregationPlan) -> String {
    let sketch = if est.is_full_scan() {
        format!("HLL over all {} rows", est.rows)
    } else {
        format!("HLL over {} sampled rows", est.sample_rows)
    };
    if plan.expected_groups < est.groups {
        format!("{sketch}: {}, at most the key range", est.groups)
    } else {
        sketch
    }
}

fn describe_keys(keys: &KeyLayout) -> String {
    match keys {
        KeyLayout::Dense(r) => format!(
            "keys dense in {}..={}: direct-indexed arrays",
            r.base,
            r.base + (r.len - 1)
        ),
        KeyLayout::Hashed => "keys hashed".to_string(),
    }
}

fn describe_budget(budget: &CacheBudget, allowed: u64) -> String {
    let (low, high) = budget.shared_usable_spread;
    let spread = if low == high {
        String::new()
    } else {
        format!(", {}-{} over the probe's runs", size(low), size(high))
    };
    format!(
        "cache budget of {} per worker (L2 {} + 1/{} of the {} of L3 measured usable{spread}, of {} reported)",
        size(allowed),
        size(budget.private_bytes),
        budget.sharers,
        size(budget.shared_usable_bytes),
        size(budget.shared_reported_bytes),
    )
}

/// Bytes as MiB (or KiB when small), for reasons.
pub(crate) fn size(bytes: u64) -> String {
    if bytes < 1 << 20 {
        format!("{} KiB", bytes >> 10)
    } else {
        format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::pool;

    fn budget() -> CacheBudget {
        CacheBudget {
            private_bytes: 1 << 20,
            shared_reported_bytes: 32 << 20,
            shared_usable_bytes: 4 << 20,
            shared_usable_spread: (4 << 20, 4 << 20),
            sharers: 2,
        }
    }

    fn est(groups: u64, rows: u64, key_bounds: (u64, u64)) -> GroupEstimate {
        GroupEstimate::exact(groups, rows, key_bounds)
    }

    #[test]
    fn few_groups_stay_local_many_are_partitioned() {
        let b = budget();
        let sparse = (1 << 40, 1 << 60);
        let few = choose(&est(1_000, 64 << 20, sparse), 2, &b);
        assert_eq!(
            (few.method, few.keys),
            (AggMethod::Local, KeyLayout::Hashed)
        );
        assert!(few.reason.contains("~1000 groups") && few.reason.contains("32.0 MiB"));
        let many = choose(&est(16_000_000, 64 << 20, sparse), 2, &b);
        assert_eq!(
            (many.method, many.keys),
            (AggMethod::Partitioned, KeyLayout::Hashed)
        );
        assert!(many.reason.contains("partitions"), "{}", many.reason);
        // Each partition's table is within half the L2.
        assert!(bytes_for(16_000_000 / many.parts as u64) <= b.private_bytes / 2);
    }

    #[test]
    fn dense_keys_get_arrays_and_range_partitions() {
        let b = budget();
        let few = choose(&est(1_000, 64 << 20, (1, 1_000)), 2, &b);
        assert_eq!(few.method, AggMethod::Local);
        let KeyLayout::Dense(r) = few.keys else {
            panic!("{few:?}")
        };
        assert!(
            r.base <= 1 && r.base + r.len > 1_000 && r.len < 1_100,
            "{r:?}"
        );
        assert!(few.reason.contains("dense"), "{}", few.reason);
        let many = choose(&est(16_000_000, 64 << 20, (1, 16_000_000)), 2, &b);
        assert_eq!(many.method, AggMethod::Partitioned);
        let KeyLayout::Dense(r) = many.keys else {
            panic!("{many:?}")
        };
        assert_eq!(many.parts as u64, r.len.div_ceil(1 << many.part_bits) + 1);
        assert!((1u64 << many.part_bits) * CELL_BYTES as u64 <= b.private_bytes / 2);
        // Li's methods keep their hash tables.
        let li = fixed(AggMethod::Shuffle, &est(1_000, 64 << 20, (1, 1_000)), 2, &b);
        assert_eq!(li.keys, KeyLayout::Hashed);
    }

    #[test]
    fn ranges_at_the_edges_of_the_key_space() {
        let all = est(2, 10, (0, u64::MAX));
        assert_eq!(dense_range(&all), None);
        let top = est(5, 5, (u64::MAX - 4, u64::MAX));
        let r = dense_range(&top).unwrap();
        assert_eq!(r.base + (r.len - 1), u64::MAX);
        let bottom = est(5, 5, (0, 4));
        assert_eq!(dense_range(&bottom).unwrap().base, 0);
    }

    #[test]
    fn partitions_are_capped_and_at_least_one_per_worker() {
        let b = budget();
        assert_eq!(hash_parts(0, 2, &b), 2);
        assert_eq!(hash_parts(u64::MAX / 1024, 2, &b), 2 * MAX_PARTS_PER_WORKER);
        let huge = KeyRange {
            base: 0,
            len: u64::MAX,
        };
        let (parts, _) = range_parts(&huge, 2, &b);
        assert!(parts <= 2 * MAX_PARTS_PER_WORKER + 1);
    }

    #[test]
    fn the_budget_of_this_machine_is_sane() {
        let b = cache_budget(&pool(2));
        assert!(b.private_bytes >= 64 << 10, "{b:?}");
        assert!(b.shared_usable_bytes <= b.shared_reported_bytes);
        assert!(b.sharers >= 1 && b.per_worker_bytes() > b.private_bytes);
    }
}
