//! The data a shuffle moves: every producer's partition, placed on the
//! producer's node and cut into one piece per consumer.
//!
//! Piece sizes can be equal or skewed (Zipf over consumers), values are
//! 32-bit random integers stored as u64 (so a consumer's sum never wraps),
//! and a plain sequential reference gives every consumer's expected sum.
//! The reference is computed from the data's definition (the seed, the
//! piece sizes, the value of each index), not from the placed buffers or
//! their offsets, so a fault in filling or slicing them shows up as a
//! wrong sum. This module places and fills; it does not schedule reads.

use std::sync::{Mutex, PoisonError};

use numakit_placement::{BufferOptions, NodeBuffer, Placement};
use numakit_pool::Pool;
use numakit_topology::NodeId;
use serde::Serialize;

use crate::error::{Result, ShuffleError};
use crate::schedule::Layout;

/// How piece sizes are distributed over consumers.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub enum Skew {
    /// Every consumer's piece has the same size (the first takes the remainder).
    Uniform,
    /// Piece for consumer c proportional to 1 / (c + 1)^theta.
    Zipf(f64),
}

impl std::str::FromStr for Skew {
    type Err = ShuffleError;
    fn from_str(s: &str) -> Result<Self> {
        if s == "uniform" {
            return Ok(Skew::Uniform);
        }
        match s.strip_prefix("zipf:").map(str::parse::<f64>) {
            Some(Ok(theta)) if theta >= 0.0 && theta.is_finite() => Ok(Skew::Zipf(theta)),
            _ => Err(ShuffleError::BadSkew(s.to_string())),
        }
    }
}

/// One producer's partition.
pub struct Partition {
    /// The node its memory is on (its worker's node).
    pub node: NodeId,
    /// The producer's values, bound to `node` and filled by its worker.
    pub buffer: NodeBuffer<u64>,
    /// Piece c is `buffer[offsets[c]..offsets[c + 1]]` (N + 1 entries, from 0 to the length).
    pub offsets: Vec<usize>,
}

/// All partitions of a shuffle.
pub struct ShuffleData {
    /// The layout of the pool the data was made for (a shuffle refuses other pools).
    pub layout: Layout,
    /// One partition per producer, in worker index order.
    pub partitions: Vec<Partition>,
    /// What the data was generated from (its reference is recomputed
    /// from it).
    definition: Definition,
}

/// What [`ShuffleData::generate`] was asked for.
#[derive(Clone, Copy, Debug)]
struct Definition {
    elements: usize,
    skew: Skew,
    seed: u64,
}

/// The value at `index` of producer `producer`'s partition: 32 random bits
/// (splitmix64 over a stream per producer), stored as u64.
fn value(seed: u64, producer: usize, index: usize) -> u64 {
    const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;
    let stream = seed ^ (producer as u64).wrapping_mul(GOLDEN);
    let mut z = stream.wrapping_add((index as u64 + 1).wrapping_mul(GOLDEN));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) >> 32
}

/// Values in producer `producer`'s partition when `elements` are spread
/// over `producers`.
fn partition_len(elements: usize, producers: usize, producer: usize) -> usize {
    elements / producers + usize::from(producer < elements % producers)
}

/// The layout of a pool: its nodes as sockets, workers per node as P.
pub fn layout_of(pool: &Pool) -> Result<Layout> {
    let contexts = pool.worker_contexts();
    let counts: Vec<usize> = pool
        .nodes()
        .iter()
        .map(|&n| contexts.iter().filter(|c| c.node == n).count())
        .collect();
    if counts.windows(2).any(|w| w[0] != w[1]) {
        return Err(ShuffleError::UnevenWorkers(counts));
    }
    Ok(Layout::new(
        counts.len(),
        counts.first().copied().unwrap_or(0),
    ))
}

/// Piece sizes of one producer holding `elements` values.
pub fn piece_sizes(elements: usize, consumers: usize, skew: Skew) -> Vec<usize> {
    let weights: Vec<f64> = (0..consumers)
        .map(|c| match skew {
            Skew::Uniform => 1.0,
            Skew::Zipf(theta) => 1.0 / ((c + 1) as f64).powf(theta),
        })
        .collect();
    let total: f64 = weights.iter().sum();
    let mut sizes: Vec<usize> = weights
        .iter()
        .map(|w| (elements as f64 * w / total) as usize)
        .collect();
    let assigned: usize = sizes.iter().sum();
    if let Some(first) = sizes.first_mut() {
        *first += elements - assigned;
    }
    sizes
}

impl ShuffleData {
    /// Places `elements` values in all over the pool's workers (each
    /// producer's partition bound to its node and filled by its worker).
    pub fn generate(pool: &Pool, elements: usize, skew: Skew, seed: u64) -> Result<Self> {
        let layout = layout_of(pool)?;
        let n = layout.threads();
        let contexts = pool.worker_contexts();
        let mut partitions = Vec::with_capacity(n);
        for (p, ctx) in contexts.iter().enumerate() {
            let len = partition_len(elements, n, p);
            let mut options = BufferOptions::new(Placement::OnNode(ctx.node));
            options.prefault = false;
            let buffer = NodeBuffer::with_options(pool.placer(), len, options)?;
            let mut offsets = vec![0];
            for size in piece_sizes(len, n, skew) {
                offsets.push(offsets[offsets.len() - 1] + size);
            }
            partitions.push(Mutex::new(Partition {
                node: ctx.node,
                buffer,
                offsets,
            }));
        }
        pool.broadcast(|ctx| {
            let mut part = partitions[ctx.index]
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            for (i, v) in part.buffer.iter_mut().enumerate() {
                *v = value(seed, ctx.index, i);
            }
        })?;
        let partitions = partitions
            .into_iter()
            .map(|m| m.into_inner().unwrap_or_else(PoisonError::into_inner))
            .collect();
        Ok(Self {
            layout,
            partitions,
            definition: Definition {
                elements,
                skew,
                seed,
            },
        })
    }

    /// Consumer `consumer`'s piece of producer `producer`'s partition.
    pub fn piece(&self, producer: usize, consumer: usize) -> &[u64] {
        let part = &self.partitions[producer];
        &part.buffer[part.offsets[consumer]..part.offsets[consumer + 1]]
    }

    /// Total bytes of all partitions.
    pub fn bytes(&self) -> u64 {
        self.partitions
            .iter()
            .map(|p| p.buffer.byte_len() as u64)
            .sum()
    }

    /// Values each consumer receives in all.
    pub fn incoming(&self, consumer: usize) -> usize {
        (0..self.partitions.len())
            .map(|p| self.piece(p, consumer).len())
            .sum()
    }

    /// The plain sequential reference: (sum, count) per consumer,
    /// recomputed from the data's definition (never read from the placed
    /// buffers or cut by their offsets).
    pub fn reference(&self) -> Vec<(u64, u64)> {
        let Definition {
            elements,
            skew,
            seed,
        } = self.definition;
        let n = self.partitions.len();
        let mut expected = vec![(0u64, 0u64); n];
        for producer in 0..n {
            let len = partition_len(elements, n, producer);
            let mut index = 0;
            for (consumer, size) in piece_sizes(len, n, skew).into_iter().enumerate() {
                for i in index..index + size {
                    expected[consumer].0 += value(seed, producer, i);
                }
                expected[consumer].1 += size as u64;
                index += size;
            }
        }
        expected
    }

    /// (expected node, pages there, resident pages) per partition.
    pub fn placement(&self) -> Result<Vec<(NodeId, usize, usize)>> {
        self.partitions
            .iter()
            .map(|p| {
                let counts = p.buffer.pages_per_node()?;
                Ok((
                    p.node,
                    counts.get(&p.node).copied().unwrap_or(0),
                    counts.values().sum(),
                ))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn piece_sizes_add_up() {
        assert_eq!(piece_sizes(10, 3, Skew::Uniform), vec![4, 3, 3]);
        let z = piece_sizes(1000, 8, Skew::Zipf(1.5));
        assert_eq!(z.iter().sum::<usize>(), 1000);
        assert!(z[0] > z[7] * 10);
        assert_eq!(piece_sizes(0, 4, Skew::Zipf(1.0)), vec![0; 4]);
        assert_eq!(piece_sizes(2, 5, Skew::Uniform).iter().sum::<usize>(), 2);
    }

    #[test]
    fn values_are_32_bit_and_differ_by_producer_and_index() {
        assert!((0..1000).all(|i| value(7, 0, i) < 1 << 32));
        assert_ne!(value(7, 0, 0), value(7, 1, 0));
        assert_ne!(value(7, 0, 0), value(7, 0, 1));
        assert_ne!(value(7, 0, 0), value(8, 0, 0));
        assert_eq!(partition_len(10, 3, 0), 4);
        assert_eq!(partition_len(10, 3, 2), 3);
    }

    #[test]
    fn skew_parses() {
        assert_eq!("uniform".parse::<Skew>().unwrap(), Skew::Uniform);
        assert_eq!("zipf:1.5".parse::<Skew>().unwrap(), Skew::Zipf(1.5));
        assert!("zipf:-1".parse::<Skew>().is_err());
        assert!("pareto".parse::<Skew>().is_err());
    }
}
