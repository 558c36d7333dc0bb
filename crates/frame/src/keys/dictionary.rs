//! An exact dictionary of byte keys (strings, binaries, composite keys in
//! their byte form), built in parallel: every distinct key gets a dense
//! code, equal keys the same code, different keys different codes.
//!
//! The build reads every row once, in order, on the worker that owns it:
//! 1. *local*: each worker codes the keys of its own parts with a
//!    dictionary of its own (a hash table whose distinct keys are copied
//!    into an arena of the table's, so a match is confirmed against memory
//!    the table owns), and sorts its distinct keys into hash partitions;
//! 2. *merge*: workers take partitions one at a time and insert every
//!    worker's distinct keys of that partition into the partition's global
//!    table, which numbers them; partition p's keys get the codes
//!    `offset[p]..`. Only distinct keys move, so few distinct keys cost
//!    almost nothing beyond step 1;
//! 3. *codes*: each worker turns its rows' local numbers into global codes
//!    through a small map.
//!
//! In every table a slot holds the upper half of the key's 64-bit hash and
//! the index of the entry; when the halves match, the full hashes and then
//! the *real keys* are compared, so a hash collision only costs a
//! comparison and never merges two keys.
//!
//! [`Dictionary::lookup`] codes the keys of another table (the probe side
//! of a join) the same way but inserts nothing globally: keys the
//! dictionary lacks get no code. [`Dictionary::ranks`] gives every code its
//! rank in byte order (order-preserving codes for sorts and MIN/MAX).
//! Rows whose key is `None` (nulls, out-of-range values) get no code and
//! are listed as invalid. This module does not know Arrow types: a
//! [`ByteKeys`] says what a row's key is.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use numakit_pool::Pool;

use crate::error::{FrameError, Result};
use crate::keys::PartCodes;
use crate::table::{row_ref, RowRef};

/// The byte key of every row of some parts.
pub(crate) trait ByteKeys: Sync {
    /// Number of parts.
    fn parts(&self) -> usize;
    /// The worker that owns part `part`.
    fn worker(&self, part: usize) -> usize;
    /// Rows of part `part`.
    fn rows(&self, part: usize) -> usize;
    /// The key of a row, or `None` when it has none.
    fn key(&self, part: usize, row: usize) -> Option<&[u8]>;

    /// For a part whose rows index a few distinct values (a dictionary
    /// array): every row's number, numbering each value once with
    /// `number(key, row holding it)`; rows without a key get `u32::MAX`.
    /// `None` for other parts.
    fn number_by_values(
        &self,
        _part: usize,
        _number: &mut dyn FnMut(&[u8], RowRef) -> u32,
    ) -> Option<Vec<u32>> {
        None
    }
}

/// A dictionary entry: a key's full hash, where its bytes are in the
/// table's arena, and a row that holds it.
#[derive(Clone, Copy, Debug)]
struct Entry {
    hash: u64,
    start: usize,
    len: usize,
    representative: RowRef,
}

/// One hash table of distinct keys, with the keys' bytes in an arena.
#[derive(Debug, Default)]
pub(crate) struct KeyTable {
    /// 0 when empty; else the hash's upper half and (entry index + 1).
    slots: Vec<u64>,
    entries: Vec<Entry>,
    arena: Vec<u8>,
}

const TAG_MASK: u64 = 0xFFFF_FFFF_0000_0000;

impl KeyTable {
    pub(crate) fn with_capacity(keys: usize) -> Self {
        let slots = (keys.max(8) * 2).next_power_of_two();
        KeyTable {
            slots: vec![0; slots],
            entries: Vec::new(),
            arena: Vec::new(),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    pub(crate) fn key(&self, index: usize) -> &[u8] {
        let e = &self.entries[index];
        &self.arena[e.start..e.start + e.len]
    }

    fn grow(&mut self) {
        let mut slots = vec![0u64; self.slots.len() * 2];
        let mask = slots.len() - 1;
        for (index, e) in self.entries.iter().enumerate() {
            let mut at = (e.hash as usize) & mask;
            while slots[at] != 0 {
                at = (at + 1) & mask;
            }
            slots[at] = (e.hash & TAG_MASK) | (index as u64 + 1);
        }
        self.slots = slots;
    }

    /// The entry of `key` (with `hash`) if present, else the free slot
    /// where it would go.
    #[inline]
    fn find(&self, hash: u64, key: &[u8]) -> Result<u32, usize> {
        let mask = self.slots.len() - 1;
        let mut at = (hash as usize) & mask;
        loop {
            let slot = self.slots[at];
            if slot == 0 {
                return Err(at);
            }
            if slot & TAG_MASK == hash & TAG_MASK {
                let index = (slot & !TAG_MASK) as usize - 1;
                let e = self.entries[index];
                if e.hash == hash && &self.arena[e.start..e.start + e.len] == key {
                    return Ok(index as u32);
                }
            }
            at = (at + 1) & mask;
        }
    }

    /// The entry of `key`, inserted (with `representative`) if new.
    #[inline]
    pub(crate) fn insert(&mut self, hash: u64, key: &[u8], representative: RowRef) -> u32 {
        match self.find(hash, key) {
            Ok(index) => index,
            Err(at) => {
                let index = self.entries.len();
                self.entries.push(Entry {
                    hash,
                    start: self.arena.len(),
                    len: key.len(),
                    representative,
                });
                self.arena.extend_from_slice(key);
                self.slots[at] = (hash & TAG_MASK) | (index as u64 + 1);
                if self.entries.len() * 2 > self.slots.len() {
                    self.grow();
                }
                index as u32
            }
        }
    }
}

/// A row without a key, or a local key not in the dictionary.
const NONE: u32 = u32::MAX;

/// One worker's own dictionary of the keys of its parts.
struct Local {
    table: KeyTable,
    /// Per part of the worker: each row's local number, or [`NONE`].
    rows: Vec<(usize, Vec<u32>)>,
    /// The local numbers of each hash partition.
    by_partition: Vec<Vec<u32>>,
}

/// A built dictionary.
pub(crate) struct Dictionary {
    seed: u64,
    bits: u32,
    tables: Vec<KeyTable>,
    /// The first code of each partition.
    offsets: Vec<u64>,
}

impl std::fmt::Debug for Dictionary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dictionary")
            .field("len", &self.len())
            .finish()
    }
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

fn partition_bits(workers: usize) -> u32 {
    ((workers * 8).next_power_of_two().trailing_zeros()).min(12)
}

/// The dictionaries' hash of a key.
#[inline]
pub(crate) fn key_hash(key: &[u8]) -> u64 {
    hash_of(SEED, key)
}

#[inline]
fn hash_of(seed: u64, key: &[u8]) -> u64 {
    foldhash::quality::FixedState::with_seed(seed).hash_one(key)
}

#[inline]
fn partition_of(hash: u64, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        (hash >> (64 - bits)) as usize
    }
}

/// Step 1 on every worker.
fn local_dictionaries(pool: &Pool, keys: &dyn ByteKeys, bits: u32) -> Result<Vec<Local>> {
    let workers = pool.workers().max(1);
    Ok(pool.broadcast(|ctx| {
        let mut table = KeyTable::with_capacity(1024);
        let mut rows = Vec::new();
        for part in (0..keys.parts()).filter(|&p| keys.worker(p) % workers == ctx.index) {
            let by_values = keys.number_by_values(part, &mut |key, rep| {
                table.insert(hash_of(SEED, key), key, rep)
            });
            if let Some(numbers) = by_values {
                rows.push((part, numbers));
                continue;
            }
            let numbers = (0..keys.rows(part))
                .map(|row| match keys.key(part, row) {
                    Some(key) => table.insert(hash_of(SEED, key), key, row_ref(part, row)),
                    None => NONE,
                })
                .collect();
            rows.push((part, numbers));
        }
        let mut by_partition = vec![Vec::new(); 1 << bits];
        for (i, e) in table.entries.iter().enumerate() {
            by_partition[partition_of(e.hash, bits)].push(i as u32);
        }
        Local {
            table,
            rows,
            by_partition,
        }
    })?)
}

/// Runs `f` on every partition, workers taking them one at a time; the
/// results in partition order.
fn per_partition<R, F>(pool: &Pool, partitions: usize, f: F) -> Result<Vec<R>>
where
    R: Send,
    F: Fn(usize) -> R + Sync,
{
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<R>>> = (0..partitions).map(|_| Mutex::new(None)).collect();
    pool.broadcast(|_| loop {
        let p = next.fetch_add(1, Ordering::Relaxed);
        if p >= partitions {
            return;
        }
        let r = f(p);
        if let Ok(mut slot) = slots[p].lock() {
            *slot = Some(r);
        }
    })?;
    slots
        .into_iter()
        .map(|s| {
            s.into_inner()
                .ok()
                .flatten()
                .ok_or_else(|| FrameError::InvalidRequest("a dictionary partition was lost".into()))
        })
        .collect()
}

/// Step 3: every worker's rows as codes. `numbers[p][w]` gives the
/// partition-p number (or [`NONE`]) of each of worker w's local keys in
/// partition p, in `by_partition` order.
fn codes_of_rows(
    pool: &Pool,
    parts: usize,
    locals: &[Local],
    numbers: &[Vec<Vec<u32>>],
    offsets: &[u64],
) -> Result<Vec<PartCodes>> {
    let per_worker = pool.broadcast(|ctx| {
        let local = &locals[ctx.index];
        let mut map = vec![u64::MAX; local.table.len()];
        for (p, members) in local.by_partition.iter().enumerate() {
            for (&i, &n) in members.iter().zip(&numbers[p][ctx.index]) {
                if n != NONE {
                    map[i as usize] = offsets[p] + u64::from(n);
                }
            }
        }
        local
            .rows
            .iter()
            .map(|(part, rows)| {
                let mut codes = Vec::with_capacity(rows.len());
                let mut invalid = Vec::new();
                for (row, &n) in rows.iter().enumerate() {
                    let code = if n == NONE { u64::MAX } else { map[n as usize] };
                    if code == u64::MAX {
                        codes.push(0);
                        invalid.push(row as u32);
                    } else {
                        codes.push(code);
                    }
                }
                (*part, PartCodes::new(codes, invalid))
            })
            .collect::<Vec<_>>()
    })?;
    let mut out: Vec<Option<PartCodes>> = (0..parts).map(|_| None).collect();
    for (part, codes) in per_worker.into_iter().flatten() {
        out[part] = Some(codes);
    }
    out.into_iter()
        .map(|p| p.ok_or_else(|| FrameError::InvalidRequest("a part was not coded".into())))
        .collect()
}

impl Dictionary {
    /// Builds the dictionary of `keys` and codes every row.
    pub(crate) fn build(pool: &Pool, keys: &dyn ByteKeys) -> Result<(Self, Vec<PartCodes>)> {
        let bits = partition_bits(pool.workers());
        let locals = local_dictionaries(pool, keys, bits)?;
        let built = per_partition(pool, 1 << bits, |p| {
            let expected = locals
                .iter()
                .map(|l| l.by_partition[p].len())
                .max()
                .unwrap_or(0);
            let mut table = KeyTable::with_capacity(expected);
            let numbers: Vec<Vec<u32>> = locals
                .iter()
                .map(|l| {
                    l.by_partition[p]
                        .iter()
                        .map(|&i| {
                            let e = l.table.entries[i as usize];
                            table.insert(e.hash, l.table.key(i as usize), e.representative)
                        })
                        .collect()
                })
                .collect();
            (table, numbers)
        })?;
        let (tables, numbers): (Vec<_>, Vec<_>) = built.into_iter().unzip();
        let mut offsets = Vec::with_capacity(tables.len());
        let mut next = 0u64;
        for t in &tables {
            offsets.push(next);
            next += t.len() as u64;
        }
        let codes = codes_of_rows(pool, keys.parts(), &locals, &numbers, &offsets)?;
        let dictionary = Dictionary {
            seed: SEED,
            bits,
            tables,
            offsets,
        };
        Ok((dictionary, codes))
    }

    /// Codes the keys of `probe` with this dictionary, inserting nothing:
    /// rows whose key is absent are invalid.
    pub(crate) fn lookup(&self, pool: &Pool, probe: &dyn ByteKeys) -> Result<Vec<PartCodes>> {
        let locals = local_dictionaries(pool, probe, self.bits)?;
        let numbers = per_partition(pool, self.tables.len(), |p| {
            let table = &self.tables[p];
            locals
                .iter()
                .map(|l| {
                    l.by_partition[p]
                        .iter()
                        .map(|&i| {
                            let e = l.table.entries[i as usize];
                            debug_assert_eq!(hash_of(self.seed, l.table.key(i as usize)), e.hash);
                            table.find(e.hash, l.table.key(i as usize)).unwrap_or(NONE)
                        })
                        .collect()
                })
                .collect::<Vec<Vec<u32>>>()
        })?;
        codes_of_rows(pool, probe.parts(), &locals, &numbers, &self.offsets)
    }

    /// Number of distinct keys (codes are `0..len`).
    pub(crate) fn len(&self) -> u64 {
        self.tables.iter().map(|t| t.len() as u64).sum()
    }

    fn locate(&self, code: u64) -> (usize, usize) {
        let p = self.offsets.partition_point(|&o| o <= code) - 1;
        (p, (code - self.offsets[p]) as usize)
    }

    /// A row holding the key of `code`.
    pub(crate) fn representative(&self, code: u64) -> RowRef {
        let (p, i) = self.locate(code);
        self.tables[p].entries[i].representative
    }

    fn key(&self, code: u64) -> &[u8] {
        let (p, i) = self.locate(code);
        self.tables[p].key(i)
    }

    /// Every code's rank in the byte order of the keys (`ranks[code]`);
    /// sorted on the pool, one share per worker, then merged.
    pub(crate) fn ranks(&self, pool: &Pool) -> Result<Vec<u64>> {
        let n = self.len() as usize;
        let share = n.div_ceil(pool.workers().max(1)).max(1);
        let runs = pool.broadcast(|ctx| {
            let start = (ctx.index * share).min(n);
            let end = (start + share).min(n);
            let mut run: Vec<u64> = (start as u64..end as u64).collect();
            run.sort_unstable_by(|&a, &b| self.key(a).cmp(self.key(b)));
            run
        })?;
        let mut heap: BinaryHeap<Reverse<(&[u8], usize, usize)>> = runs
            .iter()
            .enumerate()
            .filter(|(_, run)| !run.is_empty())
            .map(|(i, run)| Reverse((self.key(run[0]), i, 0)))
            .collect();
        let mut ranks = vec![0u64; n];
        let mut rank = 0u64;
        while let Some(Reverse((_, run, at))) = heap.pop() {
            ranks[runs[run][at] as usize] = rank;
            rank += 1;
            if let Some(&next) = runs[run].get(at + 1) {
                heap.push(Reverse((self.key(next), run, at + 1)));
            }
        }
        Ok(ranks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::pool;

    /// Keys in memory: parts of optional byte strings, part i on worker
    /// i % workers.
    struct Lists {
        parts: Vec<Vec<Option<Vec<u8>>>>,
        workers: usize,
    }

    impl ByteKeys for Lists {
        fn parts(&self) -> usize {
            self.parts.len()
        }
        fn worker(&self, part: usize) -> usize {
            part % self.workers
        }
        fn rows(&self, part: usize) -> usize {
            self.parts[part].len()
        }
        fn key(&self, part: usize, row: usize) -> Option<&[u8]> {
            self.parts[part][row].as_deref()
        }
    }

    fn lists(parts: &[&[Option<&str>]], workers: usize) -> Lists {
        Lists {
            parts: parts
                .iter()
                .map(|p| p.iter().map(|k| k.map(|s| s.as_bytes().to_vec())).collect())
                .collect(),
            workers,
        }
    }

    #[test]
    fn equal_keys_share_a_code_and_different_keys_do_not() {
        let pool = pool(2);
        let keys = lists(
            &[
                &[Some("b"), Some("a"), None, Some("")],
                &[Some("a"), Some("c"), Some("b")],
                &[],
            ],
            2,
        );
        let (dict, codes) = Dictionary::build(&pool, &keys).unwrap();
        assert_eq!(dict.len(), 4);
        let code = |p: usize, r: usize| codes[p].codes[r];
        assert_eq!(code(0, 1), code(1, 0));
        assert_eq!(code(0, 0), code(1, 2));
        let distinct: std::collections::HashSet<u64> =
            [code(0, 0), code(0, 1), code(0, 3), code(1, 1)].into();
        assert_eq!(distinct.len(), 4);
        assert_eq!(codes[0].invalid, vec![2]);
        assert!(distinct.iter().all(|&c| c < 4));
        let ranks = dict.ranks(&pool).unwrap();
        let rank = |p, r| ranks[code(p, r) as usize];
        assert_eq!(
            [rank(0, 3), rank(0, 1), rank(0, 0), rank(1, 1)],
            [0, 1, 2, 3]
        );
        let probe = lists(&[&[Some("c"), Some("zz"), None, Some("a")]], 2);
        let found = dict.lookup(&pool, &probe).unwrap();
        assert_eq!(found[0].codes[0], code(1, 1));
        assert_eq!(found[0].codes[3], code(0, 1));
        assert_eq!(found[0].invalid, vec![1, 2]);
    }

    #[test]
    fn colliding_hashes_are_told_apart_by_the_keys() {
        // A table whose slots all collide: every key lands at the same
        // start slot and shares the tag, so only the key comparison and
        // the full hash keep them apart.
        let keys = ["x", "y", "x", "z"];
        let mut table = KeyTable::with_capacity(1);
        let same_hash = 42;
        let ids: Vec<u32> = (0..4)
            .map(|row| table.insert(same_hash, keys[row].as_bytes(), row_ref(0, row)))
            .collect();
        assert_eq!(ids, vec![0, 1, 0, 2]);
    }
}
