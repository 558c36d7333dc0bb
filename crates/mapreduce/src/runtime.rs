//! The runtime: runs a [`Job`] on the pool in four phases.
//!
//! 1. **split**: the job cuts its input; each split's node is asked of
//!    the kernel ([`crate::locality`]).
//! 2. **map**: one task per split, queued at its node; workers take their
//!    own node's tasks first and steal by distance when idle (the pool's
//!    rule). Each worker folds into its own container.
//! 3. **reduce**: one task per partition merges that partition of every
//!    worker's container and reduces each key; with
//!    [`JobOptions::prefetch`] on (the default), the next key's state is
//!    prefetched while one is reduced, and a [`crate::KeepAll`] key's
//!    values are read through a prefetching iterator.
//! 4. **merge**: the partitions' outputs are joined, ordered as asked
//!    ([`crate::order`]).
//!
//! One [`Runtime`] wraps one pool and is reused for every phase and every
//! run (k-means runs one job per iteration on it). A panic or an error in
//! the job's code ends the run with an error; the pool stays usable. The
//! runtime reads no files: see [`crate::input`].

use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use numakit_pool::{Pool, PoolError};
use numakit_topology::NodeId;

use crate::combiner::Combiner;
use crate::container::{merge_part, ContainerKind, Store};
use crate::error::{MapReduceError, Result};
use crate::job::{Emitter, Job, Split};
use crate::locality;
use crate::order::{self, OutputOrder};
use crate::prefetch::Prefetch;
use crate::stats::{per_node_tasks, CpuMark, JobStats, PhaseCpu, PhaseSeconds};
use crate::{Pairs, Parts};

/// Default bytes of input per map task: big enough that task overhead is
/// noise (Phoenix §IV-C2), small enough for 16 tasks per worker to balance.
pub const DEFAULT_CHUNK_BYTES: usize = 1 << 20;
const MIN_CHUNK_BYTES: usize = 64 << 10;
const TASKS_PER_WORKER: usize = 16;
/// Reduce partitions per worker by default.
const PARTS_PER_WORKER: usize = 4;

/// How to run a job.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JobOptions {
    /// The container every worker folds its map output into; `None`: the
    /// job's own choice where it makes one (the applications do), else a
    /// growable hash table.
    pub container: Option<ContainerKind>,
    /// Records per map task; `None`: about [`DEFAULT_CHUNK_BYTES`] of
    /// input, fewer when that would leave workers idle.
    pub chunk_records: Option<usize>,
    /// Reduce partitions; `None`: four per worker.
    pub partitions: Option<usize>,
    /// The order of the output pairs (default: unordered).
    pub order: OutputOrder,
    /// Whether reduce prefetches: the next key's state while it reduces
    /// one, and ahead of the value a [`crate::KeepAll`] iterator yields
    /// (default: on).
    pub prefetch: Prefetch,
}

/// A run's reduced pairs and what it measured.
#[derive(Debug)]
pub struct JobOutput<K, O> {
    /// One (key, reduced output) pair per distinct key, in
    /// [`JobOptions::order`].
    pub pairs: Vec<(K, O)>,
    /// Phase times and task counts of the run.
    pub stats: JobStats,
}

/// Runs jobs on one pool.
pub struct Runtime<'p> {
    pool: &'p Pool,
}

impl<'p> Runtime<'p> {
    /// A runtime that runs every phase of every job on `pool`.
    pub fn new(pool: &'p Pool) -> Self {
        Self { pool }
    }

    /// The pool the runtime runs on.
    pub fn pool(&self) -> &'p Pool {
        self.pool
    }

    /// Runs `job` over `input`.
    ///
    /// # Examples
    ///
    /// Counts the words of a text by their length, with an array container
    /// (lengths are small integers), the output ordered by key. Map tasks
    /// of about 8 bytes cut even this tiny input into several splits.
    ///
    /// ```
    /// use std::ops::Range;
    /// use std::sync::Arc;
    ///
    /// use numakit_mapreduce::{
    ///     split, ContainerKind, Count, Emitter, Input, Job, JobError, JobOptions, OutputOrder,
    ///     Runtime, Split,
    /// };
    /// use numakit_placement::PlacementMode;
    /// use numakit_pool::PoolBuilder;
    ///
    /// /// Words per length.
    /// struct WordLengths;
    ///
    /// impl<'a> Job<'a> for WordLengths {
    ///     type Record = u8;
    ///     type Key = usize;
    ///     type Value = ();
    ///     type Combiner = Count;
    ///     type Output = u64;
    ///
    ///     fn split(&self, text: &'a [u8], target: usize) -> Vec<Range<usize>> {
    ///         // Never cut a word in two.
    ///         split::words(text, target, |b| b.is_ascii_alphabetic())
    ///     }
    ///     fn map(
    ///         &self,
    ///         split: Split<'a, u8>,
    ///         out: &mut Emitter<'_, 'a, Self>,
    ///     ) -> Result<(), JobError> {
    ///         for word in split.records.split(|b| !b.is_ascii_alphabetic()) {
    ///             if !word.is_empty() {
    ///                 out.emit(word.len(), ());
    ///             }
    ///         }
    ///         Ok(())
    ///     }
    ///     fn reduce(&self, _length: &usize, words: Count) -> Result<u64, JobError> {
    ///         Ok(words.0)
    ///     }
    ///     fn key_index(&self, length: &usize) -> Option<usize> {
    ///         Some(*length) // lengths past the array go to its overflow table
    ///     }
    /// }
    ///
    /// let topology = Arc::new(numakit_topology::discover()?);
    /// let pool = PoolBuilder::new(topology)
    ///     .threads(2)
    ///     .placement(PlacementMode::BestEffort)
    ///     .build()?;
    /// let text = Input::place(&pool, b"a cat sat on the mat, a dog sat on a log")?;
    /// let opts = JobOptions {
    ///     container: Some(ContainerKind::Array { keys: 8 }),
    ///     chunk_records: Some(8),
    ///     order: OutputOrder::ByKey,
    ///     ..JobOptions::default()
    /// };
    /// let out = Runtime::new(&pool).run(&WordLengths, text.bytes(), &opts)?;
    /// assert_eq!(out.pairs, [(1, 3), (2, 2), (3, 7)]);
    /// assert!(out.stats.map_tasks > 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn run<'a, J: Job<'a>>(
        &self,
        job: &J,
        input: &'a [J::Record],
        opts: &JobOptions,
    ) -> Result<JobOutput<J::Key, J::Output>> {
        let workers = self.pool.workers();
        let parts = opts.partitions.unwrap_or(workers * PARTS_PER_WORKER);
        if parts == 0 {
            return Err(MapReduceError::InvalidInput(
                "partitions must be at least 1".into(),
            ));
        }
        let mut seconds = PhaseSeconds::default();
        let started = Instant::now();
        let mut marks = vec![CpuMark::now()];
        let target = opts
            .chunk_records
            .unwrap_or_else(|| default_chunk::<J::Record>(input.len(), workers));
        let splits = job.split(input, target.max(1));
        let (homes, located) = locality::home_nodes(self.pool, input, &splits);
        seconds.split = lap(&started);
        marks.push(CpuMark::now());

        let before = self.pool.stats();
        let stores = self.map(
            job,
            input,
            &splits,
            &homes,
            opts.container.unwrap_or_default(),
            parts,
        )?;
        let after = self.pool.stats();
        seconds.map = lap(&started) - seconds.split;
        marks.push(CpuMark::now());

        let reduced = self.reduce(job, stores, parts, opts.prefetch)?;
        seconds.reduce = lap(&started) - seconds.split - seconds.map;
        marks.push(CpuMark::now());

        let pairs = order::merge(self.pool, job, reduced, opts.order)?;
        seconds.merge = lap(&started) - seconds.split - seconds.map - seconds.reduce;
        marks.push(CpuMark::now());
        let stats = JobStats {
            cpu: phase_cpu(&marks, workers),
            seconds,
            map_tasks: splits.len(),
            reduce_partitions: parts,
            splits_located: located,
            per_node: per_node_tasks(&before, &after, &count_homes(&homes)),
        };
        Ok(JobOutput { pairs, stats })
    }

    /// The map phase: one task per split at its home node; returns each
    /// worker's container.
    fn map<'a, J: Job<'a>>(
        &self,
        job: &J,
        input: &'a [J::Record],
        splits: &[std::ops::Range<usize>],
        homes: &[Option<NodeId>],
        container: ContainerKind,
        parts: usize,
    ) -> Result<Vec<Store<J::Key, J::Combiner>>> {
        let stores: Vec<Mutex<Store<J::Key, J::Combiner>>> = (0..self.pool.workers())
            .map(|_| Mutex::new(Store::new(container, parts)))
            .collect();
        let failure = FirstFailure::default();
        let outcome = self.pool.scope(|scope| {
            for (range, home) in splits.iter().zip(homes) {
                let (stores, failure) = (&stores, &failure);
                let split = Split {
                    records: &input[range.clone()],
                    start: range.start,
                };
                let task = move |ctx: &numakit_pool::WorkerContext| {
                    if failure.failed() {
                        return;
                    }
                    let mut store = stores[ctx.index]
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner);
                    let mut out = Emitter {
                        job,
                        store: &mut store,
                    };
                    if let Err(source) = job.map(split, &mut out) {
                        failure.set(MapReduceError::Job {
                            phase: "map",
                            source,
                        });
                    }
                };
                match home {
                    Some(node) => scope.spawn_on(*node, task)?,
                    None => scope.spawn(task),
                }
            }
            Ok::<(), PoolError>(())
        });
        finish_phase("map", outcome, failure)?;
        Ok(stores
            .into_iter()
            .map(|m| m.into_inner().unwrap_or_else(PoisonError::into_inner))
            .collect())
    }

    /// The reduce phase: cuts every container into partitions (a task per
    /// worker), then merges and reduces each partition (a task each).
    fn reduce<'a, J: Job<'a>>(
        &self,
        job: &J,
        stores: Vec<Store<J::Key, J::Combiner>>,
        parts: usize,
        prefetch: Prefetch,
    ) -> Result<Parts<J::Key, J::Output>> {
        let cut: Vec<Mutex<Parts<J::Key, J::Combiner>>> =
            stores.iter().map(|_| Mutex::new(Vec::new())).collect();
        let outcome = self.pool.scope(|scope| {
            for (store, slot) in stores.into_iter().zip(&cut) {
                scope.spawn(move |_| *lock(slot) = store.into_parts());
            }
        });
        finish_phase("reduce", outcome.map(Ok), FirstFailure::default())?;
        let mut columns: Vec<Parts<J::Key, J::Combiner>> = (0..parts).map(|_| Vec::new()).collect();
        for worker in cut {
            let worker = worker.into_inner().unwrap_or_else(PoisonError::into_inner);
            for (column, part) in columns.iter_mut().zip(worker) {
                column.push(part);
            }
        }
        self.reduce_columns(job, columns, prefetch)
    }

    fn reduce_columns<'a, J: Job<'a>>(
        &self,
        job: &J,
        columns: Vec<Parts<J::Key, J::Combiner>>,
        prefetch: Prefetch,
    ) -> Result<Parts<J::Key, J::Output>> {
        let outputs: Vec<Mutex<Pairs<J::Key, J::Output>>> =
            columns.iter().map(|_| Mutex::new(Vec::new())).collect();
        let failure = FirstFailure::default();
        let outcome = self.pool.scope(|scope| {
            for (column, slot) in columns.into_iter().zip(&outputs) {
                let failure = &failure;
                scope.spawn(move |_| {
                    let merged = merge_part::<J::Key, J::Combiner, J::Value>(column);
                    if let Some(out) = reduce_part(job, merged, prefetch, failure) {
                        *lock(slot) = out;
                    }
                });
            }
        });
        finish_phase("reduce", outcome.map(Ok), failure)?;
        Ok(outputs
            .into_iter()
            .map(|m| m.into_inner().unwrap_or_else(PoisonError::into_inner))
            .collect())
    }
}

/// Reduces one merged partition, key by key; with prefetch on, the next
/// key's state is prefetched while one is reduced. `None` once any task
/// has failed (the failure is recorded).
fn reduce_part<'a, J: Job<'a>>(
    job: &J,
    merged: Pairs<J::Key, J::Combiner>,
    prefetch: Prefetch,
    failure: &FirstFailure,
) -> Option<Pairs<J::Key, J::Output>> {
    let mut out = Vec::with_capacity(merged.len());
    let mut merged = merged.into_iter().peekable();
    while let Some((key, mut state)) = merged.next() {
        if failure.failed() {
            return None;
        }
        if prefetch.is_on() {
            if let Some((_, next)) = merged.peek() {
                Combiner::<J::Value>::prefetch(next);
            }
        }
        Combiner::<J::Value>::set_prefetch(&mut state, prefetch);
        match job.reduce(&key, state) {
            Ok(value) => out.push((key, value)),
            Err(source) => {
                failure.set(MapReduceError::Job {
                    phase: "reduce",
                    source,
                });
                return None;
            }
        }
    }
    Some(out)
}

fn lap(started: &Instant) -> f64 {
    started.elapsed().as_secs_f64()
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// About [`DEFAULT_CHUNK_BYTES`] of records per task, but at least
/// [`TASKS_PER_WORKER`] tasks per worker while chunks stay above 64 KiB.
fn default_chunk<R>(len: usize, workers: usize) -> usize {
    let size = std::mem::size_of::<R>().max(1);
    let bytes = (len * size) / (workers.max(1) * TASKS_PER_WORKER);
    bytes.clamp(MIN_CHUNK_BYTES, DEFAULT_CHUNK_BYTES) / size
}

fn count_homes(homes: &[Option<NodeId>]) -> Vec<(NodeId, u64)> {
    let mut counts: Vec<(NodeId, u64)> = Vec::new();
    for node in homes.iter().flatten() {
        match counts.iter_mut().find(|c| c.0 == *node) {
            Some(c) => c.1 += 1,
            None => counts.push((*node, 1)),
        }
    }
    counts
}

/// The first error any task of a phase met; later tasks see it and stop.
#[derive(Default)]
pub(crate) struct FirstFailure {
    failed: AtomicBool,
    error: Mutex<Option<MapReduceError>>,
}

impl FirstFailure {
    pub(crate) fn failed(&self) -> bool {
        self.failed.load(AtomicOrdering::Relaxed)
    }

    pub(crate) fn set(&self, error: MapReduceError) {
        let mut slot = lock(&self.error);
        if slot.is_none() {
            *slot = Some(error);
        }
        self.failed.store(true, AtomicOrdering::Relaxed);
    }
}

/// The phase's outcome: a panic, then a task's error, then success.
pub(crate) fn finish_phase(
    phase: &'static str,
    outcome: std::result::Result<std::result::Result<(), PoolError>, PoolError>,
    failure: FirstFailure,
) -> Result<()> {
    match outcome {
        Err(PoolError::TaskPanicked { message, .. }) => {
            return Err(MapReduceError::Panicked { phase, message })
        }
        Err(e) | Ok(Err(e)) => return Err(e.into()),
        Ok(Ok(())) => {}
    }
    match failure
        .error
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner)
    {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The splits between five marks (start, then each phase's end).
fn phase_cpu(marks: &[CpuMark], workers: usize) -> Option<PhaseCpu> {
    let split = |i: usize| marks.get(i)?.until(marks.get(i + 1)?, workers);
    Some(PhaseCpu {
        split: split(0)?,
        map: split(1)?,
        reduce: split(2)?,
        merge: split(3)?,
    })
}
