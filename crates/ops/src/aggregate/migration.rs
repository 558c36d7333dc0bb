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
//! Every consumer also times its visits the way Li Figure 11 splits them:
//! copying its state, reading its piece, updating its table. The piece is
//! taken in blocks of [`BLOCK_ROWS`] that fit the private cache: one load
//! per cache line brings a block in (the read, local or remote), then the
//! table takes its rows from the cache (the update). The blocks keep the
//! two apart at the cost of a second, cache-resident pass over each row.
//!
//! This module holds the state; the exchange itself is `shuffle.rs`.

use std::time::{Duration, Instant};

use numakit_shuffle::Visit;

use crate::aggregate::split::Split;
use crate::aggregate::table::GroupTable;
use crate::error::{OpsError, Result};
use crate::tuple::Tuple;

/// Rows read, then aggregated, at a time: 32 KiB of tuples, within any
/// private cache.
pub const BLOCK_ROWS: usize = 2048;

/// Tuples per 64-byte cache line.
const TUPLES_PER_LINE: usize = 64 / std::mem::size_of::<Tuple>();

/// Where one consumer's visits spent their time.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct VisitTimes {
    /// Copying the table to the node the thread moved to.
    pub copy: Duration,
    /// Bringing the pieces' rows into the cache.
    pub read: Duration,
    /// Updating the table with rows already in the cache.
    pub update: Duration,
}

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
    /// Where the visits' time went.
    pub times: VisitTimes,
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
            times: VisitTimes::default(),
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
            let started = Instant::now();
            self.copied_bytes += self.table.move_to(visit.node)? as u64;
            self.copies += 1;
            self.times.copy += started.elapsed();
        }
        if self.table.node() == visit.node {
            self.local_state_visits += 1;
        }
        for block in producer.part(me).chunks(BLOCK_ROWS) {
            let started = Instant::now();
            std::hint::black_box(touch_lines(block));
            let read = Instant::now();
            self.table.add_rows(block)?;
            self.times.read += read - started;
            self.times.update += read.elapsed();
        }
        Ok(())
    }

    /// The table, or the first failure of any visit.
    pub fn finish(mut self) -> Result<Self> {
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(self),
        }
    }
}

/// Loads one key per cache line of `rows` (brings them into the cache).
fn touch_lines(rows: &[Tuple]) -> u64 {
    rows.iter()
        .step_by(TUPLES_PER_LINE)
        .fold(0u64, |acc, t| acc.wrapping_add(t.key))
}
