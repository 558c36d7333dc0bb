//! [`Partitioned`]: the result of a parallel partitioning, and where each
//! partition is processed ([`home_nodes`]).
//!
//! A partition is a list of pieces, each a slice of one node-placed buffer
//! (PRO: one piece, on the partition's home node; CPRL: one piece per
//! worker, on that worker's node; after a second pass: one piece on the
//! home node). Every partition also has a home node: the node whose
//! queue its tasks go to. Homes are the same for every relation of the
//! same fanout on the same pool, so co-partitions of a join share a home.
//!
//! This module describes partitions; it does not make them.

use std::sync::Arc;

use numakit_placement::NodeBuffer;
use numakit_pool::{NodeSlice, Pool};
use numakit_topology::NodeId;

use crate::partition::recycle::Recycler;
use crate::partition::Radix;
use crate::tuple::Tuple;

/// The home node of each of `fanout` partitions on `pool`: contiguous runs
/// of partitions, one run per node, as long as the node's share of the
/// pool's workers.
pub fn home_nodes(pool: &Pool, fanout: usize) -> Vec<NodeId> {
    let contexts = pool.worker_contexts();
    let nodes = pool.nodes();
    let workers = contexts.len().max(1);
    let mut homes = Vec::with_capacity(fanout);
    let mut workers_before = 0;
    for (i, &node) in nodes.iter().enumerate() {
        let here = contexts.iter().filter(|c| c.node_index == i).count();
        workers_before += here;
        let until = if i + 1 == nodes.len() {
            fanout
        } else {
            fanout * workers_before / workers
        };
        homes.resize(until.max(homes.len()), node);
    }
    homes.resize(fanout, nodes.first().copied().unwrap_or_default());
    homes
}

/// One contiguous run of a partition's tuples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    /// Index of the buffer (region) holding it.
    pub region: usize,
    /// Index of the piece's first tuple in the region's buffer.
    pub start: usize,
    /// Index one past the piece's last tuple (`start..end`, may be empty).
    pub end: usize,
}

/// A node-placed buffer holding pieces.
#[derive(Debug)]
pub struct Region {
    /// The node the buffer's memory is on.
    pub node: NodeId,
    /// The tuples that the pieces of this region index into.
    pub buffer: NodeBuffer<Tuple>,
}

/// A relation split into `2^radix.bits` partitions by hash bits.
#[derive(Debug)]
pub struct Partitioned {
    radix: Radix,
    regions: Vec<Region>,
    pieces: Vec<Piece>,
    /// Partition p's pieces are `pieces[first_piece[p]..first_piece[p + 1]]`.
    first_piece: Vec<usize>,
    homes: Vec<NodeId>,
    /// Where the regions' buffers go back when the partitioning is dropped.
    recycler: Arc<Recycler>,
}

impl Partitioned {
    /// Assembles a partitioning: `pieces_of[p]` lists partition p's pieces
    /// in `regions`, `homes[p]` its home; the regions' buffers go back to
    /// `recycler` (their pool's) when it is dropped. Panics if a piece lies
    /// outside its region (a bug in the partitioner).
    pub fn new(
        radix: Radix,
        regions: Vec<Region>,
        pieces_of: Vec<Vec<Piece>>,
        homes: Vec<NodeId>,
        recycler: Arc<Recycler>,
    ) -> Self {
        assert_eq!(
            pieces_of.len(),
            radix.fanout(),
            "one piece list per partition"
        );
        assert_eq!(homes.len(), radix.fanout(), "one home per partition");
        let mut first_piece = Vec::with_capacity(pieces_of.len() + 1);
        let mut pieces = Vec::new();
        for list in pieces_of {
            first_piece.push(pieces.len());
            for piece in list {
                let region = &regions[piece.region];
                assert!(piece.start <= piece.end && piece.end <= region.buffer.len());
                if piece.end > piece.start {
                    pieces.push(piece);
                }
            }
        }
        first_piece.push(pieces.len());
        Self {
            radix,
            regions,
            pieces,
            first_piece,
            homes,
            recycler,
        }
    }

    /// The hash bits the partitions are numbered by (shift 0: the top
    /// `radix.bits` bits; all passes together).
    pub fn radix(&self) -> Radix {
        self.radix
    }

    /// Number of partitions.
    pub fn fanout(&self) -> usize {
        self.homes.len()
    }

    /// Number of tuples in all partitions.
    pub fn len(&self) -> usize {
        self.pieces.iter().map(|p| p.end - p.start).sum()
    }

    /// Whether no partition holds a tuple.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The node where work on partition `p` should be queued.
    pub fn home(&self, p: usize) -> NodeId {
        self.homes[p]
    }

    /// Number of tuples in partition `p`.
    pub fn partition_len(&self, p: usize) -> usize {
        self.piece_list(p).iter().map(|x| x.end - x.start).sum()
    }

    /// The pieces of partition `p`, each with the node its memory is on
    /// (empty pieces are left out).
    pub fn pieces(&self, p: usize) -> impl Iterator<Item = NodeSlice<'_, Tuple>> + Clone + '_ {
        self.piece_list(p).iter().map(|x| {
            let region = &self.regions[x.region];
            NodeSlice {
                node: region.node,
                data: &region.buffer[x.start..x.end],
            }
        })
    }

    /// The pieces of partition `p` as plain slices.
    pub fn slices(&self, p: usize) -> impl Iterator<Item = &[Tuple]> + Clone + '_ {
        self.pieces(p).map(|s| s.data)
    }

    /// The tuples of partition `p` in one vector (for tests and small
    /// partitions).
    pub fn partition_to_vec(&self, p: usize) -> Vec<Tuple> {
        self.slices(p).flat_map(|s| s.iter().copied()).collect()
    }

    fn piece_list(&self, p: usize) -> &[Piece] {
        &self.pieces[self.first_piece[p]..self.first_piece[p + 1]]
    }
}

impl Drop for Partitioned {
    fn drop(&mut self) {
        for region in self.regions.drain(..) {
            self.recycler.give_back(region.node, region.buffer);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::pool;

    #[test]
    fn homes_cover_every_partition_in_node_runs() {
        let pool = pool(2);
        let nodes = pool.nodes();
        for fanout in [1, 2, 3, 64] {
            let homes = home_nodes(&pool, fanout);
            assert_eq!(homes.len(), fanout);
            // Runs in pool node order: positions never go back.
            let positions: Vec<usize> = homes
                .iter()
                .map(|h| nodes.iter().position(|n| n == h).unwrap())
                .collect();
            assert!(positions.windows(2).all(|w| w[0] <= w[1]));
        }
    }
}
