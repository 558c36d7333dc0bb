//! The aggregation state of one worker: an open-addressing hash table of
//! [`Group`]s keyed by any 64-bit value.
//!
//! Linear probing on the low bits of [`hash64`] (partitioning uses the high
//! bits, so keys of one partition still spread over the whole table). The
//! capacity is a power of two and doubles when more than half the slots
//! are taken.
//!
//! Occupancy: a slot is empty exactly when its `count` is zero. Every
//! stored group has counted at least one row, so no key value is reserved
//! as an "empty" marker: 0 and `u64::MAX` are keys like any other.
//!
//! Storage is a zeroed [`NodeArray`] bound to the table's home node, in
//! memory reused across runs (see `storage.rs`); large ones use huge
//! pages, since every access is random. The probe loops work on the
//! slice directly and stop, rather than fail, when the table is full; the
//! caller grows it and goes on.
//!
//! This module does not partition, merge across workers or know about
//! threads; the methods do.

use bytemuck::{Pod, Zeroable};

use numakit_pool::Pool;
use numakit_topology::NodeId;

use crate::aggregate::storage::NodeArray;
use crate::aggregate::Group;
use crate::error::Result;
use crate::hash::hash64;
use crate::prefetch::prefetch;
use crate::tuple::Tuple;

/// Smallest capacity a table is made with.
const MIN_CAPACITY: usize = 16;
/// Tables larger than this (in bytes, about a private L2) prefetch the
/// slots of a batch of rows before updating them.
const PREFETCH_FROM_BYTES: usize = 512 << 10;
/// Rows whose slots are prefetched together.
const PREFETCH_BATCH: usize = 16;
/// New tables up to this size get room to spare (see [`initial_capacity`]).
const SPARSE_UP_TO_BYTES: usize = 256 << 10;

/// One slot: a group, or nothing when `count` is zero.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct Slot {
    /// The group's key (meaningless in an empty slot).
    pub key: u64,
    /// Rows of the group; 0 marks an empty slot.
    pub count: u64,
    /// Exact sum of the group's values.
    pub sum: i128,
    /// Smallest value of the group.
    pub min: i64,
    /// Largest value of the group.
    pub max: i64,
}

/// Bytes per slot.
pub const SLOT_BYTES: usize = std::mem::size_of::<Slot>();

impl Slot {
    #[inline(always)]
    fn is_empty(&self) -> bool {
        self.count == 0
    }

    #[inline(always)]
    fn start(&mut self, key: u64, value: i64) {
        *self = Slot {
            key,
            count: 1,
            sum: value as i128,
            min: value,
            max: value,
        };
    }

    #[inline(always)]
    fn add(&mut self, value: i64) {
        self.count += 1;
        self.sum += value as i128;
        self.min = self.min.min(value);
        self.max = self.max.max(value);
    }

    #[inline(always)]
    fn of_group(g: &Group) -> Self {
        Slot {
            key: g.key,
            count: g.count,
            sum: g.sum,
            min: g.min,
            max: g.max,
        }
    }

    #[inline(always)]
    fn merge(&mut self, g: &Group) {
        self.count += g.count;
        self.sum += g.sum;
        self.min = self.min.min(g.min);
        self.max = self.max.max(g.max);
    }

    #[inline(always)]
    fn group(&self) -> Group {
        Group {
            key: self.key,
            count: self.count,
            sum: self.sum,
            min: self.min,
            max: self.max,
        }
    }
}

/// Slots a table needs to hold `groups` groups without growing.
pub fn capacity_for(groups: usize) -> usize {
    groups
        .saturating_mul(2)
        .max(MIN_CAPACITY)
        .checked_next_power_of_two()
        .unwrap_or(1 << (usize::BITS - 1))
}

/// Slots a new table for `groups` groups gets: [`capacity_for`], doubled
/// up to twice while the table stays within [`SPARSE_UP_TO_BYTES`]. A
/// sparser table mispredicts fewer probes (at load 1/2 about a third of
/// lookups miss their first slot, at 1/8 a sixteenth), which for tables
/// that fit a private cache anyway is most of their cost.
fn initial_capacity(groups: usize) -> usize {
    let mut capacity = capacity_for(groups);
    for _ in 0..2 {
        if capacity * 2 * SLOT_BYTES > SPARSE_UP_TO_BYTES {
            break;
        }
        capacity *= 2;
    }
    capacity
}

/// Bytes of a table that holds `groups` groups without growing.
pub fn bytes_for(groups: u64) -> u64 {
    capacity_for(usize::try_from(groups).unwrap_or(usize::MAX)) as u64 * SLOT_BYTES as u64
}

/// A hash table of groups placed on one node.
pub struct GroupTable<'p> {
    slots: NodeArray<Slot>,
    mask: usize,
    len: usize,
    /// Groups the table may hold before it doubles.
    limit: usize,
    pool: &'p Pool,
}

impl<'p> GroupTable<'p> {
    /// An empty table on `node` with room for `groups` groups.
    pub fn with_capacity(pool: &'p Pool, node: NodeId, groups: usize) -> Result<Self> {
        let capacity = initial_capacity(groups);
        Ok(Self {
            slots: NodeArray::zeroed(pool, node, capacity)?,
            mask: capacity - 1,
            len: 0,
            limit: capacity / 2,
            pool,
        })
    }

    /// Number of groups.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the table holds no group.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of slots.
    pub fn capacity(&self) -> usize {
        self.mask + 1
    }

    /// Size of the slots in bytes.
    pub fn bytes(&self) -> usize {
        self.capacity() * SLOT_BYTES
    }

    /// The node the slots are bound to.
    pub fn node(&self) -> NodeId {
        self.slots.node()
    }

    /// Adds one row.
    pub fn add(&mut self, key: u64, value: i64) -> Result<()> {
        self.add_rows(&[Tuple::new(key, value as u64)])
    }

    /// Adds every row of `rows` (payloads read as `i64`), growing the
    /// table whenever it is full.
    pub fn add_rows(&mut self, rows: &[Tuple]) -> Result<()> {
        let mut done = 0;
        while done < rows.len() {
            done += if self.bytes() < PREFETCH_FROM_BYTES {
                self.add_until_full(&rows[done..])
            } else {
                self.add_until_full_prefetching(&rows[done..])
            };
            if done < rows.len() {
                self.grow()?;
            }
        }
        Ok(())
    }

    /// Adds rows until one would start a group beyond the limit; returns
    /// how many were added.
    fn add_until_full(&mut self, rows: &[Tuple]) -> usize {
        let (mask, limit) = (self.mask, self.limit);
        let slots = self.slots.as_mut_slice();
        for (done, t) in rows.iter().enumerate() {
            let slot = &mut slots[find(slots, mask, t.key, hash64(t.key))];
            if slot.is_empty() {
                if self.len >= limit {
                    return done;
                }
                slot.start(t.key, t.payload as i64);
                self.len += 1;
            } else {
                slot.add(t.payload as i64);
            }
        }
        rows.len()
    }

    /// [`Self::add_until_full`] for tables beyond the private cache:
    /// hashes a batch of rows and prefetches their slots first.
    fn add_until_full_prefetching(&mut self, rows: &[Tuple]) -> usize {
        let (mask, limit) = (self.mask, self.limit);
        let slots = self.slots.as_mut_slice();
        let mut hashes = [0u64; PREFETCH_BATCH];
        for (b, batch) in rows.chunks(PREFETCH_BATCH).enumerate() {
            for (h, t) in hashes.iter_mut().zip(batch) {
                *h = hash64(t.key);
                prefetch(&slots[*h as usize & mask]);
            }
            for (j, (h, t)) in hashes.iter().zip(batch).enumerate() {
                let slot = &mut slots[find(slots, mask, t.key, *h)];
                if slot.is_empty() {
                    if self.len >= limit {
                        return b * PREFETCH_BATCH + j;
                    }
                    slot.start(t.key, t.payload as i64);
                    self.len += 1;
                } else {
                    slot.add(t.payload as i64);
                }
            }
        }
        rows.len()
    }

    /// Merges a partial aggregate whose key hashes to `hash`.
    pub fn merge_hashed(&mut self, group: &Group, hash: u64) -> Result<()> {
        if self.len >= self.limit {
            self.grow()?;
        }
        let slots = self.slots.as_mut_slice();
        let slot = &mut slots[find(slots, self.mask, group.key, hash)];
        if slot.is_empty() {
            *slot = Slot::of_group(group);
            self.len += 1;
        } else {
            slot.merge(group);
        }
        Ok(())
    }

    /// The groups, in slot order.
    pub fn groups(&self) -> impl Iterator<Item = Group> + '_ {
        self.slots
            .as_slice()
            .iter()
            .filter(|s| !s.is_empty())
            .map(Slot::group)
    }

    /// Appends every group to `out` and empties the table (keeping its
    /// capacity and placement, ready for the next partition).
    pub fn drain_into(&mut self, out: &mut Vec<Group>) {
        if self.len == 0 {
            return;
        }
        out.reserve(self.len);
        for slot in self.slots.as_mut_slice().iter_mut() {
            if !slot.is_empty() {
                out.push(slot.group());
                slot.count = 0;
            }
        }
        self.len = 0;
    }

    /// Copies the slots into a new array on `node` (the state copy of
    /// migration & copy); returns the bytes copied.
    pub fn move_to(&mut self, node: NodeId) -> Result<usize> {
        let mut moved = NodeArray::zeroed(self.pool, node, self.capacity())?;
        moved.as_mut_slice().copy_from_slice(self.slots.as_slice());
        self.slots = moved;
        Ok(self.bytes())
    }

    /// Doubles the capacity, rehashing every group into slots on the same
    /// node.
    fn grow(&mut self) -> Result<()> {
        let capacity = self.capacity() * 2;
        let bigger = NodeArray::zeroed(self.pool, self.node(), capacity)?;
        let old = std::mem::replace(&mut self.slots, bigger);
        self.mask = capacity - 1;
        self.limit = capacity / 2;
        let slots = self.slots.as_mut_slice();
        for slot in old.as_slice().iter().filter(|s| !s.is_empty()) {
            let i = find(slots, self.mask, slot.key, hash64(slot.key));
            slots[i] = *slot;
        }
        Ok(())
    }
}

/// The slot holding `key` (whose hash is `hash`), or the empty slot where
/// it belongs. The table must have an empty slot.
#[inline(always)]
fn find(slots: &[Slot], mask: usize, key: u64, hash: u64) -> usize {
    let mut i = hash as usize & mask;
    loop {
        let slot = &slots[i];
        if slot.is_empty() || slot.key == key {
            return i;
        }
        i = (i + 1) & mask;
    }
}

impl std::fmt::Debug for GroupTable<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupTable")
            .field("len", &self.len)
            .field("capacity", &self.capacity())
            .field("node", &self.node())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference;
    use crate::testing::pool;

    fn table(pool: &Pool, groups: usize) -> GroupTable<'_> {
        GroupTable::with_capacity(pool, pool.nodes()[0], groups).unwrap()
    }

    fn sorted(t: &GroupTable) -> Vec<Group> {
        let mut g: Vec<Group> = t.groups().collect();
        g.sort_unstable_by_key(|g| g.key);
        g
    }

    #[test]
    fn slots_are_48_bytes_and_capacity_is_a_power_of_two() {
        assert_eq!(SLOT_BYTES, 48);
        assert_eq!(capacity_for(0), MIN_CAPACITY);
        assert_eq!(capacity_for(1000), 2048);
        assert_eq!(capacity_for(1024), 2048);
        assert_eq!(capacity_for(1025), 4096);
        assert_eq!(initial_capacity(1000), 4096);
        assert_eq!(initial_capacity(10), 128);
        assert_eq!(initial_capacity(100_000), capacity_for(100_000));
    }

    #[test]
    fn extreme_keys_and_values_are_ordinary() {
        let pool = pool(1);
        let rows: Vec<Tuple> = [
            (0, i64::MIN),
            (u64::MAX, i64::MAX),
            (0, i64::MIN),
            (u64::MAX, i64::MAX),
            (0, 5),
            (1, 0),
        ]
        .iter()
        .map(|&(k, v)| Tuple::new(k, v as u64))
        .collect();
        let mut t = table(&pool, 0);
        t.add_rows(&rows).unwrap();
        assert_eq!(t.len(), 3);
        assert_eq!(sorted(&t), reference::aggregate(&rows));
        let zero = sorted(&t)[0];
        assert_eq!(zero.sum, 2 * i64::MIN as i128 + 5);
    }

    #[test]
    fn growth_keeps_every_group_and_the_load_at_most_half() {
        let pool = pool(1);
        let rows: Vec<Tuple> = (0..50_000u64)
            .map(|i| Tuple::new((i % 20_011).wrapping_mul(0x9e37_79b9_7f4a_7c15), i))
            .collect();
        let mut t = table(&pool, 1);
        t.add_rows(&rows).unwrap();
        assert_eq!(t.len(), 20_011);
        assert!(t.len() * 2 <= t.capacity());
        assert_eq!(sorted(&t), reference::aggregate(&rows));
    }

    #[test]
    fn prefetching_path_agrees_with_the_plain_one() {
        let pool = pool(1);
        let rows: Vec<Tuple> = (0..100_000u64)
            .map(|i| Tuple::new(i % 3001, i.wrapping_mul(7)))
            .collect();
        let mut big = table(&pool, 40_000);
        assert!(big.bytes() >= PREFETCH_FROM_BYTES);
        big.add_rows(&rows).unwrap();
        assert_eq!(sorted(&big), reference::aggregate(&rows));
    }

    #[test]
    fn drain_empties_and_merge_combines() {
        let pool = pool(1);
        let rows: Vec<Tuple> = (0..1000u64).map(|i| Tuple::new(i % 10, i)).collect();
        let mut a = table(&pool, 4);
        a.add_rows(&rows[..500]).unwrap();
        let mut b = table(&pool, 4);
        b.add_rows(&rows[500..]).unwrap();
        for g in b.groups() {
            a.merge_hashed(&g, hash64(g.key)).unwrap();
        }
        let mut out = Vec::new();
        a.drain_into(&mut out);
        out.sort_unstable_by_key(|g| g.key);
        assert_eq!(out, reference::aggregate(&rows));
        assert!(a.is_empty() && a.groups().next().is_none());
        a.add(3, 1).unwrap();
        assert_eq!(sorted(&a), vec![Group::of(3, 1)]);
    }

    #[test]
    fn move_to_keeps_the_groups() {
        let pool = pool(1);
        let rows: Vec<Tuple> = (0..300u64).map(|i| Tuple::new(i % 7, i)).collect();
        let mut t = table(&pool, 8);
        t.add_rows(&rows).unwrap();
        let node = t.node();
        assert_eq!(t.move_to(node).unwrap(), t.bytes());
        assert_eq!(sorted(&t), reference::aggregate(&rows));
    }
}
