//! The seven applications as the CLI's `numakit mapreduce <app>` runs
//! them: generated input, a pool of the asked threads (best-effort
//! placement, the CLI's default), one [`Runtime`] reused for every
//! repetition, and the library's own `run` of each application.

use numakit_mapreduce::{ContainerKind, Input, JobOptions, PhaseCpu, PhaseSeconds, Runtime};
use numakit_mapreduce_apps::kmeans::{self, gen::KmeansParams, KmeansInput, KmeansLimits};
use numakit_mapreduce_apps::matrix_multiply::{self, MatrixPair};
use numakit_mapreduce_apps::pca::{self, PcaMatrix};
use numakit_mapreduce_apps::{histogram, linear_regression, string_match, word_count};
use numakit_placement::PlacementMode;
use numakit_pool::{Pool, PoolBuilder};

use crate::context::{Context, Scale};
use crate::error::RunResult;

/// One of Phoenix's seven applications.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum App {
    Histogram,
    Kmeans,
    LinearRegression,
    MatrixMultiply,
    Pca,
    StringMatch,
    WordCount,
}

impl App {
    /// The seven, in Table II's order.
    pub(super) const ALL: [App; 7] = [
        App::Histogram,
        App::Kmeans,
        App::LinearRegression,
        App::MatrixMultiply,
        App::Pca,
        App::StringMatch,
        App::WordCount,
    ];

    /// The paper's name (`word_count`).
    pub(super) fn paper_name(self) -> &'static str {
        match self {
            App::Histogram => "histogram",
            App::Kmeans => "kmeans",
            App::LinearRegression => "linear_regression",
            App::MatrixMultiply => "matrix_multiply",
            App::Pca => "pca",
            App::StringMatch => "string_match",
            App::WordCount => "word_count",
        }
    }

    fn is_text(self) -> bool {
        matches!(
            self,
            App::Histogram | App::LinearRegression | App::StringMatch | App::WordCount
        )
    }
}

/// An application's generated input.
pub(super) enum Data {
    /// The bytes of a text application.
    Text(Vec<u8>),
    /// k-means points and initial means.
    Kmeans(KmeansInput),
    /// PCA's matrix.
    Pca(PcaMatrix),
    /// matrix multiply's two matrices.
    Matrices(MatrixPair),
}

impl Data {
    /// Bytes of input (4-byte values for the numeric applications).
    pub(super) fn bytes(&self) -> usize {
        match self {
            Data::Text(t) => t.len(),
            Data::Kmeans(k) => 4 * k.points().coords().len(),
            Data::Pca(m) => 4 * m.values().len(),
            Data::Matrices(p) => 8 * p.side() * p.side(),
        }
    }

    /// The input's size as Table II gives it.
    pub(super) fn describe(&self) -> String {
        match self {
            Data::Text(t) => format!("{:.0} MiB", t.len() as f64 / (1 << 20) as f64),
            Data::Kmeans(k) => format!("{} points", k.points().len()),
            Data::Pca(m) => format!("{} x {} matrix", m.rows(), m.cols()),
            Data::Matrices(p) => format!("{0} x {0} matrices", p.side()),
        }
    }
}

/// MiB of a text application's input at `scale`: at the small scale,
/// enough for about 10 ms of work on one thread of the test build (less
/// is below what a timer on a shared machine can tell apart).
pub(super) fn text_mib(app: App, scale: Scale) -> usize {
    match app {
        App::Histogram => scale.pick(8, 64),
        App::LinearRegression => scale.pick(32, 256),
        App::StringMatch => scale.pick(4, 64),
        _ => scale.pick(2, 32),
    }
}

/// k-means points, PCA's rows and columns, and matrix multiply's side at
/// `scale`.
fn numeric_sizes(scale: Scale) -> (usize, usize, usize) {
    scale.pick((5_000, 400, 400), (100_000, 1_000, 1_000))
}

/// The generated input of `app` at `scale` (seed 42 for text, the
/// original programs' rand() stream, seed 1, for the numeric ones).
pub(super) fn generate(app: App, scale: Scale) -> RunResult<Data> {
    let text = text_mib(app, scale) << 20;
    let (points, side, mm) = numeric_sizes(scale);
    Ok(match app {
        App::WordCount => Data::Text(word_count::generate(text, 42)),
        App::Histogram => Data::Text(histogram::generate(text, 42)),
        App::LinearRegression => Data::Text(linear_regression::generate(text, 42)),
        App::StringMatch => Data::Text(string_match::generate(text, 42)),
        App::Kmeans => {
            let params = KmeansParams {
                points,
                ..KmeansParams::default()
            };
            Data::Kmeans(kmeans::gen::generate(&params, kmeans::gen::ORIGINAL_SEED)?)
        }
        App::Pca => Data::Pca(pca::gen::generate(
            side,
            side,
            pca::gen::DEFAULT_GRID_SIZE,
            pca::gen::ORIGINAL_SEED,
        )?),
        App::MatrixMultiply => Data::Matrices(matrix_multiply::gen::generate(mm, 1)),
    })
}

/// A pool of `threads` workers on this machine, as the CLI builds it.
pub(super) fn pool(ctx: &Context<'_>, threads: usize) -> RunResult<Pool> {
    Ok(PoolBuilder::new(ctx.topology.clone())
        .threads(threads)
        .placement(PlacementMode::BestEffort)
        .build()?)
}

/// The thread counts of a sweep: 1, 2, 4, ... and every allowed CPU.
pub(super) fn sweep_threads(ctx: &Context<'_>) -> Vec<usize> {
    let all = ctx.topology.allowed.cpus.len().max(1);
    let mut counts: Vec<usize> = std::iter::successors(Some(1usize), |t| Some(t * 2))
        .take_while(|&t| t < all)
        .collect();
    counts.push(all);
    counts
}

/// What one run measured.
#[derive(Clone, Debug, Default)]
pub(super) struct Run {
    /// The job's wall-clock seconds.
    pub(super) seconds: f64,
    /// Split, map, reduce and merge seconds.
    pub(super) phases: PhaseSeconds,
    /// User, system and idle time per phase (text applications).
    pub(super) cpu: Option<PhaseCpu>,
    /// Map tasks run.
    pub(super) map_tasks: usize,
    /// Map tasks run from their own node's queue, and those whose node
    /// was known.
    pub(super) local_tasks: u64,
    /// Map tasks located on a node.
    pub(super) homed_tasks: u64,
}

/// The fastest of `reps` runs of `app` on `threads` workers (one pool,
/// one runtime, the input placed on the pool's nodes once).
pub(super) fn best_of(
    ctx: &Context<'_>,
    app: App,
    data: &Data,
    threads: usize,
    opts: &JobOptions,
    reps: usize,
) -> RunResult<Run> {
    let pool = pool(ctx, threads)?;
    let rt = Runtime::new(&pool);
    let mut placed = match data {
        Data::Text(bytes) => Some(Input::place(&pool, bytes)?),
        _ => None,
    };
    let mut best: Option<Run> = None;
    for _ in 0..reps.max(1) {
        let run = once(&rt, app, data, placed.as_mut(), opts)?;
        if best.as_ref().is_none_or(|b| run.seconds < b.seconds) {
            best = Some(run);
        }
    }
    Ok(best.ok_or("no repetition ran")?)
}

/// Repetitions at `scale`.
pub(super) fn reps(scale: Scale) -> usize {
    scale.pick(2, 3)
}

/// Best-of runs of `app` at every thread count of the sweep.
pub(super) fn sweep(
    ctx: &Context<'_>,
    app: App,
    data: &Data,
    opts: &JobOptions,
) -> RunResult<Vec<(usize, Run)>> {
    sweep_threads(ctx)
        .into_iter()
        .map(|t| Ok((t, best_of(ctx, app, data, t, opts, reps(ctx.scale))?)))
        .collect()
}

fn once(
    rt: &Runtime,
    app: App,
    data: &Data,
    placed: Option<&mut Input>,
    opts: &JobOptions,
) -> RunResult<Run> {
    let started = std::time::Instant::now();
    let stats = match (data, placed) {
        (Data::Text(_), Some(input)) if app.is_text() => text_once(rt, app, input, opts)?,
        (Data::Kmeans(input), _) => {
            let (_, phases) = kmeans::run(rt, input, KmeansLimits::default())?;
            return Ok(numeric(phases, started));
        }
        (Data::Pca(m), _) => return Ok(numeric(pca::run(rt, m)?.1, started)),
        (Data::Matrices(p), _) => return Ok(numeric(matrix_multiply::run(rt, p)?.1, started)),
        _ => return Err(format!("{} got another application's input", app.paper_name()).into()),
    };
    let seconds = started.elapsed().as_secs_f64();
    Ok(Run {
        seconds,
        phases: stats.seconds,
        cpu: stats.cpu,
        map_tasks: stats.map_tasks,
        local_tasks: stats.per_node.iter().map(|n| n.local).sum(),
        homed_tasks: stats.per_node.iter().map(|n| n.homed).sum(),
    })
}

fn numeric(phases: PhaseSeconds, started: std::time::Instant) -> Run {
    Run {
        seconds: started.elapsed().as_secs_f64(),
        phases,
        ..Run::default()
    }
}

fn text_once(
    rt: &Runtime,
    app: App,
    input: &mut Input,
    opts: &JobOptions,
) -> RunResult<numakit_mapreduce::JobStats> {
    Ok(match app {
        App::WordCount => {
            let text = input.bytes_mut().ok_or("word count needs writable input")?;
            word_count::run(rt, text, opts)?.stats
        }
        App::Histogram => histogram::run(rt, input.bytes(), opts)?.stats,
        App::LinearRegression => linear_regression::run(rt, input.bytes(), opts)?.1,
        _ => string_match::run(rt, input.bytes(), opts)?.1,
    })
}

/// Job options with `container` (the CLI's `--container`).
pub(super) fn with_container(container: ContainerKind) -> JobOptions {
    JobOptions {
        container: Some(container),
        ..JobOptions::default()
    }
}

/// Whether other work is running on this machine (a 1-minute load
/// average past all its CPUs but half of one): then no CPU is free for a
/// second thread, and timings cannot show a speed-up reliably.
pub(super) fn busy(ctx: &Context<'_>) -> Option<f64> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let load: f64 = text.split_whitespace().next()?.parse().ok()?;
    let cpus = ctx.topology.allowed.cpus.len().max(1) as f64;
    (load > cpus - 0.5).then_some(load)
}

/// Shortest one-thread run whose speed-up the shapes trust, in seconds.
pub(super) const SHORTEST_TIMED: f64 = 0.01;
