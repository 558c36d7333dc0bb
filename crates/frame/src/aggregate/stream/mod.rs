//! Group-by of a file while it is read: the workers take the file's units
//! one at a time, and each decoded batch is coded and aggregated into the
//! worker's own groups at once and then dropped. The input is never held
//! whole, so a run needs the memory of its groups, not of its input, and
//! decoding overlaps with aggregating.
//!
//! Key codes must mean the same in every batch of a worker, so they are
//! made batch by batch with state the worker keeps: 32- and 64-bit integer
//! keys (dates, times, timestamps too) are their own codes, floats their
//! total-order bits, strings and other values are numbered by a table of
//! the worker's distinct keys (each value of a dictionary-encoded batch
//! once). Several key columns are numbered as byte rows of their codes.
//! One integer key whose values stay close together skips hashing: its
//! groups are indexed directly (see `window`).
//! At the end every worker's groups get a canonical byte form of their
//! key, one dictionary over all workers' groups makes their codes global,
//! and the groups merge by those codes (each worker merging its share).
//!
//! When a worker's groups outgrow its share of the cache, one table costs a
//! miss to memory per row. Reading a file with one integer (or float) key,
//! whose codes mean the same on every worker, the worker then sends its
//! rows on, in buffers, to partitions by key hash, each owned by one worker
//! (`numakit_ops::aggregate::columns::radix`): every group is held once,
//! by its owner, and there is no merge of every group or canonical bytes.
//! One string or binary key files its rows by key hash instead once groups
//! grow nearly as fast as rows, and each partition is numbered and
//! aggregated on its own at the end (`byte_partitions`), from a file or
//! from a table in memory. Other keys give up then, and the caller reads
//! the file whole instead (the operators' partitioned methods then handle
//! the many groups better); a table already in memory gives up as soon as
//! a worker's groups outgrow its share of the cache, unless it files.
//! Workers look every [`SLICE_ROWS`] rows, so giving up wastes little.
//! MIN and MAX of strings need the order of every value in the input, so
//! they are not streamed.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, SchemaRef};

use numakit_ops::aggregate::columns::{
    self, AggSpec, Groups, Partial, RadixShared, RadixWorker, Segment, ValueColumn,
};
use numakit_pool::Pool;

use crate::aggregate::values::{number_part, LaneKind, PartLane};
use crate::aggregate::window::KeyWindow;
use crate::error::{FrameError, Result};
use crate::keys::dictionary::{key_hash, ByteKeys, Dictionary};
use crate::keys::key_table::KeyTable;
use crate::keys::PartCodes;
use crate::memory::MemoryLimit;
use crate::request::aggregate::spec::{value_type, ValueType};

mod byte_partitions;
mod coder;
mod decode;
mod feed;
use byte_partitions::{BytePartitions, Earlier};
use coder::Coder;
use decode::{decode_codes, decode_keys};
pub(crate) use feed::Feed;

/// A worker gives up streaming once it has this many groups (more than
/// its share of the cache holds)...
const GIVE_UP_GROUPS: usize = 1 << 16;
/// ...and, reading a file, more than one group per this many rows (with
/// fewer, streaming's saving of memory is worth its slower tables; a table
/// already in memory has nothing to save).
const GIVE_UP_ROWS_PER_GROUP: usize = 4;
/// Rows a worker adds between two looks at its groups.
const SLICE_ROWS: usize = 1 << 16;
/// Groups that outgrow the cache are split into `1 << PARTITION_BITS`
/// partitions: at 2^20 groups, 4K groups (about 400 KiB) each, which the
/// cache holds while a buffer is added.
const PARTITION_BITS: u32 = 8;

/// Whether streaming went through or gave up.
pub(crate) enum Streamed {
    Done {
        groups: Vec<Groups>,
        /// The key columns of the groups of each output, in order.
        keys: Vec<Vec<ArrayRef>>,
        rows: u64,
        /// How the groups were split into partitions, if they were.
        split: Option<Split>,
    },
    TooManyGroups,
}

/// How a streamed group-by split its groups into partitions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Split {
    /// Rows went, a buffer at a time, to this many partitions, each owned
    /// and aggregated by one worker as they came (integer and float keys).
    Owners(usize),
    /// Rows were filed into this many partitions by key hash, each numbered
    /// and aggregated on its own once the file was read (string keys).
    Filed(usize),
}

/// One worker's streaming state.
struct Worker {
    coders: Vec<Coder>,
    /// For several key columns: the worker's table of their code rows.
    tuples: Option<KeyTable>,
    /// Two key columns numbered by tables: their codes pack into one word.
    pair: bool,
    partial: Partial,
    /// Once the groups outgrew the cache: the rows since then go to the
    /// partitions' owners through this (`partial` keeps the earlier ones).
    radix: Option<RadixWorker>,
    /// Once one string key's groups grew nearly as fast as rows: the rows
    /// since then, filed by key hash (`partial` keeps the earlier ones).
    filed: Option<BytePartitions>,
    /// One integer key: its direct window.
    window: KeyWindow,
    rows: usize,
}

impl Worker {
    fn new(key_types: &[DataType], specs: &[AggSpec]) -> Self {
        let coders: Vec<Coder> = key_types.iter().map(Coder::for_type).collect();
        let numbered = |c: &Coder| matches!(c, Coder::Bytes(_) | Coder::Wide(_));
        let partial = if coders.len() == 1 && numbered(&coders[0]) {
            Partial::dense(specs)
        } else {
            Partial::new(specs, None, 1024)
        };
        let window = if coders.len() == 1 && matches!(coders[0], Coder::Raw { .. }) {
            KeyWindow::Undecided
        } else {
            KeyWindow::Off { unused: 0 }
        };
        Worker {
            window,
            pair: coders.len() == 2 && coders.iter().all(numbered),
            tuples: (key_types.len() > 1).then(|| KeyTable::with_capacity(64)),
            coders,
            partial,
            radix: None,
            filed: None,
            rows: 0,
        }
    }

    /// The group codes of a batch: the key's code, or the number of its
    /// row of column codes.
    fn group_codes(&mut self, batch: &RecordBatch, keys: usize) -> Result<PartCodes> {
        let columns: Vec<PartCodes> = (0..keys)
            .map(|c| self.coders[c].codes(batch.column(c)))
            .collect::<Result<_>>()?;
        let Some(tuples) = &mut self.tuples else {
            return Ok(columns
                .into_iter()
                .next()
                .unwrap_or_else(|| PartCodes::new(Vec::new(), Vec::new())));
        };
        if let Some(packed) = self.pair.then(|| pack_pair(&columns)).flatten() {
            return Ok(packed);
        }
        let mut codes = Vec::with_capacity(batch.num_rows());
        let mut row_bytes = Vec::with_capacity(9 * keys);
        let mut cursors = vec![0usize; keys];
        for row in 0..batch.num_rows() {
            row_bytes.clear();
            for (c, column) in columns.iter().enumerate() {
                let null = column.invalid.get(cursors[c]) == Some(&(row as u32));
                if null {
                    cursors[c] += 1;
                    row_bytes.push(0);
                    row_bytes.extend_from_slice(&[0; 8]);
                } else {
                    row_bytes.push(1);
                    row_bytes.extend_from_slice(&column.codes[row].to_be_bytes());
                }
            }
            codes.push(u64::from(tuples.insert(
                key_hash(&row_bytes),
                &row_bytes,
                0,
            )));
        }
        Ok(PartCodes::new(codes, Vec::new()))
    }

    fn add(
        &mut self,
        batch: &RecordBatch,
        keys: usize,
        specs: &[AggSpec],
        shared: &RadixShared,
    ) -> Result<()> {
        let lanes: Vec<(LaneKind, PartLane)> = (keys..batch.num_columns())
            .map(|c| lane_of(batch.column(c)))
            .collect::<Result<_>>()?;
        let columns: Vec<ValueColumn<'_>> = lanes
            .iter()
            .map(|(kind, lane)| lane.column(*kind))
            .collect();
        self.rows += batch.num_rows();
        if let Some(filed) = &mut self.filed {
            return filed.add(batch.column(0), &columns);
        }
        let codes = self.group_codes(batch, keys)?;
        let codes = self.window.fit(&mut self.partial, codes, specs);
        let segment = Segment {
            codes: &codes.codes,
            keyless: &codes.invalid,
            columns,
        };
        match &mut self.radix {
            Some(radix) => radix.add(shared, &segment, specs)?,
            None => self.partial.add(&segment, specs)?,
        }
        Ok(())
    }

    /// Whether the groups grow so fast that reading the input whole and
    /// using the operators' partitioned methods would do better (the
    /// merge here copies every group's key; with about as many groups as
    /// rows that costs more than it saves).
    fn too_many_groups(&self, in_memory: bool) -> bool {
        if self.window.is_direct() || self.radix.is_some() || self.filed.is_some() {
            return false;
        }
        let groups = self.partial.groups() - self.window.unused(&self.partial);
        groups > GIVE_UP_GROUPS && (in_memory || groups * GIVE_UP_ROWS_PER_GROUP > self.rows)
    }

    /// Whether the rows can be filed by key hash from now on instead of
    /// giving up: one string or binary key, whose type the result's key
    /// column can be rebuilt in, with groups growing nearly as fast as
    /// rows (with fewer, a table in memory does better with the
    /// operators' partitioned methods).
    fn can_file(&self, key_type: &DataType) -> bool {
        let groups = self.partial.groups();
        self.filed.is_none()
            && self.coders.len() == 1
            && matches!(self.coders[0], Coder::Bytes(_))
            && byte_partitions::rebuilds(key_type)
            && groups * GIVE_UP_ROWS_PER_GROUP > self.rows
    }

    /// Whether the groups can be split into partitions: one key column
    /// whose codes are its values (the same on every worker).
    fn splittable(&self) -> bool {
        self.coders.len() == 1 && matches!(self.coders[0], Coder::Raw { .. } | Coder::Float)
    }

    /// Whether the worker's groups have outgrown the cache, so that it
    /// splits them into partitions from now on.
    fn should_split(&self) -> bool {
        self.radix.is_none()
            && !self.window.is_direct()
            && self.splittable()
            && self.partial.groups() - self.window.unused(&self.partial) > GIVE_UP_GROUPS
    }

    /// The canonical key bytes of group `g`: per column a flag (0 null, 1
    /// value) and the value's bytes.
    fn canonical(&self, g: usize) -> Vec<u8> {
        let mut out = Vec::new();
        let code = self.partial.code(g);
        if let (true, Some(c)) = (self.pair, code) {
            for (i, half) in [c >> 32, c & 0xFFFF_FFFF].into_iter().enumerate() {
                if half == NULL_NUMBER {
                    out.push(0);
                } else {
                    out.push(1);
                    self.coders[i].canonical(half, &mut out);
                }
            }
            return out;
        }
        match (&self.tuples, code) {
            (None, None) => out.push(0),
            (None, Some(c)) => {
                out.push(1);
                self.coders[0].canonical(c, &mut out);
            }
            (Some(tuples), Some(c)) => {
                for (i, chunk) in tuples.key(c as usize).chunks(9).enumerate() {
                    out.push(chunk[0]);
                    if chunk[0] == 1 {
                        let mut code = [0u8; 8];
                        code.copy_from_slice(&chunk[1..9]);
                        self.coders[i].canonical(u64::from_be_bytes(code), &mut out);
                    }
                }
            }
            (Some(_), None) => out.push(0),
        }
        out
    }
}

/// The number that stands for a null in a packed pair.
const NULL_NUMBER: u64 = 0xFFFF_FFFF;

/// Two columns of table numbers packed into one word per row (a null as
/// [`NULL_NUMBER`]), or `None` when a number does not fit 32 bits.
fn pack_pair(columns: &[PartCodes]) -> Option<PartCodes> {
    let (a, b) = (&columns[0], &columns[1]);
    let fits = |c: &PartCodes| c.codes.iter().all(|&x| x < NULL_NUMBER);
    if !fits(a) || !fits(b) {
        return None;
    }
    let mut codes: Vec<u64> = a
        .codes
        .iter()
        .zip(b.codes.iter())
        .map(|(&x, &y)| (x << 32) | y)
        .collect();
    for &r in &a.invalid {
        codes[r as usize] |= NULL_NUMBER << 32;
    }
    for &r in &b.invalid {
        codes[r as usize] |= NULL_NUMBER;
    }
    Some(PartCodes::new(codes, Vec::new()))
}

/// The value lane of a batch's column: numbers, or only validity.
fn lane_of(array: &ArrayRef) -> Result<(LaneKind, PartLane)> {
    let plain = match array.data_type() {
        DataType::Dictionary(_, values) if value_type(values) != ValueType::Bytes => {
            arrow_cast::cast(array, values)
                .map_err(|e| FrameError::arrow("unpacking a dictionary-encoded column", e))?
        }
        _ => array.clone(),
    };
    match value_type(plain.data_type()) {
        ValueType::Bytes | ValueType::Other => Ok((LaneKind::Presence, PartLane::in_place(&plain))),
        _ => {
            let wide = matches!(plain.data_type(), DataType::UInt64)
                && plain
                    .as_primitive::<arrow_array::types::UInt64Type>()
                    .iter()
                    .flatten()
                    .any(|v| v > i64::MAX as u64);
            number_part(&plain, wide)
        }
    }
}

/// The canonical keys of every worker's groups, as byte keys.
struct GroupRows<'w> {
    rows: Vec<Vec<Vec<u8>>>,
    _workers: std::marker::PhantomData<&'w ()>,
}

impl ByteKeys for GroupRows<'_> {
    fn parts(&self) -> usize {
        self.rows.len()
    }
    fn worker(&self, part: usize) -> usize {
        part
    }
    fn rows(&self, part: usize) -> usize {
        self.rows[part].len()
    }
    fn key(&self, part: usize, row: usize) -> Option<&[u8]> {
        Some(&self.rows[part][row])
    }
}

/// Groups the feed's batches: key columns first, then value columns in the
/// order `specs` name them.
/// The memory limit is checked before every unit (what the workers'
/// groups hold shows in the process's resident size).
pub(crate) fn stream(
    pool: &Pool,
    feed: &Feed<'_>,
    keys: usize,
    specs: &[AggSpec],
    limit: &MemoryLimit,
) -> Result<Streamed> {
    let schema = feed.schema();
    let key_types: Vec<DataType> = (0..keys)
        .map(|c| schema.field(c).data_type().clone())
        .collect();
    let units = feed.units();
    let count = pool.workers().max(1);
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let failure: Mutex<Option<FrameError>> = Mutex::new(None);
    let shared = RadixShared::new(PARTITION_BITS, count);
    let workers = pool.broadcast(|ctx| {
        let mut worker = Worker::new(&key_types, specs);
        let mut own = (0..units).filter(|&u| feed.owns(u, ctx.index, count));
        while !stop.load(Ordering::Relaxed) {
            let unit = match feed {
                Feed::File { .. } => next.fetch_add(1, Ordering::Relaxed),
                Feed::Table(_) => own.next().unwrap_or(units),
            };
            if unit >= units {
                break;
            }
            let in_memory = matches!(feed, Feed::Table(_));
            let step = limit
                .check("the group-by's groups", 0)
                .map_err(FrameError::from)
                .and_then(|()| feed.read(unit))
                .and_then(|batches| {
                    for batch in &batches {
                        for start in (0..batch.num_rows()).step_by(SLICE_ROWS) {
                            let rows = SLICE_ROWS.min(batch.num_rows() - start);
                            worker.add(&batch.slice(start, rows), keys, specs, &shared)?;
                            if !in_memory && worker.should_split() {
                                worker.radix = Some(RadixWorker::new(&shared, ctx.index, specs));
                            } else if worker.too_many_groups(in_memory) {
                                if worker.can_file(&key_types[0]) {
                                    let lanes = batch.num_columns() - keys;
                                    let rows = rows_left(feed, &worker, count);
                                    let key_len = worker.coders[0].mean_key_len().unwrap_or(0);
                                    worker.filed = Some(BytePartitions::new(lanes, rows, key_len));
                                } else {
                                    stop.store(true, Ordering::Relaxed);
                                }
                            }
                            if stop.load(Ordering::Relaxed) {
                                return Ok(());
                            }
                        }
                    }
                    Ok(())
                });
            if let Err(e) = step {
                stop.store(true, Ordering::Relaxed);
                if let Ok(mut f) = failure.lock() {
                    f.get_or_insert(e);
                }
            }
        }
        if let Some(radix) = &mut worker.radix {
            if let Err(e) = radix.hand_off(&shared, specs) {
                if let Ok(mut f) = failure.lock() {
                    f.get_or_insert(e.into());
                }
            }
        }
        worker
    })?;
    if let Some(e) = failure.into_inner().ok().flatten() {
        return Err(e);
    }
    if stop.load(Ordering::Relaxed) {
        return Ok(Streamed::TooManyGroups);
    }
    if workers.iter().any(|w| w.radix.is_some()) {
        return finish_partitions(pool, &schema, specs, &shared, workers);
    }
    if workers.iter().any(|w| w.filed.is_some()) {
        return finish_filed(pool, &schema, specs, workers);
    }
    let mut workers = workers;
    for worker in &mut workers {
        worker.window.close(&mut worker.partial);
    }
    merge(pool, &schema, keys, specs, workers)
}

/// About how many rows `worker` has still to read: its share of the
/// feed's rows (when known) less those it read.
fn rows_left(feed: &Feed<'_>, worker: &Worker, workers: usize) -> usize {
    let total = feed.rows_hint().unwrap_or(0) as usize;
    (total / workers.max(1)).saturating_sub(worker.rows)
}

/// The groups of workers that split them: every owner adds what was sent
/// to it and its share of the groups made before the split (and of any
/// worker that never split), then turns its partitions into its share of
/// the result.
fn finish_partitions(
    pool: &Pool,
    schema: &SchemaRef,
    specs: &[AggSpec],
    shared: &RadixShared,
    workers: Vec<Worker>,
) -> Result<Streamed> {
    let rows = workers.iter().map(|w| w.rows as u64).sum();
    let mut earlier = Vec::with_capacity(workers.len());
    let mut radixes = Vec::with_capacity(workers.len());
    for mut worker in workers {
        worker.window.close(&mut worker.partial);
        radixes.push(Mutex::new(worker.radix.take()));
        earlier.push(worker.partial);
    }
    let earlier: Vec<&Partial> = earlier.iter().collect();
    let per_worker = pool.broadcast(|ctx| -> Result<Vec<Groups>> {
        let radix = radixes
            .get(ctx.index)
            .and_then(|r| r.lock().ok().and_then(|mut r| r.take()))
            .unwrap_or_else(|| RadixWorker::new(shared, ctx.index, specs));
        Ok(radix.finish(shared, &earlier, specs)?)
    })?;
    drop(earlier);
    let groups = columns::in_partition_order(per_worker.into_iter().collect::<Result<_>>()?);
    let data_type = schema.field(0).data_type().clone();
    let coder = Coder::for_type(&data_type);
    let keys = groups
        .iter()
        .map(|g| Ok(vec![decode_codes(&coder, &data_type, &g.codes)?]))
        .collect::<Result<Vec<_>>>()?;
    Ok(Streamed::Done {
        groups,
        keys,
        rows,
        split: Some(Split::Owners(shared.partitions())),
    })
}

/// The groups of workers that filed their rows by key hash: each partition
/// numbered and aggregated on its own, with the groups every worker made
/// before it filed (or without filing) merged into their partitions.
fn finish_filed(
    pool: &Pool,
    schema: &SchemaRef,
    specs: &[AggSpec],
    mut workers: Vec<Worker>,
) -> Result<Streamed> {
    let rows = workers.iter().map(|w| w.rows as u64).sum();
    let filed: Vec<BytePartitions> = workers.iter_mut().filter_map(|w| w.filed.take()).collect();
    let earlier: Vec<Earlier<'_>> = workers
        .iter()
        .map(|w| Earlier {
            partial: &w.partial,
            coder: &w.coders[0],
        })
        .collect();
    let data_type = schema.field(0).data_type();
    let (groups, keys) = byte_partitions::finish(pool, data_type, specs, filed, &earlier)?;
    Ok(Streamed::Done {
        groups,
        keys,
        rows,
        split: Some(Split::Filed(1 << byte_partitions::PARTITION_BITS)),
    })
}

fn merge(
    pool: &Pool,
    schema: &SchemaRef,
    keys: usize,
    specs: &[AggSpec],
    workers: Vec<Worker>,
) -> Result<Streamed> {
    let rows = workers.iter().map(|w| w.rows as u64).sum();
    let canonical = GroupRows {
        rows: workers
            .iter()
            .map(|w| (0..w.partial.groups()).map(|g| w.canonical(g)).collect())
            .collect(),
        _workers: std::marker::PhantomData,
    };
    let (dictionary, codes) = Dictionary::build(pool, &canonical)?;
    let partials: Vec<Partial> = workers
        .into_iter()
        .zip(&codes)
        .map(|(w, c)| w.partial.recode(|g| Some(c.codes[g])))
        .collect();
    let groups = columns::merge(pool, &partials, specs)?;
    let key_columns = groups
        .iter()
        .map(|g| {
            let bytes: Vec<&[u8]> = g
                .codes
                .iter()
                .map(|c| {
                    let r = dictionary.representative(c.unwrap_or(0));
                    canonical
                        .key(crate::table::part_of(r), crate::table::row_of(r))
                        .unwrap_or(&[])
                })
                .collect();
            decode_keys(schema, keys, &bytes)
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Streamed::Done {
        groups,
        keys: key_columns,
        rows,
        split: None,
    })
}
