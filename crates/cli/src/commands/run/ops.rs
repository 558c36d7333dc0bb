//! The operators' part of the main job: a small join with every
//! algorithm, a group-by with the automatic method and a sort, each on
//! built-in generated data and checked against the sequential reference.

use anyhow::{ensure, Result};
use numakit_ops::aggregate::{aggregate, AggMethod, AggOptions};
use numakit_ops::datagen::{generate, GenSpec, KeyDist};
use numakit_ops::join::{join, JoinAlgorithm, JoinKind, JoinOptions, JoinOutput};
use numakit_ops::sort::sort;
use numakit_ops::timing::{total_seconds, Silent};
use numakit_ops::{reference, Relation};
use numakit_pool::Pool;
use serde::Serialize;

use crate::commands::ops::common::rate;

/// What the main job's operator section measured.
#[derive(Serialize)]
pub struct OperatorSummary {
    /// Rows of the join's build side (dense keys) and probe side (foreign
    /// keys into the build side).
    pub join_rows: (usize, usize),
    /// (algorithm, seconds, result rows)
    pub joins: Vec<(JoinAlgorithm, f64, u64)>,
    /// Rows of the group-by's input (uniform keys below 65536).
    pub aggregate_rows: usize,
    /// Groups the group-by found.
    pub groups: usize,
    /// The method the automatic choice ran (`?` if none was reported).
    pub aggregate_method: String,
    /// Why the automatic choice picked it.
    pub aggregate_reason: String,
    /// Seconds of the group-by, its phases together.
    pub aggregate_seconds: f64,
    /// Rows sorted (the join's probe side).
    pub sort_rows: usize,
    /// Seconds of the sort, its phases together.
    pub sort_seconds: f64,
    /// The table layer on a table with a string key and nulls.
    pub tables: TableSummary,
    /// Every result equals the sequential reference.
    pub verified: bool,
}

/// The table layer's part: a group-by and a join of a generated sales
/// table whose key is a string with nulls.
#[derive(Serialize)]
pub struct TableSummary {
    /// Rows of the sales table.
    pub rows: usize,
    /// Groups (cities) found, the null key's group included.
    pub groups: u64,
    /// How the string key became codes (`dictionary of 12 keys`, ...).
    pub group_key_encoding: String,
    /// Seconds of the group-by.
    pub group_seconds: f64,
    /// Rows of the left outer join of the sales with the cities.
    pub join_rows: u64,
    /// The join algorithm the table layer ran.
    pub join_algorithm: String,
    /// Seconds of the join.
    pub join_seconds: f64,
}

/// Groups sales by city (count, sum and average of a decimal amount, the
/// first day) and joins them with the cities (left outer), checking both
/// against the plain reference.
fn tables(pool: &Pool, rows: usize) -> Result<TableSummary> {
    use numakit_frame::aggregate::{self as group, Aggregate, AggregateRequest};
    use numakit_frame::join::{self as table_join, JoinRequest};
    use numakit_frame::{reference, sample, MemoryLimit};
    let sales = sample::sales(rows, 11, pool.workers())?;
    let request = AggregateRequest {
        keys: vec!["city".into()],
        aggregates: Aggregate::parse_list("count,sum:amount,avg:amount,min:day")?,
        method: None,
        memory_limit: MemoryLimit::default(),
        cost_model: None,
    };
    let (report, groups) = group::run(pool, &sales, &request, &Silent)?;
    reference::check_aggregate(&sales, &request, &groups)?;
    let cities = sample::cities(pool.workers())?;
    let mut join_request = JoinRequest::on(&["city"]);
    join_request.kind = JoinKind::LeftOuter;
    let (joined, result) = table_join::run(pool, &sales, &cities, &join_request, &Silent)?;
    reference::check_join(&sales, &cities, &join_request, result.as_ref(), joined.rows)?;
    Ok(TableSummary {
        rows,
        groups: report.groups,
        group_key_encoding: report.key_encoding.describe(),
        group_seconds: report.seconds,
        join_rows: joined.rows,
        join_algorithm: joined.algorithm.name().to_string(),
        join_seconds: joined.seconds,
    })
}

fn gen(pool: &Pool, rows: u64, keys: KeyDist, seed: u64) -> Result<Relation> {
    Ok(generate(pool, &GenSpec { rows, keys, seed })?)
}

/// Probe rows for a main job over `size_mib` MiB: 2^20 per 64 MiB, at
/// least 2^14, so that a small job (as in the multi-node guests) stays
/// quick.
pub fn probe_rows(size_mib: u64) -> u64 {
    size_mib.saturating_mul(1 << 14).max(1 << 14)
}

/// Runs the section with `s_rows` probe rows and a quarter as many build
/// rows.
pub fn operators(pool: &Pool, s_rows: u64) -> Result<OperatorSummary> {
    let r_rows = (s_rows / 4).max(1);
    let r = gen(pool, r_rows, KeyDist::Dense, 1)?;
    let s = gen(pool, s_rows, KeyDist::ForeignKey { build_rows: r_rows }, 2)?;
    let want = reference::join(&r.to_vec(), &s.to_vec(), JoinKind::Inner);
    let want_sum = want
        .iter()
        .fold(0u64, |a, row| a.wrapping_add(row.checksum()));
    let mut joins = Vec::new();
    for algorithm in JoinAlgorithm::ALL {
        let opts = JoinOptions {
            algorithm,
            kind: JoinKind::Inner,
            output: JoinOutput::Checksum,
            row_limit: None,
            merge_exchange: numakit_ops::join::RING_MERGE,
        };
        let result = join(pool, &r, &s, &opts, &Silent)?;
        ensure!(
            result.rows == want.len() as u64 && result.checksum == want_sum,
            "the {} join disagrees with the reference",
            algorithm.name()
        );
        joins.push((algorithm, total_seconds(&result.phases), result.rows));
    }
    crate::common::cache_record::prime(pool); // kept per machine, not in the timing
    let a = gen(pool, s_rows, KeyDist::Uniform { max: 65_536 }, 3)?;
    let agg = aggregate(pool, &a, &AggOptions::new(AggMethod::Auto), &Silent)?;
    ensure!(
        agg.sorted() == reference::aggregate(&a.to_vec()),
        "the aggregation disagrees with the reference"
    );
    let sorted = sort(pool, &s, &Silent)?;
    let out = sorted
        .sorted
        .as_ref()
        .map(Relation::to_vec)
        .unwrap_or_default();
    let mut got = out.clone();
    got.sort_unstable();
    ensure!(
        out.windows(2).all(|w| w[0].key <= w[1].key) && got == reference::sort(&s.to_vec()),
        "the sort disagrees with the reference"
    );
    let tables = tables(pool, s_rows as usize / 4)?;
    Ok(OperatorSummary {
        tables,
        join_rows: (r.len(), s.len()),
        joins,
        aggregate_rows: a.len(),
        groups: agg.group_count(),
        aggregate_method: agg.method.map_or("?", AggMethod::name).to_string(),
        aggregate_reason: agg.reason.clone(),
        aggregate_seconds: total_seconds(&agg.phases),
        sort_rows: s.len(),
        sort_seconds: total_seconds(&sorted.phases),
        verified: true,
    })
}

/// The section's lines in the main job's text output.
pub fn lines(o: &OperatorSummary) -> Vec<String> {
    let total = (o.join_rows.0 + o.join_rows.1) as f64;
    let joins: Vec<String> = o
        .joins
        .iter()
        .map(|(a, s, _)| format!("{} {:.3} s ({})", a.name(), s, rate(total / s)))
        .collect();
    vec![
        format!(
            "6. operators on generated data, every result checked against the sequential reference:"
        ),
        format!(
            "   join {} x {} rows ({} result rows): {}",
            o.join_rows.0,
            o.join_rows.1,
            o.joins.first().map_or(0, |j| j.2),
            joins.join(" | ")
        ),
        format!(
            "   group-by {} rows into {} groups: {} {:.3} s ({}); {}",
            o.aggregate_rows,
            o.groups,
            o.aggregate_method,
            o.aggregate_seconds,
            rate(o.aggregate_rows as f64 / o.aggregate_seconds),
            o.aggregate_reason
        ),
        format!(
            "   sort {} rows: {:.3} s ({})",
            o.sort_rows,
            o.sort_seconds,
            rate(o.sort_rows as f64 / o.sort_seconds)
        ),
        format!(
            "   table layer: sales ({} rows, key a string with nulls) grouped by city into {} groups (count, decimal sum and avg, min date) {:.3} s; left join with the cities on the string key: {} rows, {} {:.3} s",
            o.tables.rows,
            o.tables.groups,
            o.tables.group_seconds,
            o.tables.join_rows,
            o.tables.join_algorithm,
            o.tables.join_seconds
        ),
        "   (numakit join, numakit aggregate, numakit sort; --input/--left/--right for files of any column type)".into(),
    ]
}
