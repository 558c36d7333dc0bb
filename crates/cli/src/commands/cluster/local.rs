//! `numakit cluster join --local P`: P processes of this program on this
//! machine, talking over loopback, as a quick try of the distributed join
//! or to measure it: several send orders side by side (`--order
//! ring,all-at-once`, alternating, medians of `--reps`), and the speedup
//! over one process (`--sweep`).
//!
//! The processes leave nothing behind when this one ends, however it
//! ends: they get their peers' addresses on their command line (no
//! temporary hostfile), and each dies with the thread that started and
//! waits for it (`PR_SET_PDEATHSIG`), so killing this process, even with
//! SIGKILL, kills them. It does not join anything itself.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{anyhow, bail, ensure, Context, Result};
use numakit_cluster::launch::{free_local_addresses, run_local, ChildOutcome};
use numakit_cluster::metrics::speedup;
use numakit_cluster::SendOrder;
use numakit_placement::PlacementMode;
use serde::Serialize;

use crate::commands::cluster::args::ClusterJoinArgs;
use crate::commands::cluster::plan::{check_memory, plan, threads_per_process};
use crate::commands::cluster::report::{render_sink, ProcessOutput, SinkOutput};
use crate::commands::cluster::sys::die_with_parent;
use crate::common::files::write_whole;
use crate::common::output;
use crate::common::progress::Spinner;
use crate::render::chart::{bars, lines, Bar, Series};
use crate::render::format::{median, table};

/// Longest a local run may take.
const LOCAL_TIMEOUT: Duration = Duration::from_secs(6 * 3600);
/// After one process fails, how long the others get to say why they stop.
const GRACE: Duration = Duration::from_secs(30);

/// One point of a comparison or sweep: medians over repetitions.
#[derive(Serialize)]
pub struct RunPoint {
    /// Processes (P) of the runs.
    pub processes: usize,
    /// The send order they used.
    pub order: SendOrder,
    /// Repetitions the medians are taken over.
    pub reps: usize,
    /// Median system join span.
    pub span_seconds: f64,
    /// The shortest and longest span of the repetitions.
    pub span_range: (f64, f64),
    /// Median over repetitions of the mean intra-node gain of the processes.
    pub intra_node_gain: f64,
    /// One process's span / this span (sweeps).
    pub speedup: Option<f64>,
    /// The last repetition's sink report.
    pub last: SinkOutput,
}

/// `cluster join --local P`: starts P processes on this machine for each
/// repetition, send order and (with `--sweep`) process count, and reports
/// the sink's result with medians.
pub fn run(
    args: &ClusterJoinArgs,
    processes: usize,
    mode: PlacementMode,
    json: bool,
    quiet: bool,
) -> Result<()> {
    crate::usage_ensure!(processes >= 1, "--local needs at least 1 process");
    crate::usage_ensure!(processes <= 64, "--local starts at most 64 processes");
    crate::usage_ensure!(args.reps() >= 1, "--reps must be at least 1");
    plan(args)?;
    // The processes share this machine: together they hold everything.
    check_memory(args, 1)?;
    let orders = args.order.clone();
    let counts: Vec<usize> = if args.sweep {
        (1..=processes).collect()
    } else {
        vec![processes]
    };
    let spinner = Spinner::new(quiet || json);
    let mut points = Vec::new();
    for &p in &counts {
        points.extend(measure(args, p, &orders, mode, &spinner)?);
    }
    spinner.finish();
    if counts.len() > 1 {
        add_speedups(&mut points, &orders);
    }
    if let Some(path) = &args.chart {
        write_chart(path, &points)?;
    }
    report(&points, json)?;
    let wrong = points.iter().find(|q| q.last.verified == Some(false));
    if let Some(q) = wrong {
        bail!(
            "wrong result with {} processes: {}",
            q.processes,
            q.last.verify_note
        );
    }
    Ok(())
}

/// `--reps` runs of each order with `p` processes, alternating which
/// order goes first so that neither always runs cold.
fn measure(
    args: &ClusterJoinArgs,
    p: usize,
    orders: &[SendOrder],
    mode: PlacementMode,
    spinner: &Spinner,
) -> Result<Vec<RunPoint>> {
    let mut runs: Vec<Vec<SinkOutput>> = vec![Vec::new(); orders.len()];
    for rep in 0..args.reps() {
        for k in 0..orders.len() {
            let i = if rep % 2 == 0 {
                k
            } else {
                orders.len() - 1 - k
            };
            spinner.set_prefix(format!(
                "{p} processes, {} order, run {}",
                orders[i].name(),
                rep + 1
            ));
            runs[i].push(run_once(args, p, orders[i], mode)?);
        }
    }
    orders
        .iter()
        .zip(runs)
        .map(|(order, reps)| point(p, *order, reps))
        .collect()
}

/// Each point's speedup over the one-process point of its order.
fn add_speedups(points: &mut [RunPoint], orders: &[SendOrder]) {
    for order in orders {
        let one = points
            .iter()
            .find(|q| q.processes == 1 && q.order == *order)
            .map(|q| q.span_seconds);
        for q in points.iter_mut().filter(|q| q.order == *order) {
            q.speedup = one.map(|s| speedup(s, q.span_seconds));
        }
    }
}

fn point(processes: usize, order: SendOrder, reps: Vec<SinkOutput>) -> Result<RunPoint> {
    let spans: Vec<f64> = reps.iter().map(|r| r.span_seconds).collect();
    let gains: Vec<f64> = reps
        .iter()
        .map(|r| {
            r.per_process.iter().map(|p| p.intra_node_gain).sum::<f64>()
                / r.per_process.len().max(1) as f64
        })
        .collect();
    let first = reps.first().context("no run")?;
    for r in &reps {
        ensure!(
            r.result == first.result,
            "two runs of the same join disagree: {} vs {} rows",
            r.result.rows,
            first.result.rows
        );
    }
    Ok(RunPoint {
        processes,
        order,
        reps: reps.len(),
        span_seconds: median(&spans),
        span_range: (
            spans.iter().copied().fold(f64::INFINITY, f64::min),
            spans.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        ),
        intra_node_gain: median(&gains),
        speedup: None,
        last: reps.last().cloned().context("no run")?,
    })
}

/// Starts `processes` processes for one join and returns the sink's report.
pub fn run_once(
    args: &ClusterJoinArgs,
    processes: usize,
    order: SendOrder,
    mode: PlacementMode,
) -> Result<SinkOutput> {
    let addresses = free_local_addresses(processes)?.join(",");
    let exe = std::env::current_exe().context("cannot find this program to start its copies")?;
    let threads = match args.pool.threads {
        Some(t) => t,
        None => threads_per_process(processes)?,
    };
    // Each copy checks its own pool; checking once here refuses a bad
    // --threads, --nodes or --cpus before anything starts.
    let topology = std::sync::Arc::new(numakit_topology::discover()?);
    args.pool
        .with_threads(Some(threads))
        .builder(&topology, mode)?;
    let commands = (0..processes)
        .map(|i| {
            let mut c = Command::new(&exe);
            c.args(child_args(args, &addresses, i, order, threads, mode));
            // run_local starts and waits for them on this thread.
            die_with_parent(&mut c);
            c
        })
        .collect();
    let outcomes = run_local(commands, GRACE, LOCAL_TIMEOUT)?;
    if let Some(err) = failure(&outcomes) {
        return Err(err);
    }
    let mut sink: SinkOutput = serde_json::from_str(&outcomes[0].stdout)
        .with_context(|| format!("the sink's report: {}", outcomes[0].stdout))?;
    // The other processes' files (each knows only its own).
    for o in &outcomes[1..] {
        let own: ProcessOutput = serde_json::from_str(&o.stdout)
            .with_context(|| format!("process {}'s report: {}", o.process, o.stdout))?;
        if let Some(p) = sink.per_process.get_mut(o.process) {
            p.files = own.files;
        }
    }
    Ok(sink)
}

/// The error of a failed local run: every failed process's last line.
fn failure(outcomes: &[ChildOutcome]) -> Option<anyhow::Error> {
    let failed: Vec<String> = outcomes
        .iter()
        .filter(|o| !o.succeeded())
        .map(|o| {
            let last = o
                .stderr
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("no message");
            let last = last.strip_prefix("numakit: error: ").unwrap_or(last);
            match o.status {
                Some(_) => format!("process {} failed: {last}", o.process),
                None => format!("process {} was stopped", o.process),
            }
        })
        .collect();
    let stopped_only = outcomes.iter().all(|o| o.succeeded() || o.status.is_none());
    if failed.is_empty() {
        return None;
    }
    if stopped_only {
        return Some(anyhow!(
            "the join did not finish in time: {}",
            failed.join("; ")
        ));
    }
    Some(anyhow!("{}", failed.join("; ")))
}

fn child_args(
    args: &ClusterJoinArgs,
    addresses: &str,
    i: usize,
    order: SendOrder,
    threads: usize,
    mode: PlacementMode,
) -> Vec<String> {
    let mode = match mode {
        PlacementMode::Strict => "strict",
        PlacementMode::BestEffort => "best-effort",
        PlacementMode::Off => "off",
    };
    let mut v: Vec<String> = vec![
        "cluster".into(),
        "join".into(),
        "--json".into(),
        "--quiet".into(),
        format!("--placement={mode}"),
        format!("--addresses={addresses}"),
        format!("--process={i}"),
        format!("--left-rows={}", args.rows_r),
        format!("--right-rows={}", args.rows_s),
        format!("--left-keys={}", args.left_keys),
        format!("--seed={}", args.seed),
        format!("--key={}", args.key),
        format!("--predicate={}", args.predicate),
        format!("--order={}", order.name()),
        format!("--broadcast={}", args.broadcast),
        format!("--threads={threads}"),
        format!("--buckets={}", args.buckets),
        format!("--frames={}", args.frames.name()),
        format!("--block-rows={}", args.block_rows),
        format!("--connect-timeout={}", args.connect_timeout),
        format!("--peer-timeout={}", args.peer_timeout),
        format!("--task-delay-ms={}", args.task_delay_ms),
    ];
    if args.pool.oversubscribe {
        v.push("--oversubscribe".into());
    }
    let optional = [
        ("--left", args.left.clone()),
        ("--right", args.right.clone()),
        ("--payload", args.payload.clone()),
        ("--sink", args.sink.clone()),
        ("--right-keys", args.right_keys.clone()),
        (
            "--nodes",
            args.pool.nodes.as_ref().map(|n| n.to_list_string()),
        ),
        (
            "--cpus",
            args.pool.cpus.as_ref().map(|c| c.to_list_string()),
        ),
        (
            "--receive-budget",
            args.receive_budget.map(|b| b.to_string()),
        ),
        (
            "--fail-part-write",
            args.fail_part_write.map(|i| i.to_string()),
        ),
    ];
    for (name, value) in optional {
        if let Some(value) = value {
            v.push(format!("{name}={value}"));
        }
    }
    if args.verify && i == 0 {
        v.push("--verify".into());
    }
    v
}

fn report(points: &[RunPoint], json: bool) -> Result<()> {
    let value = match points {
        [one] => serde_json::to_value(&one.last)?,
        many => serde_json::to_value(many)?,
    };
    output::report(json, &value, || points_text(points))
}

/// The points as text: the one run's report, or a table of the points
/// and the last run in detail.
fn points_text(points: &[RunPoint]) -> String {
    if let [one] = points {
        return render_sink(&one.last);
    }
    let mut rows = vec![[
        "processes",
        "order",
        "runs",
        "span s (median)",
        "min-max s",
        "mean gain (median)",
        "speedup",
    ]
    .map(String::from)
    .to_vec()];
    for q in points {
        rows.push(vec![
            q.processes.to_string(),
            q.order.name().to_string(),
            q.reps.to_string(),
            format!("{:.3}", q.span_seconds),
            format!("{:.3}-{:.3}", q.span_range.0, q.span_range.1),
            format!("{:.2}", q.intra_node_gain),
            q.speedup.map_or("-".into(), |s| format!("{s:.2}x")),
        ]);
    }
    let mut text = table(&rows);
    if let Some(last) = points.last() {
        text.push_str(&format!(
            "\n\nthe last run in detail:\n{}",
            render_sink(&last.last)
        ));
    }
    text
}

fn write_chart(path: &Path, points: &[RunPoint]) -> Result<()> {
    let svg = if points.iter().any(|q| q.speedup.is_some()) {
        let mut series: Vec<Series> = Vec::new();
        for q in points {
            let name = format!("speedup, {} order", q.order.name());
            let point = (q.processes as f64, q.speedup.unwrap_or(0.0));
            match series.iter_mut().find(|s| s.name == name) {
                Some(s) => s.points.push(point),
                None => series.push(Series {
                    name,
                    points: vec![point],
                }),
            }
        }
        let max = points.iter().map(|q| q.processes).max().unwrap_or(1);
        series.push(Series {
            name: "linear".into(),
            points: (1..=max).map(|p| (p as f64, p as f64)).collect(),
        });
        lines(
            "distributed join: speedup over one process",
            "processes",
            "speedup",
            &series,
        )
    } else {
        loads_chart(&points.last().context("nothing to draw")?.last)
    };
    write_whole(path, svg.as_bytes())
}

/// Bars of each process's loads and join span (Chakraborty Figure 5).
pub fn loads_chart(sink: &SinkOutput) -> String {
    let mut list = Vec::new();
    for p in &sink.per_process {
        let m = &p.metrics;
        let values = [
            m.compute_seconds,
            m.send_seconds,
            m.receive_seconds,
            m.span_seconds,
        ];
        for (k, (name, v)) in ["compute", "send", "receive", "span"]
            .iter()
            .zip(values)
            .enumerate()
        {
            list.push(Bar {
                label: format!("p{} {name}", m.process),
                colour: k,
                min: v,
                median: v,
                max: v,
            });
        }
    }
    bars(
        "distributed join: loads and join span per process (Chakraborty Fig. 5)",
        "seconds",
        &list,
        None,
    )
}
