//! `numakit join`: equi-joins on generated data or files, every chosen
//! algorithm measured side by side, results checked to agree (and against
//! the sequential reference with `--verify`).

use anyhow::{ensure, Context, Result};
use numakit_ops::join::{
    join, JoinAlgorithm, JoinKind, JoinOptions, JoinOutput, JoinResult, JoinRow,
};
use numakit_ops::{reference, PhaseTime, Relation};
use numakit_placement::PlacementMode;
use numakit_pool::Pool;
use numakit_shuffle::Exchange;
use serde::Serialize;

use crate::commands::ops::args::JoinArgs;
use crate::commands::ops::common::{
    build_pool, check_verify_size, generated, median_phases, throughput_header, Throughput,
};
use crate::commands::ops::tables;
use crate::common::output;
use crate::common::parse::key_dist;
use crate::common::progress::Spinner;
use crate::render::format::table;

/// One algorithm's measurements.
#[derive(Serialize)]
pub struct AlgorithmReport {
    /// The join algorithm measured.
    pub algorithm: JoinAlgorithm,
    /// mpsm's merge exchange (schedule and synchronization); absent for
    /// the other algorithms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merge_exchange: Option<Exchange>,
    /// Seconds over the repetitions, and the rates of the median run
    /// (input rows of both sides, 16 bytes each).
    #[serde(flatten)]
    pub throughput: Throughput,
    /// Median time of each phase.
    pub phases: Vec<PhaseTime>,
}

/// Everything `numakit join` reports.
#[derive(Serialize)]
pub struct JoinReport {
    /// Rows of the generated left (build) input.
    pub left_rows: u64,
    /// Rows of the generated right (probe) input.
    pub right_rows: u64,
    /// Worker threads of the pool.
    pub threads: usize,
    /// Inner, left outer, semi or anti.
    pub kind: JoinKind,
    /// What was done with the result rows: counted, folded into a
    /// checksum, or materialized (always with `--out`).
    pub output: JoinOutput,
    /// Result rows (the same for every algorithm and repetition).
    pub rows: u64,
    /// Wrapping sum of the result rows' checksums (0 with `count` output).
    pub checksum: u64,
    /// Median seconds of the fastest algorithm.
    pub seconds: f64,
    /// The algorithm with the lowest median time.
    pub fastest: JoinAlgorithm,
    /// Why `auto` picked its algorithm (when asked for `auto`).
    pub auto_reason: Option<String>,
    /// One report per algorithm run, in the order asked for.
    pub algorithms: Vec<AlgorithmReport>,
    /// Whether the result was checked against the sequential reference
    /// (`--verify`; a mismatch fails the command instead).
    pub verified: bool,
}

/// One join to measure: an algorithm and, for mpsm, its merge exchange.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Variant {
    algorithm: JoinAlgorithm,
    merge_exchange: Option<Exchange>,
}

impl Variant {
    /// `mpsm (naive, loose)`, or the algorithm's name.
    fn label(&self) -> String {
        match self.merge_exchange {
            Some(ex) => format!(
                "{} ({}, {})",
                self.algorithm.name(),
                ex.strategy.name(),
                ex.sync.name()
            ),
            None => self.algorithm.name().to_string(),
        }
    }
}

/// Each algorithm once, mpsm once per merge exchange.
fn variants(list: &[JoinAlgorithm], exchanges: &[Exchange]) -> Vec<Variant> {
    let mut out = Vec::new();
    for &algorithm in list {
        if algorithm == JoinAlgorithm::Mpsm {
            out.extend(exchanges.iter().map(|&ex| Variant {
                algorithm,
                merge_exchange: Some(ex),
            }));
        } else {
            out.push(Variant {
                algorithm,
                merge_exchange: None,
            });
        }
    }
    out.dedup();
    out
}

fn algorithms(
    names: &[String],
    pool: &Pool,
    rows: (usize, usize),
) -> Result<(Vec<JoinAlgorithm>, Option<String>)> {
    let mut list = Vec::new();
    let mut reason = None;
    for name in names {
        match name.as_str() {
            "all" => list.extend(JoinAlgorithm::ALL),
            "auto" => {
                let (a, why) = numakit_ops::join::choose::recommend(pool, rows.0, rows.1);
                list.push(a);
                reason = Some(why);
            }
            other => list.push(other.parse().map_err(crate::common::usage::invalid)?),
        }
    }
    crate::usage_ensure!(!list.is_empty(), "--algorithm names no algorithm");
    list.dedup();
    Ok((list, reason))
}

struct Inputs {
    left: Relation,
    right: Relation,
}

fn inputs(pool: &Pool, args: &JoinArgs) -> Result<Inputs> {
    let right_keys = args
        .right_keys
        .clone()
        .unwrap_or_else(|| format!("fk:{}", args.left_rows));
    let left = generated(
        pool,
        ("--left-rows", args.left_rows),
        key_dist(&args.left_keys, args.left_rows)?,
        args.common.seed,
    )?;
    let right = generated(
        pool,
        ("--right-rows", args.right_rows),
        key_dist(&right_keys, args.right_rows)?,
        args.common.seed.wrapping_add(1),
    )?;
    Ok(Inputs { left, right })
}

/// Runs `numakit join`: the `--left` and `--right` files through the table
/// layer, or generated inputs with every `--algorithm` measured; prints the
/// report and writes the result rows with `--out`.
pub fn run(args: &JoinArgs, mode: PlacementMode, json: bool, quiet: bool) -> Result<()> {
    if let (Some(left), Some(right)) = (&args.left, &args.right) {
        let pool = build_pool(&args.common, mode)?;
        return tables::join::run(&pool, (left, right), args, json, quiet);
    }
    let kind: JoinKind = args.kind.parse().map_err(crate::common::usage::invalid)?;
    let output = output_of(args)?;
    check_verify_size(
        args.common.verify,
        args.left_rows.saturating_add(args.right_rows),
    )?;
    let pool = build_pool(&args.common, mode)?;
    let spinner = Spinner::new(quiet || json);
    spinner.set_prefix("loading inputs");
    let data = inputs(&pool, args)?;
    check_verify_size(
        args.common.verify,
        (data.left.len() + data.right.len()) as u64,
    )?;
    let (list, auto_reason) =
        algorithms(&args.algorithm, &pool, (data.left.len(), data.right.len()))?;
    let list = variants(&list, &args.merge_exchange);
    let runs = run_all(
        &pool,
        &data,
        &list,
        (kind, output),
        args.common.reps,
        &spinner,
    )?;
    spinner.finish();
    let result = runs.first.context("no join ran")?;
    let verified = args.common.verify && verify(&data, kind, output, &result)?;
    let input_rows = (data.left.len() + data.right.len()) as u64;
    let algorithms: Vec<AlgorithmReport> = list
        .iter()
        .zip(&runs.times)
        .zip(&runs.phases)
        .map(|((v, t), p)| AlgorithmReport {
            algorithm: v.algorithm,
            merge_exchange: v.merge_exchange,
            throughput: Throughput::of(t, input_rows),
            phases: median_phases(p),
        })
        .collect();
    let best = fastest(&algorithms)?;
    let report = JoinReport {
        left_rows: data.left.len() as u64,
        right_rows: data.right.len() as u64,
        threads: pool.workers(),
        kind,
        output,
        rows: result.rows,
        checksum: result.checksum,
        seconds: best.throughput.seconds.median,
        fastest: best.algorithm,
        auto_reason,
        verified,
        algorithms,
    };
    if let Some(path) = &args.common.out {
        write_result(path, &result, &args.common.write_options(path))?;
    }
    output::report(json, &report, || render(&report))?;
    Ok(())
}

/// What the join produces: `--output`, or materialized rows when `--out`
/// asks for a file.
fn output_of(args: &JoinArgs) -> Result<JoinOutput> {
    let asked = match args.output.as_deref().unwrap_or("count") {
        "count" => JoinOutput::Count,
        "checksum" => JoinOutput::Checksum,
        "materialize" => JoinOutput::Materialize,
        other => {
            return Err(crate::usage_error!(
                "unknown output `{other}` (count, checksum, materialize)"
            ))
        }
    };
    Ok(match args.common.out {
        Some(_) => JoinOutput::Materialize,
        None => asked,
    })
}

/// Per algorithm, the time and phases of every repetition, and the first
/// result (every later one must agree with it).
struct Runs {
    times: Vec<Vec<f64>>,
    phases: Vec<Vec<Vec<PhaseTime>>>,
    first: Option<JoinResult>,
}

/// Runs every algorithm `reps` times, alternating between them.
fn run_all(
    pool: &Pool,
    data: &Inputs,
    list: &[Variant],
    (kind, output): (JoinKind, JoinOutput),
    reps: usize,
    spinner: &Spinner,
) -> Result<Runs> {
    let mut runs = Runs {
        times: vec![Vec::new(); list.len()],
        phases: vec![Vec::new(); list.len()],
        first: None,
    };
    for rep in 0..reps {
        for (i, variant) in list.iter().enumerate() {
            let label = variant.label();
            spinner.set_prefix(format!("join {label}, rep {}", rep + 1));
            let opts = JoinOptions {
                algorithm: variant.algorithm,
                kind,
                output,
                row_limit: None,
                merge_exchange: variant
                    .merge_exchange
                    .unwrap_or(numakit_ops::join::RING_MERGE),
            };
            let result = join(pool, &data.left, &data.right, &opts, spinner)
                .with_context(|| format!("{label} join"))?;
            runs.times[i].push(numakit_ops::timing::total_seconds(&result.phases));
            runs.phases[i].push(result.phases.clone());
            agree(&runs.first, &result, &label)?;
            runs.first.get_or_insert(result);
        }
    }
    Ok(runs)
}

/// The algorithm with the lowest median time.
fn fastest(algorithms: &[AlgorithmReport]) -> Result<&AlgorithmReport> {
    algorithms
        .iter()
        .min_by(|a, b| {
            a.throughput
                .seconds
                .median
                .total_cmp(&b.throughput.seconds.median)
        })
        .context("no algorithm")
}

/// Every run must give the same result.
fn agree(first: &Option<JoinResult>, got: &JoinResult, label: &str) -> Result<()> {
    if let Some(f) = first {
        ensure!(
            f.rows == got.rows && f.checksum == got.checksum,
            "the {} join gave {} rows (checksum {:#x}) but an earlier run gave {} rows ({:#x})",
            label,
            got.rows,
            got.checksum,
            f.rows,
            f.checksum
        );
    }
    Ok(())
}

fn verify(data: &Inputs, kind: JoinKind, output: JoinOutput, result: &JoinResult) -> Result<bool> {
    let want = reference::join(&data.left.to_vec(), &data.right.to_vec(), kind);
    let checksum = want.iter().fold(0u64, |a, r| a.wrapping_add(r.checksum()));
    ensure!(
        want.len() as u64 == result.rows,
        "wrong result: {} rows, the reference has {}",
        result.rows,
        want.len()
    );
    if output != JoinOutput::Count {
        ensure!(
            checksum == result.checksum,
            "wrong result: checksum {:#x}, the reference's is {checksum:#x}",
            result.checksum
        );
    }
    Ok(true)
}

/// Materialized rows of generated inputs as a table: key, left payload,
/// right payload (null where a left outer join found no match).
fn write_result(
    path: &std::path::Path,
    result: &JoinResult,
    options: &numakit_io::WriteOptions,
) -> Result<()> {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Int64Array, RecordBatch};
    let rows: Vec<&JoinRow> = result.materialized.iter().flatten().collect();
    let column = |f: &dyn Fn(&JoinRow) -> Option<u64>| -> ArrayRef {
        Arc::new(Int64Array::from_iter(
            rows.iter().map(|r| f(r).map(|v| v as i64)),
        ))
    };
    let batch = RecordBatch::try_from_iter(vec![
        ("key", column(&|r| Some(r.key))),
        ("left_payload", column(&|r| Some(r.left))),
        ("right_payload", column(&|r| r.right)),
    ])?;
    numakit_io::write_batches(path, &batch.schema(), &[batch], options)
        .with_context(|| format!("writing {}", path.display()))
}

fn render(r: &JoinReport) -> String {
    let mut rows = vec![throughput_header(&["algorithm"])];
    for a in &r.algorithms {
        let variant = Variant {
            algorithm: a.algorithm,
            merge_exchange: a.merge_exchange,
        };
        let mut row = vec![variant.label()];
        row.extend(a.throughput.cells(&a.phases));
        rows.push(row);
    }
    let mut out = format!(
        "{} join of {} x {} rows on {} threads: {} result rows{}\n\n{}",
        crate::render::format::name_of(&r.kind),
        r.left_rows,
        r.right_rows,
        r.threads,
        r.rows,
        if r.output == JoinOutput::Count {
            String::new()
        } else {
            format!(" (checksum {:#018x})", r.checksum)
        },
        table(&rows)
    );
    if let Some(why) = &r.auto_reason {
        out.push_str(&format!("\nauto: {why}"));
    }
    if r.verified {
        out.push_str("\nverified against the sequential reference");
    }
    out
}
