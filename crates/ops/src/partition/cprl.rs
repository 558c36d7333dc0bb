//! CPRL: node-local parallel radix partitioning, no global histogram.
//!
//! Every worker scatters its own chunk into a buffer of its own on its own
//! node: every read and write of the partitioning is local, and no worker
//! waits for the others' histograms. Partition p is then a few pieces per
//! worker; whoever processes it reads the pieces that live on other nodes
//! remotely, but as large sequential reads (the lecture: "trade small
//! remote writes for large remote reads").
//!
//! Without a global histogram a worker needs no histogram at all: its
//! partitions fill fixed-size blocks (4-256 KiB) of its buffer, taken in
//! turn as they fill, so the input is read once, like a copy. Inputs too
//! small for blocks to pay ([`block_tuples`]) get a local histogram and
//! exactly sized partitions instead.
//!
//! This module runs pass 1; a second pass is [`super::passes`]'s.

use numakit_placement::NodeBuffer;
use numakit_pool::Pool;
use numakit_topology::NodeId;

use crate::error::Result;
use crate::partition::layout::{home_nodes, Piece, Region};
use crate::partition::swwcb::{block_output_len, ScatterTarget, Stores};
use crate::partition::{histogram, prefix_sum, recycle, Partitioned, Radix};
use crate::relation::Relation;
use crate::tuple::{Tuple, TUPLE_BYTES};

/// Blocks waste at most 1/this of a worker's output.
const BLOCK_WASTE_DIVISOR: usize = 8;
/// Smallest block worth it (4 KiB: sequential reads stay efficient).
const MIN_BLOCK_TUPLES: usize = 256;
/// Largest block (256 KiB).
const MAX_BLOCK_TUPLES: usize = 16 << 10;

/// Tuples per block for `len` tuples in `fanout` partitions, or None when
/// the input is too small for blocks (a histogram pass then sizes the
/// partitions exactly, which costs little on data that fits in cache).
pub fn block_tuples(len: usize, fanout: usize) -> Option<usize> {
    let per = len / (BLOCK_WASTE_DIVISOR * fanout.max(1));
    if per < MIN_BLOCK_TUPLES {
        return None;
    }
    let block = per.min(MAX_BLOCK_TUPLES);
    Some(1 << (usize::BITS - 1 - block.leading_zeros()))
}

/// Per partition, its pieces in one buffer as (offset, length).
type Pieces = Vec<Vec<(usize, usize)>>;

/// One worker's output: its buffer and its pieces there.
type WorkerOutput = (Region, Pieces);

/// Partitions `rel` by `radix` with CPRL.
pub fn partition(pool: &Pool, rel: &Relation, radix: Radix) -> Result<Partitioned> {
    rel.check_pool(pool)?;
    let chunks = rel.chunks();
    let outputs = pool.broadcast(|ctx| -> Result<WorkerOutput> {
        let input = &chunks[ctx.index].tuples;
        let (buffer, pieces) = match block_tuples(input.len(), radix.fanout()) {
            Some(block) => scatter_blocks(pool, ctx.node, input, radix, block)?,
            None => scatter_counted(pool, ctx.node, input, radix)?,
        };
        Ok((
            Region {
                node: ctx.node,
                buffer,
            },
            pieces,
        ))
    })?;
    let mut regions = Vec::with_capacity(outputs.len());
    let mut pieces_of = vec![Vec::new(); radix.fanout()];
    for (w, output) in outputs.into_iter().enumerate() {
        let (region, pieces) = output?;
        regions.push(region);
        for (p, list) in pieces.into_iter().enumerate() {
            pieces_of[p].extend(list.into_iter().map(|(start, len)| Piece {
                region: w,
                start,
                end: start + len,
            }));
        }
    }
    Ok(Partitioned::new(
        radix,
        regions,
        pieces_of,
        home_nodes(pool, radix.fanout()),
        recycle::Recycler::of(pool),
    ))
}

/// One pass, no histogram: partitions fill blocks of a local buffer.
fn scatter_blocks(
    pool: &Pool,
    node: NodeId,
    input: &[Tuple],
    radix: Radix,
    block: usize,
) -> Result<(NodeBuffer<Tuple>, Pieces)> {
    let len = block_output_len(input.len(), radix.fanout(), block);
    let mut buffer = recycle::take(pool, node, len)?;
    let mut target = ScatterTarget::blocks(&mut buffer[..len], radix.fanout(), block);
    target.scatter(input, radix, Stores::for_output_bytes(len * TUPLE_BYTES));
    let pieces = target.finish_blocks();
    Ok((buffer, pieces))
}

/// Histogram, prefix sum, scatter into an exactly sized local buffer.
fn scatter_counted(
    pool: &Pool,
    node: NodeId,
    input: &[Tuple],
    radix: Radix,
) -> Result<(NodeBuffer<Tuple>, Pieces)> {
    let bounds = prefix_sum(&histogram(input, radix));
    let mut buffer = recycle::take(pool, node, input.len())?;
    let mut target = ScatterTarget::exclusive(&mut buffer[..input.len()], &bounds);
    target.scatter(
        input,
        radix,
        Stores::for_output_bytes(input.len() * TUPLE_BYTES),
    );
    target.finish();
    let pieces = bounds
        .windows(2)
        .map(|w| vec![(w[0], w[1] - w[0])])
        .collect();
    Ok((buffer, pieces))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::partition::tests_common::check_partitioned;
    use crate::testing::pool;
    use crate::tuple::Tuple;

    #[test]
    fn cprl_partitions_keep_every_tuple_in_its_partition() {
        for threads in [1, 2] {
            let pool = pool(threads);
            // Small cases use a histogram, large ones blocks.
            for (len, bits) in [
                (0, 3),
                (1, 0),
                (5, 4),
                (10_000, 6),
                (100_003, 9),
                (300_001, 3),
            ] {
                let rel = Relation::from_fn(&pool, len, |i| {
                    Tuple::new((i as u64).wrapping_mul(0x9e37_79b9) % 5000, i as u64)
                })
                .unwrap();
                let parts = partition(&pool, &rel, Radix::top(bits).unwrap()).unwrap();
                check_partitioned(&rel, &parts, bits);
            }
        }
    }

    #[test]
    fn blocks_handle_skew_and_exact_fills() {
        assert_eq!(block_tuples(1000, 16), None);
        assert_eq!(block_tuples(8 * 16 * 300, 16), Some(256));
        assert_eq!(block_tuples(1 << 30, 2), Some(MAX_BLOCK_TUPLES));
        let pool = pool(2);
        // All keys equal: one partition fills block after block; sizes
        // that are exact multiples of a block end on a block boundary.
        for len in [200_000usize, 2 * 4 * 8 * 1024, 2 * 4 * 8 * 1024 + 1] {
            let rel = Relation::from_fn(&pool, len, |i| Tuple::new(7, i as u64)).unwrap();
            let parts = partition(&pool, &rel, Radix::top(2).unwrap()).unwrap();
            check_partitioned(&rel, &parts, 2);
            assert!(parts.pieces(Radix::top(2).unwrap().of(7)).count() > pool.workers());
        }
    }
}
