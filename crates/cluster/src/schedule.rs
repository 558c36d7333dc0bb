//! The order in which a process sends to its peers (Chakraborty §II,
//! Figure 1): in ring order, phase k (1..P-1) of process i sends to
//! (i + k) mod P while receiving from (i - k) mod P, so each link carries
//! one transfer at a time; all at once, the pieces for every peer are
//! interleaved and all links are busy together.
//!
//! A schedule is a list of phases, each a list of (destination, piece
//! index) sends; the sender paces phases (see `join::send`). This module
//! only orders.

use serde::{Deserialize, Serialize};

/// How sends are ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SendOrder {
    /// Phase k sends only to (i + k) mod P; the next phase starts once the
    /// link has taken this phase's bytes.
    Ring,
    /// Everything is queued at once, peers interleaved piece by piece.
    AllAtOnce,
}

impl SendOrder {
    /// The order's name in options and reports (`ring`, `all-at-once`).
    pub fn name(self) -> &'static str {
        match self {
            SendOrder::Ring => "ring",
            SendOrder::AllAtOnce => "all-at-once",
        }
    }
}

impl std::str::FromStr for SendOrder {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "ring" => Ok(SendOrder::Ring),
            "all-at-once" | "all" => Ok(SendOrder::AllAtOnce),
            other => Err(format!("unknown send order `{other}` (ring, all-at-once)")),
        }
    }
}

/// One send: a piece for a peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Send {
    /// The destination process.
    pub to: usize,
    /// Index of the piece among the pieces for that peer.
    pub piece: usize,
}

/// The phases of process `me` of `processes` sending `pieces` pieces to
/// every peer.
pub fn phases(order: SendOrder, me: usize, processes: usize, pieces: usize) -> Vec<Vec<Send>> {
    let peers = (1..processes).map(|k| (me + k) % processes);
    match order {
        SendOrder::Ring => peers
            .map(|to| (0..pieces).map(|piece| Send { to, piece }).collect())
            .collect(),
        SendOrder::AllAtOnce => {
            let peers: Vec<usize> = peers.collect();
            let all = (0..pieces)
                .flat_map(|piece| peers.iter().map(move |&to| Send { to, piece }))
                .collect::<Vec<_>>();
            if all.is_empty() {
                Vec::new()
            } else {
                vec![all]
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_phases_follow_the_paper() {
        // Process 0 of 5 sends to 1, 2, 3, 4 in turn (Figure 1).
        let p = phases(SendOrder::Ring, 0, 5, 2);
        let to: Vec<usize> = p.iter().map(|ph| ph[0].to).collect();
        assert_eq!(to, [1, 2, 3, 4]);
        // In phase k every process sends to a different peer: no receiver
        // gets two transfers at once.
        for k in 0..4 {
            let mut receivers: Vec<usize> = (0..5)
                .map(|i| phases(SendOrder::Ring, i, 5, 1)[k][0].to)
                .collect();
            receivers.sort_unstable();
            receivers.dedup();
            assert_eq!(receivers.len(), 5);
        }
    }

    #[test]
    fn both_orders_send_every_piece_to_every_peer_once() {
        for order in [SendOrder::Ring, SendOrder::AllAtOnce] {
            for (me, n, pieces) in [(0, 1, 3), (2, 4, 3), (1, 3, 0)] {
                let mut all: Vec<(usize, usize)> = phases(order, me, n, pieces)
                    .concat()
                    .into_iter()
                    .map(|s| (s.to, s.piece))
                    .collect();
                all.sort_unstable();
                let mut want: Vec<(usize, usize)> = (0..n)
                    .filter(|&d| d != me)
                    .flat_map(|d| (0..pieces).map(move |p| (d, p)))
                    .collect();
                want.sort_unstable();
                assert_eq!(all, want);
            }
        }
    }
}
