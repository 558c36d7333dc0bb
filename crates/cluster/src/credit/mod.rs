//! Bounded receive frames: a memory budget per process for pieces that
//! arrived from peers and are not yet processed, kept by credits that
//! flow back from the receiver to the sender.
//!
//! Each receiver's budget ([`crate::JoinSpec::receive_budget`]) is split
//! evenly among the peers that send to it: every sender holds
//! `budget / (P - 1)` bytes of credit with each peer ([`SendCredits`]).
//! A sender queues a piece only while the rows it has sent that peer and
//! not yet been given back, plus the piece, fit its credit; otherwise it
//! waits (the outbox moves on to other peers meanwhile, see
//! `join::send`). A piece larger than the whole credit still goes when
//! nothing else of that sender is outstanding at the peer, so every
//! budget completes. Since the credits are per sender, one sender's
//! waiting S pieces can never take the room another sender's R pieces
//! need (all-senders frames build a bucket only once every sender's R
//! piece of it is in).
//!
//! The receiver's [`ReceiveLedger`] knows how many bytes of each peer's
//! pieces it holds and gives them back (a
//! [`Message::Credit`](crate::message::Message::Credit) on the same
//! links) when their buffers are released: an R piece once the table it
//! went into is built, an S piece (or a broadcast block) once the last
//! task that used it dropped it. It also measures the peak it held,
//! which the join reports with or without a budget.
//!
//! What this module deliberately does not do: it counts row bytes (the
//! unit the sender and receiver agree on), not allocator overhead, the
//! built tables, the result, or this process's own pieces (its input,
//! already in memory); bytes in the transport's queues are bounded by
//! the same credit (the sender counts a piece from the moment it queues
//! it) but are not in the ledger's peak. It sends nothing itself and
//! knows no schedule: the outbox and the driver move the credits.

use std::collections::HashMap;
use std::sync::Weak;
use std::time::Instant;

use numakit_ops::Tuple;

use crate::error::{ClusterError, Result};

/// Row bytes of `rows` pieces' rows (the unit of credits).
pub fn row_bytes(rows: usize) -> u64 {
    (rows * std::mem::size_of::<Tuple>()) as u64
}

/// A sender's credit with every peer, and how long it waited for it.
#[derive(Debug, Default)]
pub struct SendCredits {
    /// Bytes of credit per peer; `None`: unbounded.
    credit: Option<u64>,
    /// Per peer: row bytes sent and not given back yet.
    outstanding: Vec<u64>,
    /// Per peer: since when a piece for it waits for credit.
    waiting_since: Vec<Option<Instant>>,
    waits: u64,
    wait_seconds: f64,
}

impl SendCredits {
    /// Credits that never run out (no budget).
    pub fn unbounded() -> Self {
        Self::default()
    }

    /// Credits of one of `processes` senders when every receiver holds at
    /// most `budget` bytes of its peers' pieces: `budget / (P - 1)` per
    /// peer (at least 1).
    pub fn bounded(budget: u64, processes: usize) -> Self {
        let senders = processes.saturating_sub(1).max(1) as u64;
        Self {
            credit: Some((budget / senders).max(1)),
            outstanding: vec![0; processes],
            waiting_since: vec![None; processes],
            waits: 0,
            wait_seconds: 0.0,
        }
    }

    /// Whether a budget is in force (the receivers give credits back).
    pub fn is_bounded(&self) -> bool {
        self.credit.is_some()
    }

    /// The credit per peer, in bytes (`None`: unbounded).
    pub fn credit(&self) -> Option<u64> {
        self.credit
    }

    /// Row bytes sent to `peer` and not given back yet.
    pub fn outstanding(&self, peer: usize) -> u64 {
        self.outstanding.get(peer).copied().unwrap_or(0)
    }

    /// Takes credit for `bytes` to `peer` if it fits (or if nothing is
    /// outstanding at `peer`: a lone piece always goes); otherwise starts
    /// (or continues) a wait and returns false. Empty pieces need none.
    pub fn take(&mut self, peer: usize, bytes: u64) -> bool {
        let Some(credit) = self.credit else {
            return true;
        };
        if bytes == 0 {
            return true;
        }
        let (Some(out), Some(since)) = (
            self.outstanding.get_mut(peer),
            self.waiting_since.get_mut(peer),
        ) else {
            return true;
        };
        if *out > 0 && out.saturating_add(bytes) > credit {
            if since.is_none() {
                *since = Some(Instant::now());
                self.waits += 1;
            }
            return false;
        }
        *out += bytes;
        if let Some(t) = since.take() {
            self.wait_seconds += t.elapsed().as_secs_f64();
        }
        true
    }

    /// `peer` released `bytes` of this sender's pieces.
    pub fn give_back(&mut self, peer: usize, bytes: u64) -> Result<()> {
        let out = self.outstanding.get_mut(peer).ok_or_else(|| {
            ClusterError::Transport(format!("process {peer} gave credit it does not hold"))
        })?;
        if bytes > *out {
            return Err(ClusterError::Transport(format!(
                "process {peer} gave back {bytes} bytes of credit, but only {out} are out"
            )));
        }
        *out -= bytes;
        Ok(())
    }

    /// How many times a piece started waiting for credit.
    pub fn waits(&self) -> u64 {
        self.waits
    }

    /// Seconds pieces waited for credit, summed over peers (waits still
    /// running count up to now).
    pub fn wait_seconds(&self) -> f64 {
        let running: f64 = self
            .waiting_since
            .iter()
            .flatten()
            .map(|t| t.elapsed().as_secs_f64())
            .sum();
        self.wait_seconds + running
    }
}

/// What a receiver holds of its peers' pieces, and the credit it owes
/// them.
#[derive(Debug, Default)]
pub struct ReceiveLedger {
    /// R pieces waiting to be built into a table: (bucket, sender) to
    /// bytes.
    building: HashMap<(u32, usize), u64>,
    /// S pieces and broadcast blocks in use: (sender, bytes, rows), held
    /// until the rows are dropped.
    shared: Vec<(usize, u64, Weak<Vec<Tuple>>)>,
    /// Per sender: released bytes not yet given back.
    owed: Vec<u64>,
    held: u64,
    peak: u64,
}

impl ReceiveLedger {
    /// An empty ledger for `processes` senders.
    pub fn new(processes: usize) -> Self {
        Self {
            owed: vec![0; processes],
            ..Self::default()
        }
    }

    fn hold(&mut self, bytes: u64) {
        self.held += bytes;
        self.peak = self.peak.max(self.held);
    }

    fn release(&mut self, from: usize, bytes: u64) {
        self.held = self.held.saturating_sub(bytes);
        if let Some(o) = self.owed.get_mut(from) {
            *o += bytes;
        }
    }

    /// An R piece of `bucket` from `from` waits to be built.
    pub fn building(&mut self, bucket: u32, from: usize, bytes: u64) {
        if bytes > 0 {
            *self.building.entry((bucket, from)).or_default() += bytes;
            self.hold(bytes);
        }
    }

    /// A table of `bucket` is built: of `sender`'s piece, or (`None`) of
    /// every sender's.
    pub fn built(&mut self, bucket: u32, sender: Option<usize>) {
        let senders = match sender {
            Some(s) => s..s + 1,
            None => 0..self.owed.len(),
        };
        for s in senders {
            if let Some(bytes) = self.building.remove(&(bucket, s)) {
                self.release(s, bytes);
            }
        }
    }

    /// Rows from `from` that are held until every user dropped them.
    pub fn shared(&mut self, from: usize, bytes: u64, rows: Weak<Vec<Tuple>>) {
        if bytes > 0 {
            self.hold(bytes);
            self.shared.push((from, bytes, rows));
        }
    }

    /// Releases the shared rows nobody uses any more.
    pub fn poll(&mut self) {
        let mut freed = Vec::new();
        self.shared.retain(|(from, bytes, rows)| {
            let alive = rows.strong_count() > 0;
            if !alive {
                freed.push((*from, *bytes));
            }
            alive
        });
        for (from, bytes) in freed {
            self.release(from, bytes);
        }
    }

    /// The credit owed to each sender since the last call: (sender,
    /// bytes), bytes > 0.
    pub fn take_owed(&mut self) -> Vec<(usize, u64)> {
        self.owed
            .iter_mut()
            .enumerate()
            .filter(|(_, b)| **b > 0)
            .map(|(s, b)| (s, std::mem::take(b)))
            .collect()
    }

    /// Bytes of peers' pieces held now.
    pub fn held(&self) -> u64 {
        self.held
    }

    /// The most bytes of peers' pieces held at once.
    pub fn peak(&self) -> u64 {
        self.peak
    }
}

#[cfg(test)]
mod tests;
