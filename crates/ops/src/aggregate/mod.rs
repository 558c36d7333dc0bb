//! Group-by aggregation on 64-bit keys: COUNT, SUM, MIN, MAX and AVG of
//! the payload read as a signed 64-bit value.
//!
//! Li §4.3's methods, driven by the shuffle's exchange after every worker
//! split its chunk by owner: shuffle the pieces to their owners (ring,
//! tight, or the naive order as the baseline); move the threads to the
//! data instead (thread migration, the aggregation state stays where it
//! was made); or move them with their state (migration & copy). Each
//! reports where its consumers' time went (`StateMoves`: copying state,
//! aggregating pieces, waiting at the exchange's barriers; Li Figure 11). Two more are built for
//! speed: `Local` (per-worker tables over the own chunk, merged; no rows
//! move) for few groups, and `Partitioned` (more partitions than workers,
//! one cache-sized table at a time) for many. `Auto` decides from an
//! estimate of the number of groups (a HyperLogLog sketch of a sample) and
//! the cache sizes, and says why: on one node between those two; on
//! several, `Local` when its tables fit, otherwise the one of Li's three
//! that the simulator's cost model predicts fastest for this estimate.
//!
//! This module defines the vocabulary and dispatches; methods live in
//! submodules: `table` (the hash table), `hll` and `estimate` (the group
//! estimate), `choose` (the automatic choice on one node),
//! `across_nodes` (on several), `split` (the owner split), `shuffle` and
//! `migration` (Li's three), `local`, `partitioned`, and `source` (an
//! input still in its columns, which the partitioned method scatters in
//! place: [`aggregate_columns`]).

pub mod across_nodes;
pub mod choose;
pub mod columns;
pub mod dense;
pub mod estimate;
pub mod hll;
pub mod local;
pub mod migration;
pub mod partitioned;
pub mod prediction;
pub mod shuffle;
pub mod source;
pub mod split;
pub mod storage;
pub mod table;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use serde::Serialize;

use numakit_pool::Pool;
use numakit_topology::Topology;

pub use choose::CacheBudget;
use numakit_shuffle::Strategy;

use crate::error::{OpsError, Result};
use crate::relation::Relation;
use crate::timing::{PhaseTime, PhaseTimer, Progress};
use source::ColumnSource;

/// How the groups are brought together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AggMethod {
    /// Li: consumers read their pieces from every producer (ring, tight).
    Shuffle,
    /// Li: consumers read their pieces in the naive order, every
    /// consumer from producer 0 first, then 1, ... (tight): the baseline
    /// the ring improves on.
    NaiveShuffle,
    /// Li: consumers move to the producers; their tables stay home.
    Migration,
    /// Li: consumers move to the producers with their tables.
    MigrationCopy,
    /// Per-worker tables over the own chunk, then a merge by owner.
    Local,
    /// More partitions than workers, one cache-sized table at a time.
    Partitioned,
    /// From the estimated groups and the caches: `Local` or `Partitioned`
    /// on one node; on several, `Local` or the fastest of Li's three as
    /// the simulator predicts them.
    Auto,
}

impl AggMethod {
    /// Every method, `Auto` last.
    pub const ALL: [AggMethod; 7] = [
        Self::Shuffle,
        Self::NaiveShuffle,
        Self::Migration,
        Self::MigrationCopy,
        Self::Local,
        Self::Partitioned,
        Self::Auto,
    ];

    /// The name the method is parsed from and reported by, such as
    /// "shuffle" or "migration-copy".
    pub fn name(self) -> &'static str {
        match self {
            Self::Shuffle => "shuffle",
            Self::NaiveShuffle => "naive-shuffle",
            Self::Migration => "migration",
            Self::MigrationCopy => "migration-copy",
            Self::Local => "local",
            Self::Partitioned => "partitioned",
            Self::Auto => "auto",
        }
    }
}

impl std::str::FromStr for AggMethod {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        Self::ALL.into_iter().find(|m| m.name() == s).ok_or_else(|| {
            format!(
                "unknown aggregation method `{s}` (shuffle, naive-shuffle, migration, migration-copy, local, partitioned, auto)"
            )
        })
    }
}

/// The aggregates of one group. `sum` is exact (128-bit).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Group {
    /// The group's key.
    pub key: u64,
    /// Rows with this key, at least 1.
    pub count: u64,
    /// Sum of the rows' payloads read as `i64`, exact.
    pub sum: i128,
    /// Smallest payload (as `i64`) of the group.
    pub min: i64,
    /// Largest payload (as `i64`) of the group.
    pub max: i64,
}

impl Group {
    /// A group holding one value.
    #[inline]
    pub fn of(key: u64, value: i64) -> Self {
        Self {
            key,
            count: 1,
            sum: value as i128,
            min: value,
            max: value,
        }
    }

    /// Adds one value.
    #[inline]
    pub fn add(&mut self, value: i64) {
        self.count += 1;
        self.sum += value as i128;
        self.min = self.min.min(value);
        self.max = self.max.max(value);
    }

    /// Merges another partial aggregate of the same key.
    #[inline]
    pub fn merge(&mut self, other: &Group) {
        self.count += other.count;
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// The mean of the values.
    pub fn avg(&self) -> f64 {
        self.sum as f64 / self.count as f64
    }
}

/// Options of an aggregation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AggOptions {
    /// The method to run, or [`AggMethod::Auto`] to let the estimate choose.
    pub method: AggMethod,
    /// The cache to size tables by; `None`: this machine's, measured
    /// ([`choose::cache_budget`]). Set it to plan for a described cache or
    /// to make the choice independent of the machine (tests).
    pub cache: Option<CacheBudget>,
    /// The machine `Auto` predicts Li's methods on when the pool spans
    /// several nodes (a preset, or a machine `numakit probe --save`
    /// measured); `None`: the pool's topology, with the figures discovery
    /// cannot know assumed ([`numakit_sim::assume`]).
    #[serde(skip)]
    pub cost_model: Option<Arc<Topology>>,
}

impl AggOptions {
    /// `method` with this machine's measured cache and topology.
    pub fn new(method: AggMethod) -> Self {
        Self {
            method,
            cache: None,
            cost_model: None,
        }
    }
}

/// How the exchange-driven methods moved their state (Li Figure 11's
/// "copy state", and a placement check for machines with several nodes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StateMoves {
    /// Tables copied to another node, and their bytes.
    pub copies: u64,
    /// Bytes of all those copies together.
    pub copied_bytes: u64,
    /// (consumer, producer) visits, and those during which the consumer's
    /// table was on the node the consumer ran on.
    pub visits: u64,
    /// Visits during which the consumer's table was on its thread's node.
    pub local_state_visits: u64,
    /// Visits in which the consumer ran elsewhere than scheduled.
    pub misplaced_visits: u64,
}

/// Where the consumers of an exchange-driven method spent the exchange
/// (Li Figure 11), summed over the consumers, in seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct ExchangeBreakdown {
    /// Copying tables to the node the thread moved to (migration & copy).
    pub copy_seconds: f64,
    /// Bringing the pieces' rows into the cache, from wherever they are.
    pub read_seconds: f64,
    /// Updating the tables with rows already in the cache.
    pub update_seconds: f64,
    /// The rest of the exchange: waiting at its barriers for the slowest
    /// consumer of each step, and moving threads.
    pub wait_seconds: f64,
}

/// The outcome of an aggregation.
#[derive(Clone, Debug, Default, Serialize)]
pub struct AggResult {
    /// One entry per distinct key, in the output of the worker that
    /// finished its group (one output per worker, no order): its owner
    /// for the exchange-driven methods and `Local`, whoever took its
    /// partition for `Partitioned`.
    #[serde(skip)]
    pub groups: Vec<Vec<Group>>,
    /// The method that ran (never `Auto`).
    pub method: Option<AggMethod>,
    /// Why that method (for `Auto`; empty otherwise).
    pub reason: String,
    /// On several nodes, what the simulator predicted for Li's methods
    /// when `Auto` weighed them (None otherwise).
    pub prediction: Option<prediction::ExchangePrediction>,
    /// The estimate of distinct keys the tables were sized for: the
    /// sketch's, capped by the key range when keys are dense.
    pub estimated_groups: Option<u64>,
    /// Time of each phase ("estimate groups" first), in order.
    pub phases: Vec<PhaseTime>,
    /// State movement of the exchange-driven methods (None for others).
    pub state_moves: Option<StateMoves>,
    /// Where the exchange-driven methods' consumers spent the exchange
    /// (None for others).
    pub breakdown: Option<ExchangeBreakdown>,
    /// How the tables found each key's group: a hash table (always for
    /// Li's exchange-driven methods) or, on dense keys, a direct-indexed
    /// array (the fast path of `Local` and `Partitioned`).
    pub tables: TableLayout,
}

/// How a group-by's tables found each key's group, as reports name it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TableLayout {
    /// Hash tables: the general case, any keys.
    #[default]
    HashTable,
    /// Direct-indexed arrays over a dense key range (keys outside the range,
    /// if any, in a hash table beside it): the fast path for dense keys.
    Array,
}

impl TableLayout {
    /// The name reports print (`hash table`, `array`).
    pub fn name(self) -> &'static str {
        match self {
            TableLayout::HashTable => "hash table",
            TableLayout::Array => "array",
        }
    }
}

impl AggResult {
    /// Number of groups.
    pub fn group_count(&self) -> usize {
        self.groups.iter().map(Vec::len).sum()
    }

    /// All groups sorted by key.
    pub fn sorted(&self) -> Vec<Group> {
        let mut all: Vec<Group> = self.groups.iter().flatten().copied().collect();
        all.sort_unstable_by_key(|g| g.key);
        all
    }

    /// A hash of the whole result (every group's key, count, sum, min and
    /// max) that does not depend on the order of the groups or of the
    /// workers' outputs: two runs agree when their fingerprints do (up to
    /// a 2^-64 chance).
    pub fn fingerprint(&self) -> u64 {
        self.groups.iter().flatten().fold(0u64, |acc, g| {
            let fields = [
                g.count,
                g.sum as u64,
                (g.sum >> 64) as u64,
                g.min as u64,
                g.max as u64,
            ];
            let row = fields.iter().fold(crate::hash::hash64(g.key), |h, &f| {
                crate::hash::hash64(h ^ f)
            });
            acc.wrapping_add(row)
        })
    }
}

/// Groups `input` by key on `pool`.
///
/// # Examples
///
/// Sales per store (key: store, payload: amount as `i64`), with the
/// method chosen automatically:
///
/// ```
/// use std::sync::Arc;
///
/// use numakit_ops::aggregate::{aggregate, AggMethod, AggOptions, CacheBudget, Group};
/// use numakit_ops::timing::Silent;
/// use numakit_ops::{Relation, Tuple};
/// use numakit_placement::PlacementMode;
/// use numakit_pool::PoolBuilder;
///
/// let topology = Arc::new(numakit_topology::discover()?);
/// let pool = PoolBuilder::new(topology)
///     .threads(2)
///     .placement(PlacementMode::BestEffort)
///     .build()?;
/// let sales = Relation::from_tuples(
///     &pool,
///     &[
///         Tuple::new(1, 5),
///         Tuple::new(2, 3),
///         Tuple::new(1, -2i64 as u64),
///         Tuple::new(2, 4),
///         Tuple::new(1, 9),
///     ],
/// )?;
/// let opts = AggOptions {
///     method: AggMethod::Auto,
///     // A described cache: `None` would measure this machine's first.
///     cache: Some(CacheBudget {
///         private_bytes: 1 << 20,
///         shared_reported_bytes: 32 << 20,
///         shared_usable_bytes: 4 << 20,
///         shared_usable_spread: (4 << 20, 4 << 20),
///         sharers: pool.workers(),
///     }),
///     cost_model: None,
/// };
/// let result = aggregate(&pool, &sales, &opts, &Silent)?;
///
/// // Two groups easily fit a cache: per-worker tables, then a merge.
/// assert_eq!(result.method, Some(AggMethod::Local));
/// assert_eq!(
///     result.sorted(),
///     [
///         Group { key: 1, count: 3, sum: 12, min: -2, max: 9 },
///         Group { key: 2, count: 2, sum: 7, min: 3, max: 4 },
///     ]
/// );
/// assert_eq!(result.sorted()[0].avg(), 4.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn aggregate(
    pool: &Pool,
    input: &Relation,
    opts: &AggOptions,
    progress: &dyn Progress,
) -> Result<AggResult> {
    run(pool, partitioned::Input::Relation(input), opts, progress)
}

/// [`aggregate`] of an input still in its columns (see [`source`]): the
/// partitioned method scatters the rows straight from them; any other
/// method first copies them into a relation (the phase `make tuples`).
pub fn aggregate_columns(
    pool: &Pool,
    input: &ColumnSource<'_>,
    opts: &AggOptions,
    progress: &dyn Progress,
) -> Result<AggResult> {
    run(pool, partitioned::Input::Columns(input), opts, progress)
}

/// Estimates the groups of `input`, chooses the method as `opts` say and
/// runs it.
fn run(
    pool: &Pool,
    input: partitioned::Input<'_>,
    opts: &AggOptions,
    progress: &dyn Progress,
) -> Result<AggResult> {
    let mut timer = PhaseTimer::new(progress);
    timer.start("estimate groups");
    let sample = estimate::SAMPLE_ROWS_PER_WORKER;
    let estimate = match input {
        partitioned::Input::Relation(r) => {
            r.check_pool(pool)?;
            estimate::estimate_groups(pool, r, sample)?
        }
        partitioned::Input::Columns(c) => estimate::estimate_groups_of_source(pool, c, sample)?,
    };
    let budget = opts.cache.unwrap_or_else(|| choose::cache_budget(pool));
    let workers = pool.workers();
    let nodes = pool.nodes();
    let plan = match opts.method {
        AggMethod::Auto if nodes.len() > 1 => across_nodes::choose(
            &estimate,
            &across_nodes::PoolShape { workers, nodes },
            pool.topology(),
            opts.cost_model.as_deref(),
            &budget,
        ),
        AggMethod::Auto => {
            let mut plan = choose::choose(&estimate, workers, &budget);
            if opts.cost_model.is_some() {
                plan.reason
                    .push_str("; the cost model was not consulted: the pool runs on one node");
            }
            plan
        }
        method => choose::fixed(method, &estimate, workers, &budget),
    };
    let (groups, exchanged) = match (plan.method, input) {
        (AggMethod::Partitioned, input) => {
            (partitioned::run(pool, input, &plan, &mut timer)?, None)
        }
        (_, partitioned::Input::Relation(relation)) => {
            run_on_relation(pool, relation, &plan, &mut timer)?
        }
        (_, partitioned::Input::Columns(columns)) => {
            timer.start("make tuples");
            let relation = columns.to_relation(pool)?;
            run_on_relation(pool, &relation, &plan, &mut timer)?
        }
    };
    let tables = match plan.keys {
        choose::KeyLayout::Dense(_) => TableLayout::Array,
        choose::KeyLayout::Hashed => TableLayout::HashTable,
    };
    Ok(AggResult {
        tables,
        groups,
        method: Some(plan.method),
        reason: plan.reason,
        prediction: plan.prediction,
        estimated_groups: Some(plan.expected_groups),
        phases: timer.finish(),
        state_moves: exchanged.map(|(moves, _)| moves),
        breakdown: exchanged.map(|(_, breakdown)| breakdown),
    })
}

/// Groups and exchange figures of a method that reads a relation.
type MethodOutput = (Vec<Vec<Group>>, Option<(StateMoves, ExchangeBreakdown)>);

/// Runs `plan`'s method, any but the partitioned one, on `input`.
fn run_on_relation(
    pool: &Pool,
    input: &Relation,
    plan: &choose::AggregationPlan,
    timer: &mut PhaseTimer<'_>,
) -> Result<MethodOutput> {
    let expected = plan.expected_groups;
    let by_exchange = |strategy, timer: &mut PhaseTimer<'_>| {
        shuffle::run(pool, input, strategy, expected, timer).map(|(g, m, b)| (g, Some((m, b))))
    };
    Ok(match plan.method {
        AggMethod::Shuffle => by_exchange(Strategy::Ring, timer)?,
        AggMethod::NaiveShuffle => by_exchange(Strategy::Naive, timer)?,
        AggMethod::Migration => by_exchange(Strategy::Migration, timer)?,
        AggMethod::MigrationCopy => by_exchange(Strategy::MigrationCopy, timer)?,
        AggMethod::Local => (local::run(pool, input, plan, timer)?, None),
        AggMethod::Partitioned => (
            partitioned::run(pool, partitioned::Input::Relation(input), plan, timer)?,
            None,
        ),
        AggMethod::Auto => {
            return Err(OpsError::InvalidArgument(
                "the automatic choice chose `auto`".into(),
            ))
        }
    })
}
