//! What has arrived, per sender (the paper's hash-table frames), and what
//! can be joined now.
//!
//! Equi-joins: a bucket's R pieces are kept per sender until every sender
//! (this process included) has delivered its piece of the bucket; then the
//! bucket's table is built (one task). An S piece is probed the moment it
//! arrives if its bucket's table is ready, and otherwise waits in the
//! frame until the table is built. Since every process sends all of R
//! before S, tables are usually ready when S arrives. Non-equi joins:
//! every piece of the broadcast relation is joined the moment it arrives.
//!
//! Every sender ends each relation with the number of pieces it sent; the
//! join of this process is complete when every sender's pieces are in and
//! nothing waits. Frames decide what to do; they run nothing.

use std::sync::Arc;

use numakit_ops::Tuple;

use crate::error::{ClusterError, Result};
use crate::message::{Piece, Side};
use crate::table::BuildTable;

/// Work that can start now.
pub enum Work {
    /// Build the table of `bucket` from the pieces of every sender.
    Build {
        /// The bucket, among this process's buckets.
        bucket: u32,
        /// The bucket's R rows, one piece per sender in process order.
        pieces: Vec<Vec<Tuple>>,
    },
    /// Probe `rows` (S) against a bucket's table.
    Probe {
        /// The bucket's built table.
        table: Arc<BuildTable>,
        /// One sender's S rows of the bucket.
        rows: Vec<Tuple>,
    },
    /// Join `rows` of the broadcast relation with the stationary one.
    Broadcast {
        /// One block of the broadcast relation, from any sender.
        rows: Vec<Tuple>,
    },
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

/// One bucket of an equi-join.
#[derive(Debug, Default)]
struct Bucket {
    left: Vec<Option<Vec<Tuple>>>,
    left_in: usize,
    table: Option<Arc<BuildTable>>,
    waiting: Vec<Vec<Tuple>>,
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
    /// Frames for a hash-distributed equi-join with `buckets` buckets.
    pub fn equi(processes: usize, buckets: u32) -> Self {
        let bucket = || Bucket {
            left: (0..processes).map(|_| None).collect(),
            ..Bucket::default()
        };
        Self {
            processes,
            arrivals: Arrivals::new(processes),
            buckets: (0..buckets).map(|_| bucket()).collect(),
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
            return Ok(Some(Work::Broadcast { rows: piece.rows }));
        }
        let processes = self.processes;
        let b = self.buckets.get_mut(piece.bucket as usize).ok_or_else(|| {
            ClusterError::Transport(format!(
                "process {from} sent unknown bucket {}",
                piece.bucket
            ))
        })?;
        match piece.side {
            Side::Left => {
                if b.left[from].replace(piece.rows).is_some() {
                    return Err(ClusterError::Transport(format!(
                        "process {from} sent bucket {} twice",
                        piece.bucket
                    )));
                }
                b.left_in += 1;
                if b.left_in < processes {
                    return Ok(None);
                }
                let pieces = b
                    .left
                    .iter_mut()
                    .map(|p| p.take().unwrap_or_default())
                    .collect();
                Ok(Some(Work::Build {
                    bucket: piece.bucket,
                    pieces,
                }))
            }
            Side::Right => match &b.table {
                Some(table) => Ok(Some(Work::Probe {
                    table: Arc::clone(table),
                    rows: piece.rows,
                })),
                None => {
                    b.waiting.push(piece.rows);
                    Ok(None)
                }
            },
        }
    }

    /// A bucket's table is ready: the S pieces that waited for it.
    pub fn built(&mut self, bucket: u32, table: Arc<BuildTable>) -> Vec<Work> {
        let Some(b) = self.buckets.get_mut(bucket as usize) else {
            return Vec::new();
        };
        b.table = Some(Arc::clone(&table));
        std::mem::take(&mut b.waiting)
            .into_iter()
            .map(|rows| Work::Probe {
                table: Arc::clone(&table),
                rows,
            })
            .collect()
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
                    && self
                        .buckets
                        .iter()
                        .all(|b| b.table.is_some() && b.waiting.is_empty())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piece(side: Side, bucket: u32, keys: &[u64]) -> Piece {
        Piece {
            side,
            bucket,
            rows: keys.iter().map(|&k| Tuple::new(k, k)).collect(),
        }
    }

    #[test]
    fn a_bucket_builds_once_every_sender_delivered_and_waiting_probes_follow() {
        let mut f = Frames::equi(2, 1);
        assert!(f.arrive(0, piece(Side::Left, 0, &[1])).unwrap().is_none());
        // S before its table: it waits.
        assert!(f.arrive(1, piece(Side::Right, 0, &[1])).unwrap().is_none());
        let Some(Work::Build { pieces, .. }) = f.arrive(1, piece(Side::Left, 0, &[2])).unwrap()
        else {
            panic!("expected a build");
        };
        assert_eq!(pieces.len(), 2);
        assert!(!f.complete());
        let refs: Vec<&[Tuple]> = pieces.iter().map(|p| &p[..]).collect();
        let probes = f.built(0, Arc::new(BuildTable::build(&refs)));
        assert_eq!(probes.len(), 1);
        assert!(matches!(
            f.arrive(0, piece(Side::Right, 0, &[2])).unwrap(),
            Some(Work::Probe { .. })
        ));
        f.end(0, Side::Left, 1).unwrap();
        f.end(1, Side::Left, 1).unwrap();
        f.end(0, Side::Right, 1).unwrap();
        assert!(!f.complete());
        f.end(1, Side::Right, 1).unwrap();
        assert!(f.complete());
    }

    #[test]
    fn inconsistent_senders_are_errors() {
        let mut f = Frames::equi(2, 2);
        f.arrive(0, piece(Side::Left, 0, &[1])).unwrap();
        assert!(f.arrive(0, piece(Side::Left, 0, &[1])).is_err());
        assert!(f.arrive(0, piece(Side::Left, 5, &[1])).is_err());
        assert!(f.end(1, Side::Left, 3).is_err());
        assert!(f.arrive(7, piece(Side::Left, 0, &[1])).is_err());
        let mut b = Frames::broadcast(2, Side::Left);
        assert!(b.arrive(1, piece(Side::Right, 0, &[1])).is_err());
        assert!(matches!(
            b.arrive(1, piece(Side::Left, 0, &[1])).unwrap(),
            Some(Work::Broadcast { .. })
        ));
        b.end(0, Side::Left, 0).unwrap();
        b.end(1, Side::Left, 1).unwrap();
        assert!(b.complete());
    }
}
