//! A hash table of distinct byte keys, numbered in the order they first
//! come, with the keys' bytes copied into an arena the table owns: the
//! building block of the dictionaries and of the streaming group-by's
//! per-worker key numbering.
//!
//! A slot holds the upper half of the key's 64-bit hash and the index of
//! its entry; when the halves match, the full hashes and then the *real
//! keys* are compared, so a hash collision only costs a comparison and
//! never merges two keys. It does not hash (callers pass the hash) and
//! does not shrink.

use crate::keys::stored::StoredPartition;
use crate::table::RowRef;

/// A dictionary entry: a key's full hash, where its bytes are in the
/// table's arena, and a row that holds it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Entry {
    pub(crate) hash: u64,
    start: usize,
    len: usize,
    pub(crate) representative: RowRef,
}

/// One hash table of distinct keys, with the keys' bytes in an arena.
#[derive(Debug, Default)]
pub(crate) struct KeyTable {
    /// 0 when empty; else the hash's upper half and (entry index + 1).
    slots: Vec<u64>,
    pub(crate) entries: Vec<Entry>,
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

    /// Makes room for `keys` more keys of `bytes` bytes in all, without
    /// growing the hash slots (they grow as keys come).
    pub(crate) fn reserve(&mut self, keys: usize, bytes: usize) {
        self.entries.reserve(keys);
        self.arena.reserve(bytes);
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Bytes of all its keys together.
    pub(crate) fn key_bytes(&self) -> usize {
        self.arena.len()
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
    pub(crate) fn find(&self, hash: u64, key: &[u8]) -> Result<u32, usize> {
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

    /// The keys' bytes and where each ends, in entry order, without the
    /// hash slots.
    pub(crate) fn into_stored(self) -> StoredPartition {
        let KeyTable { entries, arena, .. } = self;
        StoredPartition::new(entries.iter().map(|e| e.start + e.len).collect(), arena)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::row_ref;

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
