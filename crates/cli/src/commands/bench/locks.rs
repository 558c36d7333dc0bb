//! `numakit bench locks`: the options, one call of the sync crate's lock
//! benchmark, and the report (a table, JSON, an SVG chart). The threads,
//! the timing and the checks are the library's; this module only checks
//! the command line against the machine (nodes, thread counts) first.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use clap::Args;
use numakit_placement::{PlacementMode, Placer};
use numakit_sync::bench::{LockBenchReport, LockBenchRequest, LockKind};
use numakit_topology::{IdSet, NodeId, Topology};

use crate::common::files::write_whole;
use crate::common::output;
use crate::common::progress::Spinner;
use crate::render::chart::{self, Series};
use crate::render::format::table;

/// The options of `numakit bench locks`.
#[derive(Debug, Args)]
pub struct LockBenchArgs {
    /// The locks, measured side by side: std-mutex, ticket, cohort,
    /// flat-combining (default: all).
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = lock_kind)]
    pub locks: Vec<LockKind>,

    /// Thread counts to run, each spread round-robin over the nodes, such
    /// as `1,2,4,8` (default: 1 and powers of two up to the CPUs).
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = crate::common::parse::positive)]
    pub threads: Vec<usize>,

    /// Only these NUMA nodes, as a list such as `0,2-3`.
    #[arg(long, value_name = "LIST", value_parser = crate::common::parse::ids)]
    pub nodes: Option<IdSet>,

    /// Allow more threads than the chosen nodes' CPUs (they then share
    /// CPUs; at most 64 threads per CPU).
    #[arg(long)]
    pub oversubscribe: bool,

    /// Busy work inside each critical section, in nanoseconds.
    #[arg(long, default_value_t = 100, value_name = "NS")]
    pub critical_ns: u64,

    /// Busy work of each thread between two acquisitions, in nanoseconds.
    #[arg(long, default_value_t = 0, value_name = "NS")]
    pub outside_ns: u64,

    /// Milliseconds of each contended run.
    #[arg(long, default_value_t = 200, value_name = "MS", value_parser = crate::common::parse::positive)]
    pub ms: usize,

    /// Repetitions of every run (lock order alternating); medians reported.
    #[arg(long, default_value_t = 3, value_name = "N", value_parser = crate::common::parse::reps)]
    pub reps: usize,

    /// The cohort lock's passes to waiters on the same node in a row before
    /// it goes to another node.
    #[arg(long, default_value_t = numakit_sync::DEFAULT_COHORT_BOUND, value_name = "N")]
    pub bound: u32,

    /// Acquire-release pairs per timing of the uncontended cost (0 skips it).
    #[arg(long, default_value_t = 2_000_000, value_name = "N", value_parser = crate::common::parse::count)]
    pub uncontended_pairs: u64,

    /// Write an SVG chart of acquisitions per second by thread count.
    #[arg(long, value_name = "FILE")]
    pub chart: Option<PathBuf>,
}

/// Most milliseconds of one contended run.
const MAX_MS: usize = 600_000;

fn lock_kind(text: &str) -> Result<LockKind, String> {
    text.parse()
}

/// Runs `numakit bench locks`.
pub fn run(args: &LockBenchArgs, mode: PlacementMode, json: bool, quiet: bool) -> Result<()> {
    let topology = Arc::new(numakit_topology::discover()?);
    let request = request(args, &topology)?;
    let placer = Placer::new(topology, mode);
    let spinner = Spinner::new(quiet || json);
    let report = numakit_sync::bench::run(&placer, &request, &|m| spinner.set_prefix(m))?;
    spinner.finish();
    if let Some(path) = &args.chart {
        write_whole(path, chart_of(&report).as_bytes())?;
    }
    output::report(json, &report, || render(&report))?;
    Ok(())
}

/// The library's request from the options, every value checked against
/// this machine (usage errors name the option).
pub fn request(args: &LockBenchArgs, topology: &Topology) -> Result<LockBenchRequest> {
    crate::usage_ensure!(args.ms <= MAX_MS, "--ms must be at most {MAX_MS}");
    let usable: Vec<NodeId> = topology
        .compute_nodes()
        .into_iter()
        .filter(|&n| topology.allowed_cpus_of(n).is_ok_and(|c| !c.is_empty()))
        .collect();
    let nodes: Vec<NodeId> = match &args.nodes {
        Some(list) => list.iter().collect(),
        None => usable.clone(),
    };
    for node in &nodes {
        crate::usage_ensure!(
            usable.contains(node),
            "--nodes: node {node} has no CPU this process may use (usable nodes: {})",
            usable.iter().copied().collect::<IdSet>().to_list_string()
        );
    }
    crate::usage_ensure!(!nodes.is_empty(), "no node with a usable CPU");
    let cpus: usize = nodes
        .iter()
        .map(|&n| topology.allowed_cpus_of(n).map_or(0, |c| c.len()))
        .sum();
    let threads = if args.threads.is_empty() {
        default_threads(cpus)
    } else {
        args.threads.clone()
    };
    for &t in &threads {
        crate::usage_ensure!(
            t <= cpus || args.oversubscribe,
            "--threads {t} is more than the {cpus} CPUs of the chosen nodes (add --oversubscribe to share them)"
        );
        let max = cpus.saturating_mul(numakit_pool::MAX_THREADS_PER_CPU);
        crate::usage_ensure!(
            t <= max,
            "--threads {t} is more than {max}, the most even with --oversubscribe"
        );
    }
    Ok(LockBenchRequest {
        locks: if args.locks.is_empty() {
            LockKind::ALL.to_vec()
        } else {
            args.locks.clone()
        },
        threads,
        nodes,
        critical_ns: args.critical_ns,
        outside_ns: args.outside_ns,
        duration: Duration::from_millis(args.ms as u64),
        reps: args.reps,
        cohort_bound: args.bound,
        uncontended_pairs: args.uncontended_pairs,
    })
}

/// 1, 2, 4, ... up to `cpus`, and `cpus` itself.
fn default_threads(cpus: usize) -> Vec<usize> {
    let mut threads: Vec<usize> = std::iter::successors(Some(1usize), |t| Some(t * 2))
        .take_while(|&t| t < cpus)
        .collect();
    threads.push(cpus.max(1));
    threads
}

/// The report as text: the uncontended costs against std's Mutex, then
/// acquisitions per second and handoffs between nodes per thread count.
pub fn render(r: &LockBenchReport) -> String {
    let mut out = format!(
        "bench locks: threads round-robin over nodes {}{}, critical section {} ns, {} ns between, {} ms per run, {} repetition(s) in alternating order, cohort bound {}\n",
        r.nodes.iter().copied().collect::<IdSet>().to_list_string(),
        if r.pinned { " (pinned)" } else { " (not pinned: nodes from getcpu)" },
        r.critical_ns,
        r.outside_ns,
        r.run_ms,
        r.reps,
        r.cohort_bound
    );
    if !r.uncontended.is_empty() {
        let mut rows = vec![["lock", "median ns", "min ns", "max ns", "vs std Mutex"]
            .map(String::from)
            .to_vec()];
        for c in &r.uncontended {
            rows.push(vec![
                c.lock.to_string(),
                format!("{:.1}", c.ns.median),
                format!("{:.1}", c.ns.min),
                format!("{:.1}", c.ns.max),
                c.vs_std_mutex.map_or("-".into(), |v| format!("{v:.2}x")),
            ]);
        }
        out.push_str(&format!(
            "\nuncontended: one thread, {} acquire-increment-release per timing\n{}\n",
            r.uncontended_pairs,
            table(&rows)
        ));
    }
    let mut rows = vec![[
        "threads",
        "lock",
        "M acq/s",
        "min",
        "max",
        "remote handoffs /1000",
        "fewest share",
    ]
    .map(String::from)
    .to_vec()];
    for p in &r.contended {
        rows.push(vec![
            p.threads.to_string(),
            p.lock.to_string(),
            format!("{:.2}", p.acquisitions_per_s.median / 1e6),
            format!("{:.2}", p.acquisitions_per_s.min / 1e6),
            format!("{:.2}", p.acquisitions_per_s.max / 1e6),
            format!("{:.1}", p.remote_per_1000.median),
            format!("{:.2}", p.min_share),
        ]);
    }
    out.push_str(&format!(
        "\ncontended (medians; every run checked: no update lost, each lock's handoff count equal to what its critical sections saw)\n{}",
        table(&rows)
    ));
    out
}

/// Acquisitions per second by thread count, one line per lock.
fn chart_of(r: &LockBenchReport) -> String {
    let mut series: Vec<Series> = Vec::new();
    for p in &r.contended {
        let name = p.lock.to_string();
        let point = (p.threads as f64, p.acquisitions_per_s.median / 1e6);
        match series.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push(point),
            None => series.push(Series {
                name,
                points: vec![point],
            }),
        }
    }
    chart::lines(
        &format!(
            "Lock throughput, critical section {} ns, nodes {}",
            r.critical_ns,
            r.nodes.iter().copied().collect::<IdSet>().to_list_string()
        ),
        "threads",
        "M acquisitions/s",
        &series,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_thread_counts_double_up_to_the_cpus() {
        assert_eq!(default_threads(1), [1]);
        assert_eq!(default_threads(2), [1, 2]);
        assert_eq!(default_threads(6), [1, 2, 4, 6]);
        assert_eq!(default_threads(8), [1, 2, 4, 8]);
    }
}
