//! The runtime's knobs: hash buckets (Figures 6 and 7, Table III) and the
//! map task's chunk size (Figure 8), through the CLI's `--container` and
//! `--chunk-kib`.

use numakit_mapreduce::{ContainerKind, JobOptions, Runtime};
use numakit_mapreduce_apps::kmeans::{self, KmeansLimits};
use numakit_mapreduce_apps::{histogram, linear_regression, string_match, word_count};

use super::apps::{self, App, Data};
use crate::context::Context;
use crate::error::RunResult;
use crate::outcome::{Outcome, Row, Shape, Verdict};

/// The paper's worker count for Table III, and its bucket count.
const TABLE_3_WORKERS: usize = 64;
const PAPER_BUCKETS: usize = 256;
/// Phoenix's default map task: 64 KB of input.
const PHOENIX_CHUNK_BYTES: usize = 64 << 10;

/// Repetitions of each bucket count (the fastest is kept).
fn bucket_reps(scale: crate::context::Scale) -> usize {
    scale.pick(3, 2)
}

/// Seconds of `app` with `buckets` fixed buckets per worker, normalized
/// to 256 buckets, at every thread count: (threads, buckets, normalized).
fn bucket_sweep(
    ctx: &Context<'_>,
    app: App,
    buckets: &[usize],
) -> RunResult<Vec<(usize, usize, f64)>> {
    let data = apps::generate(app, ctx.scale)?;
    let mut out = Vec::new();
    for threads in apps::sweep_threads(ctx) {
        let mut base = None;
        for &b in buckets {
            let opts = apps::with_container(ContainerKind::FixedHash { buckets: b });
            let run = apps::best_of(ctx, app, &data, threads, &opts, bucket_reps(ctx.scale))?;
            let base = *base.get_or_insert(run.seconds);
            out.push((threads, b, run.seconds / base));
        }
    }
    Ok(out)
}

fn bucket_rows(out: &mut Outcome, sweep: &[(usize, usize, f64)]) {
    for (threads, buckets, normalized) in sweep {
        out.rows.push(Row::new(
            format!("{buckets} buckets, {threads} thread(s): time / time at 256"),
            "x",
            Some(*normalized),
            None,
        ));
    }
}

/// The normalized time at the most buckets, for each thread count.
fn at_most_buckets(sweep: &[(usize, usize, f64)]) -> Vec<(usize, f64)> {
    let most = sweep.iter().map(|s| s.1).max().unwrap_or(0);
    sweep
        .iter()
        .filter(|s| s.1 == most)
        .map(|s| (s.0, s.2))
        .collect()
}

/// The lowest normalized time of more than 256 buckets, per thread count.
fn best_above_256(sweep: &[(usize, usize, f64)]) -> Vec<(usize, f64)> {
    let mut best: Vec<(usize, f64)> = Vec::new();
    for &(threads, _, normalized) in sweep.iter().filter(|s| s.1 > PAPER_BUCKETS) {
        match best.iter_mut().find(|b| b.0 == threads) {
            Some(b) => b.1 = b.1.min(normalized),
            None => best.push((threads, normalized)),
        }
    }
    best
}

fn listing(values: &[(usize, f64)]) -> String {
    values
        .iter()
        .map(|(t, v)| format!("{v:.2}x at {t} thread(s)"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Figure 6: a few-key workload slows down with more buckets.
pub(super) fn figure_6(ctx: &Context<'_>) -> RunResult<Outcome> {
    let buckets = ctx
        .scale
        .pick(vec![256, 4096, 1 << 20], vec![256, 4096, 65536, 1 << 20]);
    let sweep = bucket_sweep(ctx, App::LinearRegression, &buckets)?;
    let mut out = Outcome::default();
    bucket_rows(&mut out, &sweep);
    let most = at_most_buckets(&sweep);
    out.shapes.push(Shape::new(
        "a workload with few keys slows down as buckets grow (empty buckets still cost)",
        Verdict::check(most.iter().all(|m| m.1 > 1.0), listing(&most)),
    ));
    out.shapes.push(Shape::new(
        "the slowdown grows with threads across chips (remote empty buckets)",
        Verdict::NotShownHere(
            "one node here: no remote bucket to find empty; needs several chips".into(),
        ),
    ));
    out.notes.push(format!(
        "linear_regression (5 keys) on {} MiB with fixed-hash:N per worker, best of {}",
        apps::text_mib(App::LinearRegression, ctx.scale),
        bucket_reps(ctx.scale)
    ));
    Ok(out)
}

/// Figure 7: a many-key workload speeds up with more buckets at few
/// threads.
pub(super) fn figure_7(ctx: &Context<'_>) -> RunResult<Outcome> {
    let buckets = ctx
        .scale
        .pick(vec![256, 4096, 16384], vec![256, 4096, 65536, 1 << 18]);
    let sweep = bucket_sweep(ctx, App::WordCount, &buckets)?;
    let mut out = Outcome::default();
    bucket_rows(&mut out, &sweep);
    let best = best_above_256(&sweep);
    let holds = best.iter().all(|m| m.1 < 1.0);
    let detail = format!("best of more buckets: {}", listing(&best));
    out.shapes.push(Shape::new(
        "at low thread counts (up to ~32), more buckets speed word_count up",
        match apps::busy(ctx) {
            Some(load) if !holds => Verdict::NotShownHere(format!(
                "{detail}, with a load average of {load:.1} from other work"
            )),
            _ => Verdict::check(holds, detail),
        },
    ));
    out.shapes.push(Shape::new(
        "past 32 threads the benefit reverses (a wider, deeper merge)",
        Verdict::NotShownHere(
            "2 CPUs here: the merge tree never gets deep enough; needs 64+ threads".into(),
        ),
    ));
    out.notes.push(format!(
        "word_count on {} MiB ({} words of vocabulary) with fixed-hash:N per worker",
        apps::text_mib(App::WordCount, ctx.scale),
        word_count::VOCABULARY
    ));
    Ok(out)
}

/// Figure 8's rows of one chunk size: tasks and phase times.
fn chunk_rows(out: &mut Outcome, kib: usize, run: &apps::Run) {
    let p = run.phases;
    let rows = [
        ("map tasks", "tasks", run.map_tasks as f64),
        ("split (task generation)", "s", p.split),
        ("map", "s", p.map),
        ("reduce + merge", "s", p.reduce + p.merge),
    ];
    for (what, unit, ours) in rows {
        out.rows.push(Row::new(
            format!("{kib} KiB chunks: {what}"),
            unit,
            Some(ours),
            None,
        ));
    }
}

/// Figure 8: map tasks and phase times by chunk size.
pub(super) fn figure_8(ctx: &Context<'_>) -> RunResult<Outcome> {
    let data = apps::generate(App::LinearRegression, ctx.scale)?;
    let threads = apps::sweep_threads(ctx).last().copied().unwrap_or(1);
    let mut out = Outcome::default();
    let mut tasks = Vec::new();
    for kib in [64usize, 128, 256, 512] {
        // linear regression's records are 2-byte points.
        let opts = JobOptions {
            chunk_records: Some((kib << 10) / 2),
            ..JobOptions::default()
        };
        let run = apps::best_of(
            ctx,
            App::LinearRegression,
            &data,
            threads,
            &opts,
            apps::reps(ctx.scale),
        )?;
        chunk_rows(&mut out, kib, &run);
        tasks.push((kib, run.map_tasks));
    }
    let (first, last) = (
        tasks.first().ok_or("no run")?,
        tasks.last().ok_or("no run")?,
    );
    out.shapes.push(Shape::new(
        "larger chunks cut the map tasks to generate (64 KiB to 512 KiB: 8x fewer)",
        Verdict::check(
            first.1 >= 4 * last.1.max(1),
            format!(
                "{} tasks at {} KiB, {} at {} KiB",
                first.1, first.0, last.1, last.0
            ),
        ),
    ));
    out.shapes.push(Shape::new(
        "at 64 KiB, task generation dominates pca's time at high thread counts",
        Verdict::NotShownHere(format!(
            "{} MiB here gives only {} tasks at 64 KiB (pca's input gave millions) on {threads} thread(s)",
            apps::text_mib(App::LinearRegression, ctx.scale),
            first.1
        )),
    ));
    out.notes.push(format!(
        "linear_regression on {} stands in for pca; {threads} thread(s)",
        data.describe()
    ));
    Ok(out)
}

/// Populated buckets of 256 for `keys` keys: integer keys hash to
/// themselves modulo the buckets (as in Phoenix), strings uniformly.
fn populated(keys: f64, strings: bool) -> f64 {
    let b = PAPER_BUCKETS as f64;
    if strings {
        b * (1.0 - (1.0 - 1.0 / b).powf(keys))
    } else {
        keys.min(b)
    }
}

/// Whether a workload's keys are strings (word_count's words).
fn string_keys(app: &str) -> bool {
    app.starts_with("word_count")
}

/// (keys, values) per worker → the three columns of Table III.
fn columns(out: &mut Outcome, app: &str, keys: f64, values: f64, published: [f64; 3]) {
    let filled = populated(keys, string_keys(app));
    let per_bucket = if filled > 0.0 { keys / filled } else { 0.0 };
    let per_key = if keys > 0.0 { values / keys } else { 0.0 };
    for (i, (what, ours)) in [
        ("populated buckets", filled),
        ("keys per bucket", per_bucket),
        ("values per key", per_key),
    ]
    .into_iter()
    .enumerate()
    {
        out.rows.push(Row::new(
            format!("{app}: {what}"),
            "",
            Some(ours),
            Some(published[i]),
        ));
    }
}

/// One workload's keys and values per worker, and the paper's three
/// columns for it.
type KeyCounts = (&'static str, f64, f64, [f64; 3]);

/// Keys and values per worker of every workload Table III lists with
/// keys (matrix_multiply and pca's second phase left out).
fn key_counts(ctx: &Context<'_>, rt: &Runtime) -> RunResult<Vec<KeyCounts>> {
    let w = TABLE_3_WORKERS as f64;
    // Phoenix's default chunk: 64 KB of input per map task; each task
    // folds its records and emits every key it saw once.
    let chunk = |record_bytes: usize| JobOptions {
        chunk_records: Some(PHOENIX_CHUNK_BYTES / record_bytes),
        ..JobOptions::default()
    };
    let text = |app| match apps::generate(app, ctx.scale)? {
        Data::Text(t) => Ok::<_, Box<dyn std::error::Error + Send + Sync>>(t),
        _ => Err("not a text application".into()),
    };
    let nonzero = |counts: &[u64]| counts.iter().filter(|&&n| n > 0).count() as f64;
    let image = histogram::run(rt, &text(App::Histogram)?, &chunk(1))?;
    let kmeans = kmeans_per_worker(ctx, rt)?;
    let (_, regression) = linear_regression::run(rt, &text(App::LinearRegression)?, &chunk(2))?;
    let (matches, matching) = string_match::run(rt, &text(App::StringMatch)?, &chunk(1))?;
    let words = word_count_per_worker(rt, text(App::WordCount)?)?;
    // Values per worker: every key once per map task.
    let per_worker = |tasks: usize| tasks as f64 / w;
    Ok(vec![
        (
            "histogram",
            nonzero(&image.bins),
            per_worker(image.stats.map_tasks) * nonzero(&image.bins),
            [256.0, 2.0, 256.0],
        ),
        ("kmeans", kmeans.0, kmeans.1, [100.0, 1.0, 78.0]),
        (
            "linear_regression",
            linear_regression::SUMS as f64,
            per_worker(regression.map_tasks) * linear_regression::SUMS as f64,
            [5.0, 1.0, 905.0],
        ),
        (
            "string_match",
            nonzero(&matches),
            per_worker(matching.map_tasks) * nonzero(&matches),
            [0.0; 3],
        ),
        (
            "word_count (phase 1)",
            words.0,
            words.1,
            [256.0, 156.0, 34.0],
        ),
    ])
}

/// Table III: keys and values per worker at 64 workers, 256 buckets.
pub(super) fn table_3(ctx: &Context<'_>) -> RunResult<Outcome> {
    let pool = apps::pool(ctx, 1)?;
    let rt = Runtime::new(&pool);
    let mut out = Outcome::default();
    let counts = key_counts(ctx, &rt)?;
    for &(app, keys, values, published) in &counts {
        columns(&mut out, app, keys, values, published);
    }
    let filled = |name: &str| {
        counts
            .iter()
            .find(|c| c.0.starts_with(name))
            .map(|c| populated(c.1, string_keys(c.0)))
            .ok_or("a workload is missing")
    };
    let (words, few) = (
        filled("word_count")?,
        filled("linear_regression")?.max(filled("kmeans")?),
    );
    out.shapes.push(Shape::new(
        "word_count fills far more buckets than the few-key workloads (linear_regression, kmeans)",
        Verdict::check(
            words > 2.0 * few,
            format!("{words:.0} vs at most {few:.0} populated buckets"),
        ),
    ));
    out.notes.push("per worker: 1/64 of each input (histogram, linear_regression and string_match emit each key once per 64 KiB map task, word_count and kmeans once per word or point); populated buckets of 256 as Phoenix's hash fills them (integer keys modulo 256, words uniformly); string_match counts its matches (the paper's bypasses reduce)".into());
    Ok(out)
}

/// k-means' clusters and points per cluster in each 64th of the points,
/// averaged (from numakit's clustering of the whole input).
fn kmeans_per_worker(ctx: &Context<'_>, rt: &Runtime) -> RunResult<(f64, f64)> {
    let Data::Kmeans(input) = apps::generate(App::Kmeans, ctx.scale)? else {
        return Err("k-means input expected".into());
    };
    let (clustering, _) = kmeans::run(rt, &input, KmeansLimits::default())?;
    let part = clustering.assignment.len().div_ceil(TABLE_3_WORKERS).max(1);
    let (mut keys, mut values) = (0.0, 0.0);
    let parts = clustering.assignment.chunks(part).count().max(1) as f64;
    for chunk in clustering.assignment.chunks(part) {
        let mut seen = std::collections::BTreeSet::new();
        seen.extend(chunk.iter().copied());
        keys += seen.len() as f64;
        values += chunk.len() as f64;
    }
    Ok((keys / parts, values / parts))
}

/// Distinct words and words in each 64th of the text, averaged (numakit's
/// word count run on each).
fn word_count_per_worker(rt: &Runtime, text: Vec<u8>) -> RunResult<(f64, f64)> {
    let part = text.len().div_ceil(TABLE_3_WORKERS).max(1);
    let (mut keys, mut values, mut parts) = (0.0, 0.0, 0.0);
    for chunk in text.chunks(part) {
        let mut piece = chunk.to_vec();
        let counts = word_count::run(rt, &mut piece, &word_count::default_options())?;
        keys += counts.counts.len() as f64;
        values += counts.total() as f64;
        parts += 1.0;
    }
    let parts: f64 = if parts > 0.0 { parts } else { 1.0 };
    Ok((keys / parts, values / parts))
}
