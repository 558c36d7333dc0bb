//! CPRL: node-local parallel radix partitioning, no global histogram.
//!
//! Every worker histograms its own chunk and scatters it into a buffer of
//! its own on its own node: every read and write of the partitioning is
//! local, and no worker waits for the others' histograms. Partition p is
//! then one piece per worker; whoever processes it reads the pieces that
//! live on other nodes remotely, but as a few large sequential reads
//! (the lecture: "trade small remote writes for large remote reads").
//!
//! This module runs pass 1; a second pass is [`super::passes`]'s.

use numakit_pool::Pool;

use crate::error::Result;
use crate::partition::layout::{home_nodes, Piece, Region};
use crate::partition::swwcb::{ScatterTarget, Stores};
use crate::partition::{histogram, prefix_sum, recycle, Partitioned, Radix};
use crate::relation::Relation;

/// Partitions `rel` by `radix` with CPRL.
pub fn partition(pool: &Pool, rel: &Relation, radix: Radix) -> Result<Partitioned> {
    rel.check_pool(pool)?;
    let chunks = rel.chunks();
    let outputs = pool.broadcast(|ctx| -> Result<(Region, Vec<usize>)> {
        let input = &chunks[ctx.index].tuples;
        let bounds = prefix_sum(&histogram(input, radix));
        let mut buffer = recycle::take(pool, ctx.node, input.len())?;
        let mut target = ScatterTarget::exclusive(&mut buffer[..input.len()], &bounds);
        target.scatter(input, radix, Stores::for_output_bytes(input.len() * 16));
        target.finish();
        let region = Region {
            node: ctx.node,
            buffer,
        };
        Ok((region, bounds))
    })?;
    let mut regions = Vec::with_capacity(outputs.len());
    let mut bounds = Vec::with_capacity(outputs.len());
    for output in outputs {
        let (region, b) = output?;
        regions.push(region);
        bounds.push(b);
    }
    let fanout = radix.fanout();
    let pieces_of = (0..fanout)
        .map(|p| {
            bounds
                .iter()
                .enumerate()
                .map(|(region, b)| Piece {
                    region,
                    start: b[p],
                    end: b[p + 1],
                })
                .collect()
        })
        .collect();
    Ok(Partitioned::new(
        radix,
        regions,
        pieces_of,
        home_nodes(pool, fanout),
    ))
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
            for (len, bits) in [(0, 3), (1, 0), (5, 4), (10_000, 6), (100_003, 9)] {
                let rel = Relation::from_fn(&pool, len, |i| {
                    Tuple::new((i as u64).wrapping_mul(0x9e37_79b9) % 5000, i as u64)
                })
                .unwrap();
                let parts = partition(&pool, &rel, Radix::top(bits).unwrap()).unwrap();
                check_partitioned(&rel, &parts, bits);
                for p in 0..parts.fanout() {
                    assert!(parts.pieces(p).count() <= pool.workers());
                }
            }
        }
    }
}
