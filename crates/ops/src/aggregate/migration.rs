//! A consumer's state in the exchange-driven methods, and what a thread
//! migration does to it (Li §4.3).
//!
//! With [`Strategy::Migration`](numakit_shuffle::Strategy::Migration) the
//! consumer's thread moves to the producer's node and its table stays on
//! its home node: every table access from afar crosses the interconnect.
//! With `MigrationCopy` the table moves with the thread: when the exchange
//! reports a move ([`Visit::moved`]), the table is copied into a buffer on
//! the new node before the visit reads anything, and the copies are
//! counted (Li Figure 11's "copy state").
//!
//! This module holds the state; the exchange itself is `shuffle.rs`.

use numakit_shuffle::Visit;

use crate::aggregate::split::Split;
use crate::aggregate::table::GroupTable;
use crate::error::{OpsError, Result};

/// One consumer's aggregation state.
pub struct Consumer<'p> {
    /// The consumer's groups; on its home node unless it carries its state.
    pub table: GroupTable<'p>,
    /// Copy the table to the node the thread moves to.
    carry_state: bool,
    /// State copies made, and their bytes.
    pub copies: u64,
    /// Bytes of all those copies together.
    pub copied_bytes: u64,
    /// Visits during which the table was on the node the thread ran on.
    pub local_state_visits: u64,
    /// The first failure (the exchange's closure cannot return one).
    error: Option<OpsError>,
}

impl<'p> Consumer<'p> {
    /// A consumer aggregating into `table`; with `carry_state` the table
    /// is copied to every node the consumer's thread moves to.
    pub fn new(table: GroupTable<'p>, carry_state: bool) -> Self {
        Self {
            table,
            carry_state,
            copies: 0,
            copied_bytes: 0,
            local_state_visits: 0,
            error: None,
        }
    }

    /// Consumer `me` visits a producer: moves its state if it carries it
    /// and just moved, then aggregates its piece of the producer's split.
    pub fn visit(&mut self, me: usize, producer: &Split, visit: Visit) {
        if self.error.is_some() {
            return;
        }
        if let Err(e) = self.try_visit(me, producer, visit) {
            self.error = Some(e);
        }
    }

    fn try_visit(&mut self, me: usize, producer: &Split, visit: Visit) -> Result<()> {
        if self.carry_state && visit.moved && self.table.node() != visit.node {
            self.copied_bytes += self.table.move_to(visit.node)? as u64;
            self.copies += 1;
        }
        if self.table.node() == visit.node {
            self.local_state_visits += 1;
        }
        self.table.add_rows(producer.part(me))
    }

    /// The table, or the first failure of any visit.
    pub fn finish(mut self) -> Result<Self> {
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(self),
        }
    }
}
