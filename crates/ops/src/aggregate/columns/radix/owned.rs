//! One partition as its owner holds it: its table and the rows parked for
//! it.
//!
//! A partition with a few groups takes rows at once. A bigger one parks
//! them and adds them in one go once they are twice its groups, so its
//! table comes into the cache once for many rows, and what is parked stays
//! below twice the groups. It does not scatter rows between workers.
//!
//! Tried and left out: splitting a partition past 8K groups into 16
//! sub-partitions by further hash bits, each with rows parked for it. On
//! 64M rows of 2^24 random keys it took twice the time and half again
//! the memory: the many small parked buffers cost more than the smaller
//! tables saved.

use crate::aggregate::columns::{AggSpec, Groups, Partial, Segment};
use crate::error::Result;

use super::pending::Pending;

/// A partition held by its owner.
pub(super) struct OwnedPartition {
    partial: Partial,
    parked: Pending,
}

impl OwnedPartition {
    /// An empty partition.
    pub(super) fn new(specs: &[AggSpec]) -> Self {
        OwnedPartition {
            partial: Partial::for_partition(specs),
            parked: Pending::default(),
        }
    }

    /// Adds the rows of `segment`: at once while the partition has at most
    /// `park_groups` groups, else parked until they are twice its groups.
    pub(super) fn take(
        &mut self,
        segment: &Segment<'_>,
        specs: &[AggSpec],
        park_groups: usize,
    ) -> Result<()> {
        if self.partial.groups() <= park_groups && self.parked.rows() == 0 {
            return self.partial.add(segment, specs);
        }
        self.parked.push(segment);
        if self.parked.rows() >= 2 * self.partial.groups() {
            self.add_parked(specs)?;
        }
        Ok(())
    }

    /// Merges group `g` of `other` (codes meaning the same) in.
    pub(super) fn merge_group(
        &mut self,
        other: &Partial,
        g: usize,
        specs: &[AggSpec],
    ) -> Result<()> {
        self.partial.merge_group(other, g, specs)
    }

    /// Adds every parked row.
    pub(super) fn add_parked(&mut self, specs: &[AggSpec]) -> Result<()> {
        if self.parked.rows() == 0 {
            return Ok(());
        }
        let added = self.partial.add(&self.parked.segment(), specs);
        self.parked.clear();
        added
    }

    /// The partition's groups (parked rows must have been added).
    pub(super) fn into_groups(self) -> Groups {
        self.partial.into_groups()
    }

    /// Groups held.
    #[cfg(test)]
    pub(super) fn groups(&self) -> usize {
        self.partial.groups()
    }

    /// Rows parked.
    #[cfg(test)]
    pub(super) fn parked_rows(&self) -> usize {
        self.parked.rows()
    }
}
