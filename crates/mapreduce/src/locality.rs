//! Where each split's data lives, asked of the kernel, so that its map
//! task is queued at that node.
//!
//! A few pages of each split (its first, last and two between) are looked
//! up and the most frequent node wins: splits are contiguous and usually
//! on one node, and looking up every page of a 400 MB input would cost
//! more than it tells. On a machine with one node nothing is asked.
//! Unknown locations (pages never touched, a kernel that refuses) leave the
//! task without a home; the pool then spreads it round-robin.

use std::ops::Range;

use numakit_placement::sys::node_of_address;
use numakit_pool::Pool;
use numakit_topology::NodeId;

/// Pages sampled per split.
const SAMPLES: usize = 4;

/// The home node of each split of `input`, and whether every split's
/// location was known.
pub(crate) fn home_nodes<R>(
    pool: &Pool,
    input: &[R],
    splits: &[Range<usize>],
) -> (Vec<Option<NodeId>>, bool) {
    let nodes = pool.nodes();
    if nodes.len() <= 1 {
        return (
            splits.iter().map(|_| nodes.first().copied()).collect(),
            true,
        );
    }
    let homes: Vec<Option<NodeId>> = splits.iter().map(|r| home_of(&input[r.clone()])).collect();
    let all_known = homes.iter().all(Option::is_some);
    (homes, all_known)
}

/// The node holding most of the sampled pages of `records`.
fn home_of<R>(records: &[R]) -> Option<NodeId> {
    let bytes = std::mem::size_of_val(records);
    if bytes == 0 {
        return None;
    }
    let base = records.as_ptr() as *const u8;
    let mut seen: Vec<(NodeId, usize)> = Vec::with_capacity(SAMPLES);
    for i in 0..SAMPLES {
        let offset = (bytes - 1) * i / (SAMPLES - 1);
        // The address is only looked up by the kernel, never dereferenced.
        let Ok(node) = node_of_address(base.wrapping_add(offset)) else {
            continue;
        };
        match seen.iter_mut().find(|(n, _)| *n == node) {
            Some((_, count)) => *count += 1,
            None => seen.push((node, 1)),
        }
    }
    seen.into_iter()
        .max_by_key(|&(_, count)| count)
        .map(|(n, _)| n)
}
