//! What every MapReduce application command shares: the pool, the thread
//! sweep, timing repetitions into a report ([`measure`]), and checking,
//! saving and printing the reports ([`finish`]). The applications
//! themselves are in the parent module (text) and [`super::numeric`].

use crate::commands::mapreduce::args::MrCommon;
use crate::common::files::write_whole;
use crate::common::output;
use crate::common::progress::Spinner;
use crate::render::format::{bytes, median, table, Spread};
use anyhow::{bail, Context, Result};
use numakit_mapreduce::{CpuSplit, JobStats, NodeTasks, PhaseCpu, PhaseSeconds, Runtime};
use numakit_placement::PlacementMode;
use numakit_pool::Pool;
use serde::Serialize;
use serde_json::{json, Value};
use std::time::Instant;

/// One application's run at one thread count.
#[derive(Serialize)]
pub struct AppReport {
    /// The application's command name (`word-count`, `kmeans`, ...).
    pub app: &'static str,
    /// Worker threads of the pool for this run.
    pub threads: usize,
    /// Bytes of the input the job ran on (read or generated).
    pub input_bytes: usize,
    /// Job seconds of every repetition.
    pub times: Vec<f64>,
    /// Job seconds over the repetitions.
    pub seconds: Spread,
    /// Median phase times.
    pub phases: PhaseSeconds,
    /// Map tasks per node (local and stolen) of the last repetition; empty
    /// for the numeric applications.
    pub map_tasks: Vec<NodeTasks>,
    /// User, system and idle seconds of each phase in the last
    /// repetition (Phoenix's Figure 10); `None` for the numeric
    /// applications (whose iterations and map-only jobs report phases
    /// only) or where the CPU time cannot be read.
    pub cpu: Option<PhaseCpu>,
    /// Whether the last repetition's result equals the sequential
    /// reference; `None` without `--verify`.
    pub verified: Option<bool>,
    /// The application's result in brief (word counts, fit, means, ...),
    /// from the last repetition.
    pub summary: Value,
    /// The full result as CSV, kept only for `--out`.
    #[serde(skip)]
    pub result: Option<String>,
}

/// What one run of an application gives back.
pub struct Outcome {
    /// The job's seconds (verification excluded).
    pub seconds: f64,
    /// The seconds of each phase: split, map, reduce, merge.
    pub phases: PhaseSeconds,
    /// Map tasks per node, local and stolen (empty where not counted).
    pub map_tasks: Vec<NodeTasks>,
    /// User, system and idle time of each phase, where measured.
    pub cpu: Option<PhaseCpu>,
    /// The result in brief, as JSON.
    pub summary: Value,
    /// Whether the result equals the sequential reference; `None` when
    /// not checked.
    pub verified: Option<bool>,
    /// The full result as CSV, made only when `--out` asks for it.
    pub result: Option<String>,
}

/// The pool of one run: `--threads` or a sweep's step `threads`.
pub fn build_pool(c: &MrCommon, threads: Option<usize>, mode: PlacementMode) -> Result<Pool> {
    c.pool.with_threads(threads).build(mode)
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
    spinner: &Spinner,
    mut once: impl FnMut(&Runtime) -> Result<Outcome>,
) -> Result<AppReport> {
    let rt = Runtime::new(pool);
    let mut times = Vec::with_capacity(c.reps());
    let mut outcomes = Vec::with_capacity(c.reps());
    for rep in 0..c.reps() {
        spinner.set_prefix(format!(
            "{app} on {} threads, repetition {}/{}",
            pool.workers(),
            rep + 1,
            c.reps()
        ));
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
        cpu: last.cpu,
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
    /// An outcome from a job's `seconds` and statistics (phases and map
    /// tasks per node), without the full result.
    pub fn of(seconds: f64, stats: JobStats, summary: Value, verified: Option<bool>) -> Self {
        Self {
            seconds,
            phases: stats.seconds,
            map_tasks: stats.per_node,
            cpu: stats.cpu,
            summary,
            verified,
            result: None,
        }
    }

    /// Keeps the full result when `keep` (`--out`) asks for it.
    pub fn keeping(mut self, keep: bool, result: impl FnOnce() -> String) -> Self {
        self.result = keep.then(result);
        self
    }
}

/// Checks the verification, writes `--out` (the last run's full
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
    let value = match reports {
        [one] => serde_json::to_value(one)?,
        many => json!({"app": many[0].app, "sweep": many}),
    };
    output::report_with(json_out, &value, || reports_text(reports, top))
}

/// The reports as text: what ran, a row per thread count, the summary.
fn reports_text(reports: &[AppReport], top: usize) -> Result<String> {
    let base = reports.first().map_or(f64::NAN, |r| r.seconds.median);
    let mut rows = vec![[
        "threads",
        "median s",
        "min-max s",
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
            format!("{:.4}-{:.4}", r.seconds.min, r.seconds.max),
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
    Ok(format!(
        "{} on {} of input ({} repetition(s))\n{}\n{}{}",
        last.app,
        bytes(last.input_bytes as u64),
        last.times.len(),
        table(&rows),
        cpu_lines(reports),
        summary_line(last, top)
    ))
}

/// Where the workers' time went in each phase (user/system/idle seconds,
/// last repetition), one line per thread count; empty when not measured.
fn cpu_lines(reports: &[AppReport]) -> String {
    let split =
        |name: &str, c: &CpuSplit| format!("{name} {:.3}/{:.3}/{:.3}", c.user, c.system, c.idle);
    reports
        .iter()
        .filter_map(|r| {
            let cpu = r.cpu.as_ref()?;
            Some(format!(
                "workers' time on {} threads, user/system/idle s: {}, {}, {}, {}\n",
                r.threads,
                split("split", &cpu.split),
                split("map", &cpu.map),
                split("reduce", &cpu.reduce),
                split("merge", &cpu.merge)
            ))
        })
        .collect()
}

/// A summary's scalar fields as `name value` text (`pixels 30000, ...`);
/// lists (histogram bins, means) are for `--json` and `--out`.
fn plain_fields(summary: &Value) -> String {
    let Some(fields) = summary.as_object() else {
        return summary.to_string();
    };
    fields
        .iter()
        .filter(|(_, v)| !v.is_array() && !v.is_object())
        .map(|(k, v)| match v {
            Value::String(text) => format!("{} {text}", k.replace('_', " ")),
            other => format!("{} {other}", k.replace('_', " ")),
        })
        .collect::<Vec<_>>()
        .join(", ")
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
        _ => plain_fields(s),
    }
}
