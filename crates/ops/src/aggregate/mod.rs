//! Group-by aggregation on 64-bit keys: COUNT, SUM, MIN, MAX and AVG of
//! the payload read as a signed 64-bit value.
//!
//! Three methods from Li §4.3: shuffle each worker's pre-aggregated
//! partitions to their owners; move the threads to the data instead
//! (thread migration, the aggregation state stays where it was made);
//! or move them with their state (migration & copy). `Auto` picks one from
//! an estimate of the number of groups (a HyperLogLog sketch) and the
//! cache size, and says why.
//!
//! This module defines the vocabulary and dispatches; methods live in
//! submodules.

use serde::Serialize;

use numakit_pool::Pool;

use crate::error::{OpsError, Result};
use crate::relation::Relation;
use crate::timing::{PhaseTime, Progress};

/// How the groups are brought together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AggMethod {
    Shuffle,
    Migration,
    MigrationCopy,
    Auto,
}

impl AggMethod {
    pub fn name(self) -> &'static str {
        match self {
            Self::Shuffle => "shuffle",
            Self::Migration => "migration",
            Self::MigrationCopy => "migration-copy",
            Self::Auto => "auto",
        }
    }
}

impl std::str::FromStr for AggMethod {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        [
            Self::Shuffle,
            Self::Migration,
            Self::MigrationCopy,
            Self::Auto,
        ]
        .into_iter()
        .find(|m| m.name() == s)
        .ok_or_else(|| {
            format!("unknown aggregation method `{s}` (shuffle, migration, migration-copy, auto)")
        })
    }
}

/// The aggregates of one group. `sum` is exact (128-bit).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Group {
    pub key: u64,
    pub count: u64,
    pub sum: i128,
    pub min: i64,
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct AggOptions {
    pub method: AggMethod,
}

/// The outcome of an aggregation.
#[derive(Clone, Debug, Default, Serialize)]
pub struct AggResult {
    /// One entry per distinct key, per worker that owns it (no order).
    #[serde(skip)]
    pub groups: Vec<Vec<Group>>,
    /// The method that ran (never `Auto`).
    pub method: Option<AggMethod>,
    /// Why that method (for `Auto`; empty otherwise).
    pub reason: String,
    /// The sketch's estimate of distinct keys, when one was made.
    pub estimated_groups: Option<u64>,
    pub phases: Vec<PhaseTime>,
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
}

/// Groups `input` by key on `pool`.
pub fn aggregate(
    pool: &Pool,
    input: &Relation,
    opts: &AggOptions,
    progress: &dyn Progress,
) -> Result<AggResult> {
    input.check_pool(pool)?;
    let _ = progress;
    Err(OpsError::InvalidArgument(format!(
        "the {} aggregation is not built yet",
        opts.method.name()
    )))
}
