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
//! Storage is a [`NodeBuffer`] bound to the table's home node. A fresh
//! mapping is zero-filled, which is exactly an empty table, so a new table
//! costs no initialisation pass and its pages are touched (and placed) by
//! whoever inserts first. Large tables use transparent huge pages, since
//! every access is random.
//!
//! This module does not partition, merge across workers or know about
//! threads; the methods do.

use bytemuck::{Pod, Zeroable};

use numakit_placement::{BufferOptions, HugePages, NodeBuffer, Placement, Placer};
use numakit_topology::NodeId;

use crate::aggregate::prefetch::prefetch;
use crate::aggregate::Group;
use crate::error::Result;
use crate::hash::hash64;
use crate::tuple::Tuple;

/// Smallest capacity a table is made with.
const MIN_CAPACITY: usize = 16;
/// Tables at least this large (in bytes) use transparent huge pages.
const HUGE_PAGES_FROM_BYTES: usize = 4 << 20;
/// Tables larger than this (in bytes, about a private L2) prefetch the
/// slots of a batch of rows before updating them.
const PREFETCH_FROM_BYTES: usize = 512 << 10;
/// Rows whose slots are prefetched together.
const PREFETCH_BATCH: usize = 16;

/// One slot: a group, or nothing when `count` is zero.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct Slot {
    pub key: u64,
    pub count: u64,
    pub sum: i128,
    pub min: i64,
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

/// Bytes of a table that holds `groups` groups without growing.
pub fn bytes_for(groups: u64) -> u64 {
    capacity_for(usize::try_from(groups).unwrap_or(usize::MAX)) as u64 * SLOT_BYTES as u64
}

/// A hash table of groups placed on one node.
pub struct GroupTable {
    slots: NodeBuffer<Slot>,
    mask: usize,
    len: usize,
    /// Groups the table may hold before it doubles.
    limit: usize,
    node: NodeId,
    placer: Placer,
}

impl GroupTable {
    /// An empty table on `node` with room for `groups` groups.
    pub fn with_capacity(placer: &Placer, node: NodeId, groups: usize) -> Result<Self> {
        let capacity = capacity_for(groups);
        Ok(Self {
            slots: alloc_slots(placer, node, capacity)?,
            mask: capacity - 1,
            len: 0,
            limit: capacity / 2,
            node,
            placer: placer.clone(),
        })
    }

    /// Number of groups.
    pub fn len(&self) -> usize {
        self.len
    }

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
        self.node
    }

    /// Adds one row.
    #[inline(always)]
    pub fn add(&mut self, key: u64, value: i64) -> Result<()> {
        self.add_hashed(key, hash64(key), value)
    }

    /// Adds one row whose key hashes (with [`hash64`]) to `hash`.
    #[inline(always)]
    pub fn add_hashed(&mut self, key: u64, hash: u64, value: i64) -> Result<()> {
        let mask = self.mask;
        let mut i = hash as usize & mask;
        loop {
            let slot = &mut self.slots[i];
            if slot.is_empty() {
                if self.len >= self.limit {
                    return self.grow_and_add(key, hash, value);
                }
                slot.start(key, value);
                self.len += 1;
                return Ok(());
            }
            if slot.key == key {
                slot.add(value);
                return Ok(());
            }
            i = (i + 1) & mask;
        }
    }

    #[cold]
    fn grow_and_add(&mut self, key: u64, hash: u64, value: i64) -> Result<()> {
        self.grow()?;
        self.add_hashed(key, hash, value)
    }

    /// Adds every row of `rows` (payloads read as `i64`).
    pub fn add_rows(&mut self, rows: &[Tuple]) -> Result<()> {
        if self.bytes() < PREFETCH_FROM_BYTES {
            for t in rows {
                self.add(t.key, t.payload as i64)?;
            }
            return Ok(());
        }
        let mut hashes = [0u64; PREFETCH_BATCH];
        for batch in rows.chunks(PREFETCH_BATCH) {
            for (h, t) in hashes.iter_mut().zip(batch) {
                *h = hash64(t.key);
                prefetch(&self.slots[*h as usize & self.mask]);
            }
            for (h, t) in hashes.iter().zip(batch) {
                self.add_hashed(t.key, *h, t.payload as i64)?;
            }
        }
        Ok(())
    }

    /// Merges a partial aggregate whose key hashes to `hash`.
    #[inline]
    pub fn merge_hashed(&mut self, group: &Group, hash: u64) -> Result<()> {
        let mask = self.mask;
        let mut i = hash as usize & mask;
        loop {
            let slot = &mut self.slots[i];
            if slot.is_empty() {
                if self.len >= self.limit {
                    self.grow()?;
                    return self.merge_hashed(group, hash);
                }
                *slot = Slot {
                    key: group.key,
                    count: group.count,
                    sum: group.sum,
                    min: group.min,
                    max: group.max,
                };
                self.len += 1;
                return Ok(());
            }
            if slot.key == group.key {
                slot.merge(group);
                return Ok(());
            }
            i = (i + 1) & mask;
        }
    }

    /// The groups, in slot order.
    pub fn groups(&self) -> impl Iterator<Item = Group> + '_ {
        self.slots.iter().filter(|s| !s.is_empty()).map(Slot::group)
    }

    /// Appends every group to `out` and empties the table (keeping its
    /// capacity and placement, ready for the next partition).
    pub fn drain_into(&mut self, out: &mut Vec<Group>) {
        if self.len == 0 {
            return;
        }
        out.reserve(self.len);
        for slot in self.slots.iter_mut().filter(|s| !s.is_empty()) {
            out.push(slot.group());
            slot.count = 0;
        }
        self.len = 0;
    }

    /// Copies the slots into a new buffer on `node` (the state copy of
    /// migration & copy); returns the bytes copied.
    pub fn move_to(&mut self, node: NodeId) -> Result<usize> {
        let mut moved = alloc_slots(&self.placer, node, self.capacity())?;
        moved.copy_from_slice(&self.slots);
        self.slots = moved;
        self.node = node;
        Ok(self.bytes())
    }

    /// Doubles the capacity, rehashing every group into slots on the same
    /// node.
    fn grow(&mut self) -> Result<()> {
        let capacity = self.capacity() * 2;
        let old = std::mem::replace(
            &mut self.slots,
            alloc_slots(&self.placer, self.node, capacity)?,
        );
        self.mask = capacity - 1;
        self.limit = capacity / 2;
        self.len = 0;
        for slot in old.iter().filter(|s| !s.is_empty()) {
            self.merge_hashed(&slot.group(), hash64(slot.key))?;
        }
        Ok(())
    }
}

impl std::fmt::Debug for GroupTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupTable")
            .field("len", &self.len)
            .field("capacity", &self.capacity())
            .field("node", &self.node)
            .finish()
    }
}

/// `capacity` empty (zeroed) slots bound to `node`, not yet touched.
fn alloc_slots(placer: &Placer, node: NodeId, capacity: usize) -> Result<NodeBuffer<Slot>> {
    let mut options = BufferOptions::new(Placement::OnNode(node));
    options.prefault = false;
    if capacity * SLOT_BYTES >= HUGE_PAGES_FROM_BYTES {
        options.huge_pages = HugePages::Transparent;
    }
    Ok(NodeBuffer::with_options(placer, capacity, options)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference;
    use crate::testing::pool;

    fn table(groups: usize) -> GroupTable {
        let pool = pool(1);
        let node = pool.nodes()[0];
        GroupTable::with_capacity(pool.placer(), node, groups).unwrap()
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
    }

    #[test]
    fn extreme_keys_and_values_are_ordinary() {
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
        let mut t = table(0);
        t.add_rows(&rows).unwrap();
        assert_eq!(t.len(), 3);
        assert_eq!(sorted(&t), reference::aggregate(&rows));
        let zero = sorted(&t)[0];
        assert_eq!(zero.sum, 2 * i64::MIN as i128 + 5);
    }

    #[test]
    fn growth_keeps_every_group_and_the_load_at_most_half() {
        let rows: Vec<Tuple> = (0..50_000u64)
            .map(|i| Tuple::new((i % 20_011).wrapping_mul(0x9e37_79b9_7f4a_7c15), i))
            .collect();
        let mut t = table(1);
        t.add_rows(&rows).unwrap();
        assert_eq!(t.len(), 20_011);
        assert!(t.len() * 2 <= t.capacity());
        assert_eq!(sorted(&t), reference::aggregate(&rows));
    }

    #[test]
    fn prefetching_path_agrees_with_the_plain_one() {
        let rows: Vec<Tuple> = (0..100_000u64)
            .map(|i| Tuple::new(i % 3001, i.wrapping_mul(7)))
            .collect();
        let mut big = table(40_000);
        assert!(big.bytes() >= PREFETCH_FROM_BYTES);
        big.add_rows(&rows).unwrap();
        assert_eq!(sorted(&big), reference::aggregate(&rows));
    }

    #[test]
    fn drain_empties_and_merge_combines() {
        let rows: Vec<Tuple> = (0..1000u64).map(|i| Tuple::new(i % 10, i)).collect();
        let mut a = table(4);
        a.add_rows(&rows[..500]).unwrap();
        let mut b = table(4);
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
        let rows: Vec<Tuple> = (0..300u64).map(|i| Tuple::new(i % 7, i)).collect();
        let mut t = table(8);
        t.add_rows(&rows).unwrap();
        let node = t.node();
        assert_eq!(t.move_to(node).unwrap(), t.bytes());
        assert_eq!(sorted(&t), reference::aggregate(&rows));
    }
}
