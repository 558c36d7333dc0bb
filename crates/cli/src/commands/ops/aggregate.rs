//! `numakit aggregate`: group-by COUNT, SUM, MIN, MAX and AVG on generated
//! data or a file, each chosen method measured side by side; `--sweep`
//! shows Li Figure 10's crossover as the number of groups grows.

use std::sync::Arc;

use anyhow::{ensure, Context, Result};
use numakit_io::{Column, IntKind, Table};
use numakit_ops::aggregate::{
    aggregate, AggMethod, AggOptions, AggResult, ExchangeBreakdown, Group,
};
use numakit_ops::datagen::KeyDist;
use numakit_ops::{reference, PhaseTime, Relation};
use numakit_placement::PlacementMode;
use numakit_pool::Pool;
use numakit_topology::Topology;
use serde::Serialize;

use crate::commands::ops::args::AggregateArgs;
use crate::commands::ops::common::{
    build_pool, check_verify_size, cost_model, generated, median_phases, throughput_header,
    write_table, Throughput,
};
use crate::commands::ops::tables;
use crate::common::output;
use crate::common::parse::key_dist;
use crate::common::progress::Spinner;
use crate::render::format::{bytes, table};

/// One method's measurements.
#[derive(Serialize)]
pub struct MethodReport {
    /// What was asked for (`auto` included).
    pub asked: AggMethod,
    /// What ran.
    pub ran: Option<AggMethod>,
    /// Why `auto` picked the method it ran (empty for a named method).
    pub reason: String,
    /// The estimate of distinct keys the tables were sized for.
    pub estimated_groups: Option<u64>,
    /// How the tables found groups: `hash-table` or `array` (dense keys).
    pub tables: numakit_ops::aggregate::TableLayout,
    /// On several nodes, what the simulator predicted for Li's methods
    /// when `auto` weighed them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prediction: Option<numakit_ops::aggregate::across_nodes::ExchangePrediction>,
    /// Li's exchange-driven methods: where their consumers spent the
    /// exchange (copy, read, update, wait; consumer-seconds, each the
    /// median over the repetitions).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub breakdown: Option<ExchangeBreakdown>,
    /// Seconds over the repetitions, and the rates of the median run.
    #[serde(flatten)]
    pub throughput: Throughput,
    /// Median seconds of each phase over the repetitions.
    pub phases: Vec<PhaseTime>,
}

/// Everything `numakit aggregate` reports.
#[derive(Serialize)]
pub struct AggregateReport {
    /// Rows of the generated input.
    pub input_rows: u64,
    /// Worker threads of the pool.
    pub threads: usize,
    /// Number of groups (the same for every method).
    pub rows: u64,
    /// Median seconds of the fastest method.
    pub seconds: f64,
    /// One report per method asked for, in the order given.
    pub methods: Vec<MethodReport>,
    /// Whether the groups were checked against the sequential reference
    /// (`--verify`; a mismatch fails the command instead).
    pub verified: bool,
    /// With --sweep: (groups, method, median seconds).
    pub sweep: Vec<(u64, AggMethod, f64)>,
    /// The usable cache the tables were sized by: the figure, each
    /// repetition's, and where it comes from.
    pub usable_cache: numakit_ops::cache_probe::CacheProbe,
}

fn methods(names: &[String]) -> Result<Vec<AggMethod>> {
    let mut list = Vec::new();
    for name in names {
        if name == "all" {
            list.extend(AggMethod::ALL);
        } else {
            list.push(name.parse().map_err(crate::common::usage::invalid)?);
        }
    }
    crate::usage_ensure!(!list.is_empty(), "--method names no method");
    list.dedup();
    Ok(list)
}

/// The generated input relation (keys unsigned).
fn input(pool: &Pool, args: &AggregateArgs) -> Result<Relation> {
    let dist = match &args.keys {
        Some(spec) => key_dist(spec, args.rows)?,
        None => KeyDist::Sparse {
            groups: args.groups,
        },
    };
    let mut rel = generated(pool, ("--rows", args.rows), dist, args.common.seed)?;
    // Values in -1000..1000, like the comparison workload.
    for chunk in rel.chunks_mut() {
        for t in chunk.tuples.iter_mut() {
            let v = (numakit_ops::datagen::splitmix64(t.payload) % 2000) as i64 - 1000;
            t.payload = v as u64;
        }
    }
    Ok(rel)
}

/// Runs every method `reps` times; returns the reports and one result.
fn measure(
    pool: &Pool,
    rel: &Relation,
    list: &[AggMethod],
    reps: usize,
    cost_model: Option<&Arc<Topology>>,
    spinner: &Spinner,
) -> Result<(Vec<MethodReport>, AggResult)> {
    // The usable cache, measured once per machine and kept: here, not
    // inside the first timing.
    crate::common::cache_record::prime(pool);
    let mut runs: Vec<Vec<AggResult>> = (0..list.len()).map(|_| Vec::new()).collect();
    for rep in 0..reps {
        for (i, &method) in list.iter().enumerate() {
            spinner.set_prefix(format!("aggregate {}, rep {}", method.name(), rep + 1));
            let opts = AggOptions {
                cost_model: cost_model.cloned(),
                ..AggOptions::new(method)
            };
            let r = aggregate(pool, rel, &opts, spinner)
                .with_context(|| format!("{} aggregation", method.name()))?;
            if let Some(first) = runs.iter().flatten().next() {
                ensure!(
                    first.group_count() == r.group_count()
                        && first.fingerprint() == r.fingerprint(),
                    "{} gave a different result from an earlier run ({} groups, the earlier {}; counts, sums, minima or maxima differ otherwise)",
                    method.name(),
                    r.group_count(),
                    first.group_count()
                );
            }
            runs[i].push(r);
        }
    }
    let reports = list
        .iter()
        .zip(&runs)
        .map(|(&asked, rs)| {
            let times: Vec<f64> = rs
                .iter()
                .map(|r| numakit_ops::timing::total_seconds(&r.phases))
                .collect();
            let phases: Vec<Vec<PhaseTime>> = rs.iter().map(|r| r.phases.clone()).collect();
            MethodReport {
                asked,
                ran: rs[0].method,
                reason: rs[0].reason.clone(),
                estimated_groups: rs[0].estimated_groups,
                tables: rs[0].tables,
                prediction: rs[0].prediction.clone(),
                breakdown: median_breakdown(rs),
                throughput: Throughput::of(&times, rel.len() as u64),
                phases: median_phases(&phases),
            }
        })
        .collect();
    let one = runs.into_iter().flatten().next().context("nothing ran")?;
    Ok((reports, one))
}

/// Runs `numakit aggregate`: on the `--input` file through the table layer,
/// or on generated data with every `--method` measured (and `--sweep`);
/// prints the report and writes the groups with `--out`.
pub fn run(args: &AggregateArgs, mode: PlacementMode, json: bool, quiet: bool) -> Result<()> {
    if let Some(path) = &args.input {
        crate::usage_ensure!(!args.sweep, "--sweep runs on generated data; drop --input");
        let pool = build_pool(&args.common, mode)?;
        crate::common::cache_record::prime(&pool);
        return tables::aggregate::run(&pool, path, args, json, quiet);
    }
    crate::usage_ensure!(
        args.agg.is_none(),
        "--agg works on files (--input); generated inputs compute count, sum, min, max and avg of their value"
    );
    let list = methods(&args.method)?;
    check_verify_size(args.common.verify, args.rows)?;
    let pool = build_pool(&args.common, mode)?;
    let spinner = Spinner::new(quiet || json);
    spinner.set_prefix("loading input");
    let rel = input(&pool, args)?;
    check_verify_size(args.common.verify, rel.len() as u64)?;
    let model = cost_model(args.cost_model.as_deref())?;
    let (reports, result) = measure(
        &pool,
        &rel,
        &list,
        args.common.reps,
        model.as_ref(),
        &spinner,
    )?;
    let verified = args.common.verify && verify(&rel, &result)?;
    let sweep = if args.sweep {
        sweep(&pool, args, model.as_ref(), &spinner)?
    } else {
        Vec::new()
    };
    spinner.finish();
    if let Some(path) = &args.common.out {
        write_table(
            path,
            &groups_table(&result.sorted(), IntKind::Unsigned)?,
            &args.common.write_options(path),
        )?;
    }
    let seconds = reports
        .iter()
        .map(|m| m.throughput.seconds.median)
        .fold(f64::INFINITY, f64::min);
    let usable_cache = crate::common::cache_record::prime(&pool).as_ref().clone();
    let report = AggregateReport {
        usable_cache,
        input_rows: rel.len() as u64,
        threads: pool.workers(),
        rows: result.group_count() as u64,
        seconds,
        methods: reports,
        verified,
        sweep,
    };
    output::report(json, &report, || render(&report))?;
    Ok(())
}

fn verify(rel: &Relation, result: &AggResult) -> Result<bool> {
    let want = reference::aggregate(&rel.to_vec());
    let got = result.sorted();
    ensure!(
        want == got,
        "wrong result: {} groups, the reference has {} (or their aggregates differ)",
        got.len(),
        want.len()
    );
    Ok(true)
}

/// Li Figure 10: every method over growing numbers of groups, on random
/// 64-bit keys, so that every method uses hash tables as Li's do (dense
/// keys would put `local` and `partitioned` on their array fast path).
fn sweep(
    pool: &Pool,
    args: &AggregateArgs,
    model: Option<&Arc<Topology>>,
    spinner: &Spinner,
) -> Result<Vec<(u64, AggMethod, f64)>> {
    let methods = AggMethod::ALL;
    let mut out = Vec::new();
    let mut groups = 1024u64;
    while groups <= args.rows.max(1024) && groups <= 16 << 20 {
        let rel = generated(
            pool,
            ("--rows", args.rows),
            KeyDist::Sparse { groups },
            args.common.seed,
        )?;
        let (reports, _) = measure(pool, &rel, &methods, args.common.reps, model, spinner)?;
        for m in reports {
            out.push((groups, m.asked, m.throughput.seconds.median));
        }
        groups *= 4;
    }
    Ok(out)
}

/// Groups as a table in key order: key, count, sum, min, max.
fn groups_table(groups: &[Group], key_kind: IntKind) -> Result<Table> {
    let sums = groups
        .iter()
        .map(|g| {
            i64::try_from(g.sum).map(|s| s as u64).map_err(|_| {
                anyhow::anyhow!(
                    "the sum of group {} ({}) does not fit in int64",
                    g.key,
                    g.sum
                )
            })
        })
        .collect::<Result<Vec<u64>>>()?;
    let col = |name: &str, kind, values| Column {
        name: name.into(),
        kind,
        values,
    };
    Ok(Table {
        columns: vec![
            col("key", key_kind, groups.iter().map(|g| g.key).collect()),
            col(
                "count",
                IntKind::Unsigned,
                groups.iter().map(|g| g.count).collect(),
            ),
            col("sum", IntKind::Signed, sums),
            col(
                "min",
                IntKind::Signed,
                groups.iter().map(|g| g.min as u64).collect(),
            ),
            col(
                "max",
                IntKind::Signed,
                groups.iter().map(|g| g.max as u64).collect(),
            ),
        ],
    })
}

/// Each field of the exchange breakdown, the median over the runs.
fn median_breakdown(runs: &[AggResult]) -> Option<ExchangeBreakdown> {
    let all: Vec<ExchangeBreakdown> = runs.iter().filter_map(|r| r.breakdown).collect();
    if all.is_empty() {
        return None;
    }
    let median = |f: fn(&ExchangeBreakdown) -> f64| {
        numakit_ops::timing::median(&all.iter().map(f).collect::<Vec<_>>())
    };
    Some(ExchangeBreakdown {
        copy_seconds: median(|b| b.copy_seconds),
        read_seconds: median(|b| b.read_seconds),
        update_seconds: median(|b| b.update_seconds),
        wait_seconds: median(|b| b.wait_seconds),
    })
}

/// Li Figure 11's split of each exchange-driven method, in shares of its
/// consumers' time.
fn breakdown_lines(r: &AggregateReport) -> String {
    let mut out = String::new();
    for m in &r.methods {
        let Some(b) = &m.breakdown else { continue };
        let total = (b.copy_seconds + b.read_seconds + b.update_seconds + b.wait_seconds)
            .max(f64::MIN_POSITIVE);
        let share = |x: f64| format!("{:.0}%", 100.0 * x / total);
        out.push_str(&format!(
            "\n{}: read {}, update {}, copy state {}, wait {} of {:.3} consumer-seconds",
            m.ran.unwrap_or(m.asked).name(),
            share(b.read_seconds),
            share(b.update_seconds),
            share(b.copy_seconds),
            share(b.wait_seconds),
            total
        ));
    }
    if out.is_empty() {
        out
    } else {
        format!("\n\nWhere the exchange's time went (Li Figure 11):{out}")
    }
}

fn render(r: &AggregateReport) -> String {
    let mut rows = vec![throughput_header(&["method", "ran", "tables"])];
    for m in &r.methods {
        let mut row = vec![
            m.asked.name().to_string(),
            m.ran.map_or("-", AggMethod::name).to_string(),
            m.tables.name().to_string(),
        ];
        row.extend(m.throughput.cells(&m.phases));
        rows.push(row);
    }
    let mut out = format!(
        "group-by of {} rows on {} threads: {} groups\n\n{}",
        r.input_rows,
        r.threads,
        r.rows,
        table(&rows)
    );
    for m in r.methods.iter().filter(|m| !m.reason.is_empty()) {
        out.push_str(&format!("\n{}: {}", m.asked.name(), m.reason));
    }
    out.push_str(&breakdown_lines(r));
    if !r.sweep.is_empty() {
        out.push_str(
            "\n\nLi Figure 10 on this machine (median seconds; random 64-bit keys, hash tables in every method):\n",
        );
        out.push_str(&sweep_table(&r.sweep));
    }
    let cache = &r.usable_cache;
    let (low, high) = cache.spread();
    let runs = if low == high {
        format!("all {} of the probe's runs agree", cache.runs.len())
    } else {
        format!(
            "{}-{} over the probe's {} runs",
            bytes(low),
            bytes(high),
            cache.runs.len()
        )
    };
    out.push_str(&format!(
        "\nusable cache: {} ({runs}; {})",
        bytes(cache.usable_bytes),
        if cache.source.is_empty() {
            "measured now"
        } else {
            &cache.source
        }
    ));
    if r.verified {
        out.push_str("\nverified against the sequential reference");
    }
    out
}

fn sweep_table(sweep: &[(u64, AggMethod, f64)]) -> String {
    let mut groups: Vec<u64> = sweep.iter().map(|s| s.0).collect();
    groups.dedup();
    let methods: Vec<AggMethod> = sweep
        .iter()
        .take_while(|s| s.0 == groups[0])
        .map(|s| s.1)
        .collect();
    let mut rows = vec![std::iter::once("groups".to_string())
        .chain(methods.iter().map(|m| m.name().to_string()))
        .collect::<Vec<_>>()];
    for g in groups {
        let mut row = vec![g.to_string()];
        for m in &methods {
            let s = sweep
                .iter()
                .find(|s| s.0 == g && s.1 == *m)
                .map_or(f64::NAN, |s| s.2);
            row.push(format!("{s:.3}"));
        }
        rows.push(row);
    }
    table(&rows)
}
