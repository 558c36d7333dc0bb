//! PRO: parallel radix partitioning with a global histogram.
//!
//! 1. Every worker histograms its own chunk (local reads).
//! 2. A global prefix sum over all histograms gives every worker, for
//!    every partition, the exact place of its tuples; partitions are laid
//!    out one node after another, each in one buffer on its home node
//!    ([`home_nodes`]).
//! 3. Every worker scatters its chunk straight to those places (through
//!    write-combining buffers): its share of a partition homed elsewhere
//!    is written remotely, a cache line at a time.
//!
//! Each partition ends up as one contiguous piece on its home node, so
//! whoever processes it reads only local memory. The price is the remote
//! writes of step 3 (the lecture's "many small remote writes"); CPRL
//! ([`super::cprl`]) trades them for remote reads.
//!
//! This module runs pass 1; a second pass is [`super::passes`]'s.

use numakit_pool::Pool;

use crate::error::Result;
use crate::par::per_worker_mut;
use crate::partition::layout::{home_nodes, Piece, Region};
use crate::partition::swwcb::{ScatterTarget, Stores};
use crate::partition::{histogram, recycle, Partitioned, Radix};
use crate::relation::Relation;

/// Partitions `rel` by `radix` with PRO.
pub fn partition(pool: &Pool, rel: &Relation, radix: Radix) -> Result<Partitioned> {
    rel.check_pool(pool)?;
    let chunks = rel.chunks();
    let counts: Vec<Vec<usize>> =
        pool.broadcast(|ctx| histogram(&chunks[ctx.index].tuples, radix))?;
    let fanout = radix.fanout();
    let homes = home_nodes(pool, fanout);
    let nodes = pool.nodes();
    let group_of: Vec<usize> = homes
        .iter()
        .map(|h| nodes.iter().position(|n| n == h).unwrap_or(0))
        .collect();
    let mut group_len = vec![0usize; nodes.len()];
    for (p, &g) in group_of.iter().enumerate() {
        group_len[g] += counts.iter().map(|c| c[p]).sum::<usize>();
    }
    let mut buffers = nodes
        .iter()
        .zip(&group_len)
        .map(|(&node, &len)| recycle::take(pool, node, len))
        .collect::<Result<Vec<_>>>()?;
    let extents = {
        let outs = buffers
            .iter_mut()
            .zip(&group_len)
            .map(|(b, &len)| &mut b[..len])
            .collect();
        let (mut targets, extents) = ScatterTarget::split_by_counts(outs, &group_of, &counts);
        let stores = Stores::for_output_bytes(rel.bytes() as usize / pool.workers().max(1));
        let mut targets: Vec<Option<ScatterTarget>> = targets.drain(..).map(Some).collect();
        per_worker_mut(pool, &mut targets, |ctx, target| {
            if let Some(mut t) = target.take() {
                t.scatter(&chunks[ctx.index].tuples, radix, stores);
                t.finish();
            }
        })?;
        extents
    };
    let regions = nodes
        .iter()
        .zip(buffers)
        .map(|(&node, buffer)| Region { node, buffer })
        .collect();
    let pieces_of = extents
        .into_iter()
        .map(|(region, start, end)| vec![Piece { region, start, end }])
        .collect();
    Ok(Partitioned::new(
        radix,
        regions,
        pieces_of,
        homes,
        recycle::Recycler::of(pool),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::partition::tests_common::check_partitioned;
    use crate::testing::pool;
    use crate::tuple::Tuple;

    #[test]
    fn pro_partitions_keep_every_tuple_in_its_partition() {
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
                    assert!(
                        parts.pieces(p).count() <= 1,
                        "PRO makes one piece per partition"
                    );
                }
            }
        }
    }
}
