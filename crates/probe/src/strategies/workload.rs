//! The work each instance does under a placement strategy: numakit's own
//! operators on the instance's pool and data. A scan (a morsel-driven sum
//! of every key and payload), a group-by aggregation (the method chosen
//! automatically) and an equi-join (the algorithm recommended for the
//! sizes, its result counted). Each returns the rows it processed and a
//! check value, so that no strategy can skip work.

use numakit_ops::aggregate::{aggregate, AggMethod, AggOptions};
use numakit_ops::datagen::{GenSpec, KeyDist};
use numakit_ops::join::{self, JoinKind, JoinOptions, JoinOutput};
use numakit_ops::timing::Silent;
use numakit_ops::Relation;
use numakit_placement::Placement;
use numakit_pool::Pool;
use serde::Serialize;

use super::instance::{page_check, placed_relation};
use crate::error::Result;
use crate::latency::PageCheck;

/// Tuples each scan task takes: 2 MiB of 16-byte tuples (the pool's
/// default morsel).
const MORSEL_TUPLES: usize = (2 << 20) / 16;

/// What the instances run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Workload {
    /// A morsel-driven wrapping sum of every key and payload of sequential
    /// keys.
    Scan,
    /// A group-by over uniform keys (`Sizes::groups` distinct), the method
    /// chosen automatically.
    Aggregate,
    /// An inner equi-join, counted, of foreign keys against a dense build
    /// side (`Sizes::build_rows` rows), with the algorithm recommended for
    /// the sizes.
    Join,
}

impl Workload {
    /// Every workload, in the order reports list them.
    pub const ALL: [Workload; 3] = [Workload::Scan, Workload::Aggregate, Workload::Join];

    /// The workload's name in options and reports (`scan`, `aggregate`,
    /// `join`).
    pub fn name(self) -> &'static str {
        match self {
            Workload::Scan => "scan",
            Workload::Aggregate => "aggregate",
            Workload::Join => "join",
        }
    }
}

impl std::str::FromStr for Workload {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        Workload::ALL
            .into_iter()
            .find(|w| w.name() == s)
            .ok_or_else(|| format!("unknown workload `{s}` (scan, aggregate, join)"))
    }
}

/// An instance's data for one workload.
pub struct Data {
    /// The scanned, aggregated or probed relation.
    pub main: Relation,
    /// The join's build side.
    pub build: Option<Relation>,
    /// Both relations' pages, and how many lay where the strategy put them.
    pub pages: PageCheck,
}

/// Sizes of an instance's data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Sizes {
    /// Rows scanned, aggregated, or probed by the join.
    pub rows: u64,
    /// Distinct keys of the aggregation.
    pub groups: u64,
    /// Rows of the join's build side (dense keys; every probe row matches).
    pub build_rows: u64,
}

/// Generates and places an instance's data for `workload`.
pub fn data(
    pool: &Pool,
    workload: Workload,
    sizes: Sizes,
    placement: &Placement,
    seed: u64,
) -> Result<Data> {
    let keys = match workload {
        Workload::Scan => KeyDist::Sequential,
        Workload::Aggregate => KeyDist::Uniform {
            max: sizes.groups.max(1) - 1,
        },
        Workload::Join => KeyDist::ForeignKey {
            build_rows: sizes.build_rows.max(1),
        },
    };
    let main = placed_relation(
        pool,
        &GenSpec {
            rows: sizes.rows,
            keys,
            seed,
        },
        placement,
    )?;
    let mut pages = page_check(&main, placement)?;
    let build = if workload == Workload::Join {
        let spec = GenSpec {
            rows: sizes.build_rows.max(1),
            keys: KeyDist::Dense,
            seed: seed ^ 1,
        };
        let build = placed_relation(pool, &spec, placement)?;
        let check = page_check(&build, placement)?;
        pages.pages += check.pages;
        pages.on_node += check.on_node;
        Some(build)
    } else {
        None
    };
    Ok(Data { main, build, pages })
}

/// Runs `workload` once over `data`; returns the rows processed and a
/// value computed from the result.
pub fn run(pool: &Pool, workload: Workload, data: &Data) -> Result<(u64, u64)> {
    let rows = data.main.len() as u64;
    let check = match (workload, &data.build) {
        (Workload::Scan, _) => scan(pool, &data.main)?,
        (Workload::Aggregate, _) => {
            let result = aggregate(pool, &data.main, &AggOptions::new(AggMethod::Auto), &Silent)?;
            result.groups.iter().map(|g| g.len() as u64).sum()
        }
        (Workload::Join, Some(build)) => {
            let (algorithm, _) = join::choose::recommend(pool, build.len(), data.main.len());
            let opts = JoinOptions {
                algorithm,
                kind: JoinKind::Inner,
                output: JoinOutput::Count,
                row_limit: None,
                merge_exchange: numakit_ops::join::RING_MERGE,
            };
            join::join(pool, build, &data.main, &opts, &Silent)?.rows
        }
        (Workload::Join, None) => 0,
    };
    Ok((rows, check))
}

/// The wrapping sum of every key and payload, morsel by morsel.
fn scan(pool: &Pool, relation: &Relation) -> Result<u64> {
    let partials = pool.fold_morsels(
        &relation.node_slices(),
        MORSEL_TUPLES,
        || 0u64,
        |acc, _, m| {
            m.data
                .iter()
                .fold(acc, |a, t| a.wrapping_add(t.key).wrapping_add(t.payload))
        },
    )?;
    Ok(partials.into_iter().fold(0, u64::wrapping_add))
}
