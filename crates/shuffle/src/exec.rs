//! Running a schedule on the pool: the shuffle primitive itself.
//!
//! Worker t is consumer t (and producer t). Tight runs use the pool's
//! lock-step phases (a barrier after every step), loose runs its
//! free-running phases. A consumer either consumes in place (pull: it reads
//! its piece where the producer left it) or transfers (push: it copies the
//! piece into a buffer on its own node and consumes that). Migrating
//! schedules re-pin the worker to the node of the data before each read and
//! pin it back at the end; "migration & copy" also moves a state buffer of
//! the chosen size to the new node. What each consumer computes is the sum
//! and count of its values (their mean, as in Li §4.1).

use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use crossbeam_utils::CachePadded;
use numakit_placement::{current_cpu, NodeBuffer, Placement, PlacementError};
use numakit_pool::{Pool, WorkerContext};
use serde::Serialize;

use crate::data::{layout_of, ShuffleData};
use crate::error::{Result, ShuffleError};
use crate::schedule::{Schedule, Strategy, Sync};

/// Consume in place or copy first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Form {
    /// The consumer reads its pieces where they lie.
    Pull,
    /// The consumer copies its pieces into a buffer on its own node.
    Push,
}

impl std::str::FromStr for Form {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "pull" => Ok(Form::Pull),
            "push" => Ok(Form::Push),
            other => Err(format!("unknown form `{other}` (pull, push)")),
        }
    }
}

/// How to run a shuffle.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ShuffleOptions {
    pub strategy: Strategy,
    pub sync: Sync,
    pub form: Form,
    /// Seed of the random schedule.
    pub seed: u64,
    /// State a migrating consumer carries along with `MigrationCopy`.
    pub state_bytes: usize,
}

impl ShuffleOptions {
    pub fn new(strategy: Strategy, sync: Sync) -> Self {
        Self {
            strategy,
            sync,
            form: Form::Pull,
            seed: 42,
            state_bytes: 64 << 10,
        }
    }
}

/// The outcome of one shuffle.
#[derive(Clone, Debug, Serialize)]
pub struct ShuffleRun {
    /// (sum, count) per consumer.
    pub results: Vec<(u64, u64)>,
    pub seconds: f64,
    pub bytes: u64,
    /// Steps in which a pinned consumer was observed (getcpu) on another
    /// node than the schedule put it on: 0 when placement works.
    pub misplaced_steps: u64,
}

impl ShuffleRun {
    /// Consumption bandwidth in GB/s.
    pub fn gbs(&self) -> f64 {
        self.bytes as f64 / self.seconds / 1e9
    }

    /// Each consumer's mean (NaN for a consumer that received nothing).
    pub fn means(&self) -> Vec<f64> {
        self.results
            .iter()
            .map(|&(s, n)| s as f64 / n as f64)
            .collect()
    }

    /// Compares with the sequential reference of the same data.
    pub fn verify(&self, reference: &[(u64, u64)]) -> Result<()> {
        for (c, (got, want)) in self.results.iter().zip(reference).enumerate() {
            if got != want {
                return Err(ShuffleError::WrongResult {
                    consumer: c,
                    got: got.0,
                    got_count: got.1,
                    want: want.0,
                    want_count: want.1,
                });
            }
        }
        Ok(())
    }
}

/// One consumer's working state.
struct Consumer {
    sum: u64,
    count: u64,
    /// Push form: the consumer-local copy and how much of it is filled.
    local: Option<NodeBuffer<u64>>,
    filled: usize,
    /// MigrationCopy: one state buffer per node; `at` is where it lives now.
    state: Vec<NodeBuffer<u8>>,
    at: usize,
    misplaced: u64,
    error: Option<PlacementError>,
}

/// Runs one shuffle of `data` on `pool`.
pub fn shuffle(pool: &Pool, data: &ShuffleData, opts: &ShuffleOptions) -> Result<ShuffleRun> {
    let layout = layout_of(pool)?;
    if layout != data.layout {
        return Err(ShuffleError::LayoutMismatch {
            expected: data.layout.threads(),
            actual: pool.workers(),
        });
    }
    let schedule = Schedule::build(layout, opts.strategy, opts.seed);
    let consumers = prepare(pool, data, opts)?;
    let step = |ctx: &WorkerContext, k: usize| {
        let mut me = consumers[ctx.index]
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        run_step(pool, data, &schedule, opts, ctx, k, &mut me);
    };
    wake(pool)?;
    let start = Instant::now();
    let phase = match opts.sync {
        Sync::Tight => pool.run_lockstep(schedule.len(), step),
        Sync::Loose => pool.run_loose(schedule.len(), step),
    };
    let seconds = start.elapsed().as_secs_f64();
    if opts.strategy.migrates() {
        // Every worker goes home, also when the phase failed half-way.
        pin_workers_home(pool)?;
    }
    phase?;
    let mut results = Vec::with_capacity(consumers.len());
    let mut misplaced_steps = 0;
    for c in consumers {
        let c = CachePadded::into_inner(c)
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(e) = c.error {
            return Err(e.into());
        }
        results.push((c.sum, c.count));
        misplaced_steps += c.misplaced;
    }
    Ok(ShuffleRun {
        results,
        seconds,
        bytes: data.bytes(),
        misplaced_steps,
    })
}

fn prepare(
    pool: &Pool,
    data: &ShuffleData,
    opts: &ShuffleOptions,
) -> Result<Vec<CachePadded<Mutex<Consumer>>>> {
    let nodes = pool.nodes();
    pool.worker_contexts()
        .iter()
        .map(|ctx| {
            let local = match opts.form {
                Form::Pull => None,
                Form::Push => Some(NodeBuffer::new(
                    pool.placer(),
                    data.incoming(ctx.index),
                    Placement::OnNode(ctx.node),
                )?),
            };
            let state = if opts.strategy == Strategy::MigrationCopy {
                nodes
                    .iter()
                    .map(|&n| {
                        NodeBuffer::new(pool.placer(), opts.state_bytes, Placement::OnNode(n))
                    })
                    .collect::<std::result::Result<Vec<_>, _>>()?
            } else {
                Vec::new()
            };
            Ok(CachePadded::new(Mutex::new(Consumer {
                sum: 0,
                count: 0,
                local,
                filled: 0,
                state,
                at: ctx.node_index,
                misplaced: 0,
                error: None,
            })))
        })
        .collect()
}

fn run_step(
    pool: &Pool,
    data: &ShuffleData,
    schedule: &Schedule,
    opts: &ShuffleOptions,
    ctx: &WorkerContext,
    k: usize,
    me: &mut Consumer,
) {
    let access = schedule.access(k, ctx.index);
    if opts.strategy.migrates() && me.at != access.run_on {
        migrate(pool, opts, me, access.run_on);
    }
    if ctx.cpu.is_some() {
        check_node(pool, access.run_on, me);
    }
    let piece = data.piece(access.producer, ctx.index);
    match &mut me.local {
        None => {
            me.sum += piece.iter().sum::<u64>();
            me.count += piece.len() as u64;
        }
        Some(local) => {
            local[me.filled..me.filled + piece.len()].copy_from_slice(piece);
            me.filled += piece.len();
        }
    }
    if k + 1 == schedule.len() {
        if let Some(local) = &me.local {
            me.sum = local[..me.filled].iter().sum();
            me.count = me.filled as u64;
        }
    }
}

/// An empty broadcast just before a timed phase, so that the time excludes
/// waking idle workers (on virtual machines a halted vCPU can take far
/// longer to wake than a short phase lasts, which biased whichever method
/// ran first by up to 20%).
fn wake(pool: &Pool) -> Result<()> {
    pool.broadcast(|_| ())?;
    Ok(())
}

/// Pins every worker back to its own CPU after a migrating shuffle.
fn pin_workers_home(pool: &Pool) -> Result<()> {
    let pinned = pool.broadcast(|ctx| match ctx.cpu {
        Some(cpu) => pool.placer().pin_to_cpu(cpu).map(drop),
        None => Ok(()),
    })?;
    pinned.into_iter().collect::<std::result::Result<(), _>>()?;
    Ok(())
}

/// Moves the calling worker (and, for MigrationCopy, its state) to the
/// node at position `to` of the pool's nodes.
fn migrate(pool: &Pool, opts: &ShuffleOptions, me: &mut Consumer, to: usize) {
    let node = pool.nodes()[to];
    record(me, pool.placer().pin_to_node(node).map(drop));
    if opts.strategy == Strategy::MigrationCopy && !me.state.is_empty() {
        let (from, to_i) = (me.at, to);
        let (low, high) = me.state.split_at_mut(from.max(to_i));
        let (src, dst) = if from < to_i {
            (&low[from], &mut high[0])
        } else {
            (&high[0], &mut low[to_i])
        };
        dst.copy_from_slice(src);
    }
    me.at = to;
}

/// Counts a step in which the consumer does not run on the node the
/// schedule says (a pin that did not take, or placement turned off).
fn check_node(pool: &Pool, run_on: usize, me: &mut Consumer) {
    match current_cpu() {
        Ok((_, node)) if node != pool.nodes()[run_on] => me.misplaced += 1,
        Ok(_) => {}
        Err(e) => record(me, Err(e)),
    }
}

fn record(me: &mut Consumer, result: std::result::Result<(), PlacementError>) {
    if let Err(e) = result {
        me.error.get_or_insert(e);
    }
}

/// The baseline: every worker reads its own partition sequentially (the
/// same bytes, all local, no shuffle). Returns (seconds, total sum).
pub fn plain_read(pool: &Pool, data: &ShuffleData) -> Result<(f64, u64)> {
    wake(pool)?;
    let start = Instant::now();
    let sums = pool.broadcast(|ctx| {
        data.partitions
            .get(ctx.index)
            .map_or(0, |p| p.buffer.iter().sum::<u64>())
    })?;
    Ok((start.elapsed().as_secs_f64(), sums.iter().sum()))
}
