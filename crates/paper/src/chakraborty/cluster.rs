//! The distributed join as the figures run it: P processes of
//! `numakit cluster join`, each a thread of this program with its own pool
//! and its own timely connections over loopback (the library path the
//! CLI's `--local P` processes take, without starting copies of a
//! program), on the paper's PQRS-generated relations. This module runs
//! joins and sums up their metrics; the figures' modules decide what to
//! sweep and what the paper claimed.

use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use numakit_cluster::launch::free_local_addresses;
use numakit_cluster::metrics::ProcessMetrics;
use numakit_cluster::partition::generated_share;
use numakit_cluster::transport::connect::{Endpoints, DEFAULT_PEER_TIMEOUT};
use numakit_cluster::{run_process, ClusterResult, JoinSpec, Output, Predicate};
use numakit_ops::datagen::{GenSpec, KeyDist};
use numakit_placement::PlacementMode;
use numakit_pool::PoolBuilder;
use numakit_topology::Topology;

use crate::context::Context;
use crate::error::RunResult;
use crate::outcome::Verdict;

/// The join attribute's generator: PQRS with the shares the CLI documents
/// (the paper gives none), over the paper's domain D = 800000.
pub(super) const KEYS: &str = "pqrs:0.4:0.1:0.2";

/// The paper's total hash buckets (Table I's N_B).
pub(super) const PAPER_BUCKETS: u32 = 1200;

/// The paper's nodes (Table I's N).
pub(super) const PAPER_NODES: usize = 5;

/// The paper's compute threads per node (Table I's n_c).
pub(super) const PAPER_COMPUTE_THREADS: usize = 2;

/// How long a process waits for its peers to connect and to finish.
const TIMEOUT: Duration = Duration::from_secs(60);

/// How long a whole join may take before it counts as hung.
const JOIN_DEADLINE: Duration = Duration::from_secs(90);

/// One join of the sweep: how many processes, each with how many pool
/// threads, over relations of how many rows in all.
#[derive(Clone, Copy, Debug)]
pub(super) struct Setup {
    /// Processes (the paper's nodes).
    pub processes: usize,
    /// Pool threads per process (the paper's compute threads).
    pub threads: usize,
    /// Rows of R, and of S, over all processes.
    pub rows: u64,
}

impl Setup {
    /// Buckets per process: the paper's 1200 over its 5 nodes, whatever
    /// the processes (as `--buckets 240` gives every run of a sweep).
    pub(super) fn buckets(&self) -> u32 {
        PAPER_BUCKETS / PAPER_NODES as u32
    }
}

/// What one setup gave: the metrics of the run with the median system
/// span, averaged over its processes.
#[derive(Clone, Debug)]
pub(super) struct Point {
    /// The setup.
    pub setup: Setup,
    /// The system's join span (the slowest process), in seconds.
    pub span: f64,
    /// The fastest process's span, in seconds.
    pub fastest_span: f64,
    /// Mean computation load per process, in seconds.
    pub compute: f64,
    /// Mean send load per process, in seconds.
    pub send: f64,
    /// Mean receive load per process, in seconds.
    pub receive: f64,
    /// Mean intra-node gain of the processes.
    pub gain: f64,
    /// Mean bytes a process sent.
    pub bytes_sent: f64,
    /// Result rows of the whole join.
    pub result_rows: u64,
}

impl Point {
    /// Communication load per process: send plus receive.
    pub(super) fn communication(&self) -> f64 {
        self.send + self.receive
    }

    fn of(setup: Setup, result: &ClusterResult) -> Self {
        let n = result.processes.len().max(1) as f64;
        let mean = |f: fn(&ProcessMetrics) -> f64| result.processes.iter().map(f).sum::<f64>() / n;
        Point {
            setup,
            span: result.span_seconds,
            fastest_span: result
                .processes
                .iter()
                .map(|m| m.span_seconds)
                .fold(f64::INFINITY, f64::min),
            compute: mean(|m| m.compute_seconds),
            send: mean(|m| m.send_seconds),
            receive: mean(|m| m.receive_seconds),
            gain: mean(ProcessMetrics::intra_node_gain),
            bytes_sent: mean(|m| m.bytes_sent as f64),
            result_rows: result.result.rows,
        }
    }
}

/// The threads this machine's pools may use.
pub(super) fn available_cpus(ctx: &Context<'_>) -> usize {
    ctx.topology.allowed.cpus.len().max(1)
}

/// The paper's compute threads per node, or fewer where this machine has
/// fewer CPUs.
pub(super) fn compute_threads(ctx: &Context<'_>) -> usize {
    PAPER_COMPUTE_THREADS.min(available_cpus(ctx))
}

/// Runs `setup` `reps` times and keeps the run with the median span.
pub(super) fn measure(ctx: &Context<'_>, setup: Setup, reps: usize) -> RunResult<Point> {
    ctx.progress.phase(&format!(
        "cluster join: {} processes x {} threads, {} rows each side",
        setup.processes, setup.threads, setup.rows
    ));
    let mut runs = Vec::with_capacity(reps.max(1));
    for _ in 0..reps.max(1) {
        runs.push(Point::of(setup, &join_retrying(ctx, setup)?));
    }
    runs.sort_by(|a, b| a.span.total_cmp(&b.span));
    let middle = runs.len() / 2;
    Ok(runs.swap_remove(middle))
}

/// One join; tried twice, since another program may take a loopback port
/// between choosing it and binding it (a join that hangs is not retried).
fn join_retrying(ctx: &Context<'_>, setup: Setup) -> RunResult<ClusterResult> {
    match join_once(ctx, setup) {
        Ok(result) => Ok(result),
        Err(e) if e.to_string().contains(HUNG) => Err(e),
        Err(_) => join_once(ctx, setup),
    }
}

/// The join's spec: equality (hash distribution, as the paper's bucket
/// joins), ring order, the paper's buckets, a checksummed result; any
/// other field numakit's default.
fn spec(setup: Setup) -> JoinSpec {
    let mut spec = JoinSpec::new(Predicate::Equal);
    spec.buckets = setup.buckets();
    spec.output = Output::Checksum;
    spec
}

/// R and S of `rows` rows each, PQRS keys, seeds 42 and 43 (the CLI's).
fn relations(rows: u64) -> RunResult<(GenSpec, GenSpec)> {
    let keys = KeyDist::parse(KEYS, rows)?;
    Ok((
        GenSpec {
            rows,
            keys,
            seed: 42,
        },
        GenSpec {
            rows,
            keys,
            seed: 43,
        },
    ))
}

/// What a join that does not finish in time says.
const HUNG: &str = "did not finish within";

/// P processes as threads of this program, joined over loopback. A join
/// that does not finish by [`JOIN_DEADLINE`] is an error (its threads are
/// left behind rather than waited for).
fn join_once(ctx: &Context<'_>, setup: Setup) -> RunResult<ClusterResult> {
    let addresses = free_local_addresses(setup.processes)?;
    let spec = spec(setup);
    let (left, right) = relations(setup.rows)?;
    let (tx, rx) = mpsc::channel();
    for me in 0..setup.processes {
        let (tx, topology) = (tx.clone(), ctx.topology.clone());
        let (addresses, spec) = (addresses.clone(), spec.clone());
        std::thread::Builder::new()
            .name(format!("paper-p{me}"))
            .spawn(move || {
                let result = process(topology, setup, me, addresses, &spec, (&left, &right));
                // The receiver is gone only when the join was given up.
                let _ = tx.send(result);
            })?;
    }
    drop(tx);
    let deadline = Instant::now() + JOIN_DEADLINE;
    let mut sink = None;
    for _ in 0..setup.processes {
        let wait = deadline.saturating_duration_since(Instant::now());
        let result = rx.recv_timeout(wait).map_err(|_| {
            format!(
                "the {}-process join {HUNG} {} s",
                setup.processes,
                JOIN_DEADLINE.as_secs()
            )
        })?;
        if let Some(cluster) = result? {
            sink = Some(cluster);
        }
    }
    Ok(sink.ok_or("the sink (process 0) returned no result")?)
}

/// Process `me`: its pool, its share of R and S, its connections, its
/// join; the sink's result at process 0.
fn process(
    topology: Arc<Topology>,
    setup: Setup,
    me: usize,
    addresses: Vec<String>,
    spec: &JoinSpec,
    (left, right): (&GenSpec, &GenSpec),
) -> RunResult<Option<ClusterResult>> {
    let pool = PoolBuilder::new(topology)
        .placement(PlacementMode::BestEffort)
        .threads(setup.threads)
        .build()?;
    let r = generated_share(&pool, left, me, setup.processes)?;
    let s = generated_share(&pool, right, me, setup.processes)?;
    let endpoints = Endpoints {
        process: me,
        addresses,
        timeout: TIMEOUT,
        peer_timeout: DEFAULT_PEER_TIMEOUT,
        fingerprint: spec.fingerprint(),
    };
    let transport = numakit_cluster::transport::connect(&endpoints)?;
    let run = run_process(&pool, transport, &r, &s, spec, TIMEOUT)?;
    Ok(run.cluster)
}

/// Rows per process below which a join is too short to time on this
/// shared machine: connecting and the first exchanges take most of it
/// (Scale::Small's joins are all below it).
pub(super) const MIN_TIMED_ROWS: u64 = 100_000;

/// [`timed`], for joins of `rows` rows per process: too small a join is
/// not shown here rather than judged.
pub(super) fn timed_at(rows: u64, ratio: f64, detail: String) -> Verdict {
    if rows < MIN_TIMED_ROWS {
        Verdict::NotShownHere(format!(
            "{detail}: {rows} rows per process are too few to time on this shared machine (fixed costs dominate; Scale::Standard checks it)"
        ))
    } else {
        timed(ratio, detail)
    }
}

/// A direction read off timings on this shared two-CPU machine: it holds
/// when `ratio` (the paper's direction as "greater than 1") is clearly
/// above 1, fails only when clearly reversed, and in between is within
/// the noise of a machine that other work shares.
pub(super) fn timed(ratio: f64, detail: String) -> Verdict {
    if ratio >= 1.1 {
        Verdict::Holds(detail)
    } else if ratio < 0.67 {
        Verdict::Fails(detail)
    } else {
        Verdict::NotShownHere(format!(
            "{detail}: within the timing noise of this shared two-CPU machine"
        ))
    }
}
