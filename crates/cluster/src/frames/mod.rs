//! What has arrived, per sender (the paper's hash-table frames), and what
//! can be joined now.
//!
//! Equi-joins keep their frames in one of two modes ([`FrameMode`]):
//!
//! - All senders (the default): a bucket's R pieces are kept per sender
//!   until every sender (this process included) has delivered its piece
//!   of the bucket; then the bucket's table is built (one task). An S
//!   piece is probed the moment it arrives if its bucket's table is
//!   ready, and otherwise waits in the frame until the table is built.
//!   Each S row is probed once, against one table.
//! - Per sender: each sender's R piece of a bucket gets its own table,
//!   built (one task) the moment the piece arrives (an empty piece needs
//!   none). An S piece is probed against every table of its bucket that
//!   is built, and each table built later is probed with the S pieces of
//!   the bucket that arrived before it, so every (R piece, S piece) pair
//!   of a bucket is joined exactly once. S pieces stay in the frame until
//!   every sender's R piece of the bucket is built. Building starts before
//!   the slowest sender's R piece is in; each S row is probed against up
//!   to P small tables instead of one.
//!
//! Since every process sends all of R before S, tables are usually ready
//! when S arrives. Non-equi joins: every piece of the broadcast relation
//! is joined the moment it arrives.
//!
//! Every sender ends each relation with the number of pieces it sent; the
//! join of this process is complete when every sender's pieces are in and
//! nothing waits. Frames decide what to do; they run nothing. For a
//! receive budget ([`crate::credit`]) they say how each piece's rows are
//! held ([`Frames::arrive_held`]); they keep no accounts themselves.

use std::sync::{Arc, Weak};

use numakit_ops::Tuple;
use serde::{Deserialize, Serialize};

use crate::error::{ClusterError, Result};
use crate::message::{Piece, Side};
use crate::table::BuildTable;

/// How an equi-join's frames turn a bucket's R pieces into hash tables.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FrameMode {
    /// One table per bucket, built once every sender's R piece is in;
    /// each S row is probed once.
    #[default]
    AllSenders,
    /// One table per sender's R piece, built as soon as it arrives; each
    /// S row is probed against up to P tables.
    PerSender,
}

impl FrameMode {
    /// The mode's name in options and reports (`all-senders`,
    /// `per-sender`).
    pub fn name(self) -> &'static str {
        match self {
            FrameMode::AllSenders => "all-senders",
            FrameMode::PerSender => "per-sender",
        }
    }
}

impl std::str::FromStr for FrameMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "all-senders" => Ok(FrameMode::AllSenders),
            "per-sender" => Ok(FrameMode::PerSender),
            other => Err(format!(
                "unknown frame mode `{other}` (all-senders, per-sender)"
            )),
        }
    }
}

/// Work that can start now.
pub enum Work {
    /// Build a table of `bucket` from `pieces`.
    Build {
        /// The bucket, among this process's buckets.
        bucket: u32,
        /// `Some(sender)`: per-sender frames, the table of that sender's
        /// piece; `None`: the whole bucket's table.
        sender: Option<usize>,
        /// The R rows: one piece per sender in process order (all
        /// senders), or the sender's one piece (per sender).
        pieces: Vec<Vec<Tuple>>,
    },
    /// Probe `rows` (S) against each of `tables`.
    Probe {
        /// Built tables of the rows' bucket.
        tables: Vec<Arc<BuildTable>>,
        /// One sender's S rows of the bucket.
        rows: Arc<Vec<Tuple>>,
    },
    /// Join `rows` of the broadcast relation with the stationary one.
    Broadcast {
        /// One block of the broadcast relation, from any sender.
        rows: Arc<Vec<Tuple>>,
    },
}

/// What [`Frames::arrive_held`] did with a piece.
pub struct Arrived {
    /// The work the piece makes possible now.
    pub work: Option<Work>,
    /// The piece's rows, when they are shared by the tasks that use them
    /// (S pieces, broadcast blocks): they are released once this no
    /// longer upgrades. `None` for R pieces of an equi-join (released
    /// when their table is built) and for empty S pieces.
    pub rows: Option<Weak<Vec<Tuple>>>,
}

/// Pieces and end markers per sender and side.
#[derive(Debug)]
struct Arrivals {
    pieces: Vec<[u64; 2]>,
    ends: Vec<[Option<u64>; 2]>,
}

fn side_index(side: Side) -> usize {
    match side {
        Side::Left => 0,
        Side::Right => 1,
    }
}

impl Arrivals {
    fn new(processes: usize) -> Self {
        Self {
            pieces: vec![[0; 2]; processes],
            ends: vec![[None; 2]; processes],
        }
    }

    fn piece(&mut self, from: usize, side: Side) -> Result<()> {
        let s = side_index(side);
        if self.ends[from][s].is_some() {
            return Err(ClusterError::Transport(format!(
                "process {from} sent a piece after its end marker"
            )));
        }
        self.pieces[from][s] += 1;
        Ok(())
    }

    fn end(&mut self, from: usize, side: Side, pieces: u64) -> Result<()> {
        let s = side_index(side);
        if self.ends[from][s].replace(pieces).is_some() || self.pieces[from][s] != pieces {
            return Err(ClusterError::Transport(format!(
                "process {from} announced {pieces} pieces of {side:?} but {} arrived",
                self.pieces[from][s]
            )));
        }
        Ok(())
    }

    fn ended(&self, sides: &[Side]) -> bool {
        self.ends
            .iter()
            .all(|e| sides.iter().all(|&s| e[side_index(s)].is_some()))
    }
}

fn duplicate(from: usize, bucket: u32) -> ClusterError {
    ClusterError::Transport(format!("process {from} sent bucket {bucket} twice"))
}

fn stray_table(bucket: u32, sender: Option<usize>) -> ClusterError {
    ClusterError::Transport(format!(
        "a table of bucket {bucket} (sender {sender:?}) that no frame waited for"
    ))
}

/// One bucket of an equi-join, all-senders frames.
#[derive(Debug)]
struct WholeBucket {
    left: Vec<Option<Vec<Tuple>>>,
    left_in: usize,
    table: Option<Arc<BuildTable>>,
    waiting: Vec<Arc<Vec<Tuple>>>,
}

impl WholeBucket {
    fn new(processes: usize) -> Self {
        Self {
            left: (0..processes).map(|_| None).collect(),
            left_in: 0,
            table: None,
            waiting: Vec::new(),
        }
    }

    fn left(&mut self, bucket: u32, from: usize, rows: Vec<Tuple>) -> Result<Option<Work>> {
        if self.left[from].replace(rows).is_some() {
            return Err(duplicate(from, bucket));
        }
        self.left_in += 1;
        if self.left_in < self.left.len() {
            return Ok(None);
        }
        let pieces = self
            .left
            .iter_mut()
            .map(|p| p.take().unwrap_or_default())
            .collect();
        Ok(Some(Work::Build {
            bucket,
            sender: None,
            pieces,
        }))
    }

    fn right(&mut self, rows: Arc<Vec<Tuple>>) -> Option<Work> {
        match &self.table {
            Some(table) => Some(Work::Probe {
                tables: vec![Arc::clone(table)],
                rows,
            }),
            None => {
                self.waiting.push(rows);
                None
            }
        }
    }

    fn built(&mut self, table: Arc<BuildTable>) -> Vec<Work> {
        self.table = Some(Arc::clone(&table));
        probes_of(&table, std::mem::take(&mut self.waiting))
    }

    fn done(&self) -> bool {
        self.table.is_some() && self.waiting.is_empty()
    }
}

/// One sender's R piece of a bucket, per-sender frames.
#[derive(Debug, Default)]
enum Frame {
    /// Not arrived yet.
    #[default]
    Missing,
    /// Arrived; its table is being built.
    Building,
    /// Its table is built.
    Built(Arc<BuildTable>),
    /// Arrived empty: nothing to build or probe.
    Empty,
}

/// One bucket of an equi-join, per-sender frames.
#[derive(Debug)]
struct SenderBucket {
    frames: Vec<Frame>,
    /// Frames built or empty.
    ready: usize,
    /// S pieces probed against every built table so far, kept for the
    /// tables still to come.
    seen: Vec<Arc<Vec<Tuple>>>,
}

impl SenderBucket {
    fn new(processes: usize) -> Self {
        Self {
            frames: (0..processes).map(|_| Frame::Missing).collect(),
            ready: 0,
            seen: Vec::new(),
        }
    }

    fn left(&mut self, bucket: u32, from: usize, rows: Vec<Tuple>) -> Result<Option<Work>> {
        if !matches!(self.frames[from], Frame::Missing) {
            return Err(duplicate(from, bucket));
        }
        if rows.is_empty() {
            self.frames[from] = Frame::Empty;
            self.mark_ready();
            return Ok(None);
        }
        self.frames[from] = Frame::Building;
        Ok(Some(Work::Build {
            bucket,
            sender: Some(from),
            pieces: vec![rows],
        }))
    }

    fn right(&mut self, rows: Arc<Vec<Tuple>>) -> Option<Work> {
        if rows.is_empty() {
            return None;
        }
        if !self.done() {
            self.seen.push(Arc::clone(&rows));
        }
        let tables: Vec<Arc<BuildTable>> = self
            .frames
            .iter()
            .filter_map(|f| match f {
                Frame::Built(t) => Some(Arc::clone(t)),
                _ => None,
            })
            .collect();
        (!tables.is_empty()).then_some(Work::Probe { tables, rows })
    }

    fn built(&mut self, bucket: u32, sender: usize, table: Arc<BuildTable>) -> Result<Vec<Work>> {
        match self.frames.get_mut(sender) {
            Some(f @ Frame::Building) => *f = Frame::Built(Arc::clone(&table)),
            _ => return Err(stray_table(bucket, Some(sender))),
        }
        let probes = probes_of(&table, self.seen.clone());
        self.mark_ready();
        Ok(probes)
    }

    /// One more frame is ready; once all are, the S pieces are released.
    fn mark_ready(&mut self) {
        self.ready += 1;
        if self.done() {
            self.seen = Vec::new();
        }
    }

    fn done(&self) -> bool {
        self.ready == self.frames.len()
    }
}

/// Probes of `table` with each of `pieces`.
fn probes_of(table: &Arc<BuildTable>, pieces: Vec<Arc<Vec<Tuple>>>) -> Vec<Work> {
    pieces
        .into_iter()
        .map(|rows| Work::Probe {
            tables: vec![Arc::clone(table)],
            rows,
        })
        .collect()
}

/// One bucket of an equi-join.
#[derive(Debug)]
enum Bucket {
    All(WholeBucket),
    PerSender(SenderBucket),
}

impl Bucket {
    fn new(processes: usize, mode: FrameMode) -> Self {
        match mode {
            FrameMode::AllSenders => Bucket::All(WholeBucket::new(processes)),
            FrameMode::PerSender => Bucket::PerSender(SenderBucket::new(processes)),
        }
    }

    fn left(&mut self, bucket: u32, from: usize, rows: Vec<Tuple>) -> Result<Option<Work>> {
        match self {
            Bucket::All(b) => b.left(bucket, from, rows),
            Bucket::PerSender(b) => b.left(bucket, from, rows),
        }
    }

    fn right(&mut self, rows: Arc<Vec<Tuple>>) -> Option<Work> {
        match self {
            Bucket::All(b) => b.right(rows),
            Bucket::PerSender(b) => b.right(rows),
        }
    }

    fn built(
        &mut self,
        bucket: u32,
        sender: Option<usize>,
        table: Arc<BuildTable>,
    ) -> Result<Vec<Work>> {
        match (self, sender) {
            (Bucket::All(b), None) if b.table.is_none() => Ok(b.built(table)),
            (Bucket::PerSender(b), Some(s)) => b.built(bucket, s, table),
            _ => Err(stray_table(bucket, sender)),
        }
    }

    fn done(&self) -> bool {
        match self {
            Bucket::All(b) => b.done(),
            Bucket::PerSender(b) => b.done(),
        }
    }
}

/// The receiving state of a process.
#[derive(Debug)]
pub struct Frames {
    processes: usize,
    arrivals: Arrivals,
    /// Equi-joins: one per bucket; empty for broadcasts.
    buckets: Vec<Bucket>,
    /// The relation that travels in a broadcast.
    broadcast: Option<Side>,
}

impl Frames {
    /// Frames for a hash-distributed equi-join with `buckets` buckets,
    /// kept in `mode`.
    pub fn equi(processes: usize, buckets: u32, mode: FrameMode) -> Self {
        Self {
            processes,
            arrivals: Arrivals::new(processes),
            buckets: (0..buckets).map(|_| Bucket::new(processes, mode)).collect(),
            broadcast: None,
        }
    }

    /// Frames for a broadcast of `side`.
    pub fn broadcast(processes: usize, side: Side) -> Self {
        Self {
            processes,
            arrivals: Arrivals::new(processes),
            buckets: Vec::new(),
            broadcast: Some(side),
        }
    }

    /// A piece from `from` (this process's own pieces too).
    pub fn arrive(&mut self, from: usize, piece: Piece) -> Result<Option<Work>> {
        Ok(self.arrive_held(from, piece)?.work)
    }

    /// [`Frames::arrive`], telling also how the piece's rows are held
    /// (for a receive budget's accounting).
    pub fn arrive_held(&mut self, from: usize, piece: Piece) -> Result<Arrived> {
        if from >= self.processes {
            return Err(ClusterError::Transport(format!(
                "a piece from unknown process {from}"
            )));
        }
        self.arrivals.piece(from, piece.side)?;
        if let Some(side) = self.broadcast {
            if piece.side != side {
                return Err(ClusterError::Transport(format!(
                    "process {from} sent {:?} rows in a broadcast of {side:?}",
                    piece.side
                )));
            }
            let rows = Arc::new(piece.rows);
            return Ok(Arrived {
                rows: Some(Arc::downgrade(&rows)),
                work: Some(Work::Broadcast { rows }),
            });
        }
        let b = self.buckets.get_mut(piece.bucket as usize).ok_or_else(|| {
            ClusterError::Transport(format!(
                "process {from} sent unknown bucket {}",
                piece.bucket
            ))
        })?;
        match piece.side {
            Side::Left => Ok(Arrived {
                work: b.left(piece.bucket, from, piece.rows)?,
                rows: None,
            }),
            Side::Right => {
                let rows = Arc::new(piece.rows);
                let weak = Arc::downgrade(&rows);
                Ok(Arrived {
                    work: b.right(rows),
                    rows: Some(weak),
                })
            }
        }
    }

    /// A table of `bucket` is ready (`sender` as its [`Work::Build`]
    /// said): the probes it releases.
    pub fn built(
        &mut self,
        bucket: u32,
        sender: Option<usize>,
        table: Arc<BuildTable>,
    ) -> Result<Vec<Work>> {
        match self.buckets.get_mut(bucket as usize) {
            Some(b) => b.built(bucket, sender, table),
            None => Err(stray_table(bucket, sender)),
        }
    }

    /// `from` sent all its `pieces` pieces of `side`.
    pub fn end(&mut self, from: usize, side: Side, pieces: u64) -> Result<()> {
        if from >= self.processes {
            return Err(ClusterError::Transport(format!(
                "an end marker from unknown process {from}"
            )));
        }
        self.arrivals.end(from, side, pieces)
    }

    /// Everything arrived and nothing waits for a table.
    pub fn complete(&self) -> bool {
        match self.broadcast {
            Some(side) => self.arrivals.ended(&[side]),
            None => {
                self.arrivals.ended(&[Side::Left, Side::Right])
                    && self.buckets.iter().all(Bucket::done)
            }
        }
    }
}

#[cfg(test)]
mod tests;
