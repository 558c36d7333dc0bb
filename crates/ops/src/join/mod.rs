//! Equi-joins on 64-bit keys.
//!
//! `join(left, right)` matches tuples of the left relation R (the build
//! side, and the side kept by outer, semi and anti joins) with tuples of
//! the right relation S (the probe side) on equal keys. Algorithms: the
//! no-partitioning hash join, the radix joins PRO and CPRL, and the MPSM
//! sort-merge join. Results are counted, aggregated on the fly (a
//! checksum), or materialized into per-worker row buffers.
//!
//! This module defines the join's vocabulary and dispatches; each
//! algorithm lives in its own submodule.

pub mod choose;
mod merge;
pub mod mpsm;
pub mod npo;
pub mod radix;
mod range_split;
mod shared_table;
pub mod sink;
#[cfg(test)]
mod test_cases;

use crate::hash::hash64;
use serde::Serialize;

use numakit_pool::Pool;
use numakit_shuffle::Exchange;

use crate::error::Result;
use crate::relation::Relation;
use crate::timing::{PhaseTime, Progress};

/// Which rows a join returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum JoinKind {
    /// Every pair (r, s) with r.key == s.key.
    Inner,
    /// The inner pairs, plus every r without a match (right side null).
    LeftOuter,
    /// Every r with at least one match, once.
    Semi,
    /// Every r without a match.
    Anti,
}

impl std::str::FromStr for JoinKind {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "inner" => Ok(Self::Inner),
            "left" | "left-outer" => Ok(Self::LeftOuter),
            "semi" => Ok(Self::Semi),
            "anti" => Ok(Self::Anti),
            other => Err(format!(
                "unknown join kind `{other}` (inner, left, semi, anti)"
            )),
        }
    }
}

/// How a join is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum JoinAlgorithm {
    /// One shared hash table over all nodes; morsel-driven build and probe.
    NoPartition,
    /// Radix join with a global histogram; every thread scatters into all
    /// nodes (PRO).
    RadixPro,
    /// Radix join with node-local partitioning and no global histogram
    /// (CPRL).
    RadixCprl,
    /// Massively parallel sort-merge join (Albutiu et al.).
    Mpsm,
}

impl JoinAlgorithm {
    /// Every algorithm, in the order the CLI lists them.
    pub const ALL: [JoinAlgorithm; 4] = [
        JoinAlgorithm::NoPartition,
        JoinAlgorithm::RadixPro,
        JoinAlgorithm::RadixCprl,
        JoinAlgorithm::Mpsm,
    ];

    /// The short name the algorithm is parsed from and reported by:
    /// "npo", "pro", "cprl" or "mpsm".
    pub fn name(self) -> &'static str {
        match self {
            Self::NoPartition => "npo",
            Self::RadixPro => "pro",
            Self::RadixCprl => "cprl",
            Self::Mpsm => "mpsm",
        }
    }
}

impl std::str::FromStr for JoinAlgorithm {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|a| a.name() == s)
            .ok_or_else(|| format!("unknown join algorithm `{s}` (npo, pro, cprl, mpsm)"))
    }
}

/// What happens to the result rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum JoinOutput {
    /// Count them.
    Count,
    /// Count them and fold them into a checksum (aggregation on the fly).
    Checksum,
    /// Keep them, in one buffer per worker.
    Materialize,
}

/// One result row. `right` is `None` for a left outer join's unmatched
/// rows and for semi and anti joins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct JoinRow {
    /// The key the two sides matched on (the left tuple's key when
    /// `right` is `None`).
    pub key: u64,
    /// Payload of the left (build) tuple.
    pub left: u64,
    /// Payload of the matching right (probe) tuple; `None` for an
    /// unmatched row of a left outer join and for semi and anti joins.
    pub right: Option<u64>,
}

impl JoinRow {
    /// The row's contribution to [`JoinResult::checksum`]: a hash of the
    /// whole row (key, left payload, right payload or its absence), so
    /// the sum over rows is independent of their order but sees payloads
    /// swapped between rows of one key (a plain sum of the fields would
    /// not).
    #[inline]
    pub fn checksum(&self) -> u64 {
        let right = self
            .right
            .map_or(0x5bd1_e995_0000_0001, |r| hash64(r ^ 0xa076_1d64_78bd_642f));
        hash64(hash64(self.key.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ self.left) ^ right)
    }
}

/// Options of a join.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct JoinOptions {
    /// How the join is computed.
    pub algorithm: JoinAlgorithm,
    /// Which rows it returns (inner, left outer, semi, anti).
    pub kind: JoinKind,
    /// Whether result rows are counted, checksummed or kept.
    pub output: JoinOutput,
    /// With [`JoinOutput::Materialize`]: keep at most this many rows, and
    /// fail with [`OpsError::ResultTooLarge`](crate::OpsError::ResultTooLarge)
    /// rather than keep more (a memory limit). The rows are still counted.
    pub row_limit: Option<u64>,
    /// How [`JoinAlgorithm::Mpsm`]'s merge phase visits the sorted runs of
    /// S: any schedule of the shuffle, tight or loose (Li Figure 8
    /// compares naive and ring). [`RING_MERGE`] unless a caller compares.
    /// The other algorithms ignore it.
    pub merge_exchange: Exchange,
}

/// MPSM's default merge exchange: the coordinated ring, in lock-step.
pub const RING_MERGE: Exchange = Exchange {
    strategy: numakit_shuffle::Strategy::Ring,
    sync: numakit_shuffle::SyncMode::Tight,
    seed: 42,
};

/// The outcome of a join.
#[derive(Clone, Debug, Default, Serialize)]
pub struct JoinResult {
    /// Number of result rows.
    pub rows: u64,
    /// Wrapping sum of [`JoinRow::checksum`] over the result rows
    /// (0 unless the output is `Checksum` or `Materialize`).
    pub checksum: u64,
    /// The rows, per worker (empty unless the output is `Materialize`).
    #[serde(skip)]
    pub materialized: Vec<Vec<JoinRow>>,
    /// Time of each phase, in order.
    pub phases: Vec<PhaseTime>,
}

/// Joins `left` (R, build side) with `right` (S, probe side) on `pool`.
///
/// # Examples
///
/// An inner hash join of three customers (key: id, payload: credit)
/// with four orders (key: customer id, payload: order number), keeping
/// the result rows:
///
/// ```
/// use std::sync::Arc;
///
/// use numakit_ops::join::{join, JoinAlgorithm, JoinKind, JoinOptions, JoinOutput, JoinRow};
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
/// let customers = Relation::from_tuples(
///     &pool,
///     &[Tuple::new(1, 100), Tuple::new(2, 200), Tuple::new(3, 300)],
/// )?;
/// let orders = Relation::from_tuples(
///     &pool,
///     &[Tuple::new(2, 7), Tuple::new(3, 8), Tuple::new(3, 9), Tuple::new(4, 10)],
/// )?;
/// let opts = JoinOptions {
///     algorithm: JoinAlgorithm::NoPartition,
///     kind: JoinKind::Inner,
///     output: JoinOutput::Materialize,
///     row_limit: None,
///     merge_exchange: numakit_ops::join::RING_MERGE,
/// };
/// let result = join(&pool, &customers, &orders, &opts, &Silent)?;
/// assert_eq!(result.rows, 3);
///
/// // One buffer of rows per worker, in no particular order.
/// let mut rows: Vec<JoinRow> = result.materialized.concat();
/// rows.sort();
/// let row = |key, left, right| JoinRow { key, left, right: Some(right) };
/// assert_eq!(rows, [row(2, 200, 7), row(3, 300, 8), row(3, 300, 9)]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn join(
    pool: &Pool,
    left: &Relation,
    right: &Relation,
    opts: &JoinOptions,
    progress: &dyn Progress,
) -> Result<JoinResult> {
    // Each algorithm checks that the relations belong to the pool.
    match opts.algorithm {
        JoinAlgorithm::NoPartition => npo::join(pool, left, right, opts, progress),
        JoinAlgorithm::RadixPro | JoinAlgorithm::RadixCprl => {
            radix::join(pool, left, right, opts, progress)
        }
        JoinAlgorithm::Mpsm => mpsm::join(pool, left, right, opts, progress),
    }
}
