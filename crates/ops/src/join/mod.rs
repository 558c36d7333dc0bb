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

use serde::Serialize;

use numakit_pool::Pool;

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
    pub const ALL: [JoinAlgorithm; 4] = [
        JoinAlgorithm::NoPartition,
        JoinAlgorithm::RadixPro,
        JoinAlgorithm::RadixCprl,
        JoinAlgorithm::Mpsm,
    ];

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
    pub key: u64,
    pub left: u64,
    pub right: Option<u64>,
}

impl JoinRow {
    /// The row's contribution to [`JoinResult::checksum`].
    #[inline]
    pub fn checksum(&self) -> u64 {
        self.key
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .wrapping_add(self.left)
            .wrapping_add(self.right.map_or(0x5bd1_e995, |r| r.rotate_left(17)))
    }
}

/// Options of a join.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct JoinOptions {
    pub algorithm: JoinAlgorithm,
    pub kind: JoinKind,
    pub output: JoinOutput,
    /// With [`JoinOutput::Materialize`]: keep at most this many rows, and
    /// fail with [`OpsError::ResultTooLarge`](crate::OpsError::ResultTooLarge)
    /// rather than keep more (a memory limit). The rows are still counted.
    pub row_limit: Option<u64>,
}

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
