//! The per-partition join kernel of the radix joins: a cache-sized,
//! bucket-sorted hash table over one partition of R, probed with the
//! matching partition of S.
//!
//! Build: the rows of R are counted per bucket (low hash bits: the
//! partitioner used the high ones), laid out bucket after bucket, and
//! equal keys within a bucket made adjacent, so a key's rows form one
//! run. Probe: a probe key scans the runs of its bucket, comparing one key
//! per run, and the matching run is emitted (or just counted) at once.
//! Duplicates on either side cost nothing extra, and a partition whose
//! keys are all equal is one run: memory stays linear and work is linear
//! in input plus output. Semi, anti and left outer joins mark the
//! matched runs and emit from the table after the probe.
//!
//! The table is reused from partition to partition (its vectors keep
//! their capacity). Probing takes `&self`, so that the probe side of a
//! skewed partition can be split over several tasks sharing one table. It
//! does not partition, schedule or merge results.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::join::sink::Sink;
use crate::join::JoinKind;
use crate::partition::simd::{count_key, run_kernel, Kernel, Width};
use crate::tuple::Tuple;

/// Buckets per build row (rounded up to a power of two): a load factor of
/// at most 1/2 keeps most probe keys first in their bucket.
const BUCKETS_PER_ROW: usize = 2;
/// Width of the branch-free bucket window of counting probes.
const PAD: usize = 4;

/// A bucket-sorted table over one build partition.
#[derive(Debug, Default)]
pub(super) struct BucketTable {
    /// The build rows, bucket after bucket, equal keys adjacent, then
    /// [`PAD`] filler rows (so that a bucket can be read as a fixed-width
    /// window).
    rows: Vec<Tuple>,
    /// Number of build rows.
    len: usize,
    /// For each row, the end (exclusive) of its run of equal keys.
    run_end: Vec<u32>,
    /// Bucket b's rows are `rows[heads[b]..heads[b + 1]]`.
    heads: Vec<u32>,
    /// For each run start: whether a probe row matched it. Atomic (with
    /// relaxed, on x86 plain, loads and stores) so that several tasks can
    /// probe one table at once.
    matched: Vec<AtomicBool>,
    /// log2 of the number of buckets.
    bucket_bits: u32,
}

impl BucketTable {
    pub(super) fn new() -> Self {
        Self::default()
    }

    /// Rebuilds the table from the rows of `pieces` (together at most
    /// `u32::MAX - 1` rows).
    pub(super) fn build<'a, I>(&mut self, pieces: I)
    where
        I: Iterator<Item = &'a [Tuple]> + Clone,
    {
        let n: usize = pieces.clone().map(<[Tuple]>::len).sum();
        assert!(
            n < u32::MAX as usize,
            "a join partition of {n} rows is too big"
        );
        let buckets = (n * BUCKETS_PER_ROW).next_power_of_two().max(1);
        self.bucket_bits = buckets.trailing_zeros();
        self.count_buckets(pieces.clone(), buckets);
        self.len = n;
        self.rows.clear();
        self.rows.resize(n + PAD, Tuple::default());
        for t in pieces.flat_map(|p| p.iter()) {
            let b = self.bucket(t.key);
            self.heads[b] -= 1;
            self.rows[self.heads[b] as usize] = *t;
        }
        self.group_equal_keys();
        self.matched.clear();
        self.matched.resize_with(n, || AtomicBool::new(false));
    }

    /// Leaves heads[b] = end of bucket b (so that a backwards fill makes
    /// it the start) and heads[buckets] = n.
    fn count_buckets<'a, I>(&mut self, pieces: I, buckets: usize)
    where
        I: Iterator<Item = &'a [Tuple]>,
    {
        self.heads.clear();
        self.heads.resize(buckets + 1, 0);
        for t in pieces.flat_map(|p| p.iter()) {
            let b = self.bucket(t.key);
            self.heads[b] += 1;
        }
        let mut total = 0u32;
        for h in &mut self.heads[..buckets] {
            total += *h;
            *h = total;
        }
        self.heads[buckets] = total;
    }

    /// Sorts buckets of three or more rows by key (two rows are always
    /// grouped) and records every row's run end.
    fn group_equal_keys(&mut self) {
        for b in 0..self.heads.len() - 1 {
            let (start, end) = (self.heads[b] as usize, self.heads[b + 1] as usize);
            if end - start > 2 {
                self.rows[start..end].sort_unstable_by_key(|t| t.key);
            }
        }
        let n = self.len;
        self.run_end.clear();
        self.run_end.resize(n, 0);
        for i in (0..n).rev() {
            self.run_end[i] = if i + 1 < n && self.rows[i + 1].key == self.rows[i].key {
                self.run_end[i + 1]
            } else {
                i as u32 + 1
            };
        }
    }

    /// The bucket of `key`: the top bits of one multiply (Fibonacci
    /// hashing), cheaper than a full hash64 and independent of the
    /// partitioning, which used hash64's top bits (keys of one partition
    /// share those, not these). Two shifts make 0 bits give bucket 0.
    #[inline(always)]
    fn bucket(&self, key: u64) -> usize {
        ((key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 1) >> (63 - self.bucket_bits)) as usize
    }

    /// The run of rows with key `key`, if any.
    #[inline(always)]
    fn find(&self, key: u64) -> Option<(usize, usize)> {
        let b = self.bucket(key);
        let (mut i, end) = (self.heads[b] as usize, self.heads[b + 1] as usize);
        while i < end {
            let next = self.run_end[i] as usize;
            if self.rows[i].key == key {
                return Some((i, next));
            }
            i = next;
        }
        None
    }

    /// Probes with every row of `probe`: inner and left outer joins emit
    /// the matching pairs; outer, semi and anti joins mark matched runs.
    /// Several probes may run at once on one table.
    pub(super) fn probe(&self, probe: &[Tuple], kind: JoinKind, sink: &mut Sink) {
        if self.len == 0 {
            return;
        }
        match kind {
            JoinKind::Inner => self.probe_pairs::<false>(probe, sink),
            JoinKind::LeftOuter => self.probe_pairs::<true>(probe, sink),
            JoinKind::Semi | JoinKind::Anti => {
                for s in probe {
                    if let Some((start, _)) = self.find(s.key) {
                        self.matched[start].store(true, Ordering::Relaxed);
                    }
                }
            }
        }
    }

    /// The number of build rows with key `key`, given its bucket's
    /// bounds: buckets of up to [`PAD`] rows (nearly all) are compared as
    /// a fixed window without branches.
    #[inline(always)]
    fn count_in<W: Width>(&self, width: W, key: u64, start: usize, end: usize) -> u64 {
        let len = end - start;
        if len <= PAD {
            let window: &[Tuple; PAD] = self.rows[start..start + PAD]
                .try_into()
                .expect("a window of PAD rows");
            count_key(width, window, len, key)
        } else {
            self.rows[start..end]
                .iter()
                .filter(|r| r.key == key)
                .count() as u64
        }
    }

    /// The number of build rows matching each probe row, summed (with
    /// wide instructions where the CPU has them: see [`CountMatches`]).
    fn count_matches(&self, probe: &[Tuple]) -> u64 {
        run_kernel(CountMatches { table: self, probe })
    }

    fn probe_pairs<const MARK: bool>(&self, probe: &[Tuple], sink: &mut Sink) {
        let counting = sink.count_only(0);
        if counting && !MARK {
            sink.count_only(self.count_matches(probe));
            return;
        }
        for s in probe {
            let Some((start, end)) = self.find(s.key) else {
                continue;
            };
            if MARK {
                self.matched[start].store(true, Ordering::Relaxed);
            }
            if counting {
                sink.count_only((end - start) as u64);
            } else {
                for r in &self.rows[start..end] {
                    sink.emit(r.key, r.payload, Some(s.payload));
                }
            }
        }
    }

    /// After all probes (of every task probing this table, finished
    /// before this is called): left outer and anti joins emit the rows of
    /// unmatched runs, semi joins those of matched runs (once each).
    pub(super) fn emit_unprobed(&self, kind: JoinKind, sink: &mut Sink) {
        let want_matched = match kind {
            JoinKind::Inner => return,
            JoinKind::Semi => true,
            JoinKind::LeftOuter | JoinKind::Anti => false,
        };
        let counting = sink.count_only(0);
        let mut i = 0;
        while i < self.len {
            let end = self.run_end[i] as usize;
            if self.matched[i].load(Ordering::Relaxed) == want_matched {
                if counting {
                    sink.count_only((end - i) as u64);
                } else {
                    for r in &self.rows[i..end] {
                        sink.emit(r.key, r.payload, None);
                    }
                }
            }
            i = end;
        }
    }
}

/// Counting probe: probes go in groups, stage by stage (hashes, bucket
/// bounds, windows), so that the hashes vectorise and the loads of a
/// group overlap instead of waiting one by one.
struct CountMatches<'a> {
    table: &'a BucketTable,
    probe: &'a [Tuple],
}

impl Kernel for CountMatches<'_> {
    type Output = u64;

    #[inline(always)]
    fn run<W: Width>(self, width: W) -> u64 {
        const GROUP: usize = 16;
        let table = self.table;
        let bucket = |key: u64| table.bucket(key);
        let mut total = 0;
        let mut groups = self.probe.chunks_exact(GROUP);
        for group in &mut groups {
            let mut buckets = [0usize; GROUP];
            for (b, s) in buckets.iter_mut().zip(group) {
                *b = bucket(s.key);
            }
            let mut bounds = [(0usize, 0usize); GROUP];
            for (bound, &b) in bounds.iter_mut().zip(&buckets) {
                *bound = (table.heads[b] as usize, table.heads[b + 1] as usize);
            }
            for (&(start, end), s) in bounds.iter().zip(group) {
                total += table.count_in(width, s.key, start, end);
            }
        }
        for s in groups.remainder() {
            let b = bucket(s.key);
            total += table.count_in(
                width,
                s.key,
                table.heads[b] as usize,
                table.heads[b + 1] as usize,
            );
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::join::sink::finish;
    use crate::join::JoinOutput;
    use crate::reference;

    fn run(left: &[Tuple], right: &[Tuple], kind: JoinKind) -> Vec<crate::join::JoinRow> {
        let mut table = BucketTable::new();
        let (a, b) = left.split_at(left.len() / 3);
        table.build([a, b].into_iter());
        let mut sink = Sink::new(JoinOutput::Materialize);
        let (c, d) = right.split_at(right.len() / 2);
        table.probe(c, kind, &mut sink);
        table.probe(d, kind, &mut sink);
        table.emit_unprobed(kind, &mut sink);
        let mut rows = finish([sink], Vec::new()).materialized.concat();
        rows.sort_unstable();
        rows
    }

    #[test]
    fn every_kind_matches_the_reference_with_duplicates() {
        let keys_l = [3u64, 3, 3, 7, 0, u64::MAX, 12, 12, 99, 5, 5, 5, 5];
        let keys_r = [3u64, 12, 12, u64::MAX, 4, 5, 0, 0, 100];
        let left: Vec<Tuple> = keys_l
            .iter()
            .enumerate()
            .map(|(i, &k)| Tuple::new(k, i as u64))
            .collect();
        let right: Vec<Tuple> = keys_r
            .iter()
            .enumerate()
            .map(|(i, &k)| Tuple::new(k, 100 + i as u64))
            .collect();
        for kind in [
            JoinKind::Inner,
            JoinKind::LeftOuter,
            JoinKind::Semi,
            JoinKind::Anti,
        ] {
            assert_eq!(
                run(&left, &right, kind),
                reference::join(&left, &right, kind),
                "{kind:?}"
            );
        }
    }

    #[test]
    fn all_equal_keys_make_one_run_and_count_without_rows() {
        let left: Vec<Tuple> = (0..5000).map(|i| Tuple::new(42, i)).collect();
        let right: Vec<Tuple> = (0..3000).map(|i| Tuple::new(42, i)).collect();
        let mut table = BucketTable::new();
        table.build(std::iter::once(&left[..]));
        assert_eq!(table.run_end[0], 5000);
        let mut sink = Sink::new(JoinOutput::Count);
        table.probe(&right, JoinKind::Inner, &mut sink);
        assert_eq!(sink.rows(), 15_000_000);
        let mut empty = BucketTable::new();
        empty.build(std::iter::empty());
        empty.probe(&right, JoinKind::Inner, &mut sink);
        empty.emit_unprobed(JoinKind::Anti, &mut sink);
        assert_eq!(sink.rows(), 15_000_000);
    }
}
