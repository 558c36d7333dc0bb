//! `numakit sort`: the NUMA-aware sort on generated data or a file's key
//! column, checked to be sorted (and against the reference with
//! `--verify`).

use anyhow::{ensure, Context, Result};
use numakit_io::{IntKind, Table};
use numakit_ops::datagen::KeyDist;
use numakit_ops::sort::{sort, SortResult};
use numakit_ops::{reference, PhaseTime, Relation};
use numakit_placement::PlacementMode;
use numakit_pool::Pool;
use serde::Serialize;

use crate::commands::opcommon::{
    build_pool, generated, key_dist, median_phases, phase_line, rate, read_columns, relation_of,
    signed_column, write_table, Throughput, VERIFY_LIMIT_ROWS,
};
use crate::format::table;
use crate::op_args::SortArgs;
use crate::progress::Spinner;

/// Everything `numakit sort` reports.
#[derive(Serialize)]
pub struct SortReport {
    pub rows: u64,
    pub threads: usize,
    pub keys_only: bool,
    /// Median seconds.
    pub seconds: f64,
    #[serde(flatten)]
    pub throughput: Throughput,
    pub phases: Vec<PhaseTime>,
    pub verified: bool,
}

/// Maps signed keys to unsigned ones in the same order (and back).
fn flip_sign(rel: &mut Relation) {
    for chunk in rel.chunks_mut() {
        for t in chunk.tuples.iter_mut() {
            t.key ^= 1 << 63;
        }
    }
}

struct Input {
    rel: Relation,
    signed: bool,
}

fn input(pool: &Pool, args: &SortArgs) -> Result<Input> {
    let Some(path) = &args.input else {
        let dist = match &args.keys {
            Some(spec) => key_dist(spec, args.rows)?,
            None => KeyDist::Uniform { max: u64::MAX },
        };
        let rel = generated(pool, args.rows, dist, args.common.seed)?;
        return Ok(Input { rel, signed: false });
    };
    let t = read_columns(path, std::slice::from_ref(&args.key))?;
    let col = t.column(&args.key)?;
    let mut rel = relation_of(pool, &col.values, |i| i as u64)?;
    let signed = col.kind == IntKind::Signed;
    if signed {
        flip_sign(&mut rel);
    }
    Ok(Input { rel, signed })
}

pub fn run(args: &SortArgs, mode: PlacementMode, json: bool, quiet: bool) -> Result<()> {
    let pool = build_pool(&args.common, mode)?;
    let spinner = Spinner::new(quiet || json);
    spinner.set_prefix("loading input");
    let data = input(&pool, args)?;
    let mut times = Vec::new();
    let mut phases = Vec::new();
    let mut last: Option<SortResult> = None;
    for rep in 0..args.common.reps {
        spinner.set_prefix(format!("sort, rep {}", rep + 1));
        let r = sort(&pool, &data.rel, &spinner).context("sort")?;
        times.push(numakit_ops::timing::total_seconds(&r.phases));
        phases.push(r.phases.clone());
        last = Some(r);
    }
    spinner.finish();
    let result = last.context("no sort ran")?;
    let mut sorted = result.sorted.context("the sort returned no relation")?;
    check_sorted(&sorted, data.rel.len())?;
    let verified = args.common.verify && verify(&data.rel, &sorted)?;
    if data.signed {
        flip_sign(&mut sorted);
    }
    if let Some(path) = &args.common.out {
        write_table(path, &sorted_table(&sorted, data.signed))?;
    }
    let rows = data.rel.len() as u64;
    let throughput = Throughput::of(&times, rows);
    let report = SortReport {
        rows,
        threads: pool.workers(),
        keys_only: args.keys_only,
        seconds: throughput.seconds.median,
        throughput,
        phases: median_phases(&phases),
        verified,
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!("{}", render(&report));
    }
    Ok(())
}

/// The output must hold every row, in key order across chunks.
fn check_sorted(sorted: &Relation, rows: usize) -> Result<()> {
    ensure!(
        sorted.len() == rows,
        "the sort returned {} rows for {rows}",
        sorted.len()
    );
    let mut last = 0u64;
    for chunk in sorted.chunks() {
        for t in chunk.tuples.iter() {
            ensure!(t.key >= last, "the sort's output is out of order");
            last = t.key;
        }
    }
    Ok(())
}

fn verify(input: &Relation, sorted: &Relation) -> Result<bool> {
    ensure!(
        input.len() <= VERIFY_LIMIT_ROWS,
        "--verify is limited to {VERIFY_LIMIT_ROWS} rows (the reference is sequential)"
    );
    let mut got = sorted.to_vec();
    got.sort_unstable();
    ensure!(
        got == reference::sort(&input.to_vec()),
        "wrong result: the sorted rows differ from the input's"
    );
    Ok(true)
}

fn sorted_table(sorted: &Relation, signed: bool) -> Table {
    let rows = sorted.to_vec();
    let mut key = signed_column("key", rows.iter().map(|t| t.key).collect());
    if !signed {
        key.kind = IntKind::Unsigned;
    }
    Table {
        columns: vec![
            key,
            signed_column("row", rows.iter().map(|t| t.payload).collect()),
        ],
    }
}

fn render(r: &SortReport) -> String {
    let t = &r.throughput;
    let rows = vec![
        vec![
            "median s".to_string(),
            "min s".into(),
            "max s".into(),
            "rows/s".into(),
            "GB/s".into(),
            "phases (median)".into(),
        ],
        vec![
            format!("{:.3}", t.seconds.median),
            format!("{:.3}", t.seconds.min),
            format!("{:.3}", t.seconds.max),
            rate(t.rows_per_second),
            format!("{:.2}", t.gb_per_second),
            phase_line(&r.phases),
        ],
    ];
    let mut out = format!(
        "sort of {} rows on {} threads\n\n{}",
        r.rows,
        r.threads,
        table(&rows)
    );
    if r.verified {
        out.push_str("\nverified against the sequential reference");
    }
    out
}
