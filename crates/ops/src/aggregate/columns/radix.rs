//! Group-by of a stream with more groups than the workers' caches hold:
//! the groups are split by the hash of their codes into partitions, each
//! owned by one worker, and rows travel to their partition's owner in
//! buffers.
//!
//! Adding a row to one big table costs a miss to memory (often a TLB miss
//! too) per row once the groups outgrow the cache. Here each worker first
//! copies the rows it decodes into a small buffer per partition
//! (sequential writes into a few hundred streams, [`RadixWorker::add`]);
//! the buffers together stay in the cache, so a row costs no miss there.
//! A full buffer is handed on to its partition's owner: the owner's own
//! at once, the others' through its inbox, which it empties after each
//! segment. A partition with only a few groups takes a buffer at once;
//! a bigger one parks what it gets until that holds twice its groups
//! (or to the end), and then adds it in one go, so that the partition's
//! table comes into the cache once for many rows. What is parked stays
//! below twice the groups, so memory follows the groups, not the input.
//! Every group is held once, by its owner, in the owner's memory (the
//! shuffle of Li et al., with partitions as the unit), and there is no
//! merge at the end: each owner turns its partitions into its share of
//! the result.
//!
//! Codes must mean the same on every worker (integer keys as their own
//! codes). Rows without a key go to partition 0.
//!
//! A run has two phases, each a broadcast on the pool: every worker
//! [`add`](RadixWorker::add)s its segments and then
//! [`hand_off`](RadixWorker::hand_off)s what its buffers still hold;
//! after that barrier every worker [`finish`](RadixWorker::finish)es,
//! emptying its inbox. [`aggregate_radix`] runs both on segments at hand.

use std::sync::Mutex;

use numakit_pool::Pool;

use crate::aggregate::columns::{AggSpec, Groups, Partial, Segment, Validity, ValueColumn, Values};
use crate::error::{OpsError, Result};
use crate::hash::hash64;

mod owned;
mod pending;
use owned::OwnedPartition;
use pending::Pending;

/// Rows scattered between two looks at the buffers.
const CHUNK_ROWS: usize = 1 << 6;
/// Slots in all of a worker's partition buffers together, shared out
/// evenly: 512 KiB of codes and as much of 64-bit values, so that the
/// buffers stay in the cache while rows are scattered into them.
const BUFFER_SLOTS: usize = 1 << 16;

/// Slots per partition buffer with `1 << bits` partitions: at least four
/// chunks.
fn buffer_rows(bits: u32) -> usize {
    (BUFFER_SLOTS >> bits).max(4 * CHUNK_ROWS)
}

/// The partition of `code` among `1 << bits` (high bits of its hash, so
/// that the tables, which use the low bits, stay evenly filled).
#[inline(always)]
pub fn partition_of(code: Option<u64>, bits: u32) -> usize {
    match code {
        Some(c) if bits > 0 => (hash64(c) >> (64 - bits)) as usize,
        _ => 0,
    }
}

/// What the workers of one run share: the partitioning, the buffers' size,
/// when owners park, and the inboxes.
pub struct RadixShared {
    bits: u32,
    workers: usize,
    buffer_rows: usize,
    /// Owners park the rows of partitions with more groups than this.
    park_groups: usize,
    inboxes: Vec<Mutex<Vec<Batch>>>,
}

impl RadixShared {
    /// `1 << bits` partitions (at most 2^16) over `workers` owners.
    pub fn new(bits: u32, workers: usize) -> Self {
        let bits = bits.min(16);
        let buffer_rows = buffer_rows(bits);
        RadixShared {
            bits,
            workers: workers.max(1),
            buffer_rows,
            // A buffer's rows would no longer be twice the groups.
            park_groups: (buffer_rows - CHUNK_ROWS) / 2,
            inboxes: (0..workers.max(1))
                .map(|_| Mutex::new(Vec::new()))
                .collect(),
        }
    }

    /// The partitions.
    pub fn partitions(&self) -> usize {
        1 << self.bits
    }

    fn owner(&self, partition: usize) -> usize {
        partition % self.workers
    }

    fn send(&self, to: usize, batch: Batch) -> Result<()> {
        self.inboxes[to]
            .lock()
            .map_err(|_| OpsError::InvalidArgument("a worker failed while sending rows".into()))?
            .push(batch);
        Ok(())
    }

    fn take_inbox(&self, of: usize) -> Result<Vec<Batch>> {
        Ok(std::mem::take(&mut *self.inboxes[of].lock().map_err(
            |_| OpsError::InvalidArgument("a worker failed while sending rows".into()),
        )?))
    }
}

/// The values of one buffered column, a buffer's slots per partition.
#[derive(Debug)]
enum Flat {
    I64(Vec<i64>),
    I128(Vec<i128>),
    F64(Vec<f64>),
    None,
}

impl Flat {
    fn like(values: &Values<'_>, slots: usize) -> Self {
        match values {
            Values::I64(_) => Flat::I64(vec![0; slots]),
            Values::I128(_) => Flat::I128(vec![0; slots]),
            Values::F64(_) => Flat::F64(vec![0.0; slots]),
            Values::None => Flat::None,
        }
    }

    fn values(&self, range: std::ops::Range<usize>) -> Values<'_> {
        match self {
            Flat::I64(v) => Values::I64(&v[range]),
            Flat::I128(v) => Values::I128(&v[range]),
            Flat::F64(v) => Values::F64(&v[range]),
            Flat::None => Values::None,
        }
    }

    /// Holds 128-bit values from now on (a column whose segments differ in
    /// width, as unsigned 64-bit values beyond `i64::MAX` make them).
    fn widen(&mut self) {
        if let Flat::I64(v) = self {
            *self = Flat::I128(v.iter().map(|&x| i128::from(x)).collect());
        }
    }
}

/// One buffered column: values, and a validity bitmap over every slot
/// once some row was null (before that, every row is valid).
#[derive(Debug)]
struct FlatColumn {
    values: Flat,
    valid: Option<Vec<u8>>,
}

/// Rows on their way to a partition's owner.
#[derive(Debug)]
struct Batch {
    partition: usize,
    rows: Pending,
}

/// One worker's buffers and the partitions it owns.
pub struct RadixWorker {
    index: usize,
    buffer_rows: usize,
    fill: Vec<usize>,
    codes: Vec<u64>,
    keyless: Vec<Vec<u32>>,
    columns: Vec<FlatColumn>,
    /// The partitions this worker owns (`None` for the others').
    parts: Vec<Option<OwnedPartition>>,
    /// Each row's slot, for the chunk being scattered.
    slots: Vec<usize>,
    /// The partitions whose buffers filled up in the chunk.
    due: Vec<usize>,
}

impl RadixWorker {
    /// Worker `index`'s empty buffers and partitions.
    pub fn new(shared: &RadixShared, index: usize, specs: &[AggSpec]) -> Self {
        let partitions = shared.partitions();
        RadixWorker {
            index,
            buffer_rows: shared.buffer_rows,
            fill: vec![0; partitions],
            codes: vec![0; partitions * shared.buffer_rows],
            keyless: vec![Vec::new(); partitions],
            columns: Vec::new(),
            parts: (0..partitions)
                .map(|p| (shared.owner(p) == index).then(|| OwnedPartition::new(specs)))
                .collect(),
            slots: Vec::with_capacity(CHUNK_ROWS),
            due: Vec::new(),
        }
    }

    /// Adds the rows of `segment` to the buffers, hands on the buffers
    /// that are due, and adds what other workers sent.
    pub fn add(
        &mut self,
        shared: &RadixShared,
        segment: &Segment<'_>,
        specs: &[AggSpec],
    ) -> Result<()> {
        if self.columns.len() != segment.columns.len() {
            let slots = self.codes.len();
            self.columns = segment
                .columns
                .iter()
                .map(|c| FlatColumn {
                    values: Flat::like(&c.values, slots),
                    valid: None,
                })
                .collect();
        }
        let mut keyless = segment.keyless;
        for start in (0..segment.codes.len()).step_by(CHUNK_ROWS) {
            let end = (start + CHUNK_ROWS).min(segment.codes.len());
            let split = keyless.partition_point(|&r| (r as usize) < end);
            self.scatter_codes(shared, &segment.codes[start..end], &keyless[..split], start);
            keyless = &keyless[split..];
            for (c, column) in segment.columns.iter().enumerate() {
                self.scatter_column(c, column, start);
            }
            self.hand_on_due(shared, specs)?;
        }
        self.empty_inbox(shared, specs)
    }

    /// Puts each row's code into its partition's buffer and notes its slot.
    fn scatter_codes(
        &mut self,
        shared: &RadixShared,
        codes: &[u64],
        keyless: &[u32],
        first: usize,
    ) {
        self.slots.clear();
        let bits = shared.bits;
        let due = shared.buffer_rows - CHUNK_ROWS;
        let mut keyless = keyless.iter().map(|&r| r as usize - first).peekable();
        for (row, &code) in codes.iter().enumerate() {
            let key = if keyless.peek() == Some(&row) {
                keyless.next();
                None
            } else {
                Some(code)
            };
            let p = partition_of(key, bits);
            let slot = p * shared.buffer_rows + self.fill[p];
            if key.is_none() {
                self.keyless[p].push(self.fill[p] as u32);
            }
            self.fill[p] += 1;
            if self.fill[p] == due {
                self.due.push(p);
            }
            self.codes[slot] = code;
            self.slots.push(slot);
        }
    }

    /// Puts rows `first..` of `column` (as many as the chunk has) into
    /// the slots noted for them.
    fn scatter_column(&mut self, c: usize, column: &ValueColumn<'_>, first: usize) {
        let out = &mut self.columns[c];
        let slots = &self.slots;
        let rows = slots.len();
        if matches!(column.values, Values::I128(_)) {
            out.values.widen();
        }
        match (&mut out.values, column.values) {
            (Flat::I64(dst), Values::I64(src)) => {
                for (&s, &v) in slots.iter().zip(&src[first..first + rows]) {
                    dst[s] = v;
                }
            }
            (Flat::I128(dst), Values::I64(src)) => {
                for (&s, &v) in slots.iter().zip(&src[first..first + rows]) {
                    dst[s] = i128::from(v);
                }
            }
            (Flat::I128(dst), Values::I128(src)) => {
                for (&s, &v) in slots.iter().zip(&src[first..first + rows]) {
                    dst[s] = v;
                }
            }
            (Flat::F64(dst), Values::F64(src)) => {
                for (&s, &v) in slots.iter().zip(&src[first..first + rows]) {
                    dst[s] = v;
                }
            }
            _ => {}
        }
        if column.valid.is_some() && out.valid.is_none() {
            out.valid = Some(vec![0xFF; self.codes.len().div_ceil(8)]);
        }
        // Slots are reused, so once there is a bitmap every row sets its bit.
        if let Some(bits) = &mut out.valid {
            for (i, &s) in slots.iter().enumerate() {
                let valid = column.valid.as_ref().is_none_or(|v| v.get(first + i));
                if valid {
                    bits[s >> 3] |= 1 << (s & 7);
                } else {
                    bits[s >> 3] &= !(1 << (s & 7));
                }
            }
        }
    }

    /// Hands on every buffer that might not take another chunk.
    fn hand_on_due(&mut self, shared: &RadixShared, specs: &[AggSpec]) -> Result<()> {
        let mut due = std::mem::take(&mut self.due);
        for &p in &due {
            self.hand_on(shared, p, specs)?;
        }
        due.clear();
        self.due = due;
        Ok(())
    }

    /// Partition `p`'s buffered rows, as a segment.
    fn buffered(&self, p: usize) -> Segment<'_> {
        let range = p * self.buffer_rows..p * self.buffer_rows + self.fill[p];
        Segment {
            codes: &self.codes[range.clone()],
            keyless: &self.keyless[p],
            columns: self
                .columns
                .iter()
                .map(|c| ValueColumn {
                    values: c.values.values(range.clone()),
                    valid: c
                        .valid
                        .as_deref()
                        .map(|b| Validity::new(&b[p * self.buffer_rows / 8..], 0)),
                })
                .collect(),
        }
    }

    /// Gives partition `p`'s buffer to the partition (owned here) or
    /// sends a copy to its owner; the buffer is then empty.
    fn hand_on(&mut self, shared: &RadixShared, p: usize, specs: &[AggSpec]) -> Result<()> {
        if self.fill[p] == 0 {
            return Ok(());
        }
        let owner = shared.owner(p);
        if owner != self.index {
            let batch = self.copy_out(p);
            shared.send(owner, batch)?;
        } else {
            let mut part = self.parts[p]
                .take()
                .unwrap_or_else(|| OwnedPartition::new(specs));
            let taken = part.take(&self.buffered(p), specs, shared.park_groups);
            self.parts[p] = Some(part);
            taken?;
        }
        self.fill[p] = 0;
        self.keyless[p].clear();
        Ok(())
    }

    /// An owned copy of partition `p`'s buffered rows.
    fn copy_out(&self, p: usize) -> Batch {
        let mut rows = Pending::default();
        rows.push(&self.buffered(p));
        Batch { partition: p, rows }
    }

    /// Adds (or parks) the batches other workers sent to this worker's
    /// partitions.
    fn empty_inbox(&mut self, shared: &RadixShared, specs: &[AggSpec]) -> Result<()> {
        for batch in shared.take_inbox(self.index)? {
            let p = batch.partition;
            self.parts[p]
                .get_or_insert_with(|| OwnedPartition::new(specs))
                .take(&batch.rows.segment(), specs, shared.park_groups)?;
        }
        Ok(())
    }

    /// Hands on every buffer: the end of the first phase.
    pub fn hand_off(&mut self, shared: &RadixShared, specs: &[AggSpec]) -> Result<()> {
        for p in 0..self.fill.len() {
            self.hand_on(shared, p, specs)?;
        }
        self.empty_inbox(shared, specs)
    }

    /// After every worker's hand-off: adds what is left in the inbox and
    /// the groups of `earlier` (partials of the same codes, made before
    /// the groups were split) that fall to this worker's partitions, and
    /// returns the groups of its partitions, one `Groups` per partition in
    /// partition order.
    pub fn finish(
        mut self,
        shared: &RadixShared,
        earlier: &[&Partial],
        specs: &[AggSpec],
    ) -> Result<Vec<Groups>> {
        self.empty_inbox(shared, specs)?;
        for part in self.parts.iter_mut().flatten() {
            part.add_parked(specs)?;
        }
        for partial in earlier {
            for g in 0..partial.groups() {
                let code = partial.code(g);
                let p = partition_of(code, shared.bits);
                if partial.rows(g) == 0 || shared.owner(p) != self.index {
                    continue;
                }
                self.parts[p]
                    .get_or_insert_with(|| OwnedPartition::new(specs))
                    .merge_group(partial, g, specs)?;
            }
        }
        Ok(self
            .parts
            .into_iter()
            .flatten()
            .map(OwnedPartition::into_groups)
            .collect())
    }
}

/// Every worker's partitions (`per_worker[w]`, from [`RadixWorker::finish`])
/// in partition order: partition `i` is worker `i % workers`' own.
pub fn in_partition_order(per_worker: Vec<Vec<Groups>>) -> Vec<Groups> {
    let workers = per_worker.len();
    let mut iters: Vec<_> = per_worker.into_iter().map(Vec::into_iter).collect();
    let mut out = Vec::new();
    'rounds: loop {
        for (w, it) in iters.iter_mut().enumerate() {
            match it.next() {
                Some(g) => out.push(g),
                None if w == 0 => break 'rounds,
                None => {}
            }
        }
        if workers == 0 {
            break;
        }
    }
    out
}

/// Aggregates `segments` (`segments[w]` on worker w) in `1 << bits`
/// partitions: the groups of each partition, in partition order.
pub fn aggregate_radix(
    pool: &Pool,
    segments: &[Vec<Segment<'_>>],
    specs: &[AggSpec],
    bits: u32,
) -> Result<Vec<Groups>> {
    if segments.len() != pool.workers() {
        return Err(OpsError::WorkerMismatch {
            expected: segments.len(),
            actual: pool.workers(),
        });
    }
    let shared = RadixShared::new(bits, pool.workers());
    let workers = pool.broadcast(|ctx| -> Result<RadixWorker> {
        let mut worker = RadixWorker::new(&shared, ctx.index, specs);
        for segment in &segments[ctx.index] {
            worker.add(&shared, segment, specs)?;
        }
        worker.hand_off(&shared, specs)?;
        Ok(worker)
    })?;
    let workers: Vec<Mutex<Option<RadixWorker>>> = workers
        .into_iter()
        .map(|w| w.map(|w| Mutex::new(Some(w))))
        .collect::<Result<_>>()?;
    let outputs = pool.broadcast(|ctx| -> Result<Vec<Groups>> {
        let worker = workers[ctx.index]
            .lock()
            .ok()
            .and_then(|mut w| w.take())
            .ok_or_else(|| OpsError::InvalidArgument("a worker's partitions are gone".into()))?;
        worker.finish(&shared, &[], specs)
    })?;
    Ok(in_partition_order(
        outputs.into_iter().collect::<Result<_>>()?,
    ))
}

#[cfg(test)]
mod tests;
