//! `numakit bench ...`: benchmarks measured side by side in one run
//! (`bench pool` here, `bench locks` in [`locks`]).

pub mod locks;

use clap::{Args, Subcommand};
use std::time::Instant;

use anyhow::Result;
use numakit_placement::PlacementMode;
use numakit_pool::Pool;
use serde::Serialize;

use crate::common::output;
use crate::common::parallel_sum;
use crate::common::parallel_sum::SumArgs;
use crate::common::pool::PoolArgs;
use crate::common::progress::Spinner;
use crate::render::format::{bytes, table, Spread};

/// Runs one `numakit bench` benchmark and prints its report (a table, or
/// JSON with `json`); `quiet` hides the progress spinner.
pub fn run(command: &BenchCommand, mode: PlacementMode, json: bool, quiet: bool) -> Result<()> {
    match command {
        BenchCommand::Pool(args) => {
            let report = pool_bench(args, mode, quiet)?;
            output::report(json, &report, || render(&report))?;
            Ok(())
        }
        BenchCommand::Locks(args) => locks::run(args, mode, json, quiet),
    }
}

/// The result of `numakit bench pool`.
#[derive(Clone, Debug, Serialize)]
pub struct PoolBenchReport {
    /// Bytes of u64 data summed in each repetition (`--size-mib`).
    pub bytes: u64,
    /// Worker threads of the pool (the plain sum uses as many threads).
    pub workers: usize,
    /// NUMA nodes the workers run on; each node's share of the data lies on
    /// it (or on the nearest node with memory).
    pub nodes: Vec<u32>,
    /// Timed repetitions of each method (`--reps`), after one untimed run.
    pub reps: usize,
    /// GB/s (10^9 bytes per second) of the pool's sum: morsels queued at
    /// the node that holds them.
    pub pool_gbs: Spread,
    /// GB/s of plain pinned threads, each summing its node's part.
    pub plain_gbs: Spread,
    /// Median of pool GB/s over median of plain GB/s.
    pub ratio: f64,
    /// Empty tasks spawned in each of the 5 dispatch runs (`--tasks`).
    pub dispatch_tasks: usize,
    /// Nanoseconds per empty task, spawned round-robin over the nodes, over
    /// 5 runs.
    pub dispatch_ns_per_task: Spread,
    /// Microseconds per broadcast of an empty closure to every worker, over
    /// 5 runs of 200 broadcasts.
    pub broadcast_us: Spread,
}

/// Runs the pool benchmark.
pub fn pool_bench(
    args: &PoolBenchArgs,
    mode: PlacementMode,
    quiet: bool,
) -> Result<PoolBenchReport> {
    crate::usage_ensure!(args.reps > 0, "--reps must be at least 1");
    crate::usage_ensure!(args.size_mib > 0, "--size-mib must be at least 1");
    let pool = args.pool.build(mode)?;
    let spinner = Spinner::new(quiet);
    let progress = |msg: String| spinner.set_prefix(msg);
    progress(format!(
        "placing {} MiB over nodes {}",
        args.size_mib,
        node_list(&pool.nodes())
    ));
    crate::common::budget::check(
        &format!("the benchmark's data (--size-mib {})", args.size_mib),
        crate::common::budget::times(args.size_mib, 1 << 20),
    )?;
    let data =
        parallel_sum::place_and_fill(&pool, args.size_mib * (1 << 20) / 8, args.sum.huge_pages)?;
    let (pool_gbs, plain_gbs) = alternate_sums(&pool, &data, args, &progress)?;
    progress(format!("dispatching {} empty tasks, 5 times", args.tasks));
    let dispatch: Vec<f64> = (0..5)
        .map(|_| dispatch_cost(&pool, args.tasks))
        .collect::<Result<_>>()?;
    let broadcast: Vec<f64> = (0..5)
        .map(|_| broadcast_cost(&pool, 200))
        .collect::<Result<_>>()?;
    spinner.finish();
    Ok(PoolBenchReport {
        bytes: data.bytes(),
        workers: pool.workers(),
        nodes: pool.nodes(),
        reps: args.reps,
        ratio: pool_gbs.median / plain_gbs.median,
        pool_gbs,
        plain_gbs,
        dispatch_tasks: args.tasks,
        dispatch_ns_per_task: Spread::of(&dispatch),
        broadcast_us: Spread::of(&broadcast),
    })
}

/// The pool's sum and a plain threaded sum of the same data, alternating
/// which goes first, after one untimed run of each; GB/s of each, every
/// result verified.
fn alternate_sums(
    pool: &Pool,
    data: &parallel_sum::PlacedData,
    args: &PoolBenchArgs,
    progress: &dyn Fn(String),
) -> Result<(Spread, Spread)> {
    let pool_sum = || -> Result<()> {
        let sum = parallel_sum::pool_sum(pool, data, args.sum.morsel_kib)?;
        parallel_sum::verify(data, sum, "pool")
    };
    let plain_sum = || parallel_sum::verify(data, parallel_sum::plain_sum(pool, data)?, "plain");
    pool_sum()?;
    plain_sum()?;
    let (mut pool_gbs, mut plain_gbs) = (Vec::new(), Vec::new());
    let gbs = |t: Instant| data.bytes() as f64 / t.elapsed().as_secs_f64() / 1e9;
    for rep in 0..args.reps {
        progress(format!("sum repetition {}/{}", rep + 1, args.reps));
        for first_pool in [rep % 2 == 0, rep % 2 != 0] {
            let t = Instant::now();
            if first_pool {
                pool_sum()?;
                pool_gbs.push(gbs(t));
            } else {
                plain_sum()?;
                plain_gbs.push(gbs(t));
            }
        }
    }
    Ok((Spread::of(&pool_gbs), Spread::of(&plain_gbs)))
}

/// Nanoseconds per empty task, spawned round-robin over the nodes and run.
pub fn dispatch_cost(pool: &Pool, tasks: usize) -> Result<f64> {
    let nodes = pool.nodes();
    let start = Instant::now();
    pool.scope(|s| {
        for i in 0..tasks {
            s.spawn_on(nodes[i % nodes.len()], |_| {})?;
        }
        Ok::<(), numakit_pool::PoolError>(())
    })??;
    Ok(start.elapsed().as_nanos() as f64 / tasks.max(1) as f64)
}

/// Microseconds per broadcast of an empty closure to every worker.
pub fn broadcast_cost(pool: &Pool, rounds: usize) -> Result<f64> {
    let start = Instant::now();
    for _ in 0..rounds {
        pool.broadcast(|_| ())?;
    }
    Ok(start.elapsed().as_secs_f64() * 1e6 / rounds.max(1) as f64)
}

/// The report as text: the GB/s table, the pool/plain ratio against the
/// 0.90 goal, and the dispatch and broadcast costs.
pub fn render(r: &PoolBenchReport) -> String {
    let row = |name: &str, s: &Spread| {
        vec![
            name.to_string(),
            format!("{:.2}", s.min),
            format!("{:.2}", s.median),
            format!("{:.2}", s.max),
        ]
    };
    let rows = vec![
        ["method", "min GB/s", "median GB/s", "max GB/s"]
            .map(String::from)
            .to_vec(),
        row("pool: morsels queued at their home node", &r.pool_gbs),
        row("plain: pinned threads, static local split", &r.plain_gbs),
    ];
    let verdict = if r.ratio >= 0.9 { "meets" } else { "misses" };
    format!(
        "bench pool: parallel sum of {} of u64 on nodes {}, {} workers, {} repetitions each (alternating order)\n\n{}\n\nratio pool/plain (medians): {:.3} ({verdict} the >= 0.90 goal)\ndispatch: {:.0} ns per empty task (median of 5 runs of {} tasks; min {:.0}, max {:.0})\nbroadcast to all workers: {:.1} us (median)",
        bytes(r.bytes),
        node_list(&r.nodes),
        r.workers,
        r.reps,
        table(&rows),
        r.ratio,
        r.dispatch_ns_per_task.median,
        r.dispatch_tasks,
        r.dispatch_ns_per_task.min,
        r.dispatch_ns_per_task.max,
        r.broadcast_us.median,
    )
}

/// The benchmarks of `numakit bench`.
#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Parallel sum of node-placed u64 through the pool vs plain threads
    /// reading the same memory, plus the cost of dispatching one task.
    Pool(PoolBenchArgs),
    /// Locks under contention (std Mutex, ticket, cohort, flat combining):
    /// acquisitions per second, handoffs between nodes per 1,000
    /// acquisitions, and the uncontended cost of each.
    Locks(locks::LockBenchArgs),
}

/// The options of `numakit bench pool`.
#[derive(Debug, Args)]
pub struct PoolBenchArgs {
    /// Data size in MiB (the foundation's goal is measured at >= 1024).
    #[arg(long, default_value_t = 1024, value_name = "MIB")]
    pub size_mib: u64,

    /// Repetitions of each method (alternating); medians are reported.
    #[arg(long, default_value_t = 7, value_name = "N", value_parser = crate::common::parse::reps)]
    pub reps: usize,

    /// The workers of the pool (the plain sum uses as many threads).
    #[command(flatten)]
    pub pool: PoolArgs,

    /// How the sum lays out and walks its data.
    #[command(flatten)]
    pub sum: SumArgs,

    /// Empty tasks dispatched to measure the per-task cost.
    #[arg(long, default_value_t = 200_000, value_name = "N")]
    pub tasks: usize,
}

/// Node ids as people write them (`0-3,6`).
fn node_list(nodes: &[u32]) -> String {
    nodes
        .iter()
        .copied()
        .collect::<numakit_topology::IdSet>()
        .to_list_string()
}
