//! The sending side of a process: its pieces for every peer, queued on
//! the transport in the schedule's order, one relation after the other
//! (R, then S), each followed by an end-of-side marker that says how many
//! pieces the peer should expect.
//!
//! In ring order a phase's pieces go to one peer, and the next phase
//! starts only once that link has taken the phase's bytes (the
//! transport's byte counter), so each link carries one phase at a time.
//! All at once, everything is queued immediately and the transport's
//! per-peer send threads drain the queues side by side. Sending never
//! blocks the caller: [`Outbox::pump`] queues what it may and returns.
//!
//! Under a receive budget ([`crate::credit`]) a piece is queued only when
//! its peer's credit allows; until then it waits, and so do the later
//! sends to that peer (each peer still gets its R pieces, then R's end,
//! then S, in order), while the sends to other peers go on: in ring order
//! a phase waiting for credit lets the next phases start. That is what
//! keeps a budget from deadlocking the ring (each process waiting for a
//! peer that waits for the next one's R pieces). Rounds stay in order: S
//! starts only once all of R is queued.

use std::sync::Arc;

use numakit_ops::Tuple;

use crate::credit::SendCredits;
use crate::error::Result;
use crate::message::{Message, Piece, Side};
use crate::schedule::{phases, Send, SendOrder};
use crate::transport::Transport;

/// Where a round's pieces come from.
pub enum Pieces {
    /// `pieces[peer][bucket]`: different rows for every peer (hash
    /// distribution).
    PerPeer(Vec<Vec<Option<Vec<Tuple>>>>),
    /// The same blocks for every peer (broadcast).
    Shared(Vec<Arc<Vec<Tuple>>>),
}

impl Pieces {
    fn count(&self) -> usize {
        match self {
            Pieces::PerPeer(p) => p.first().map_or(0, Vec::len),
            Pieces::Shared(b) => b.len(),
        }
    }

    fn bytes(&self, to: usize, index: usize) -> u64 {
        let rows = match self {
            Pieces::PerPeer(p) => p[to][index].as_ref().map_or(0, Vec::len),
            Pieces::Shared(b) => b[index].len(),
        };
        crate::credit::row_bytes(rows)
    }

    fn take(&mut self, to: usize, index: usize) -> Vec<Tuple> {
        match self {
            Pieces::PerPeer(p) => p[to][index].take().unwrap_or_default(),
            Pieces::Shared(b) => b[index].as_ref().clone(),
        }
    }
}

/// One phase's sends not yet queued, and what its queued ones took.
struct Phase {
    /// The peer of its first send (ring order: of all its sends).
    to: usize,
    sends: Vec<Send>,
    /// The link's byte count when the phase's first send was queued.
    start: Option<u64>,
    /// Row bytes the phase queued.
    bytes: u64,
}

/// One relation's sends.
struct Round {
    side: Side,
    pieces: Pieces,
    phases: Vec<Phase>,
}

impl Round {
    /// The message of `send` and its row bytes, or `None` while `send`
    /// waits for credit.
    fn message(&mut self, send: Send, credits: &mut SendCredits) -> Option<Message> {
        let count = self.pieces.count();
        if send.piece >= count {
            return Some(Message::EndOfSide {
                side: self.side,
                pieces: count as u64,
            });
        }
        if !credits.take(send.to, self.pieces.bytes(send.to, send.piece)) {
            return None;
        }
        Some(Message::Piece(Piece {
            side: self.side,
            bucket: send.piece as u32,
            rows: self.pieces.take(send.to, send.piece),
        }))
    }
}

/// Everything a process still has to send, and where it is.
pub struct Outbox {
    order: SendOrder,
    rounds: Vec<Round>,
    round: usize,
    /// Ring order: the peer of the phase just queued and the byte count
    /// its link must reach before the next phase.
    draining: Option<(usize, u64)>,
    /// Per peer: at least how many bytes the queued messages take on the
    /// link (rows plus a lower bound of each message's framing).
    queued: Vec<u64>,
    /// The peers' receive credit (unbounded without a budget).
    credits: SendCredits,
    /// Peers this process sends to (P - 1).
    peers: usize,
}

/// Fewer bytes than any message takes on the link beyond its rows.
const MESSAGE_BYTES: u64 = 16;

/// How far one pass over a round's phases got.
enum Pass {
    /// A phase was queued completely.
    Finished,
    /// Every phase left waits for credit.
    Waiting,
}

impl Outbox {
    /// An empty outbox that sends in `order`, without a receive budget.
    pub fn new(order: SendOrder) -> Self {
        Self::with_credits(order, SendCredits::unbounded())
    }

    /// An empty outbox that sends in `order` as `credits` allow.
    pub fn with_credits(order: SendOrder, credits: SendCredits) -> Self {
        Self {
            order,
            rounds: Vec::new(),
            round: 0,
            draining: None,
            queued: Vec::new(),
            credits,
            peers: 0,
        }
    }

    /// Adds a relation's pieces, sent after those added before.
    pub fn add(&mut self, side: Side, pieces: Pieces, me: usize, processes: usize) {
        self.peers = processes.saturating_sub(1);
        // One more "piece" per peer: the end-of-side marker.
        let phases = phases(self.order, me, processes, pieces.count() + 1)
            .into_iter()
            .map(|sends| Phase {
                to: sends.first().map_or(0, |s| s.to),
                sends,
                start: None,
                bytes: 0,
            })
            .collect();
        self.rounds.push(Round {
            side,
            pieces,
            phases,
        });
    }

    /// The credits (how often and how long pieces waited for them).
    pub fn credits(&self) -> &SendCredits {
        &self.credits
    }

    /// `peer` gave back `bytes` of credit.
    pub fn credit_returned(&mut self, peer: usize, bytes: u64) -> Result<()> {
        self.credits.give_back(peer, bytes)
    }

    /// Gives `peer` back `bytes` of its credit with this process.
    pub fn return_credit(
        &mut self,
        transport: &mut dyn Transport<Message>,
        peer: usize,
        bytes: u64,
    ) -> Result<()> {
        self.count_queued(peer, 0);
        transport.send(peer, Message::Credit { bytes })
    }

    fn count_queued(&mut self, peer: usize, row_bytes: u64) {
        if self.queued.len() <= peer {
            self.queued.resize(peer + 1, 0);
        }
        self.queued[peer] += row_bytes + MESSAGE_BYTES;
    }

    /// Whether everything was queued (and, in ring order, sent).
    pub fn done(&self) -> bool {
        self.round >= self.rounds.len() && self.draining.is_none()
    }

    /// Whether every link has taken what was queued for it: this
    /// process's part of the exchange is over.
    pub fn flushed(&self, transport: &dyn Transport<Message>) -> bool {
        self.queued
            .iter()
            .enumerate()
            .all(|(peer, &bytes)| transport.bytes_sent_to(peer) >= bytes)
    }

    /// Queues whatever the schedule and the credits allow now.
    pub fn pump(&mut self, transport: &mut dyn Transport<Message>) -> Result<()> {
        loop {
            if let Some((peer, target)) = self.draining {
                if transport.bytes_sent_to(peer) < target {
                    return Ok(());
                }
                self.draining = None;
            }
            let Some(round) = self.rounds.get(self.round) else {
                return Ok(());
            };
            if round.phases.iter().all(|p| p.sends.is_empty()) {
                self.round += 1;
                continue;
            }
            if let Pass::Waiting = self.pass(transport)? {
                return Ok(());
            }
        }
    }

    /// Queues the current round's phases in order until one is queued
    /// completely (ring order then waits for its link). A send that
    /// lacks credit waits, and so do the later sends to its peer; the
    /// pass moves on to the other peers' sends.
    fn pass(&mut self, transport: &mut dyn Transport<Message>) -> Result<Pass> {
        let mut waiting: Vec<usize> = Vec::new();
        for k in 0..self.rounds[self.round].phases.len() {
            let sends = std::mem::take(&mut self.rounds[self.round].phases[k].sends);
            let mut kept = Vec::new();
            let mut rest = sends.into_iter();
            for send in rest.by_ref() {
                if !self.send_one(k, send, &mut waiting, transport)? {
                    kept.push(send);
                }
                if waiting.len() >= self.peers {
                    break; // every peer waits: the rest stays as it is
                }
            }
            kept.extend(rest);
            let phase = &mut self.rounds[self.round].phases[k];
            phase.sends = kept;
            if let (true, Some(start)) = (phase.sends.is_empty(), phase.start) {
                phase.start = None;
                if self.order == SendOrder::Ring {
                    self.draining = Some((phase.to, start + phase.bytes));
                }
                return Ok(Pass::Finished);
            }
        }
        Ok(Pass::Waiting)
    }

    /// Queues `send` of phase `k`, unless its peer waits for credit
    /// (then it joins `waiting`): whether it was queued.
    fn send_one(
        &mut self,
        k: usize,
        send: Send,
        waiting: &mut Vec<usize>,
        transport: &mut dyn Transport<Message>,
    ) -> Result<bool> {
        if waiting.contains(&send.to) {
            return Ok(false);
        }
        let round = &mut self.rounds[self.round];
        let Some(message) = round.message(send, &mut self.credits) else {
            waiting.push(send.to);
            return Ok(false);
        };
        let phase = &mut round.phases[k];
        // Counted before queuing: the link may start on it at once.
        phase.start.get_or_insert(transport.bytes_sent_to(send.to));
        phase.bytes += message.row_bytes();
        self.count_queued(send.to, message.row_bytes());
        transport.send(send.to, message)?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::metrics::LinkTraffic;
    use crate::transport::Finished;

    /// Records what is queued; a link "takes" bytes only when told.
    struct Recorder {
        sent: Vec<(usize, Message)>,
        taken: Vec<u64>,
    }

    impl Transport<Message> for Recorder {
        fn process(&self) -> usize {
            0
        }
        fn processes(&self) -> usize {
            3
        }
        fn address(&self, peer: usize) -> String {
            format!("peer{peer}")
        }
        fn run_id(&self) -> u64 {
            1
        }
        fn send(&mut self, to: usize, message: Message) -> Result<()> {
            self.sent.push((to, message));
            Ok(())
        }
        fn recv(&mut self, _timeout: Duration) -> Result<Option<(usize, Message)>> {
            Ok(None)
        }
        fn bytes_sent_to(&self, peer: usize) -> u64 {
            self.taken[peer]
        }
        fn traffic(&self) -> Vec<LinkTraffic> {
            Vec::new()
        }
        fn finish(self: Box<Self>, _timeout: Duration) -> Result<Finished<Message>> {
            Ok((Vec::new(), Vec::new()))
        }
    }

    fn pieces() -> Pieces {
        let rows = |n: usize| Some(vec![Tuple::new(1, 1); n]);
        Pieces::PerPeer(vec![
            vec![None, None],
            vec![rows(2), rows(0)],
            vec![rows(3), rows(1)],
        ])
    }

    #[test]
    fn ring_order_waits_for_each_phase_to_leave_its_link() {
        let mut out = Outbox::new(SendOrder::Ring);
        out.add(Side::Left, pieces(), 0, 3);
        let mut t = Recorder {
            sent: Vec::new(),
            taken: vec![0; 3],
        };
        out.pump(&mut t).unwrap();
        // Phase 1: both pieces and the end marker for peer 1, then a wait.
        assert_eq!(t.sent.len(), 3);
        assert!(t.sent.iter().all(|(to, _)| *to == 1));
        out.pump(&mut t).unwrap();
        assert_eq!(
            t.sent.len(),
            3,
            "nothing more until the link took the phase"
        );
        assert!(!out.done());
        t.taken[1] = 2 * 16;
        out.pump(&mut t).unwrap();
        assert_eq!(t.sent.len(), 6);
        assert!(t.sent[3..].iter().all(|(to, _)| *to == 2));
        assert!(matches!(t.sent[5].1, Message::EndOfSide { pieces: 2, .. }));
        t.taken[2] = 4 * 16;
        out.pump(&mut t).unwrap();
        assert!(out.done());
        assert!(
            !out.flushed(&t),
            "the framing of 6 messages has not left yet"
        );
        t.taken = vec![0, 1000, 1000];
        assert!(out.flushed(&t));
    }

    #[test]
    fn all_at_once_queues_everything_interleaved() {
        let mut out = Outbox::new(SendOrder::AllAtOnce);
        out.add(Side::Right, pieces(), 0, 3);
        let mut t = Recorder {
            sent: Vec::new(),
            taken: vec![0; 3],
        };
        out.pump(&mut t).unwrap();
        assert!(out.done());
        let to: Vec<usize> = t.sent.iter().map(|(to, _)| *to).collect();
        assert_eq!(to, [1, 2, 1, 2, 1, 2]);
    }

    /// Pumps until nothing moves, every link taking what was queued.
    fn settle(out: &mut Outbox, t: &mut Recorder) {
        for _ in 0..8 {
            out.pump(t).unwrap();
            t.taken.iter_mut().for_each(|b| *b += 10_000);
        }
    }

    #[test]
    fn a_ring_phase_waiting_for_credit_lets_the_next_peer_go() {
        // 32 bytes of credit per peer (64 over 3 processes): peer 1's
        // 2-row piece (32 bytes) goes, its 0-row piece and end marker
        // follow (they need none); peer 2's 3-row piece (48 bytes) goes
        // alone, its 1-row piece waits.
        let mut out = Outbox::with_credits(SendOrder::Ring, SendCredits::bounded(64, 3));
        out.add(Side::Left, pieces(), 0, 3);
        out.add(Side::Right, pieces(), 0, 3);
        let mut t = Recorder {
            sent: Vec::new(),
            taken: vec![0; 3],
        };
        settle(&mut out, &mut t);
        let to: Vec<usize> = t.sent.iter().map(|(to, _)| *to).collect();
        assert_eq!(to, [1, 1, 1, 2], "{:?}", t.sent);
        assert_eq!(out.credits().waits(), 1);
        // Peer 2 gives back: R's rest goes; S waits for peer 1's credit,
        // and the ring goes on to peer 2 meanwhile (whose 3-row S piece
        // waits too: 16 bytes are still out there).
        out.credit_returned(2, 48).unwrap();
        settle(&mut out, &mut t);
        assert_eq!(t.sent.len(), 6, "{:?}", t.sent);
        assert!(matches!(
            t.sent[5],
            (2, Message::EndOfSide { pieces: 2, .. })
        ));
        assert!(!out.done());
        for _ in 0..4 {
            out.credit_returned(1, out.credits().outstanding(1))
                .unwrap();
            out.credit_returned(2, out.credits().outstanding(2))
                .unwrap();
            settle(&mut out, &mut t);
        }
        assert!(out.done());
        assert_eq!(t.sent.len(), 12);
        assert!(out.return_credit(&mut t, 1, 8).is_ok());
        assert!(matches!(t.sent[12], (1, Message::Credit { bytes: 8 })));
    }
}
