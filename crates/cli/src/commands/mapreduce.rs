//! `numakit mapreduce <app>`: the Phoenix applications on numakit's
//! MapReduce runtime, on generated input or a file in the Phoenix++
//! program's format; `--generate` writes such a file; `--sweep` measures
//! the speedup from one thread to all with the time of each phase.
//!
//! Only the job is timed: the input is read (or generated) and placed on
//! the pool's nodes before the first repetition.

use std::time::Instant;

use anyhow::{bail, Context, Result};
use numakit_mapreduce::{Input, InputMode, JobOptions, JobStats, NodeTasks, PhaseSeconds, Runtime};
use numakit_mapreduce_apps::{histogram, linear_regression, string_match, word_count};
use numakit_placement::PlacementMode;
use numakit_pool::Pool;
use serde::Serialize;
use serde_json::{json, Value};

use crate::commands::mr_output;
use crate::files::write_whole;
use crate::format::{bytes, median, table, Spread};
use crate::mr_args::{self, MapReduceApp, MapReduceArgs, MrCommon, TextArgs};
use crate::output;

/// One application's run at one thread count.
#[derive(Serialize)]
pub struct AppReport {
    pub app: &'static str,
    pub threads: usize,
    pub input_bytes: usize,
    /// Job seconds of every repetition.
    pub times: Vec<f64>,
    pub seconds: Spread,
    /// Median phase times.
    pub phases: PhaseSeconds,
    pub map_tasks: Vec<NodeTasks>,
    pub verified: Option<bool>,
    pub summary: Value,
    /// The full result as CSV, kept only for `--output`.
    #[serde(skip)]
    pub result: Option<String>,
}

/// What one run of an application gives back.
pub struct Outcome {
    /// The job's seconds (verification excluded).
    pub seconds: f64,
    pub phases: PhaseSeconds,
    pub map_tasks: Vec<NodeTasks>,
    pub summary: Value,
    pub verified: Option<bool>,
    /// The full result as CSV, made only when `--output` asks for it.
    pub result: Option<String>,
}

pub fn run(args: &MapReduceArgs, mode: PlacementMode, json_out: bool, quiet: bool) -> Result<()> {
    match &args.app {
        MapReduceApp::WordCount(a) => text_app("word-count", a, mode, json_out, quiet),
        MapReduceApp::Histogram(a) => text_app("histogram", a, mode, json_out, quiet),
        MapReduceApp::LinearRegression(a) => {
            text_app("linear-regression", a, mode, json_out, quiet)
        }
        MapReduceApp::StringMatch(a) => text_app("string-match", a, mode, json_out, quiet),
        MapReduceApp::Kmeans(_) | MapReduceApp::Pca(_) | MapReduceApp::MatrixMultiply(_) => {
            crate::commands::mapreduce_numeric::run(&args.app, mode, json_out, quiet)
        }
    }
}

pub fn build_pool(threads: Option<usize>, mode: PlacementMode) -> Result<Pool> {
    crate::commands::opcommon::pool_with_threads(threads, mode)
}

fn generate(app: &str, size: usize, seed: u64) -> Vec<u8> {
    match app {
        "word-count" => word_count::generate(size, seed),
        "histogram" => histogram::generate(size, seed),
        "linear-regression" => linear_regression::generate(size, seed),
        _ => string_match::generate(size, seed),
    }
}

fn text_app(
    app: &'static str,
    a: &TextArgs,
    mode: PlacementMode,
    json_out: bool,
    quiet: bool,
) -> Result<()> {
    let c = &a.common;
    crate::usage_ensure!(c.reps > 0, "--reps must be at least 1");
    check_input_memory(app, c, a.size_mib)?;
    let size = usize::try_from(a.size_mib << 20).context("--size-mib is too large")?;
    if let Some(path) = &c.generate {
        write_whole(path, &generate(app, size, c.seed.unwrap_or(42)))?;
        if !quiet {
            output::note(format_args!(
                "wrote {} of {app} input to {}",
                bytes(size as u64),
                path.display()
            ));
        }
        return Ok(());
    }
    let threads = sweep_threads(c)?;
    let mut reports = Vec::new();
    for t in threads {
        let pool = build_pool(t.or(c.threads), mode)?;
        let mut input = load(&pool, app, c, size)?;
        let report = measure(app, &pool, c, input.len(), |rt| {
            one_run(app, rt, &mut input, a, c)
        })?;
        reports.push(report);
    }
    finish(&reports, c, json_out, a.top)
}

/// The input bytes, read from `--input` or generated, placed on the nodes.
fn load(pool: &Pool, app: &str, c: &MrCommon, size: usize) -> Result<Input> {
    match &c.input {
        Some(path) => {
            let mode = match c.input_mode {
                mr_args::InputMode::Auto if pool.nodes().len() > 1 || app == "word-count" => {
                    InputMode::Read
                }
                mr_args::InputMode::Read => InputMode::Read,
                mr_args::InputMode::Auto | mr_args::InputMode::Mmap => {
                    InputMode::Mmap { populate: true }
                }
            };
            let input = Input::open(pool, path, mode)?;
            // Word count upper-cases in place, and a map is read-only.
            if app == "word-count" && input.is_mapped() {
                return Ok(Input::place(pool, input.bytes())?);
            }
            Ok(input)
        }
        None => Ok(Input::place(
            pool,
            &generate(app, size, c.seed.unwrap_or(42)),
        )?),
    }
}

/// Refuses an input that would not fit under the memory limit: the file
/// given with --input, or --size-mib of generated text (held twice while
/// it is generated and placed).
fn check_input_memory(app: &str, c: &MrCommon, size_mib: u64) -> Result<()> {
    match &c.input {
        Some(path) => {
            let size = std::fs::metadata(path)
                .with_context(|| format!("cannot read {}", path.display()))?
                .len();
            crate::budget::check(&format!("the {app} input {}", path.display()), size)
        }
        None => crate::budget::check(
            &format!("the generated {app} input (--size-mib {size_mib})"),
            crate::budget::times(size_mib, 2 << 20),
        ),
    }
}

/// Thread counts of a sweep (1, 2, 4, ... and all), or just the asked one.
pub fn sweep_threads(c: &MrCommon) -> Result<Vec<Option<usize>>> {
    if !c.sweep {
        return Ok(vec![None]);
    }
    let all = numakit_topology::discover()?.allowed.cpus.len().max(1);
    let mut counts: Vec<usize> = std::iter::successors(Some(1usize), |t| Some(t * 2))
        .take_while(|&t| t < all)
        .collect();
    counts.push(all);
    Ok(counts.into_iter().map(Some).collect())
}

/// Runs `once` `--reps` times on one runtime; the report keeps median phases.
pub fn measure(
    app: &'static str,
    pool: &Pool,
    c: &MrCommon,
    input_bytes: usize,
    mut once: impl FnMut(&Runtime) -> Result<Outcome>,
) -> Result<AppReport> {
    let rt = Runtime::new(pool);
    let mut times = Vec::with_capacity(c.reps);
    let mut outcomes = Vec::with_capacity(c.reps);
    for _ in 0..c.reps {
        let outcome = once(&rt)?;
        times.push(outcome.seconds);
        outcomes.push(outcome);
    }
    let pick = |f: fn(&PhaseSeconds) -> f64| {
        median(&outcomes.iter().map(|o| f(&o.phases)).collect::<Vec<_>>())
    };
    let phases = PhaseSeconds {
        split: pick(|p| p.split),
        map: pick(|p| p.map),
        reduce: pick(|p| p.reduce),
        merge: pick(|p| p.merge),
    };
    let last = outcomes.pop().context("no repetition ran")?;
    Ok(AppReport {
        app,
        threads: pool.workers(),
        input_bytes,
        seconds: Spread::of(&times),
        times,
        phases,
        map_tasks: last.map_tasks,
        verified: last.verified,
        summary: last.summary,
        result: last.result,
    })
}

/// `f`'s result and its seconds.
pub fn timed<T>(f: impl FnOnce() -> Result<T>) -> Result<(T, f64)> {
    let started = Instant::now();
    let value = f()?;
    Ok((value, started.elapsed().as_secs_f64()))
}

impl Outcome {
    fn of(seconds: f64, stats: JobStats, summary: Value, verified: Option<bool>) -> Self {
        Self {
            seconds,
            phases: stats.seconds,
            map_tasks: stats.per_node,
            summary,
            verified,
            result: None,
        }
    }

    /// Keeps the full result when `keep` (`--output`) asks for it.
    pub fn keeping(mut self, keep: bool, result: impl FnOnce() -> String) -> Self {
        self.result = keep.then(result);
        self
    }
}

fn one_run(
    app: &str,
    rt: &Runtime,
    input: &mut Input,
    a: &TextArgs,
    c: &MrCommon,
) -> Result<Outcome> {
    let opts = JobOptions {
        chunk_records: c.chunk_kib.map(|k| k << 10),
        ..JobOptions::default()
    };
    let keep = c.output.is_some();
    let outcome = match app {
        "word-count" => word_count_run(rt, input, &opts, a.top, c.verify, keep)?,
        "histogram" => histogram_run(rt, input.bytes(), &opts, c.verify, keep)?,
        "linear-regression" => linear_regression_run(rt, input.bytes(), &opts, c.verify, keep)?,
        "string-match" => string_match_run(rt, input.bytes(), &opts, c.verify, keep)?,
        other => bail!("unknown application {other}"),
    };
    Ok(outcome)
}

fn word_count_run(
    rt: &Runtime,
    input: &mut Input,
    opts: &JobOptions,
    top: usize,
    verify: bool,
    keep: bool,
) -> Result<Outcome> {
    let reference = verify.then(|| word_count::reference(input.bytes()));
    let text = input
        .bytes_mut()
        .context("word count needs writable input")?;
    let wc = JobOptions {
        chunk_records: opts.chunk_records,
        ..word_count::default_options()
    };
    let (got, seconds) = timed(|| Ok(word_count::run(rt, text, &wc)?))?;
    let verified = reference.map(|want| {
        want.len() == got.counts.len()
            && want
                .iter()
                .zip(&got.counts)
                .all(|(w, g)| w.0 == g.0 && w.1 == g.1)
    });
    let top: Vec<Value> = got
        .counts
        .iter()
        .take(top)
        .map(|(w, n)| json!({"word": String::from_utf8_lossy(w), "count": n}))
        .collect();
    let summary =
        json!({"distinct_words": got.counts.len(), "total_words": got.total(), "top": top});
    let result = keep.then(|| mr_output::word_counts(&got.counts));
    Ok(Outcome {
        result,
        ..Outcome::of(seconds, got.stats, summary, verified)
    })
}

fn histogram_run(
    rt: &Runtime,
    file: &[u8],
    opts: &JobOptions,
    verify: bool,
    keep: bool,
) -> Result<Outcome> {
    let (got, seconds) = timed(|| Ok(histogram::run(rt, file, opts)?))?;
    let verified = verify.then(|| histogram::reference(file).ok().as_ref() == Some(&got.bins));
    let pixels: u64 = got.bins[..256].iter().sum();
    let summary = json!({"pixels": pixels, "blue": &got.bins[..256], "green": &got.bins[256..512], "red": &got.bins[512..]});
    Ok(Outcome::of(seconds, got.stats, summary, verified)
        .keeping(keep, || mr_output::histogram(&got.bins)))
}

fn linear_regression_run(
    rt: &Runtime,
    bytes: &[u8],
    opts: &JobOptions,
    verify: bool,
    keep: bool,
) -> Result<Outcome> {
    let ((fit, stats), seconds) = timed(|| Ok(linear_regression::run(rt, bytes, opts)?))?;
    let verified = verify.then(|| {
        let want = linear_regression::reference(bytes);
        (want.n, want.sums) == (fit.n, fit.sums)
    });
    let summary = json!({"points": fit.n, "a": fit.a, "b": fit.b, "xbar": fit.xbar, "ybar": fit.ybar, "r2": fit.r2,
        "sx": fit.sums[0], "sy": fit.sums[1], "sxx": fit.sums[2], "syy": fit.sums[3], "sxy": fit.sums[4], "ignored_bytes": fit.ignored_bytes});
    Ok(
        Outcome::of(seconds, stats, summary, verified)
            .keeping(keep, || mr_output::regression(&fit)),
    )
}

fn string_match_run(
    rt: &Runtime,
    keys: &[u8],
    opts: &JobOptions,
    verify: bool,
    keep: bool,
) -> Result<Outcome> {
    let ((counts, stats), seconds) = timed(|| Ok(string_match::run(rt, keys, opts)?))?;
    let verified = verify.then(|| string_match::reference(keys) == counts);
    let words: Vec<Value> = string_match::WORDS
        .iter()
        .zip(counts)
        .map(|(w, n)| json!({"word": String::from_utf8_lossy(w), "matches": n}))
        .collect();
    let summary = json!({"matches": counts.iter().sum::<u64>(), "words": words});
    Ok(Outcome::of(seconds, stats, summary, verified)
        .keeping(keep, || mr_output::string_matches(&counts)))
}

/// Checks the verification, writes `--output` (the last run's full
/// result), then prints the reports.
pub fn finish(reports: &[AppReport], c: &MrCommon, json_out: bool, top: usize) -> Result<()> {
    check_verified(reports)?;
    if let Some(path) = &c.output {
        let result = reports.last().and_then(|r| r.result.as_deref());
        let result = result.context("the run kept no result to write")?;
        write_whole(path, result.as_bytes())?;
    }
    print_reports(reports, json_out, top)
}

fn check_verified(reports: &[AppReport]) -> Result<()> {
    match reports.iter().find(|r| r.verified == Some(false)) {
        Some(bad) => bail!(
            "{} with {} threads disagrees with the sequential reference",
            bad.app,
            bad.threads
        ),
        None => Ok(()),
    }
}

/// Prints the reports: JSON (one object, or a sweep), or tables.
fn print_reports(reports: &[AppReport], json_out: bool, top: usize) -> Result<()> {
    if json_out {
        let value = match reports {
            [one] => serde_json::to_value(one)?,
            many => json!({"app": many[0].app, "sweep": many}),
        };
        output::json(&value)?;
        return Ok(());
    }
    let base = reports.first().map_or(f64::NAN, |r| r.seconds.median);
    let mut rows = vec![[
        "threads",
        "median s",
        "speedup",
        "split",
        "map",
        "reduce",
        "merge",
        "map tasks local/stolen",
        "verified",
    ]
    .map(String::from)
    .to_vec()];
    for r in reports {
        let (local, stolen) = r
            .map_tasks
            .iter()
            .fold((0, 0), |(l, s), n| (l + n.local, s + n.stolen));
        rows.push(vec![
            r.threads.to_string(),
            format!("{:.4}", r.seconds.median),
            format!("{:.2}x", base / r.seconds.median),
            format!("{:.4}", r.phases.split),
            format!("{:.4}", r.phases.map),
            format!("{:.4}", r.phases.reduce),
            format!("{:.4}", r.phases.merge),
            if r.map_tasks.is_empty() {
                "-".to_string()
            } else {
                format!("{local}/{stolen}")
            },
            r.verified.map_or("-".into(), |v| v.to_string()),
        ]);
    }
    let last = reports.last().context("no report")?;
    output::text(format_args!(
        "{} on {} of input ({} repetition(s))",
        last.app,
        bytes(last.input_bytes as u64),
        last.times.len()
    ))?;
    output::text(table(&rows))?;
    output::text(summary_line(last, top))?;
    Ok(())
}

fn summary_line(r: &AppReport, top: usize) -> String {
    let s = &r.summary;
    match r.app {
        "word-count" => {
            let words: Vec<String> = s["top"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .take(top)
                        .map(|w| format!("{} {}", w["word"].as_str().unwrap_or("?"), w["count"]))
                        .collect()
                })
                .unwrap_or_default();
            format!(
                "{} words, {} distinct; most frequent: {}",
                s["total_words"],
                s["distinct_words"],
                words.join(", ")
            )
        }
        _ => {
            let mut s = s.clone();
            if let Some(o) = s.as_object_mut() {
                for k in ["blue", "green", "red", "means"] {
                    o.remove(k);
                }
            }
            s.to_string()
        }
    }
}
