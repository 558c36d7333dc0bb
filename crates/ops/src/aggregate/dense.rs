//! The aggregation state for dense keys: a direct-indexed array of groups
//! for one key range, and a hash table for the keys outside it.
//!
//! Group-by keys are often dense (dictionary codes, surrogate ids): when
//! the keys seen in a sample span a range not much wider than the number
//! of groups, key `k` simply lives in cell `k - base`. No hash, no
//! probing, no mispredicted compare: an update is a subtraction, a bounds
//! check that is almost always true, and the four aggregates. Keys outside
//! the range (the sample missed them) go to an ordinary [`GroupTable`], so
//! any input is still aggregated exactly.
//!
//! A cell is empty when its count is zero, as in [`GroupTable`]; a zeroed
//! array is an empty one. The exact 128-bit sum is kept as
//! two 64-bit halves so that a cell is 40 bytes, not the 48 an aligned
//! `i128` would make it.
//!
//! This module does not choose the range or partition (`choose.rs`,
//! `partitioned.rs`).

use bytemuck::{Pod, Zeroable};
use serde::Serialize;

use numakit_pool::Pool;
use numakit_topology::NodeId;

use crate::aggregate::storage::NodeArray;
use crate::aggregate::table::GroupTable;
use crate::aggregate::Group;
use crate::error::{OpsError, Result};
use crate::tuple::Tuple;

/// Groups the overflow table starts with room for.
const OVERFLOW_GROUPS: usize = 64;

/// Keys `base..base + len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct KeyRange {
    /// The first key of the range (cell 0).
    pub base: u64,
    /// Number of keys (and cells) in the range.
    pub len: u64,
}

impl KeyRange {
    /// The cell of `key`, if it is in the range.
    #[inline(always)]
    pub fn index_of(&self, key: u64) -> Option<u64> {
        let i = key.wrapping_sub(self.base);
        (i < self.len).then_some(i)
    }
}

/// One key's aggregates; empty when `count` is zero.
///
/// `min` and `max` are stored xor-ed with the identity of their operation
/// (`i64::MAX` for min, `i64::MIN` for max), so that a zeroed cell holds
/// the identities and an update needs no "first value" branch, which the
/// first touch of every cell would mispredict.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct Cell {
    /// Rows aggregated into the cell; 0 for an empty cell.
    pub count: u64,
    sum_low: u64,
    sum_high: i64,
    min_code: i64,
    max_code: i64,
}

/// Bytes per cell.
pub const CELL_BYTES: usize = std::mem::size_of::<Cell>();

impl Cell {
    /// Exact sum of the cell's values; 0 for an empty cell.
    #[inline(always)]
    pub fn sum(&self) -> i128 {
        ((self.sum_high as i128) << 64) | self.sum_low as i128
    }

    /// Smallest value of the cell; `i64::MAX` for an empty cell.
    #[inline(always)]
    pub fn min(&self) -> i64 {
        self.min_code ^ i64::MAX
    }

    /// Largest value of the cell; `i64::MIN` for an empty cell.
    #[inline(always)]
    pub fn max(&self) -> i64 {
        self.max_code ^ i64::MIN
    }

    #[inline(always)]
    fn set_sum(&mut self, sum: i128) {
        self.sum_low = sum as u64;
        self.sum_high = (sum >> 64) as i64;
    }

    #[inline(always)]
    fn update(&mut self, count: u64, sum: i128, min: i64, max: i64) {
        self.count += count;
        self.set_sum(self.sum() + sum);
        self.min_code = self.min().min(min) ^ i64::MAX;
        self.max_code = self.max().max(max) ^ i64::MIN;
    }

    #[inline(always)]
    fn add(&mut self, value: i64) {
        self.update(1, value as i128, value, value);
    }

    #[inline(always)]
    fn merge(&mut self, g: &Group) {
        self.update(g.count, g.sum, g.min, g.max);
    }

    /// Adds another partial aggregate of the same key.
    #[inline(always)]
    fn combine(&mut self, other: &Cell) {
        self.update(other.count, other.sum(), other.min(), other.max());
    }

    #[inline(always)]
    fn group(&self, key: u64) -> Group {
        Group {
            key,
            count: self.count,
            sum: self.sum(),
            min: self.min(),
            max: self.max(),
        }
    }
}

/// Groups of one key range in an array, the rest in a hash table.
pub struct DenseTable<'p> {
    range: KeyRange,
    cells: NodeArray<Cell>,
    overflow: GroupTable<'p>,
}

impl<'p> DenseTable<'p> {
    /// An empty table for `range` placed on `node`.
    pub fn new(pool: &'p Pool, node: NodeId, range: KeyRange) -> Result<Self> {
        let len = usize::try_from(range.len)
            .map_err(|_| OpsError::InvalidArgument(format!("a key range of {}", range.len)))?;
        Ok(Self {
            range,
            cells: NodeArray::zeroed(pool, node, len)?,
            overflow: GroupTable::with_capacity(pool, node, OVERFLOW_GROUPS)?,
        })
    }

    /// The keys the array covers (others go to the overflow table).
    pub fn range(&self) -> KeyRange {
        self.range
    }

    /// Moves the (empty) array to another range of the same length.
    pub fn rebase(&mut self, base: u64) {
        self.range.base = base;
    }

    /// Adds every row of `rows` (payloads read as `i64`).
    pub fn add_rows(&mut self, rows: &[Tuple]) -> Result<()> {
        let cells = self.cells.as_mut_slice();
        let base = self.range.base;
        for t in rows {
            let i = t.key.wrapping_sub(base);
            match cells.get_mut(i as usize) {
                Some(cell) if i < self.range.len => cell.add(t.payload as i64),
                _ => self.overflow.add(t.key, t.payload as i64)?,
            }
        }
        Ok(())
    }

    /// The groups of cells `cells` (indices into the range), in key order.
    pub fn cell_groups(&self, cells: std::ops::Range<usize>) -> impl Iterator<Item = Group> + '_ {
        let base = self.range.base;
        self.cells.as_slice()[cells.clone()]
            .iter()
            .zip(cells)
            .filter(|(c, _)| c.count != 0)
            .map(move |(c, i)| c.group(base.wrapping_add(i as u64)))
    }

    /// Merges `group` into cell `index` (which must be in the range).
    #[inline]
    pub fn merge_cell(&mut self, index: usize, group: &Group) {
        self.cells.as_mut_slice()[index].merge(group);
    }

    /// The cells, in key order.
    pub fn cells(&self) -> &[Cell] {
        self.cells.as_slice()
    }

    /// The table of keys outside the range.
    pub fn overflow(&self) -> &GroupTable<'p> {
        &self.overflow
    }

    /// Appends every group to `out` and empties the table.
    pub fn drain_into(&mut self, out: &mut Vec<Group>) {
        let base = self.range.base;
        for (i, cell) in self.cells.as_mut_slice().iter_mut().enumerate() {
            if cell.count != 0 {
                out.push(cell.group(base.wrapping_add(i as u64)));
                *cell = Cell::zeroed();
            }
        }
        self.overflow.drain_into(out);
    }
}

/// The groups of cells `cells` combined over tables of the same range.
pub fn combined_groups(tables: &[DenseTable], cells: std::ops::Range<usize>) -> Vec<Group> {
    let Some(first) = tables.first() else {
        return Vec::new();
    };
    let base = first.range.base;
    let mut out = Vec::new();
    for i in cells {
        let mut cell = Cell::zeroed();
        for t in tables {
            cell.combine(&t.cells()[i]);
        }
        if cell.count != 0 {
            out.push(cell.group(base.wrapping_add(i as u64)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference;
    use crate::testing::pool;

    fn table(pool: &Pool, base: u64, len: u64) -> DenseTable<'_> {
        DenseTable::new(pool, pool.nodes()[0], KeyRange { base, len }).unwrap()
    }

    fn drained(t: &mut DenseTable) -> Vec<Group> {
        let mut out = Vec::new();
        t.drain_into(&mut out);
        out.sort_unstable_by_key(|g| g.key);
        out
    }

    #[test]
    fn cells_are_40_bytes_and_sums_exact() {
        assert_eq!(CELL_BYTES, 40);
        let mut c = Cell::default();
        for v in [i64::MIN, i64::MIN, i64::MAX, -1] {
            c.add(v);
        }
        assert_eq!(c.sum(), 2 * i64::MIN as i128 + i64::MAX as i128 - 1);
        assert_eq!((c.count, c.min(), c.max()), (4, i64::MIN, i64::MAX));
        let zero = Cell::zeroed();
        assert_eq!((zero.min(), zero.max()), (i64::MAX, i64::MIN));
    }

    #[test]
    fn keys_inside_and_outside_the_range() {
        let pool = pool(1);
        let rows: Vec<Tuple> = (0..20_000u64)
            .map(|i| Tuple::new(i % 1500, i.wrapping_mul(31) % 97))
            .chain([Tuple::new(u64::MAX, 3), Tuple::new(0, i64::MIN as u64)])
            .collect();
        let mut t = table(&pool, 100, 1000);
        t.add_rows(&rows).unwrap();
        assert!(t.overflow().len() > 400);
        assert_eq!(drained(&mut t), reference::aggregate(&rows));
        assert!(drained(&mut t).is_empty());
    }

    #[test]
    fn a_range_at_the_top_of_the_key_space() {
        let pool = pool(1);
        let rows: Vec<Tuple> = (0..100u64)
            .map(|i| Tuple::new(u64::MAX - i % 10, i))
            .collect();
        let mut t = table(&pool, u64::MAX - 9, 10);
        t.add_rows(&rows).unwrap();
        assert!(t.overflow().is_empty());
        assert_eq!(t.cell_groups(0..10).count(), 10);
        assert_eq!(drained(&mut t), reference::aggregate(&rows));
    }

    #[test]
    fn tables_combine_cell_by_cell() {
        let pool = pool(1);
        let rows: Vec<Tuple> = (0..5000u64).map(|i| Tuple::new(i % 50, i)).collect();
        let mut a = table(&pool, 0, 50);
        a.add_rows(&rows[..2000]).unwrap();
        let mut b = table(&pool, 0, 50);
        b.add_rows(&rows[2000..]).unwrap();
        let tables = [a, b];
        let mut g = combined_groups(&tables, 0..20);
        g.extend(combined_groups(&tables, 20..50));
        assert_eq!(g, reference::aggregate(&rows));
        assert!(combined_groups(&[], 0..0).is_empty());
    }

    #[test]
    fn rebased_tables_and_merged_cells() {
        let pool = pool(1);
        let mut t = table(&pool, 0, 8);
        t.add_rows(&[Tuple::new(3, 5)]).unwrap();
        let _ = drained(&mut t);
        t.rebase(1000);
        t.add_rows(&[Tuple::new(1003, 7), Tuple::new(3, 1)])
            .unwrap();
        t.merge_cell(3, &Group::of(1003, -2));
        let g = drained(&mut t);
        assert_eq!(
            g,
            vec![Group::of(3, 1), {
                let mut x = Group::of(1003, 7);
                x.add(-2);
                x
            }]
        );
    }
}
