//! `numakit shuffle`: Li et al. §4.1 on this machine. Every schedule and
//! synchronization is run `--reps` times beside a plain parallel read of
//! the same bytes, each result checked against the sequential reference.

use clap::Args;
use std::sync::Arc;

use anyhow::{ensure, Context, Result};
use numakit_placement::PlacementMode;
use numakit_pool::Pool;
use numakit_shuffle::{
    plain_read, shuffle, Form, ShuffleData, ShuffleOptions, Skew, Strategy, SyncMode,
};
use numakit_topology::Topology;
use serde::Serialize;

use crate::commands::figures::{schedule_bar, sweep_path};
use crate::common::output;
use crate::common::pool::PoolArgs;
use crate::common::progress::Spinner;
use crate::render::chart::{self, Bar, Series};
use crate::render::format::{bytes, table, Spread};

/// One schedule's measurements.
#[derive(Serialize)]
pub struct ScheduleResult {
    /// The shuffle schedule (naive, ring, random, migration, migration-copy).
    pub schedule: Strategy,
    /// Its synchronization: tight (a barrier between steps) or loose (each
    /// consumer moves on alone).
    pub sync: SyncMode,
    /// GB/s (10^9 bytes of data per second) over the repetitions.
    pub gbs: Spread,
    /// Median over the baseline's median.
    pub vs_plain_read: f64,
    /// Steps, over all repetitions, in which a consumer ran on another node
    /// than the schedule put it on (0 when pinning and migration work).
    pub misplaced_steps: u64,
}

/// A thread count of the sweep.
#[derive(Serialize)]
pub struct SweepPoint {
    /// Worker threads at this point (a multiple of the node count).
    pub threads: usize,
    /// Median GB/s of the plain parallel read of the same bytes.
    pub plain_read_gbs: f64,
    /// Median GB/s of each schedule (naive, ring, migration; tight).
    pub results: Vec<(Strategy, f64)>,
}

/// Everything `numakit shuffle` measured.
#[derive(Serialize)]
pub struct ShuffleReport {
    /// Bytes of u64 data shuffled in each run, over all partitions.
    pub bytes: u64,
    /// Worker threads: one producer partition and one consumer each.
    pub threads: usize,
    /// NUMA nodes the workers span (the shuffle's sockets).
    pub sockets: usize,
    /// Workers on each node.
    pub threads_per_socket: usize,
    /// `pull` (consume in place) or `push` (copy into consumer-local
    /// buffers).
    pub form: Form,
    /// How piece sizes are spread over consumers: uniform or Zipf.
    pub skew: Skew,
    /// Repetitions of every schedule and of the plain read.
    pub reps: usize,
    /// GB/s of the baseline: a plain parallel read of the same bytes.
    pub plain_read_gbs: Spread,
    /// One entry per schedule and synchronization measured.
    pub results: Vec<ScheduleResult>,
    /// The thread-count sweep (empty without `--sweep`).
    pub sweep: Vec<SweepPoint>,
    /// Always true: a result that differs from the sequential reference
    /// fails the command instead.
    pub verified: bool,
    /// Per producer: (node it should be on, pages there, resident pages).
    pub placement: Vec<(u32, usize, usize)>,
    /// Whether every page of every partition is on its producer's node.
    pub placed: bool,
}

struct Selection {
    strategies: Vec<Strategy>,
    syncs: Vec<SyncMode>,
    form: Form,
    skew: Skew,
}

impl Selection {
    /// Every schedule with every synchronisation, schedules outermost.
    fn combinations(&self) -> Vec<(Strategy, SyncMode)> {
        self.strategies
            .iter()
            .flat_map(|&k| self.syncs.iter().map(move |&s| (k, s)))
            .collect()
    }
}

fn parse(args: &ShuffleArgs) -> Result<Selection> {
    crate::usage_ensure!(args.reps > 0, "--reps must be at least 1");
    crate::usage_ensure!(args.size_mib > 0, "--size-mib must be at least 1");
    Ok(Selection {
        strategies: args.schedules.clone(),
        syncs: args.sync.clone(),
        form: args.form.parse().map_err(crate::common::usage::invalid)?,
        skew: args.skew.parse().map_err(crate::common::usage::invalid)?,
    })
}

/// Runs `numakit shuffle`: the simulator's recommendation with `--plan`,
/// otherwise measures every schedule (and the sweep), writes the charts and
/// prints the report.
pub fn run(args: &ShuffleArgs, mode: PlacementMode, json: bool, quiet: bool) -> Result<()> {
    if args.plan {
        return crate::commands::simulate::plan(args.machine.as_deref(), args.pool.threads, json);
    }
    let plan = parse(args)?;
    let topology = Arc::new(numakit_topology::discover()?);
    let pool = build_pool(&topology, mode, &args.pool)?;
    let threads = pool.workers();
    check_memory(
        &topology,
        crate::common::budget::times(args.size_mib, 1 << 20),
        plan.form,
    )?;
    crate::common::budget::check(
        &format!("the consumers' state (--state-kib {})", args.state_kib),
        crate::common::budget::times(args.state_kib, 1 << 10).saturating_mul(threads as u64),
    )?;
    let spinner = Spinner::new(quiet || json);
    let progress = |msg: String| spinner.set_prefix(msg);
    let mut report = measure(&pool, args, &plan, &progress)?;
    if args.sweep {
        report.sweep = sweep(&topology, mode, args, &plan, &progress)?;
    }
    spinner.finish();
    if let Some(path) = &args.chart {
        write_charts(path, &report)?;
    }
    output::report(json, &report, || render(&report))?;
    Ok(())
}

/// Refuses sizes that would not fit, before anything is allocated: in all
/// (the memory limit) and per node (each node holds its share,
/// bound there, so a full node would mean the OOM killer, not a spill).
fn check_memory(topology: &Topology, data_bytes: u64, form: Form) -> Result<()> {
    let need = if form == Form::Push {
        2 * data_bytes
    } else {
        data_bytes
    };
    crate::common::budget::check("the shuffle's data (--size-mib)", need)?;
    if !topology.node_memory_is_reliable() {
        return Ok(());
    }
    let nodes = topology.compute_nodes();
    let share = need / nodes.len().max(1) as u64;
    for node in nodes {
        if let Some(total) = topology.node(node)?.memory_bytes {
            ensure!(
                share < total / 10 * 9,
                "the shuffle puts {} on node {node}, which has only {}",
                bytes(share),
                bytes(total)
            );
        }
    }
    Ok(())
}

/// The pool of `workers`, checked to divide evenly over its nodes (the
/// shuffle's layout).
fn build_pool(topology: &Arc<Topology>, mode: PlacementMode, workers: &PoolArgs) -> Result<Pool> {
    let pool = workers.build_on(topology, mode)?;
    numakit_shuffle::layout_of(&pool)
        .with_context(|| format!("{} threads over nodes {:?}", pool.workers(), pool.nodes()))?;
    Ok(pool)
}

fn elements(args: &ShuffleArgs) -> usize {
    (args.size_mib << 20) as usize / 8
}

fn measure(
    pool: &Pool,
    args: &ShuffleArgs,
    plan: &Selection,
    progress: &dyn Fn(String),
) -> Result<ShuffleReport> {
    progress(format!(
        "placing {} over {} partitions",
        bytes(args.size_mib << 20),
        pool.workers()
    ));
    let data = ShuffleData::generate(pool, elements(args), plan.skew, 42)?;
    let reference = data.reference();
    let want_total: u64 = reference.iter().map(|r| r.0).sum();
    let combos = plan.combinations();
    let mut samples = vec![Vec::new(); combos.len()];
    let mut misplaced = vec![0u64; combos.len()];
    let mut plain = Vec::new();
    let baseline = || -> Result<f64> {
        let (seconds, total) = plain_read(pool, &data)?;
        ensure!(
            total == want_total,
            "the plain read summed {total}, expected {want_total}"
        );
        Ok(data.bytes() as f64 / seconds / 1e9)
    };
    for rep in 0..args.reps {
        progress(format!("repetition {}/{}", rep + 1, args.reps));
        // The baseline runs first in even repetitions and last in odd ones,
        // so no method always enjoys (or suffers) the same position.
        if rep % 2 == 0 {
            plain.push(baseline()?);
        }
        let runs = Repetition {
            pool,
            data: &data,
            reference: &reference,
            plan,
            args,
        }
        .run(&combos, rep)?;
        for (i, (gbs, misplaced_steps)) in runs.into_iter().enumerate() {
            samples[i].push(gbs);
            misplaced[i] += misplaced_steps;
        }
        if rep % 2 == 1 {
            plain.push(baseline()?);
        }
    }
    let plain_read_gbs = Spread::of(&plain);
    let results = combos
        .iter()
        .zip(&samples)
        .zip(&misplaced)
        .map(|((&combo, s), &misplaced)| schedule_result(combo, s, misplaced, &plain_read_gbs))
        .collect();
    report(pool, &data, plan, args.reps, plain_read_gbs, results)
}

/// The report of a measured shuffle, with where its partitions lay.
fn report(
    pool: &Pool,
    data: &ShuffleData,
    plan: &Selection,
    reps: usize,
    plain_read_gbs: Spread,
    results: Vec<ScheduleResult>,
) -> Result<ShuffleReport> {
    let layout = data.layout;
    let placement = data.placement()?;
    let placed = placement.iter().all(|&(_, here, total)| here == total);
    Ok(ShuffleReport {
        placement,
        placed,
        bytes: data.bytes(),
        threads: pool.workers(),
        sockets: layout.sockets,
        threads_per_socket: layout.threads_per_socket,
        form: plan.form,
        skew: plan.skew,
        reps,
        plain_read_gbs,
        results,
        sweep: Vec::new(),
        verified: true,
    })
}

/// One repetition of every schedule on the same data.
struct Repetition<'a> {
    pool: &'a Pool,
    data: &'a ShuffleData,
    reference: &'a [(u64, u64)],
    plan: &'a Selection,
    args: &'a ShuffleArgs,
}

impl Repetition<'_> {
    /// Per schedule, in order: GB/s and the steps run off their node.
    /// Every result is checked against the reference.
    fn run(&self, combos: &[(Strategy, SyncMode)], rep: usize) -> Result<Vec<(f64, u64)>> {
        combos
            .iter()
            .map(|&(strategy, sync)| {
                let mut opts = ShuffleOptions::new(strategy, sync);
                opts.form = self.plan.form;
                opts.state_bytes = self.args.state_kib << 10;
                opts.seed = rep as u64;
                let run = shuffle(self.pool, self.data, &opts)?;
                run.verify(self.reference)
                    .with_context(|| format!("{strategy} ({sync})"))?;
                Ok((run.gbs(), run.misplaced_steps))
            })
            .collect()
    }
}

/// One schedule's repetitions summed up against the plain read.
fn schedule_result(
    (schedule, sync): (Strategy, SyncMode),
    samples: &[f64],
    misplaced_steps: u64,
    plain_read_gbs: &Spread,
) -> ScheduleResult {
    let gbs = Spread::of(samples);
    ScheduleResult {
        schedule,
        sync,
        vs_plain_read: gbs.median / plain_read_gbs.median,
        misplaced_steps,
        gbs,
    }
}

/// A short run for the main job: naive, ring and migration, tight, 7
/// repetitions on `size_mib` MiB.
pub fn quick_report(pool: &Pool, size_mib: u64) -> Result<ShuffleReport> {
    let args = ShuffleArgs {
        size_mib,
        pool: PoolArgs::default(),
        schedules: vec![Strategy::Naive, Strategy::Ring, Strategy::Migration],
        sync: vec![SyncMode::Tight],
        form: "pull".into(),
        skew: "uniform".into(),
        state_kib: 64,
        reps: 7,
        sweep: false,
        chart: None,
        plan: false,
        machine: None,
    };
    let plan = parse(&args)?;
    measure(pool, &args, &plan, &|_| {})
}

/// Thread counts of the sweep: multiples of the node count up to the CPUs.
fn sweep_counts(nodes: usize, cpus: usize) -> Vec<usize> {
    let mut counts: Vec<usize> = (1..)
        .map(|k| k * nodes)
        .take_while(|&t| t <= cpus)
        .collect();
    if counts.len() > 8 {
        let step = counts.len().div_ceil(8);
        let last = counts[counts.len() - 1];
        counts = counts.into_iter().step_by(step).collect();
        if counts.last() != Some(&last) {
            counts.push(last);
        }
    }
    counts
}

fn sweep(
    topology: &Arc<Topology>,
    mode: PlacementMode,
    args: &ShuffleArgs,
    plan: &Selection,
    progress: &dyn Fn(String),
) -> Result<Vec<SweepPoint>> {
    let strategies = [Strategy::Naive, Strategy::Ring, Strategy::Migration];
    let sweep_plan = Selection {
        strategies: strategies.to_vec(),
        syncs: vec![SyncMode::Tight],
        form: plan.form,
        skew: plan.skew,
    };
    let nodes = topology.compute_nodes().len().max(1);
    let mut points = Vec::new();
    for threads in sweep_counts(nodes, topology.allowed.cpus.len()) {
        progress(format!("sweep: {threads} threads"));
        let pool = build_pool(topology, mode, &args.pool.with_threads(Some(threads)))?;
        let report = measure(&pool, args, &sweep_plan, &|_| {})?;
        points.push(SweepPoint {
            threads,
            plain_read_gbs: report.plain_read_gbs.median,
            results: report
                .results
                .iter()
                .map(|r| (r.schedule, r.gbs.median))
                .collect(),
        });
    }
    Ok(points)
}

fn write_charts(path: &std::path::Path, report: &ShuffleReport) -> Result<()> {
    let bars: Vec<Bar> = report
        .results
        .iter()
        .map(|r| schedule_bar(r.schedule, r.sync, &r.gbs))
        .collect();
    let title = format!(
        "Shuffle of {} over {} threads ({} node(s))",
        bytes(report.bytes),
        report.threads,
        report.sockets
    );
    let svg = chart::bars(
        &title,
        "GB/s",
        &bars,
        Some(("plain read", report.plain_read_gbs.median)),
    );
    std::fs::write(path, svg).with_context(|| format!("writing {}", path.display()))?;
    if !report.sweep.is_empty() {
        let mut series: Vec<Series> = Vec::new();
        for (i, (strategy, _)) in report.sweep[0].results.iter().enumerate() {
            series.push(Series {
                name: strategy.to_string(),
                points: report
                    .sweep
                    .iter()
                    .map(|p| (p.threads as f64, p.results[i].1))
                    .collect(),
            });
        }
        series.push(Series {
            name: "plain read".into(),
            points: report
                .sweep
                .iter()
                .map(|p| (p.threads as f64, p.plain_read_gbs))
                .collect(),
        });
        let svg = chart::lines(
            "Shuffle bandwidth by thread count (tight)",
            "threads",
            "GB/s",
            &series,
        );
        let sweep_file = sweep_path(path);
        std::fs::write(&sweep_file, svg)
            .with_context(|| format!("writing {}", sweep_file.display()))?;
    }
    Ok(())
}

/// The report as text: one GB/s row per schedule against the plain read,
/// and the sweep's table when there is one.
pub fn render(r: &ShuffleReport) -> String {
    let mut rows = vec![[
        "schedule",
        "sync",
        "min GB/s",
        "median GB/s",
        "max GB/s",
        "vs plain read",
    ]
    .map(String::from)
    .to_vec()];
    rows.push(vec![
        "plain read".into(),
        "-".into(),
        format!("{:.2}", r.plain_read_gbs.min),
        format!("{:.2}", r.plain_read_gbs.median),
        format!("{:.2}", r.plain_read_gbs.max),
        "1.000".into(),
    ]);
    for x in &r.results {
        rows.push(vec![
            x.schedule.to_string(),
            x.sync.to_string(),
            format!("{:.2}", x.gbs.min),
            format!("{:.2}", x.gbs.median),
            format!("{:.2}", x.gbs.max),
            format!("{:.3}", x.vs_plain_read),
        ]);
    }
    let mut out = format!(
        "shuffle: {} of u64 over {} threads ({} node(s) x {}), {} form, {} pieces, {} repetitions; every result verified; partitions {}\n\n{}",
        bytes(r.bytes),
        r.threads,
        r.sockets,
        r.threads_per_socket,
        crate::render::format::name_of(&r.form),
        crate::render::format::name_of(&r.skew),
        r.reps,
        if r.placed { "all on their producers' nodes" } else { "NOT all on their producers' nodes (placement refused?)" },
        table(&rows)
    );
    if !r.sweep.is_empty() {
        let mut rows = vec![vec!["threads".to_string(), "plain read".into()]];
        rows[0].extend(r.sweep[0].results.iter().map(|(k, _)| k.to_string()));
        for p in &r.sweep {
            let mut row = vec![p.threads.to_string(), format!("{:.2}", p.plain_read_gbs)];
            row.extend(p.results.iter().map(|(_, g)| format!("{g:.2}")));
            rows.push(row);
        }
        out.push_str(&format!(
            "\n\nthread sweep (tight, median GB/s):\n{}",
            table(&rows)
        ));
    }
    if r.sockets == 1 {
        out.push_str("\n\none node: every read is local, so schedules differ only in order and synchronization; `numakit simulate` predicts them on multi-socket machines");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweep_counts_step_by_nodes() {
        assert_eq!(sweep_counts(1, 2), vec![1, 2]);
        assert_eq!(sweep_counts(4, 8), vec![4, 8]);
        assert_eq!(sweep_counts(2, 1), Vec::<usize>::new());
        let many = sweep_counts(1, 64);
        assert!(many.len() <= 9 && many[0] == 1 && *many.last().unwrap() == 64);
    }
}

/// The options of `numakit shuffle`.
#[derive(Debug, Args)]
pub struct ShuffleArgs {
    /// Data size in MiB (64-bit integers spread over all partitions).
    #[arg(long, default_value_t = 512, value_name = "MIB")]
    pub size_mib: u64,

    /// The workers; their count must divide evenly over the nodes.
    #[command(flatten)]
    pub pool: PoolArgs,

    /// Schedules to run, comma separated: naive, ring, random, migration,
    /// migration-copy.
    #[arg(
        long,
        default_value = "naive,ring,random,migration,migration-copy",
        value_delimiter = ',',
        value_name = "LIST"
    )]
    pub schedules: Vec<numakit_shuffle::Strategy>,

    /// Synchronization variants, comma separated: tight, loose.
    #[arg(
        long,
        default_value = "tight,loose",
        value_delimiter = ',',
        value_name = "LIST"
    )]
    pub sync: Vec<numakit_shuffle::SyncMode>,

    /// `pull` (consume in place) or `push` (copy into consumer-local buffers).
    #[arg(long, default_value = "pull", value_name = "FORM")]
    pub form: String,

    /// Piece sizes over consumers: `uniform` or `zipf:THETA`.
    #[arg(long, default_value = "uniform", value_name = "SKEW")]
    pub skew: String,

    /// State each consumer carries along with migration-copy, in KiB.
    #[arg(long, default_value_t = 64, value_name = "KIB")]
    pub state_kib: usize,

    /// Repetitions of every schedule (min/median/max are reported).
    #[arg(long, default_value_t = 5, value_name = "N", value_parser = crate::common::parse::reps)]
    pub reps: usize,

    /// Also sweep the thread count (naive, ring and migration, tight), as
    /// in Li Figure 7.
    #[arg(long)]
    pub sweep: bool,

    /// Write an SVG chart in the style of Li Figure 6 (and Figure 7 with
    /// --sweep, to FILE with `-sweep` before the extension).
    #[arg(long, value_name = "FILE")]
    pub chart: Option<std::path::PathBuf>,

    /// Recommend a schedule from the simulator instead of measuring.
    #[arg(long)]
    pub plan: bool,

    /// With --plan: a described machine (preset or JSON file) instead of this one.
    #[arg(long, value_name = "PRESET|FILE", requires = "plan")]
    pub machine: Option<String>,
}
