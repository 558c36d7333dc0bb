//! The no-partitioning join's hash table: one table for the whole build
//! side, filled and probed by all workers at once, its memory interleaved
//! over the pool's nodes (every worker reads it at random, so no node is
//! better than another).
//!
//! Layout: an array of 64-byte buckets, one cache line each:
//!
//! ```text
//! word 0: tuples in the bucket (low 32 bits) | matched flags of the
//!         inline tuples (bits 32, 33, 34) | a 29-bit filter of the keys
//!         in the overflow chain (bits 35..64)
//! word 1: head of the bucket's overflow chain (entry index + 1, 0 = none)
//! words 2..8: three inline tuples (key, payload)
//! ```
//!
//! A bucket's first three tuples live inline, so a probe usually costs one
//! cache line, which the probe loops prefetch a group ahead. Further tuples
//! (collisions, duplicate keys) go to overflow entries of four words (key,
//! payload, next, matched flag) that each worker takes in blocks, chained
//! from the bucket; the filter bits in word 0 let most probes of a full
//! bucket skip the chain, whose every step is a dependent cache miss.
//! Inserting is one `fetch_add` on the count (plus a `fetch_or` and a
//! `swap` for an overflow), so duplicates cost nothing extra and any u64 is
//! a valid key: the count, not a sentinel key, says which slots are used.
//! The table is zeroed by the kernel, so it needs no clearing pass. There
//! are four buckets for every five build tuples, whatever their number;
//! bucket numbers come from the low half of [`hash64`] scaled to that
//! count, filter bits from the high half.
//!
//! The table does not join: emitting rows is the caller's (`npo.rs`). It
//! also never shrinks or grows: the build side's size is known up front.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};

use numakit_placement::{AtomicWords, HugePages, Placement};
use numakit_pool::Pool;
use numakit_topology::NodeSet;

use crate::error::{OpsError, Result};
use crate::hash::hash64;
use crate::prefetch::prefetch;
use crate::tuple::Tuple;

/// Tuples stored in the bucket itself.
const INLINE_TUPLES: usize = 3;
const BUCKET_WORDS: usize = 8;
const ENTRY_WORDS: usize = 4;
/// Bit of the first inline tuple's matched flag in word 0.
const FLAG_SHIFT: u32 = 32;
const COUNT_MASK: u64 = (1 << FLAG_SHIFT) - 1;
/// First bit and width of the overflow key filter in word 0.
const FILTER_SHIFT: u32 = FLAG_SHIFT + INLINE_TUPLES as u32;
const FILTER_BITS: u64 = 64 - FILTER_SHIFT as u64;
/// Build tuples per bucket the table is sized for, in quarters: five
/// quarters (1.25 a bucket, 51 bytes of table per build tuple). The bucket
/// count is not rounded to a power of two (a bucket is picked by
/// multiplying, not masking), so every table has this load: with three
/// inline slots, about 4% of the build tuples land in overflow chains.
/// Rounding up to a power of two gave loads between one half and one (64
/// to 128 bytes a build tuple); two a bucket, rounded, gave a third of the
/// probes a full bucket and about 1.7 times the CPU time (workload A, 2M x
/// 32M).
const QUARTER_TUPLES_PER_BUCKET: usize = 5;
/// Overflow entries a worker takes at a time.
const OVERFLOW_BLOCK: usize = 256;
/// Tables at least this large use transparent huge pages (fewer TLB
/// misses for random probes).
const HUGE_PAGE_MIN_BYTES: usize = 8 << 20;
/// Lookups whose bucket lines are prefetched before the first is done.
pub(super) const PREFETCH_GROUP: usize = 64;

/// The shared hash table of one build side.
pub(super) struct SharedTable {
    table: AtomicWords,
    /// Number of buckets (below 2^32).
    buckets: u64,
    overflow: AtomicWords,
    overflow_blocks: usize,
    next_block: AtomicUsize,
}

/// A worker's current block of overflow entries.
#[derive(Debug, Default)]
pub(super) struct OverflowCursor {
    next: usize,
    end: usize,
    /// Set when no block was left (cannot happen when every worker keeps
    /// one cursor; reported as an error rather than trusted).
    pub exhausted: bool,
}

/// A build tuple found by a probe.
pub(super) struct Match<'a> {
    pub payload: u64,
    flag_word: &'a AtomicU64,
    flag_bit: u64,
}

impl Match<'_> {
    /// Whether a probe has marked this tuple as matched.
    #[inline(always)]
    pub(super) fn is_marked(&self) -> bool {
        self.flag_word.load(Relaxed) & self.flag_bit != 0
    }

    /// Marks the tuple as matched (reads first: writing a flag that is
    /// already set would only move the cache line between cores).
    #[inline(always)]
    pub(super) fn mark(&self) {
        if !self.is_marked() {
            self.flag_word.fetch_or(self.flag_bit, Relaxed);
        }
    }
}

impl SharedTable {
    /// An empty table for `rows` build tuples, interleaved over the nodes
    /// of `pool`.
    pub(super) fn new(pool: &Pool, rows: usize) -> Result<Self> {
        if rows > COUNT_MASK as usize {
            return Err(OpsError::InvalidArgument(format!(
                "the hash table holds at most {COUNT_MASK} build rows, not {rows}"
            )));
        }
        let buckets = (rows * 4).div_ceil(QUARTER_TUPLES_PER_BUCKET).max(1);
        let overflow_blocks = rows.div_ceil(OVERFLOW_BLOCK) + pool.workers();
        let bucket_words = buckets * BUCKET_WORDS;
        let huge = if bucket_words * 8 >= HUGE_PAGE_MIN_BYTES {
            HugePages::Transparent
        } else {
            HugePages::Never
        };
        let interleave = || Placement::Interleave(pool.nodes().into_iter().collect::<NodeSet>());
        Ok(Self {
            table: AtomicWords::zeroed(pool.placer(), bucket_words, interleave(), huge)?,
            buckets: buckets as u64,
            overflow: AtomicWords::zeroed(
                pool.placer(),
                overflow_blocks * OVERFLOW_BLOCK * ENTRY_WORDS,
                interleave(),
                huge,
            )?,
            overflow_blocks,
            next_block: AtomicUsize::new(0),
        })
    }

    /// Number of buckets.
    pub(super) fn buckets(&self) -> usize {
        self.buckets as usize
    }

    /// The hash every other method takes along with a key.
    #[inline(always)]
    pub(super) fn hash_of(key: u64) -> u64 {
        hash64(key)
    }

    /// The bucket of the key with `hash`: the low 32 bits of the hash,
    /// scaled to the bucket count (multiply and shift, Lemire's "fast
    /// range"), so the filter's bits (from the high half) stay independent.
    #[inline(always)]
    fn bucket(&self, hash: u64) -> &[AtomicU64] {
        let index = ((hash & 0xFFFF_FFFF) * self.buckets) >> 32;
        let start = index as usize * BUCKET_WORDS;
        &self.table.words()[start..start + BUCKET_WORDS]
    }

    /// The overflow filter bit of the key with `hash`.
    #[inline(always)]
    fn filter_bit(hash: u64) -> u64 {
        let bit = ((hash >> 32) * FILTER_BITS) >> 32;
        1 << (FILTER_SHIFT as u64 + bit)
    }

    #[inline(always)]
    fn entry(&self, index: usize) -> &[AtomicU64] {
        let start = index * ENTRY_WORDS;
        &self.overflow.words()[start..start + ENTRY_WORDS]
    }

    /// Starts loading the bucket of the key with `hash` into the cache.
    #[inline(always)]
    pub(super) fn prefetch(&self, hash: u64) {
        prefetch(&self.bucket(hash)[0]);
    }

    /// Inserts all of `tuples`, prefetching buckets a group ahead.
    pub(super) fn insert_all(&self, tuples: &[Tuple], cursor: &mut OverflowCursor) {
        let mut hashes = [0u64; PREFETCH_GROUP];
        for group in tuples.chunks(PREFETCH_GROUP) {
            for (hash, t) in hashes.iter_mut().zip(group) {
                *hash = Self::hash_of(t.key);
                self.prefetch(*hash);
            }
            for (&hash, t) in hashes.iter().zip(group) {
                self.insert(hash, *t, cursor);
            }
        }
    }

    /// Inserts `t`, whose key has `hash`.
    #[inline(always)]
    fn insert(&self, hash: u64, t: Tuple, cursor: &mut OverflowCursor) {
        let bucket = self.bucket(hash);
        let slot = (bucket[0].fetch_add(1, Relaxed) & COUNT_MASK) as usize;
        if slot < INLINE_TUPLES {
            bucket[2 + 2 * slot].store(t.key, Relaxed);
            bucket[3 + 2 * slot].store(t.payload, Relaxed);
            return;
        }
        let Some(entry_index) = self.take_entry(cursor) else {
            cursor.exhausted = true;
            return;
        };
        bucket[0].fetch_or(Self::filter_bit(hash), Relaxed);
        let entry = self.entry(entry_index);
        entry[0].store(t.key, Relaxed);
        entry[1].store(t.payload, Relaxed);
        let next = bucket[1].swap(entry_index as u64 + 1, Relaxed);
        entry[2].store(next, Relaxed);
    }

    fn take_entry(&self, cursor: &mut OverflowCursor) -> Option<usize> {
        if cursor.next == cursor.end {
            let block = self.next_block.fetch_add(1, Relaxed);
            if block >= self.overflow_blocks {
                return None;
            }
            cursor.next = block * OVERFLOW_BLOCK;
            cursor.end = cursor.next + OVERFLOW_BLOCK;
        }
        cursor.next += 1;
        Some(cursor.next - 1)
    }

    /// Calls `on_match` for every build tuple with `key` (whose hash is
    /// `hash`), always in the same order, until it returns false.
    #[inline(always)]
    pub(super) fn for_each_match<F>(&self, hash: u64, key: u64, mut on_match: F)
    where
        F: FnMut(Match<'_>) -> bool,
    {
        let bucket = self.bucket(hash);
        if let Some(chain) = Self::inline_matches(bucket, hash, key, &mut on_match) {
            self.walk_chain(chain, key, on_match);
        }
    }

    /// Calls `on_match(probe, match)` for every match of every probe of a
    /// group (at most [`PREFETCH_GROUP`] probes, `hashes[i]` the hash of
    /// `probes[i].key`, their buckets prefetched). Overflow chains are
    /// walked after all buckets of the group, their first entries
    /// prefetched meanwhile, so that chain misses overlap too.
    #[inline(always)]
    pub(super) fn for_each_match_in_group<F>(
        &self,
        hashes: &[u64],
        probes: &[Tuple],
        mut on_match: F,
    ) where
        F: FnMut(&Tuple, Match<'_>),
    {
        let mut chains = [(0usize, 0usize); PREFETCH_GROUP];
        let mut deferred = 0;
        for (i, (&hash, s)) in hashes.iter().zip(probes).enumerate() {
            let bucket = self.bucket(hash);
            let found = Self::inline_matches(bucket, hash, s.key, |m| {
                on_match(s, m);
                true
            });
            let Some(chain) = found else { continue };
            match chains.get_mut(deferred) {
                Some(slot) => {
                    prefetch(&self.entry(chain - 1)[0]);
                    *slot = (chain, i);
                    deferred += 1;
                }
                None => self.walk_chain(chain, s.key, |m| {
                    on_match(s, m);
                    true
                }),
            }
        }
        for &(chain, i) in &chains[..deferred] {
            let s = &probes[i];
            self.walk_chain(chain, s.key, |m| {
                on_match(s, m);
                true
            });
        }
    }

    /// Calls `on_match` for the inline tuples of `bucket` with `key`;
    /// returns the head of the overflow chain when it may hold `key` too
    /// (and `on_match` asked for more).
    #[inline(always)]
    fn inline_matches<F>(
        bucket: &[AtomicU64],
        hash: u64,
        key: u64,
        mut on_match: F,
    ) -> Option<usize>
    where
        F: FnMut(Match<'_>) -> bool,
    {
        let head = bucket[0].load(Relaxed);
        let count = (head & COUNT_MASK) as usize;
        for slot in 0..count.min(INLINE_TUPLES) {
            if bucket[2 + 2 * slot].load(Relaxed) == key {
                let found = Match {
                    payload: bucket[3 + 2 * slot].load(Relaxed),
                    flag_word: &bucket[0],
                    flag_bit: 1 << (FLAG_SHIFT + slot as u32),
                };
                if !on_match(found) {
                    return None;
                }
            }
        }
        if count > INLINE_TUPLES && head & Self::filter_bit(hash) != 0 {
            let chain = bucket[1].load(Relaxed) as usize;
            (chain != 0).then_some(chain)
        } else {
            None
        }
    }

    /// Calls `on_match` for the tuples with `key` of the overflow chain
    /// that starts at entry `next - 1`, until it returns false.
    #[inline(never)]
    fn walk_chain<F>(&self, mut next: usize, key: u64, mut on_match: F)
    where
        F: FnMut(Match<'_>) -> bool,
    {
        while next != 0 {
            let entry = self.entry(next - 1);
            if entry[0].load(Relaxed) == key {
                let found = Match {
                    payload: entry[1].load(Relaxed),
                    flag_word: &entry[3],
                    flag_bit: 1,
                };
                if !on_match(found) {
                    return;
                }
            }
            next = entry[2].load(Relaxed) as usize;
        }
    }

    /// Marks every build tuple with `key` as matched, stopping early when
    /// the first of them is marked already: the probe that marked it marks
    /// the others too (the order of matches is fixed), so duplicate keys
    /// cost one lookup, not one per duplicate.
    #[inline(always)]
    pub(super) fn mark_matches(&self, hash: u64, key: u64) {
        let mut first = true;
        self.for_each_match(hash, key, |m| {
            if first && m.is_marked() {
                return false;
            }
            first = false;
            m.mark();
            true
        });
    }

    /// Calls `f(key, payload, matched)` for every build tuple of the
    /// buckets in `buckets`.
    pub(super) fn for_each_tuple<F>(&self, buckets: Range<usize>, mut f: F)
    where
        F: FnMut(u64, u64, bool),
    {
        for index in buckets {
            let start = index * BUCKET_WORDS;
            let bucket = &self.table.words()[start..start + BUCKET_WORDS];
            let head = bucket[0].load(Relaxed);
            let count = (head & COUNT_MASK) as usize;
            for slot in 0..count.min(INLINE_TUPLES) {
                let matched = head & (1 << (FLAG_SHIFT + slot as u32)) != 0;
                f(
                    bucket[2 + 2 * slot].load(Relaxed),
                    bucket[3 + 2 * slot].load(Relaxed),
                    matched,
                );
            }
            let mut next = bucket[1].load(Relaxed) as usize;
            while next != 0 {
                let entry = self.entry(next - 1);
                let matched = entry[3].load(Relaxed) != 0;
                f(entry[0].load(Relaxed), entry[1].load(Relaxed), matched);
                next = entry[2].load(Relaxed) as usize;
            }
        }
    }
}

impl std::fmt::Debug for SharedTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedTable")
            .field("buckets", &self.buckets())
            .field("overflow_blocks", &self.overflow_blocks)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::pool;

    fn matches_of(table: &SharedTable, key: u64) -> Vec<u64> {
        let mut found = Vec::new();
        table.for_each_match(SharedTable::hash_of(key), key, |m| {
            found.push(m.payload);
            true
        });
        found.sort_unstable();
        found
    }

    #[test]
    fn holds_duplicates_and_extreme_keys() {
        let pool = pool(1);
        let mut tuples: Vec<Tuple> = (0..50).map(|i| Tuple::new(7, i)).collect();
        tuples.extend([Tuple::new(0, 100), Tuple::new(u64::MAX, 101)]);
        tuples.extend((1000..1100).map(|k| Tuple::new(k, k)));
        let table = SharedTable::new(&pool, tuples.len()).unwrap();
        let mut cursor = OverflowCursor::default();
        table.insert_all(&tuples, &mut cursor);
        assert!(!cursor.exhausted);
        assert_eq!(matches_of(&table, 7), (0..50).collect::<Vec<_>>());
        assert_eq!(matches_of(&table, 0), [100]);
        assert_eq!(matches_of(&table, u64::MAX), [101]);
        assert_eq!(matches_of(&table, 1050), [1050]);
        assert!(matches_of(&table, 5).is_empty());
        let mut seen = 0;
        table.for_each_tuple(0..table.buckets(), |_, _, matched| {
            assert!(!matched);
            seen += 1;
        });
        assert_eq!(seen, tuples.len());
    }

    #[test]
    fn long_overflow_chains_of_distinct_keys_are_found() {
        let pool = pool(2);
        let table = SharedTable::new(&pool, 2).unwrap();
        assert_eq!(table.buckets(), 2);
        let tuples: Vec<Tuple> = (0..300).map(|k| Tuple::new(k * 3, k)).collect();
        let mut cursor = OverflowCursor::default();
        table.insert_all(&tuples, &mut cursor);
        assert!(!cursor.exhausted);
        for k in 0..300 {
            assert_eq!(matches_of(&table, k * 3), [k]);
            assert!(matches_of(&table, k * 3 + 1).is_empty());
        }
    }

    #[test]
    fn marking_reaches_every_duplicate_once_marked() {
        let pool = pool(1);
        let tuples: Vec<Tuple> = (0..20).map(|i| Tuple::new(i % 2, i)).collect();
        let table = SharedTable::new(&pool, tuples.len()).unwrap();
        table.insert_all(&tuples, &mut OverflowCursor::default());
        table.mark_matches(SharedTable::hash_of(1), 1);
        table.mark_matches(SharedTable::hash_of(1), 1);
        let mut marked = Vec::new();
        table.for_each_tuple(0..table.buckets(), |key, _, matched| {
            assert_eq!(matched, key == 1);
            if matched {
                marked.push(key);
            }
        });
        assert_eq!(marked.len(), 10);
    }

    /// Four buckets per five build tuples, every one of them reachable: the
    /// scaled hash spreads keys over the whole table, not a power-of-two
    /// part of it.
    #[test]
    fn buckets_are_four_per_five_rows_and_all_are_reached() {
        let pool = pool(1);
        let rows = 100_000;
        let table = SharedTable::new(&pool, rows).unwrap();
        assert_eq!(table.buckets(), 80_000);
        let tuples: Vec<Tuple> = (0..rows as u64)
            .map(|k| Tuple::new(k.wrapping_mul(0x9E37_79B9_7F4A_7C15), k))
            .collect();
        table.insert_all(&tuples, &mut OverflowCursor::default());
        let used = |range: std::ops::Range<usize>| {
            range
                .filter(|&b| {
                    let mut any = false;
                    table.for_each_tuple(b..b + 1, |_, _, _| any = true);
                    any
                })
                .count()
        };
        // At 1.25 tuples a bucket, e^-1.25 (29%) of the buckets stay empty.
        let all = used(0..80_000) as f64 / 80_000.0;
        assert!((0.66..0.76).contains(&all), "{all} of the buckets used");
        let last = used(79_000..80_000) as f64 / 1_000.0;
        assert!(last > 0.6, "{last} of the last buckets used");
        for t in tuples.iter().step_by(997) {
            assert_eq!(matches_of(&table, t.key), [t.payload]);
        }
    }

    #[test]
    fn an_empty_table_has_one_empty_bucket() {
        let pool = pool(1);
        let table = SharedTable::new(&pool, 0).unwrap();
        assert_eq!(table.buckets(), 1);
        assert!(matches_of(&table, 0).is_empty());
    }
}
