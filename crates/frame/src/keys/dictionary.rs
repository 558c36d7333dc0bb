//! An exact dictionary of byte keys (strings, binaries, composite keys in
//! their byte form), built in parallel: every distinct key gets a dense
//! code, equal keys the same code, different keys different codes.
//!
//! The build reads every row once, in order, on the worker that owns it:
//! 1. *local*: each worker codes the keys of its own parts with a
//!    [`KeyTable`] of its own and sorts its distinct keys into hash
//!    partitions. While most keys repeat, this leaves little to merge.
//!    When a worker finds most of its keys new (more than half of the
//!    rows of its last [`CHECK_ROWS`] are new keys, checked from
//!    [`FIRST_CHECK_ROWS`] on), its own table stops paying (every key
//!    would be inserted twice) and it lists its further rows by hash
//!    partition instead, uncoded ("raw"), with copies of their keys so
//!    that the merge reads them in sequence;
//! 2. *merge*: workers take partitions one at a time and insert every
//!    worker's distinct keys of that partition, then its raw rows, into
//!    the partition's global table, which numbers them; partition p's
//!    keys get the codes `offset[p]..`. There are many partitions
//!    ([`PARTITION_BITS`]), so a partition's table stays in the cache
//!    even when nearly every row is a key of its own;
//! 3. *codes*: each worker turns its rows' local numbers into global codes
//!    through a small map, and writes its raw rows' codes in place.
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
use crate::keys::key_table::KeyTable;
use crate::keys::stored::StoredKeys;
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

/// A row without a key, or a local key not in the dictionary.
const NONE: u32 = u32::MAX;
/// A row listed raw, coded in step 3 from its partition's numbers.
const RAW: u32 = u32::MAX - 1;

/// A worker judges its own table every this many rows...
const CHECK_ROWS: usize = 1 << 16;
/// ...once it has coded this many.
const FIRST_CHECK_ROWS: usize = 4 * CHECK_ROWS;
/// Hash partitions of a dictionary: 2^8, so that with millions of
/// distinct keys a partition's table still fits the cache.
const PARTITION_BITS: u32 = 8;

/// One worker's own dictionary of the keys of its parts.
struct Local {
    table: KeyTable,
    /// Per part of the worker: each row's local number, [`NONE`] or [`RAW`].
    rows: Vec<(usize, Vec<u32>)>,
    /// The local numbers of each hash partition.
    by_partition: Vec<Vec<u32>>,
    /// The rows listed raw, per hash partition, in row order.
    raw: Vec<RawRows>,
}

/// Rows of one hash partition listed raw, with copies of their keys, so
/// that the merge reads them in sequence rather than all over the input.
#[derive(Clone, Default)]
struct RawRows {
    rows: Vec<RowRef>,
    hashes: Vec<u64>,
    /// Where each key ends in `bytes`.
    ends: Vec<usize>,
    bytes: Vec<u8>,
}

impl RawRows {
    #[inline]
    fn push(&mut self, row: RowRef, hash: u64, key: &[u8]) {
        self.rows.push(row);
        self.hashes.push(hash);
        self.bytes.extend_from_slice(key);
        self.ends.push(self.bytes.len());
    }

    fn len(&self) -> usize {
        self.rows.len()
    }

    /// Room for `rows` more rows of keys of about `key_bytes` bytes each.
    fn reserve(&mut self, rows: usize, key_bytes: usize) {
        self.rows.reserve(rows);
        self.hashes.reserve(rows);
        self.ends.reserve(rows);
        self.bytes.reserve(rows * key_bytes);
    }

    /// Every row with its hash and key, in order.
    fn iter(&self) -> impl Iterator<Item = (RowRef, u64, &[u8])> + '_ {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        self.rows
            .iter()
            .zip(&self.hashes)
            .zip(starts.zip(&self.ends))
            .map(|((&row, &hash), (start, &end))| (row, hash, &self.bytes[start..end]))
    }

    /// Drops the keys' copies, keeping the rows.
    fn forget_keys(&mut self) {
        self.hashes = Vec::new();
        self.ends = Vec::new();
        self.bytes = Vec::new();
    }
}

/// Whether a worker's own table still pays, judged every [`CHECK_ROWS`].
struct Judge {
    coded: usize,
    distinct_at_last_check: usize,
}

impl Judge {
    /// After one more row coded into a table now holding `distinct`
    /// keys: `false` once the table no longer pays.
    #[inline]
    fn still_pays(&mut self, distinct: usize) -> bool {
        self.coded += 1;
        if self.coded % CHECK_ROWS != 0 {
            return true;
        }
        let new = distinct - self.distinct_at_last_check;
        self.distinct_at_last_check = distinct;
        self.coded < FIRST_CHECK_ROWS || new * 2 <= CHECK_ROWS
    }
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
        let mut raw = vec![RawRows::default(); 1 << bits];
        let mut judge = Judge {
            coded: 0,
            distinct_at_last_check: 0,
        };
        let mut own_table = true;
        let mut rows = Vec::new();
        let mine = |p: &usize| keys.worker(*p) % workers == ctx.index;
        let mut rows_left: usize = (0..keys.parts()).filter(mine).map(|p| keys.rows(p)).sum();
        for part in (0..keys.parts()).filter(mine) {
            let by_values = keys.number_by_values(part, &mut |key, rep| {
                table.insert(hash_of(SEED, key), key, rep)
            });
            if let Some(numbers) = by_values {
                rows.push((part, numbers));
                continue;
            }
            let numbers = (0..keys.rows(part))
                .map(|row| {
                    let Some(key) = keys.key(part, row) else {
                        return NONE;
                    };
                    let hash = hash_of(SEED, key);
                    if own_table {
                        let number = table.insert(hash, key, row_ref(part, row));
                        own_table = judge.still_pays(table.len());
                        if !own_table {
                            // The rest is listed raw: room for it at once,
                            // rather than growing (and copying) every list.
                            let left = rows_left.saturating_sub(row + 1);
                            let per_partition = left / raw.len() + left / raw.len() / 8 + 16;
                            let key_bytes = table.key_bytes().div_ceil(table.len().max(1));
                            for r in &mut raw {
                                r.reserve(per_partition, key_bytes);
                            }
                        }
                        number
                    } else {
                        raw[partition_of(hash, bits)].push(row_ref(part, row), hash, key);
                        RAW
                    }
                })
                .collect();
            rows_left = rows_left.saturating_sub(keys.rows(part));
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
            raw,
        }
    })?)
}

/// Partition p's numbers for every worker: `local[w]` for worker w's
/// distinct keys of p (in `by_partition` order), `raw[w]` for its raw rows
/// of p; [`NONE`] where `number` gives none.
struct Numbers {
    local: Vec<Vec<u32>>,
    raw: Vec<Vec<u32>>,
}

/// Numbers every worker's keys of partition `p` with `number(hash, key,
/// representative row)`.
fn number_partition(
    locals: &[Local],
    p: usize,
    mut number: impl FnMut(u64, &[u8], RowRef) -> u32,
) -> Numbers {
    let local = locals
        .iter()
        .map(|l| {
            l.by_partition[p]
                .iter()
                .map(|&i| {
                    let e = l.table.entries[i as usize];
                    number(e.hash, l.table.key(i as usize), e.representative)
                })
                .collect()
        })
        .collect();
    let raw = locals
        .iter()
        .map(|l| {
            l.raw[p]
                .iter()
                .map(|(row, hash, key)| number(hash, key, row))
                .collect()
        })
        .collect();
    Numbers { local, raw }
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

/// Frees the raw rows' copies of their keys once they are numbered.
fn forget_raw_keys(locals: &mut [Local]) {
    for raw in locals.iter_mut().flat_map(|l| l.raw.iter_mut()) {
        raw.forget_keys();
    }
}

/// Step 3: every worker's rows as codes, from each partition's
/// [`Numbers`] and first code.
fn codes_of_rows(
    pool: &Pool,
    parts: usize,
    locals: &[Local],
    numbers: &[Numbers],
    offsets: &[u64],
) -> Result<Vec<PartCodes>> {
    let per_worker = pool.broadcast(|ctx| {
        let local = &locals[ctx.index];
        let mut map = vec![u64::MAX; local.table.len()];
        for (p, members) in local.by_partition.iter().enumerate() {
            for (&i, &n) in members.iter().zip(&numbers[p].local[ctx.index]) {
                if n != NONE {
                    map[i as usize] = offsets[p] + u64::from(n);
                }
            }
        }
        let mut coded: Vec<(usize, Vec<u64>, Vec<u32>)> = local
            .rows
            .iter()
            .map(|(part, rows)| {
                let mut codes = Vec::with_capacity(rows.len());
                let mut invalid = Vec::new();
                for (row, &n) in rows.iter().enumerate() {
                    let code = match n {
                        NONE => u64::MAX,
                        RAW => 0,
                        n => map[n as usize],
                    };
                    if code == u64::MAX {
                        codes.push(0);
                        invalid.push(row as u32);
                    } else {
                        codes.push(code);
                    }
                }
                (*part, codes, invalid)
            })
            .collect();
        code_raw_rows(local, numbers, offsets, ctx.index, &mut coded);
        coded
    })?;
    let mut out: Vec<Option<PartCodes>> = (0..parts).map(|_| None).collect();
    for (part, codes, invalid) in per_worker.into_iter().flatten() {
        out[part] = Some(PartCodes::new(codes, invalid));
    }
    out.into_iter()
        .map(|p| p.ok_or_else(|| FrameError::InvalidRequest("a part was not coded".into())))
        .collect()
}

/// Writes the codes of worker `worker`'s raw rows into `coded` (its parts'
/// codes and invalid rows); raw rows without a number become invalid.
fn code_raw_rows(
    local: &Local,
    numbers: &[Numbers],
    offsets: &[u64],
    worker: usize,
    coded: &mut [(usize, Vec<u64>, Vec<u32>)],
) {
    if local.raw.iter().all(|r| r.len() == 0) {
        return;
    }
    let parts = coded.iter().map(|(part, _, _)| part + 1).max().unwrap_or(0);
    let mut slot_of_part = vec![usize::MAX; parts];
    for (slot, (part, _, _)) in coded.iter().enumerate() {
        slot_of_part[*part] = slot;
    }
    let mut missed = false;
    for (p, raw) in local.raw.iter().enumerate() {
        for (&r, &n) in raw.rows.iter().zip(&numbers[p].raw[worker]) {
            let Some(&slot) = slot_of_part.get(part_of(r)).filter(|&&s| s != usize::MAX) else {
                continue;
            };
            let (_, codes, invalid) = &mut coded[slot];
            if n == NONE {
                invalid.push(row_of(r) as u32);
                missed = true;
            } else {
                codes[row_of(r)] = offsets[p] + u64::from(n);
            }
        }
    }
    if missed {
        for (_, _, invalid) in coded.iter_mut() {
            invalid.sort_unstable();
        }
    }
}

impl Dictionary {
    /// Builds the dictionary of `keys` and codes every row.
    pub(crate) fn build(pool: &Pool, keys: &dyn ByteKeys) -> Result<(Self, Vec<PartCodes>)> {
        let bits = PARTITION_BITS;
        let mut locals = local_dictionaries(pool, keys, bits)?;
        let built = per_partition(pool, 1 << bits, |p| {
            let expected = locals
                .iter()
                .map(|l| l.by_partition[p].len())
                .max()
                .unwrap_or(0)
                + locals.iter().map(|l| l.raw[p].len()).sum::<usize>();
            let mut table = KeyTable::with_capacity(expected);
            let numbers = number_partition(&locals, p, |hash, key, representative| {
                table.insert(hash, key, representative)
            });
            (table, numbers)
        })?;
        let (tables, numbers): (Vec<_>, Vec<_>) = built.into_iter().unzip();
        let mut offsets = Vec::with_capacity(tables.len());
        let mut next = 0u64;
        for t in &tables {
            offsets.push(next);
            next += t.len() as u64;
        }
        forget_raw_keys(&mut locals);
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
        let mut locals = local_dictionaries(pool, probe, self.bits)?;
        let numbers = per_partition(pool, self.tables.len(), |p| {
            let table = &self.tables[p];
            number_partition(&locals, p, |hash, key, _| {
                debug_assert_eq!(hash_of(self.seed, key), hash);
                table.find(hash, key).unwrap_or(NONE)
            })
        })?;
        forget_raw_keys(&mut locals);
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

    /// Its keys as copies in code order, the hash tables dropped.
    pub(crate) fn into_stored(self) -> StoredKeys {
        StoredKeys::new(self.tables.into_iter().map(KeyTable::into_stored).collect())
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

    /// Parts of mostly distinct keys, long enough that workers switch to
    /// raw rows part-way, with repeats, nulls and keys shared across parts.
    fn many_keys(parts: usize, rows: usize, shift: usize) -> Lists {
        let parts = (0..parts)
            .map(|part| {
                (0..rows)
                    .map(|row| match row % 97 {
                        0 => None,
                        1 => Some(b"repeated".to_vec()),
                        // every part shares these
                        2 => Some(format!("shared{}", row % 1000).into_bytes()),
                        _ => Some(format!("k{}-{}", part + shift, row).into_bytes()),
                    })
                    .collect()
            })
            .collect();
        Lists { parts, workers: 2 }
    }

    #[test]
    fn mostly_distinct_keys_are_coded_exactly_through_raw_rows() {
        let pool = pool(2);
        let rows = FIRST_CHECK_ROWS + 3 * CHECK_ROWS + 5;
        let keys = many_keys(3, rows, 0);
        let (dict, codes) = Dictionary::build(&pool, &keys).unwrap();
        let mut code_of: std::collections::HashMap<&[u8], u64> = Default::default();
        let mut seen_codes = std::collections::HashSet::new();
        for (part, list) in keys.parts.iter().enumerate() {
            let mut invalid = Vec::new();
            for (row, key) in list.iter().enumerate() {
                let code = codes[part].codes[row];
                match key {
                    None => invalid.push(row as u32),
                    Some(key) => {
                        let first = *code_of.entry(key.as_slice()).or_insert(code);
                        assert_eq!(first, code, "one key, one code");
                        seen_codes.insert(code);
                    }
                }
            }
            assert_eq!(codes[part].invalid, invalid);
        }
        assert_eq!(
            seen_codes.len(),
            code_of.len(),
            "different keys, different codes"
        );
        assert_eq!(dict.len() as usize, code_of.len());
        assert!(seen_codes.iter().all(|&c| c < dict.len()));
        // A probe of half-known keys, also mostly distinct.
        let probe = many_keys(2, rows, 2);
        let found = dict.lookup(&pool, &probe).unwrap();
        for (part, list) in probe.parts.iter().enumerate() {
            let mut invalid = Vec::new();
            for (row, key) in list.iter().enumerate() {
                match key.as_ref().and_then(|k| code_of.get(k.as_slice())) {
                    Some(&code) => assert_eq!(found[part].codes[row], code),
                    None => invalid.push(row as u32),
                }
            }
            assert_eq!(found[part].invalid, invalid, "part {part}");
        }
    }
}
