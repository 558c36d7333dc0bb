//! The join's compute tasks, run on numakit's pool: build a table (a
//! bucket's, or one sender's piece of it), probe S rows against tables, or join a block of the broadcast
//! relation with the sorted stationary one. Each task writes its rows to
//! its own buffer ([`crate::sink::TaskSink`]), times itself, and reports
//! when it ends, even when it panics, so the driver never waits for a
//! task that is gone.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::{Duration, Instant};

use numakit_ops::Tuple;

use crate::frames::Work;
use crate::message::Side;
use crate::predicate::{key_range, Predicate};
use crate::sink::{Collector, ResultRow};
use crate::table::BuildTable;

/// The stationary relation of a broadcast join, sorted by key.
#[derive(Debug, Default)]
pub struct Stationary {
    /// The keys, ascending (searched for each broadcast row's range).
    pub keys: Vec<u64>,
    /// The payload of each key, index for index.
    pub payloads: Vec<u64>,
}

impl Stationary {
    /// From tuples sorted by key.
    pub fn from_sorted(tuples: impl Iterator<Item = Tuple>) -> Self {
        let (keys, payloads) = tuples.map(|t| (t.key, t.payload)).unzip();
        Self { keys, payloads }
    }
}

/// What a task tells the driver.
pub enum Event {
    /// A build task finished a table of a bucket: the S pieces waiting
    /// for it can be probed.
    Built {
        /// The bucket, among this process's buckets.
        bucket: u32,
        /// The sender whose piece it holds (per-sender frames), or `None`
        /// (the whole bucket's), as the build was asked.
        sender: Option<usize>,
        /// Its table, shared by the probes.
        table: Arc<BuildTable>,
    },
    /// A task ended (every task sends this once, even when it panicked).
    Done {
        /// Wall time the task took, in seconds (its compute load).
        seconds: f64,
        /// Whether it ended by panicking.
        panicked: bool,
    },
}

/// What every task needs.
pub struct TaskEnv<'a> {
    /// The join's predicate (broadcast tasks find ranges with it).
    pub predicate: Predicate,
    /// The process's result, which every task's rows go into.
    pub collector: &'a Collector,
    /// Broadcast joins: the relation that travels and the one that stays.
    pub broadcast: Side,
    /// Broadcast joins: the sorted relation that stays (empty for
    /// equi-joins).
    pub stationary: Arc<Stationary>,
    /// Extra time each task takes (tests use it to make a join slow).
    pub task_delay: Duration,
    /// Set when the join failed: tasks not yet started do nothing.
    pub cancelled: AtomicBool,
}

/// Sends [`Event::Done`] when dropped, with the task's time.
struct DoneGuard<'a> {
    events: &'a Sender<Event>,
    start: Instant,
}

impl Drop for DoneGuard<'_> {
    fn drop(&mut self) {
        let _ = self.events.send(Event::Done {
            seconds: self.start.elapsed().as_secs_f64(),
            panicked: std::thread::panicking(),
        });
    }
}

/// Runs one piece of work.
pub fn run(work: Work, env: &TaskEnv<'_>, events: &Sender<Event>) {
    let _done = DoneGuard {
        events,
        start: Instant::now(),
    };
    if env.cancelled.load(Ordering::Relaxed) {
        return;
    }
    if !env.task_delay.is_zero() {
        std::thread::sleep(env.task_delay);
        if env.cancelled.load(Ordering::Relaxed) {
            return;
        }
    }
    match work {
        Work::Build {
            bucket,
            sender,
            pieces,
        } => {
            let refs: Vec<&[Tuple]> = pieces.iter().map(|p| &p[..]).collect();
            let table = Arc::new(BuildTable::build(&refs));
            drop(pieces);
            let _ = events.send(Event::Built {
                bucket,
                sender,
                table,
            });
        }
        Work::Probe { tables, rows } => probe(&tables, &rows, env),
        Work::Broadcast { rows } => broadcast(&rows, env),
    }
}

/// Probes `rows` against each table in turn (one table, or the built
/// per-sender tables of the bucket).
fn probe(tables: &[Arc<BuildTable>], rows: &[Tuple], env: &TaskEnv<'_>) {
    let mut sink = env.collector.task();
    for table in tables {
        for s in rows {
            table.probe(s.key, |r| {
                sink.emit(ResultRow {
                    key: r.key,
                    left: r.payload,
                    right: s.payload,
                });
            });
        }
    }
}

fn broadcast(rows: &[Tuple], env: &TaskEnv<'_>) {
    let mut sink = env.collector.task();
    let st = &env.stationary;
    for t in rows {
        let Some((lo, hi)) = env.predicate.partner_range(env.broadcast, t.key) else {
            continue;
        };
        let range = key_range(&st.keys, lo, hi);
        if sink.count_only(range.len() as u64) {
            continue;
        }
        for j in range {
            let row = match env.broadcast {
                Side::Left => ResultRow {
                    key: t.key,
                    left: t.payload,
                    right: st.payloads[j],
                },
                Side::Right => ResultRow {
                    key: st.keys[j],
                    left: st.payloads[j],
                    right: t.payload,
                },
            };
            sink.emit(row);
        }
    }
}
