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

use std::sync::Arc;

use numakit_ops::Tuple;

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

    fn take(&mut self, to: usize, index: usize) -> Vec<Tuple> {
        match self {
            Pieces::PerPeer(p) => p[to][index].take().unwrap_or_default(),
            Pieces::Shared(b) => b[index].as_ref().clone(),
        }
    }
}

/// One relation's sends.
struct Round {
    side: Side,
    pieces: Pieces,
    phases: Vec<Vec<Send>>,
}

/// Everything a process still has to send, and where it is.
pub struct Outbox {
    order: SendOrder,
    rounds: Vec<Round>,
    round: usize,
    phase: usize,
    /// Ring order: the peer of the running phase and the byte count its
    /// link must reach before the next phase.
    draining: Option<(usize, u64)>,
    /// Per peer: at least how many bytes the queued messages take on the
    /// link (rows plus a lower bound of each message's framing).
    queued: Vec<u64>,
}

/// Fewer bytes than any message takes on the link beyond its rows.
const MESSAGE_BYTES: u64 = 16;

impl Outbox {
    /// An empty outbox that sends in `order`.
    pub fn new(order: SendOrder) -> Self {
        Self {
            order,
            rounds: Vec::new(),
            round: 0,
            phase: 0,
            draining: None,
            queued: Vec::new(),
        }
    }

    /// Adds a relation's pieces, sent after those added before.
    pub fn add(&mut self, side: Side, pieces: Pieces, me: usize, processes: usize) {
        // One more "piece" per peer: the end-of-side marker.
        let phases = phases(self.order, me, processes, pieces.count() + 1);
        self.rounds.push(Round {
            side,
            pieces,
            phases,
        });
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

    /// Queues whatever the schedule allows now.
    pub fn pump(&mut self, transport: &mut dyn Transport<Message>) -> Result<()> {
        loop {
            if let Some((peer, target)) = self.draining {
                if transport.bytes_sent_to(peer) < target {
                    return Ok(());
                }
                self.draining = None;
            }
            let Some(round) = self.rounds.get_mut(self.round) else {
                return Ok(());
            };
            let Some(phase) = round.phases.get(self.phase) else {
                self.round += 1;
                self.phase = 0;
                continue;
            };
            let count = round.pieces.count();
            // Counted before queuing: the link may start on it at once.
            let start = phase.first().map_or(0, |s| transport.bytes_sent_to(s.to));
            let mut bytes = 0u64;
            for s in phase {
                let message = if s.piece < count {
                    let rows = round.pieces.take(s.to, s.piece);
                    Message::Piece(Piece {
                        side: round.side,
                        bucket: s.piece as u32,
                        rows,
                    })
                } else {
                    Message::EndOfSide {
                        side: round.side,
                        pieces: count as u64,
                    }
                };
                bytes += message.row_bytes();
                if self.queued.len() <= s.to {
                    self.queued.resize(s.to + 1, 0);
                }
                self.queued[s.to] += message.row_bytes() + MESSAGE_BYTES;
                transport.send(s.to, message)?;
            }
            if self.order == SendOrder::Ring {
                if let Some(first) = phase.first() {
                    self.draining = Some((first.to, start + bytes));
                }
            }
            self.phase += 1;
        }
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
}
