//! The hash table of one bucket of the build side: all rows of the bucket
//! that every sender delivered (or, with per-sender frames, one sender's
//! piece of it), grouped by hash slot in one array (counted, prefix-summed,
//! scattered), so a probe scans one short contiguous run. Built once, then
//! read by any number of probe tasks at once.
//!
//! This module builds and probes; deciding when a bucket is complete is
//! the frames' job.

use numakit_ops::hash::hash64;
use numakit_ops::Tuple;

/// The read-only hash table of one bucket of the build side (R): every
/// sender's R rows of the bucket, grouped by hash slot, probed by the S
/// rows of the same bucket. (Not to be confused with the radix joins'
/// bucket-sorted per-partition table inside numakit-ops: this one is
/// built once from pieces that arrived over the network and shared by
/// concurrent probe tasks.)
#[derive(Debug)]
pub struct BuildTable {
    /// Slot s holds `rows[start[s]..start[s + 1]]`.
    start: Vec<u32>,
    rows: Vec<Tuple>,
    mask: u64,
}

impl BuildTable {
    /// A table of every tuple of `pieces`.
    pub fn build(pieces: &[&[Tuple]]) -> Self {
        let len: usize = pieces.iter().map(|p| p.len()).sum();
        let slots = (len.max(1) * 2).next_power_of_two();
        let mask = slots as u64 - 1;
        let slot_of = |k: u64| (hash64(k) & mask) as usize;
        let mut start = vec![0u32; slots + 1];
        for t in pieces.iter().flat_map(|p| p.iter()) {
            start[slot_of(t.key) + 1] += 1;
        }
        for s in 0..slots {
            start[s + 1] += start[s];
        }
        let mut fill: Vec<u32> = start[..slots].to_vec();
        let mut rows = vec![Tuple::default(); len];
        for t in pieces.iter().flat_map(|p| p.iter()) {
            let s = slot_of(t.key);
            rows[fill[s] as usize] = *t;
            fill[s] += 1;
        }
        Self { start, rows, mask }
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether the table has no rows (every probe finds nothing).
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Calls `found(row)` for every row with key `key`.
    #[inline]
    pub fn probe(&self, key: u64, mut found: impl FnMut(&Tuple)) {
        let s = (hash64(key) & self.mask) as usize;
        for t in &self.rows[self.start[s] as usize..self.start[s + 1] as usize] {
            if t.key == key {
                found(t);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_match_across_pieces() {
        let a = [
            Tuple::new(1, 10),
            Tuple::new(2, 20),
            Tuple::new(u64::MAX, 1),
        ];
        let b = [Tuple::new(2, 21), Tuple::new(0, 0)];
        let t = BuildTable::build(&[&a, &b, &[]]);
        assert_eq!(t.len(), 5);
        let mut got = Vec::new();
        t.probe(2, |r| got.push(r.payload));
        got.sort_unstable();
        assert_eq!(got, [20, 21]);
        let mut n = 0;
        t.probe(3, |_| n += 1);
        assert_eq!(n, 0);
        t.probe(u64::MAX, |_| n += 1);
        t.probe(0, |_| n += 1);
        assert_eq!(n, 2);
        let empty = BuildTable::build(&[]);
        assert!(empty.is_empty());
        empty.probe(0, |_| panic!("nothing to find"));
    }
}
