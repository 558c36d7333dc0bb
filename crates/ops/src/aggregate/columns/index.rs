//! Group numbers for group codes: a direct index when the codes are small
//! (a code is its own group number), or an open-addressing hash table that
//! hands out group numbers in order of first appearance. The group of rows
//! without a key (null keys) has a number of its own.
//!
//! It stores no aggregates; `state` does, indexed by these numbers.

use crate::hash::hash64;
use crate::prefetch::prefetch;

/// Group numbers for codes.
#[derive(Debug)]
pub enum GroupIndex {
    /// Codes `0..len` are their own group numbers; `len` is the null group.
    Direct {
        /// Codes indexed: the largest code plus one.
        len: usize,
    },
    /// Codes numbered densely from 0 as they come (a dictionary's): code
    /// `c` is group `c + 1`, the null group is group 0; grows as needed.
    Dense {
        /// Group numbers in use are below this: the largest code seen
        /// plus two (1 before any code).
        groups: usize,
    },
    /// Any codes, numbered from 0 in order of first appearance (the null
    /// group too) by a hash table.
    Hashed(HashIndex),
}

impl GroupIndex {
    /// A direct index over codes `0..=max_code`.
    pub fn direct(max_code: u64) -> Self {
        GroupIndex::Direct {
            len: max_code as usize + 1,
        }
    }

    /// A hash index sized for about `groups` groups, kept sparse while it
    /// fits the second-level cache (fast lookups; a worker's one table).
    pub fn hashed(groups: usize) -> Self {
        GroupIndex::Hashed(HashIndex::with_capacity(groups, true))
    }

    /// A hash index sized for about `groups` groups, kept a quarter full
    /// while small: for one partition of many that all live at once (the
    /// radix path), where a sparse index would multiply their memory and
    /// push each out of the cache between its turns.
    pub fn hashed_compact(groups: usize) -> Self {
        GroupIndex::Hashed(HashIndex::with_capacity(groups, false))
    }

    /// A dense index (codes numbered from 0 as they come).
    pub fn dense() -> Self {
        GroupIndex::Dense { groups: 1 }
    }

    /// Group numbers in use are below this.
    pub fn groups(&self) -> usize {
        match self {
            GroupIndex::Direct { len } => len + 1,
            GroupIndex::Dense { groups } => *groups,
            GroupIndex::Hashed(h) => h.codes.len(),
        }
    }

    /// The group of `code` (`None`: the null group), made if new.
    #[inline(always)]
    pub fn group(&mut self, code: Option<u64>) -> u32 {
        match (self, code) {
            (GroupIndex::Direct { .. }, Some(c)) => c as u32,
            (GroupIndex::Direct { len }, None) => *len as u32,
            (GroupIndex::Dense { groups }, Some(c)) => {
                let g = c as usize + 1;
                if g >= *groups {
                    *groups = g + 1;
                }
                g as u32
            }
            (GroupIndex::Dense { .. }, None) => 0,
            (GroupIndex::Hashed(h), code) => h.group(code),
        }
    }

    /// The groups of the first `out.len()` of `codes`, every row with a
    /// key, into `out`: [`GroupIndex::group`] row by row, in a loop with
    /// no per-row choice of index kind, and for a hash index a first probe
    /// inline with the rest (collisions, new groups) out of line. With
    /// `prefetch_rows`, each row asks first for the slot of the row that
    /// many ahead (`codes` may run past `out` for that).
    pub fn group_keyed(&mut self, codes: &[u64], out: &mut [u32], prefetch_rows: Option<usize>) {
        match (self, prefetch_rows) {
            (GroupIndex::Hashed(h), None) => {
                for (number, &code) in out.iter_mut().zip(codes) {
                    *number = h.group_of(code);
                }
            }
            (GroupIndex::Hashed(h), Some(ahead)) => {
                for (i, (number, &code)) in out.iter_mut().zip(codes).enumerate() {
                    if let Some(&later) = codes.get(i + ahead) {
                        h.prefetch(later);
                    }
                    *number = h.group_of(code);
                }
            }
            (index, _) => {
                for (number, &code) in out.iter_mut().zip(codes) {
                    *number = index.group(Some(code));
                }
            }
        }
    }

    /// Bytes of the hash slots (0 for indexes that do not hash).
    pub fn slot_bytes(&self) -> usize {
        match self {
            GroupIndex::Hashed(h) => h.slots.len() * std::mem::size_of::<Slot>(),
            _ => 0,
        }
    }

    /// Every group's code, in group order.
    pub fn into_codes(self) -> Vec<Option<u64>> {
        match self {
            GroupIndex::Hashed(h) => {
                let null = h.null_group.map(|g| g as usize);
                h.codes
                    .iter()
                    .enumerate()
                    .map(|(g, &c)| (Some(g) != null).then_some(c))
                    .collect()
            }
            other => (0..other.groups()).map(|g| other.code(g)).collect(),
        }
    }

    /// Whether lookups are likely to miss the cache: a sparse hash index
    /// over more than `PREFETCH_BYTES` (1 MiB) of slots, a compact one
    /// over more than `COMPACT_PREFETCH_BYTES` (64 KiB).
    pub fn outgrows_cache(&self) -> bool {
        match self {
            GroupIndex::Hashed(h) => {
                let limit = if h.sparse {
                    PREFETCH_BYTES
                } else {
                    COMPACT_PREFETCH_BYTES
                };
                h.slots.len() * std::mem::size_of::<Slot>() > limit
            }
            _ => false,
        }
    }

    /// Asks for the cache line that `code`'s lookup will read first (a
    /// hint; nothing for indexes that do not hash).
    #[inline(always)]
    pub fn prefetch(&self, code: u64) {
        if let GroupIndex::Hashed(h) = self {
            h.prefetch(code);
        }
    }

    /// The code of group `g` (`None` for the null group).
    pub fn code(&self, g: usize) -> Option<u64> {
        match self {
            GroupIndex::Direct { len } => (g < *len).then_some(g as u64),
            GroupIndex::Dense { .. } => g.checked_sub(1).map(|c| c as u64),
            GroupIndex::Hashed(h) => h.code(g),
        }
    }
}

/// Below this many slots (256 KiB) an index is kept at most a sixteenth
/// full: a row whose code is not in its first slot costs a mispredicted
/// branch, about as much as the rest of its lookup, and at a quarter full
/// one row in eight was such a row. Measured on 32M rows of 2^10 random
/// keys, one thread (minima of seven runs, over several trials): a
/// quarter full 7.2-8.8 ns a row (lookup and a sum), an eighth 5.7-6.3,
/// a sixteenth 4.6-6.0.
const SPARSEST_SLOTS: usize = 1 << 14;
/// Below this many slots (1 MiB, the second-level cache) an index is kept
/// at most an eighth full; larger ones at most half full.
const SPARSE_SLOTS: usize = 1 << 16;
/// Slot tables larger than this miss the second-level cache, so lookups
/// ask for their slots ahead (prefetching a slot that is there only costs).
const PREFETCH_BYTES: usize = 1 << 20;
/// A compact index (one partition of many, see
/// [`GroupIndex::hashed_compact`]) prefetches from this size up, and is
/// kept at most a quarter full below [`SPARSE_SLOTS`].
const COMPACT_PREFETCH_BYTES: usize = 64 << 10;

/// One slot of a [`HashIndex`]: a code and its group number + 1 (0 marks
/// an empty slot), side by side so that a probe costs one cache line.
#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    code: u64,
    group: u32,
}

/// Open addressing on the low bits of [`hash64`], doubling at half load.
#[derive(Debug)]
pub struct HashIndex {
    slots: Vec<Slot>,
    mask: usize,
    /// The code of each group, in group order (the null group's is 0:
    /// `null_group` says which that is).
    codes: Vec<u64>,
    null_group: Option<u32>,
    /// Kept sparse while small (else compact: a quarter full).
    sparse: bool,
}

impl HashIndex {
    fn with_capacity(groups: usize, sparse: bool) -> Self {
        let capacity = (groups.max(8) * 2).next_power_of_two();
        HashIndex {
            slots: vec![Slot::default(); capacity],
            mask: capacity - 1,
            codes: Vec::with_capacity(groups.min(1 << 20)),
            null_group: None,
            sparse,
        }
    }

    /// The code of group `g` (`None` for the null group).
    fn code(&self, g: usize) -> Option<u64> {
        (self.null_group != Some(g as u32)).then(|| self.codes[g])
    }

    #[inline(always)]
    fn group(&mut self, code: Option<u64>) -> u32 {
        let Some(code) = code else {
            if let Some(g) = self.null_group {
                return g;
            }
            let g = self.codes.len() as u32;
            self.codes.push(0);
            self.null_group = Some(g);
            return g;
        };
        self.group_of(code)
    }

    /// The group of `code` when its first probe finds it (most rows once
    /// the groups are known); else [`HashIndex::probe_on`].
    #[inline(always)]
    fn group_of(&mut self, code: u64) -> u32 {
        let at = hash64(code) as usize & self.mask;
        let slot = self.slots[at];
        if slot.code == code && slot.group != 0 {
            return slot.group - 1;
        }
        self.probe_on(at, code)
    }

    /// Probes on from slot `at` for `code`, making its group if new.
    #[inline(never)]
    fn probe_on(&mut self, mut at: usize, code: u64) -> u32 {
        loop {
            let slot = self.slots[at];
            if slot.group == 0 {
                let g = self.codes.len() as u32;
                self.slots[at] = Slot { code, group: g + 1 };
                self.codes.push(code);
                if self.codes.len() * self.spread() > self.slots.len() {
                    self.grow();
                }
                return g;
            }
            if slot.code == code {
                return slot.group - 1;
            }
            at = (at + 1) & self.mask;
        }
    }

    /// Slots per group at least before the index doubles. A sparse index:
    /// a sixteenth or an eighth full while it fits the second-level cache
    /// (fewer collisions, so fewer mispredicted probe loops, for memory
    /// that does not matter). A compact one: a quarter full below
    /// [`SPARSE_SLOTS`]. Both half full once larger.
    #[inline(always)]
    fn spread(&self) -> usize {
        if !self.sparse {
            return if self.slots.len() < SPARSE_SLOTS {
                4
            } else {
                2
            };
        }
        if self.slots.len() < SPARSEST_SLOTS {
            16
        } else if self.slots.len() < SPARSE_SLOTS {
            8
        } else {
            2
        }
    }

    /// Asks for the slot where `code`'s probe starts to be brought into
    /// the cache.
    #[inline(always)]
    fn prefetch(&self, code: u64) {
        prefetch(&self.slots[hash64(code) as usize & self.mask]);
    }

    fn grow(&mut self) {
        let capacity = self.slots.len() * 2;
        let mut slots = vec![Slot::default(); capacity];
        let mask = capacity - 1;
        for (g, &code) in self.codes.iter().enumerate() {
            if self.null_group == Some(g as u32) {
                continue;
            }
            let mut at = hash64(code) as usize & mask;
            while slots[at].group != 0 {
                at = (at + 1) & mask;
            }
            slots[at] = Slot {
                code,
                group: g as u32 + 1,
            };
        }
        self.slots = slots;
        self.mask = mask;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every group's code after numbering `codes` row by row.
    fn make_codes(index: &mut GroupIndex, codes: &[u64]) -> Vec<Option<u64>> {
        for &c in codes {
            index.group(Some(c));
        }
        std::mem::replace(index, GroupIndex::dense()).into_codes()
    }

    #[test]
    fn numbering_a_keyed_batch_agrees_with_row_by_row_on_every_kind() {
        // Hashed: keys whose first probes collide (equal low hash bits in a
        // small table), repeats, 0 and u64::MAX; direct and dense: small codes.
        let mut collide: Vec<u64> = (0u64..50_000)
            .filter(|&k| hash64(k) & 63 == hash64(7) & 63)
            .take(40)
            .collect();
        collide.extend([0, u64::MAX, 7, 0, u64::MAX]);
        let batch: Vec<u64> = collide.iter().chain(&collide).rev().copied().collect();
        let small: Vec<u64> = (0..300).map(|i| (i * 7919) % 97).collect();
        type Case<'a> = (fn() -> GroupIndex, &'a Vec<u64>);
        let cases: [Case<'_>; 3] = [
            (|| GroupIndex::hashed(1), &batch),
            (|| GroupIndex::direct(96), &small),
            (GroupIndex::dense, &small),
        ];
        for (make, codes) in cases {
            let mut by_row = make();
            let expected: Vec<u32> = codes.iter().map(|&c| by_row.group(Some(c))).collect();
            for ahead in [None, Some(3)] {
                let mut whole = make();
                let mut numbers = vec![0u32; codes.len()];
                whole.group_keyed(codes, &mut numbers, ahead);
                assert_eq!(numbers, expected, "prefetching {ahead:?}");
                assert_eq!(whole.groups(), by_row.groups());
                assert_eq!(whole.into_codes(), make_codes(&mut make(), codes));
            }
            // Codes past `out` are only looked ahead at, never numbered.
            let mut part = make();
            let mut half = vec![0u32; codes.len() / 2];
            part.group_keyed(codes, &mut half, Some(3));
            assert_eq!(half, expected[..half.len()]);
        }
    }

    #[test]
    fn small_indexes_stay_sparse_and_large_ones_at_most_half_full() {
        let mut compact = HashIndex::with_capacity(8, false);
        for c in 0..4096u64 {
            compact.group(Some(c));
        }
        assert_eq!(
            compact.slots.len(),
            16 * 1024,
            "a compact index stays a quarter full"
        );
        let mut index = HashIndex::with_capacity(8, true);
        let add = |index: &mut HashIndex, groups: u64| {
            for c in 0..groups {
                index.group(Some(c.wrapping_mul(0x9E37_79B9_7F4A_7C15)));
            }
            assert_eq!(index.codes.len() as u64, groups);
            index.slots.len()
        };
        assert!(
            add(&mut index, 1024) >= 16 * 1024,
            "a sixteenth full at most"
        );
        assert!(add(&mut index, 4096) >= 8 * 4096, "an eighth full at most");
        let slots = add(&mut index, 40_000);
        assert!(
            (2 * 40_000..=4 * 40_000).contains(&slots),
            "{slots} slots for 40,000 groups: half full at most, and not sparse"
        );
        assert!(index.slots.len() * std::mem::size_of::<Slot>() > PREFETCH_BYTES);
    }

    #[test]
    fn groups_are_numbered_in_order_of_first_appearance() {
        let mut index = GroupIndex::hashed(1);
        let codes = [
            Some(7),
            Some(0),
            None,
            Some(7),
            Some(u64::MAX),
            None,
            Some(0),
        ];
        let groups: Vec<u32> = codes.iter().map(|&c| index.group(c)).collect();
        assert_eq!(groups, vec![0, 1, 2, 0, 3, 2, 1]);
        assert_eq!(index.groups(), 4);
        assert_eq!(index.code(2), None);
        assert_eq!(index.code(3), Some(u64::MAX));
        for c in 0..10_000u64 {
            index.group(Some(c * 977));
        }
        assert_eq!(index.group(Some(7)), 0);
        let codes = index.into_codes();
        assert_eq!(codes[..4], [Some(7), Some(0), None, Some(u64::MAX)]);
        assert_eq!(codes.len(), 4 + 10_000 - 1, "0 was numbered already");
        let mut direct = GroupIndex::direct(9);
        assert_eq!(direct.group(Some(4)), 4);
        assert_eq!(direct.group(None), 10);
        assert_eq!(direct.groups(), 11);
        assert_eq!(direct.code(10), None);
    }
}
