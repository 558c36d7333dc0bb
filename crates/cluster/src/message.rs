//! What processes say to each other: pieces of relations, the end of a
//! sender's pieces, credit given back under a receive budget, and each
//! process's report to the sink.
//!
//! A piece is one bucket of one relation from one sender to one receiver
//! (equi-joins) or one block of the broadcast relation (non-equi joins).
//! Every sender announces how many pieces it sent to each receiver, so a
//! receiver knows when it has everything from that sender without any
//! global barrier. This module defines the vocabulary; how the messages
//! travel is the transport's business.

use numakit_ops::Tuple;
use serde::{Deserialize, Serialize};

use crate::metrics::ProcessMetrics;
use crate::sink::{PartOutcome, PartialResult};

/// Which relation a piece belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Side {
    /// R, the left relation (the build side of equi-joins, the broadcast
    /// side of non-equi joins).
    Left,
    /// S, the right relation.
    Right,
}

/// One bucket (equi-join) or block (broadcast) of a relation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Piece {
    /// The relation the rows belong to.
    pub side: Side,
    /// The bucket among the receiver's buckets (equi-joins), or the block
    /// number (broadcast).
    pub bucket: u32,
    /// The rows themselves.
    pub rows: Vec<Tuple>,
}

/// A message between two processes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Message {
    /// Rows for the receiver to join.
    Piece(Piece),
    /// The sender has sent all its pieces of `side` to this receiver:
    /// `pieces` of them.
    EndOfSide {
        /// The relation whose pieces are all sent.
        side: Side,
        /// How many pieces of it the sender sent this receiver.
        pieces: u64,
    },
    /// A process's result and metrics, for the sink (process 0).
    Report(Box<ProcessReport>),
    /// The receiver released `bytes` row bytes of the sender's pieces:
    /// the sender may send that much more (a receive budget's credit,
    /// see [`crate::credit`]).
    Credit {
        /// Row bytes given back.
        bytes: u64,
    },
}

/// What a process tells the sink when its part of the join is done.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProcessReport {
    /// The reporting process's index.
    pub process: usize,
    /// Its share of the result (count, checksum, sample).
    pub result: PartialResult,
    /// What it measured (loads, span, traffic).
    pub metrics: ProcessMetrics,
    /// The part the process delivered (or failed to), when its rows went
    /// somewhere (a file per process); `None` otherwise.
    pub part: Option<PartOutcome>,
}

impl Message {
    /// Payload bytes of the message (rows only), for progress.
    pub fn row_bytes(&self) -> u64 {
        match self {
            Message::Piece(p) => crate::credit::row_bytes(p.rows.len()),
            _ => 0,
        }
    }
}
