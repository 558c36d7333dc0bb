//! An exact dictionary of byte keys (strings, binaries, composite keys in
//! their byte form), built in parallel: every distinct key gets a dense
//! code, equal keys the same code, different keys different codes.
//!
//! The build has three steps, each on all workers:
//! 1. *scatter*: every worker hashes the keys of its own parts and appends
//!    (hash, row) to one of `P` hash partitions (P a power of two, several
//!    per worker), remembering each row's partition;
//! 2. *insert*: workers take partitions one at a time and insert their rows
//!    into that partition's open-addressing table, in producer order. A
//!    slot holds the upper half of the key's hash and the index of the
//!    entry; when the halves match, the *real keys* are compared, so a hash
//!    collision only costs a comparison and never merges two keys. Each
//!    row's entry index is recorded next to it;
//! 3. *codes*: partition p's entries get the codes `offset[p]..`, and each
//!    worker walks its parts' rows in order, reading each row's code from
//!    its partition's list with one cursor per partition (the rows of one
//!    worker appear in a partition in row order), so no random writes.
//!
//! The same partitions serve lookups: [`Dictionary::lookup`] codes the keys
//! of another table (the probe side of a join) without inserting; keys the
//! dictionary lacks get no code. [`Dictionary::ranks`] gives every code its
//! rank in byte order (order-preserving codes for sorts and MIN/MAX).
//!
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
use crate::table::{part_of, row_of, row_ref, RowRef};

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
}

/// The key of a row reference.
#[inline]
fn key_of(keys: &dyn ByteKeys, r: RowRef) -> Option<&[u8]> {
    keys.key(part_of(r), row_of(r))
}

/// A dictionary entry: a key's full hash and a row that holds it.
#[derive(Clone, Copy, Debug)]
struct Entry {
    hash: u64,
    representative: RowRef,
}

/// One hash partition's table.
#[derive(Debug, Default)]
struct PartitionTable {
    /// 0 when empty; else the hash's upper half and (entry index + 1).
    slots: Vec<u64>,
    entries: Vec<Entry>,
}

const TAG_MASK: u64 = 0xFFFF_FFFF_0000_0000;

impl PartitionTable {
    fn with_capacity(keys: usize) -> Self {
        let slots = (keys.max(8) * 2).next_power_of_two();
        PartitionTable {
            slots: vec![0; slots],
            entries: Vec::new(),
        }
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

    /// The entry of the key `key` (with `hash`), if present; `same(rep)`
    /// tells whether the row `rep` holds the same key.
    #[inline]
    fn find(&self, hash: u64, same: impl Fn(RowRef) -> bool) -> Result<u32, usize> {
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
                if e.hash == hash && same(e.representative) {
                    return Ok(index as u32);
                }
            }
            at = (at + 1) & mask;
        }
    }

    /// The entry of the key at row `r`, inserted if new.
    #[inline]
    fn insert(&mut self, hash: u64, r: RowRef, keys: &dyn ByteKeys) -> u32 {
        let key = key_of(keys, r);
        match self.find(hash, |rep| key_of(keys, rep) == key) {
            Ok(index) => index,
            Err(at) => {
                let index = self.entries.len();
                self.entries.push(Entry {
                    hash,
                    representative: r,
                });
                self.slots[at] = (hash & TAG_MASK) | (index as u64 + 1);
                if self.entries.len() * 2 > self.slots.len() {
                    self.grow();
                }
                index as u32
            }
        }
    }
}

/// Where a worker's rows went in step 1.
struct Scattered {
    /// Per partition, the worker's (hash, row) pairs in row order.
    buckets: Vec<Vec<(u64, RowRef)>>,
    /// Per part of the worker (in part order), each row's partition, or
    /// `NO_KEY` for rows without a key.
    partition_of_row: Vec<(usize, Vec<u16>)>,
}

const NO_KEY: u16 = u16::MAX;
/// An entry index meaning "not in the dictionary" (lookups).
const ABSENT: u32 = u32::MAX;

/// A built dictionary.
pub(crate) struct Dictionary<'k> {
    keys: &'k dyn ByteKeys,
    seed: u64,
    bits: u32,
    tables: Vec<PartitionTable>,
    /// The first code of each partition.
    offsets: Vec<u64>,
}

impl std::fmt::Debug for Dictionary<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dictionary")
            .field("len", &self.len())
            .finish()
    }
}

fn partition_bits(workers: usize) -> u32 {
    ((workers * 8).next_power_of_two().trailing_zeros()).min(12)
}

#[inline]
fn hash_of(seed: u64, key: &[u8]) -> u64 {
    foldhash::fast::FixedState::with_seed(seed).hash_one(key)
}

#[inline]
fn partition_of(hash: u64, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        (hash >> (64 - bits)) as usize
    }
}

/// Step 1 for the parts of every worker.
fn scatter(pool: &Pool, keys: &dyn ByteKeys, seed: u64, bits: u32) -> Result<Vec<Scattered>> {
    let partitions = 1usize << bits;
    Ok(pool.broadcast(|ctx| {
        let mut buckets: Vec<Vec<(u64, RowRef)>> = vec![Vec::new(); partitions];
        let mut partition_of_row = Vec::new();
        for part in (0..keys.parts()).filter(|&p| keys.worker(p) == ctx.index) {
            let rows = keys.rows(part);
            let mut of_row = Vec::with_capacity(rows);
            for row in 0..rows {
                match keys.key(part, row) {
                    Some(key) => {
                        let hash = hash_of(seed, key);
                        let p = partition_of(hash, bits);
                        buckets[p].push((hash, row_ref(part, row)));
                        of_row.push(p as u16);
                    }
                    None => of_row.push(NO_KEY),
                }
            }
            partition_of_row.push((part, of_row));
        }
        Scattered {
            buckets,
            partition_of_row,
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

/// Step 3: each worker turns its rows' partitions and the per-(partition,
/// producer) entry indices into codes, in row order.
fn codes_in_row_order(
    pool: &Pool,
    keys: &dyn ByteKeys,
    scattered: &[Scattered],
    indices: &[Vec<Vec<u32>>],
    offsets: &[u64],
) -> Result<Vec<PartCodes>> {
    let per_worker = pool.broadcast(|ctx| {
        let mine = &scattered[ctx.index];
        let mut cursor = vec![0usize; indices.len()];
        let mut out = Vec::with_capacity(mine.partition_of_row.len());
        for (part, of_row) in &mine.partition_of_row {
            let mut codes = Vec::with_capacity(of_row.len());
            let mut invalid = Vec::new();
            for (row, &p) in of_row.iter().enumerate() {
                if p == NO_KEY {
                    codes.push(0);
                    invalid.push(row as u32);
                    continue;
                }
                let p = p as usize;
                let index = indices[p][ctx.index][cursor[p]];
                cursor[p] += 1;
                if index == ABSENT {
                    codes.push(0);
                    invalid.push(row as u32);
                } else {
                    codes.push(offsets[p] + u64::from(index));
                }
            }
            out.push((*part, PartCodes { codes, invalid }));
        }
        out
    })?;
    let mut parts: Vec<Option<PartCodes>> = (0..keys.parts()).map(|_| None).collect();
    for (part, codes) in per_worker.into_iter().flatten() {
        parts[part] = Some(codes);
    }
    parts
        .into_iter()
        .map(|p| p.ok_or_else(|| FrameError::InvalidRequest("a part was not coded".into())))
        .collect()
}

impl<'k> Dictionary<'k> {
    /// Builds the dictionary of `keys` and codes every row.
    pub(crate) fn build(pool: &Pool, keys: &'k dyn ByteKeys) -> Result<(Self, Vec<PartCodes>)> {
        let seed = 0x51_7c_c1_b7_27_22_0a_95;
        let bits = partition_bits(pool.workers());
        let partitions = 1usize << bits;
        let scattered = scatter(pool, keys, seed, bits)?;
        let built = per_partition(pool, partitions, |p| {
            let rows: usize = scattered.iter().map(|s| s.buckets[p].len()).sum();
            let mut table = PartitionTable::with_capacity(rows / 4);
            let indices: Vec<Vec<u32>> = scattered
                .iter()
                .map(|s| {
                    s.buckets[p]
                        .iter()
                        .map(|&(hash, r)| table.insert(hash, r, keys))
                        .collect()
                })
                .collect();
            (table, indices)
        })?;
        let (tables, indices): (Vec<_>, Vec<_>) = built.into_iter().unzip();
        let mut offsets = Vec::with_capacity(partitions);
        let mut next = 0u64;
        for t in &tables {
            offsets.push(next);
            next += t.entries.len() as u64;
        }
        let codes = codes_in_row_order(pool, keys, &scattered, &indices, &offsets)?;
        let dictionary = Dictionary {
            keys,
            seed,
            bits,
            tables,
            offsets,
        };
        Ok((dictionary, codes))
    }

    /// Codes the keys of `probe` with this dictionary, inserting nothing:
    /// rows whose key is absent are invalid.
    pub(crate) fn lookup(&self, pool: &Pool, probe: &dyn ByteKeys) -> Result<Vec<PartCodes>> {
        let scattered = scatter(pool, probe, self.seed, self.bits)?;
        let indices = per_partition(pool, self.tables.len(), |p| {
            let table = &self.tables[p];
            scattered
                .iter()
                .map(|s| {
                    s.buckets[p]
                        .iter()
                        .map(|&(hash, r)| {
                            let key = key_of(probe, r);
                            table
                                .find(hash, |rep| key_of(self.keys, rep) == key)
                                .unwrap_or(ABSENT)
                        })
                        .collect()
                })
                .collect::<Vec<Vec<u32>>>()
        })?;
        codes_in_row_order(pool, probe, &scattered, &indices, &self.offsets)
    }

    /// Number of distinct keys (codes are `0..len`).
    pub(crate) fn len(&self) -> u64 {
        self.tables.iter().map(|t| t.entries.len() as u64).sum()
    }

    /// A row holding the key of `code`.
    pub(crate) fn representative(&self, code: u64) -> RowRef {
        let p = self.offsets.partition_point(|&o| o <= code) - 1;
        self.tables[p].entries[(code - self.offsets[p]) as usize].representative
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
            run.sort_unstable_by(|&a, &b| self.key(a).cmp(&self.key(b)));
            run
        })?;
        let mut heap: BinaryHeap<Reverse<(Option<&[u8]>, usize, usize)>> = runs
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

    fn key(&self, code: u64) -> Option<&[u8]> {
        key_of(self.keys, self.representative(code))
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
        let keys = lists(&[&[Some("x"), Some("y"), Some("x"), Some("z")]], 1);
        let mut table = PartitionTable::with_capacity(1);
        let same_hash = 42;
        let ids: Vec<u32> = (0..4)
            .map(|row| table.insert(same_hash, row_ref(0, row), &keys))
            .collect();
        assert_eq!(ids, vec![0, 1, 0, 2]);
    }
}
