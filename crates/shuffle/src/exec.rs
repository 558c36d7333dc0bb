//! Li §4.1's shuffle benchmark on the [`mod@crate::exchange`] driver.
//!
//! Worker t is consumer t (and producer t). A consumer either consumes in place (pull: it reads
//! its piece where the producer left it) or transfers (push: it copies the
//! piece into a buffer on its own node and consumes that). Migrating
//! schedules re-pin the worker to the node of the data before each read and
//! pin it back at the end; "migration & copy" also moves a state buffer of
//! the chosen size to the new node. What each consumer computes is the sum
//! and count of its values (their mean, as in Li §4.1).

use std::time::Instant;

use numakit_placement::{NodeBuffer, Placement};
use numakit_pool::Pool;
use serde::Serialize;

use crate::data::{layout_of, ShuffleData};
use crate::error::{Result, ShuffleError};
use crate::exchange::{exchange, wake, Exchange};
use crate::schedule::{Strategy, SyncMode};

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
    /// The order in which consumers visit producers (and whether they migrate).
    pub strategy: Strategy,
    /// A barrier after every step (tight) or none (loose).
    pub sync: SyncMode,
    /// Consume pieces in place (pull) or copy them to the consumer's node first (push).
    pub form: Form,
    /// Seed of the random schedule.
    pub seed: u64,
    /// Bytes of state a migrating consumer carries along with `MigrationCopy`
    /// (one buffer per node per consumer; unused by other strategies).
    pub state_bytes: usize,
}

impl ShuffleOptions {
    /// Options for this schedule and synchronization: pull form, seed 42,
    /// 64 KiB of migrating state.
    pub fn new(strategy: Strategy, sync: SyncMode) -> Self {
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
    /// Wall-clock time of the exchange phase in seconds (setup excluded).
    pub seconds: f64,
    /// Bytes of all partitions, i.e. what the consumers read in all.
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
}

/// Runs one shuffle of `data` on `pool`.
///
/// # Examples
///
/// Shuffle 10 000 values among the four workers of a described two-node
/// machine with the coordinated ring, in lock-step, and check every
/// consumer's (sum, count) against the sequential reference. Placement is
/// off so that the example runs the same on any machine; on a real one,
/// build the pool from `numakit_topology::discover()` instead.
///
/// ```
/// use std::sync::Arc;
///
/// use numakit_placement::PlacementMode;
/// use numakit_pool::PoolBuilder;
/// use numakit_shuffle::{shuffle, ShuffleData, ShuffleOptions, Skew, Strategy, SyncMode};
/// use numakit_topology::MachineDescription;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let machine = r#"{"name": "two", "description": "", "source": "example",
///     "nodes": [{"id": 0, "socket": 0, "cores": 2, "threads_per_core": 1, "memory_gib": 1},
///               {"id": 1, "socket": 1, "cores": 2, "threads_per_core": 1, "memory_gib": 1}]}"#;
/// let topology = Arc::new(MachineDescription::from_json(machine, "example")?.to_topology());
/// let pool = PoolBuilder::new(topology)
///     .placement(PlacementMode::Off)
///     .build()?;
///
/// // Each worker's partition, on its node, cut into one piece per consumer.
/// let data = ShuffleData::generate(&pool, 10_000, Skew::Uniform, 7)?;
/// let options = ShuffleOptions::new(Strategy::Ring, SyncMode::Tight);
/// let run = shuffle(&pool, &data, &options)?;
///
/// run.verify(&data.reference())?;
/// assert_eq!(run.results.len(), 4);
/// assert_eq!(run.results.iter().map(|&(_, count)| count).sum::<u64>(), 10_000);
/// assert_eq!(run.bytes, 10_000 * 8);
/// # Ok(())
/// # }
/// ```
pub fn shuffle(pool: &Pool, data: &ShuffleData, opts: &ShuffleOptions) -> Result<ShuffleRun> {
    let layout = layout_of(pool)?;
    if layout != data.layout {
        return Err(ShuffleError::LayoutMismatch {
            expected: data.layout.threads(),
            actual: pool.workers(),
        });
    }
    let consumers = prepare(pool, data, opts)?;
    let ex = Exchange {
        strategy: opts.strategy,
        sync: opts.sync,
        seed: opts.seed,
    };
    let nodes = pool.nodes();
    let steps = pool.workers();
    let (consumers, report) = exchange(pool, &ex, consumers, |ctx, me, visit| {
        if visit.moved && opts.strategy == Strategy::MigrationCopy {
            let to = nodes.iter().position(|&n| n == visit.node).unwrap_or(me.at);
            carry_state(me, to);
        }
        consume(data.piece(visit.producer, ctx.index), me);
        if visit.step + 1 == steps {
            finish(me);
        }
    })?;
    Ok(ShuffleRun {
        results: consumers.iter().map(|c| (c.sum, c.count)).collect(),
        seconds: report.seconds,
        bytes: data.bytes(),
        misplaced_steps: report.misplaced_visits,
    })
}

fn prepare(pool: &Pool, data: &ShuffleData, opts: &ShuffleOptions) -> Result<Vec<Consumer>> {
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
            Ok(Consumer {
                sum: 0,
                count: 0,
                local,
                filled: 0,
                state,
                at: ctx.node_index,
            })
        })
        .collect()
}

/// Pull: sum the piece where it lies. Push: copy it into the local buffer.
fn consume(piece: &[u64], me: &mut Consumer) {
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
}

/// Push: after the last step, consume the local copy.
fn finish(me: &mut Consumer) {
    if let Some(local) = &me.local {
        me.sum = local[..me.filled].iter().sum();
        me.count = me.filled as u64;
    }
}

/// "Migration & copy": the state buffer follows the consumer to the node
/// at position `to` of the pool's nodes.
fn carry_state(me: &mut Consumer, to: usize) {
    if !me.state.is_empty() && to != me.at {
        let from = me.at;
        let (low, high) = me.state.split_at_mut(from.max(to));
        let (src, dst) = if from < to {
            (&low[from], &mut high[0])
        } else {
            (&high[0], &mut low[to])
        };
        dst.copy_from_slice(src);
    }
    me.at = to;
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
