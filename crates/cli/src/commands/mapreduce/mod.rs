//! `numakit mapreduce <app>`: the Phoenix applications on numakit's
//! MapReduce runtime, on generated input or a file in the Phoenix++
//! program's format; `--generate` writes such a file; `--sweep` measures
//! the speedup from one thread to all with the time of each phase.
//!
//! Only the job is timed: the input is read (or generated) and placed on
//! the pool's nodes before the first repetition.

pub mod args;
pub mod measure;
pub mod numeric;
pub mod results;

use crate::common::progress::Spinner;
use anyhow::{bail, Context, Result};
use numakit_mapreduce::{ContainerKind, Input, InputMode, JobOptions, Runtime};
use numakit_mapreduce_apps::{histogram, linear_regression, string_match, word_count};
use numakit_placement::PlacementMode;
use numakit_pool::Pool;
use serde_json::{json, Value};

use crate::commands::mapreduce::args::{MapReduceApp, MapReduceArgs, MrCommon, TextArgs};
use crate::common::files::write_whole;
use crate::common::output;
use crate::render::format::bytes;
use measure::{build_pool, finish, measure, sweep_threads, timed, Outcome};

/// Runs `numakit mapreduce <app>`: the text applications here, the numeric
/// ones in [`numeric`]; writes the input with `--generate` instead, or
/// measures the job (over the sweep's thread counts) and prints the reports.
pub fn run(args: &MapReduceArgs, mode: PlacementMode, json_out: bool, quiet: bool) -> Result<()> {
    match &args.app {
        MapReduceApp::WordCount(a) => text_app("word-count", a, mode, json_out, quiet),
        MapReduceApp::Histogram(a) => text_app("histogram", a, mode, json_out, quiet),
        MapReduceApp::LinearRegression(a) => {
            text_app("linear-regression", a, mode, json_out, quiet)
        }
        MapReduceApp::StringMatch(a) => text_app("string-match", a, mode, json_out, quiet),
        MapReduceApp::Kmeans(_) | MapReduceApp::Pca(_) | MapReduceApp::MatrixMultiply(_) => {
            crate::commands::mapreduce::numeric::run(&args.app, mode, json_out, quiet)
        }
    }
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
    crate::usage_ensure!(c.reps() > 0, "--reps must be at least 1");
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
    let container = container_of(app, c)?;
    let threads = sweep_threads(c)?;
    let spinner = Spinner::new(quiet || json_out);
    let mut reports = Vec::new();
    for t in threads {
        let pool = build_pool(c, t, mode)?;
        spinner.set_prefix(format!("{app}: loading the input"));
        let mut input = load(&pool, app, c, size)?;
        let report = measure(app, &pool, c, input.len(), &spinner, |rt| {
            one_run(app, rt, &mut input, a, c, container)
        })?;
        reports.push(report);
    }
    spinner.finish();
    finish(&reports, c, json_out, a.top)
}

/// The input bytes, read from `--input` or generated, placed on the nodes.
fn load(pool: &Pool, app: &str, c: &MrCommon, size: usize) -> Result<Input> {
    match &c.input {
        Some(path) => {
            let mode = match c.input_mode {
                args::InputMode::Auto if pool.nodes().len() > 1 || app == "word-count" => {
                    InputMode::Read
                }
                args::InputMode::Read => InputMode::Read,
                args::InputMode::Auto | args::InputMode::Mmap => InputMode::Mmap { populate: true },
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
            crate::common::budget::check(&format!("the {app} input {}", path.display()), size)
        }
        None => crate::common::budget::check(
            &format!("the generated {app} input (--size-mib {size_mib})"),
            crate::common::budget::times(size_mib, 2 << 20),
        ),
    }
}

/// The application's own key range: the slots of its array container.
fn own_keys(app: &str) -> usize {
    match app {
        "histogram" => histogram::BINS,
        "linear-regression" => linear_regression::SUMS,
        "string-match" => string_match::WORDS.len(),
        _ => 0,
    }
}

/// The container that runs: `--container`, else the application's own.
fn container_of(app: &str, c: &MrCommon) -> Result<ContainerKind> {
    let chosen = match c.container.as_deref() {
        Some(spec) => Some(
            ContainerKind::parse(spec, own_keys(app))
                .map_err(|e| crate::usage_error!("--container: {e}"))?,
        ),
        None => None,
    };
    Ok(chosen.unwrap_or(match app {
        "word-count" => word_count::CONTAINER,
        "histogram" => histogram::CONTAINER,
        "linear-regression" => linear_regression::CONTAINER,
        "string-match" => string_match::CONTAINER,
        other => ContainerKind::Array {
            keys: own_keys(other),
        },
    }))
}

fn one_run(
    app: &str,
    rt: &Runtime,
    input: &mut Input,
    a: &TextArgs,
    c: &MrCommon,
    container: ContainerKind,
) -> Result<Outcome> {
    let opts = JobOptions {
        container: Some(container),
        chunk_records: c.chunk_kib.map(|k| k << 10),
        ..JobOptions::default()
    };
    let keep = c.output.is_some();
    let mut outcome = match app {
        "word-count" => word_count_run(rt, input, &opts, a.top, c.verify, keep)?,
        "histogram" => histogram_run(rt, input.bytes(), &opts, c.verify, keep)?,
        "linear-regression" => linear_regression_run(rt, input.bytes(), &opts, c.verify, keep)?,
        "string-match" => string_match_run(rt, input.bytes(), &opts, c.verify, keep)?,
        other => bail!("unknown application {other}"),
    };
    if let Value::Object(summary) = &mut outcome.summary {
        summary.insert("container".into(), json!(container.spec()));
    }
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
    let (got, seconds) = timed(|| Ok(word_count::run(rt, text, opts)?))?;
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
    let result = keep.then(|| results::word_counts(&got.counts));
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
        .keeping(keep, || results::histogram(&got.bins)))
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
    Ok(Outcome::of(seconds, stats, summary, verified).keeping(keep, || results::regression(&fit)))
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
        .keeping(keep, || results::string_matches(&counts)))
}
