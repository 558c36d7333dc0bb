//! The parallel reduction behind the main job and `numakit bench pool`:
//! u64 data placed node by node, filled by each node's own workers, summed
//! through the pool's morsels, and the same sum by plain threads for
//! comparison.
//!
//! The value at global index i is i, so the sum has a closed form and every
//! run verifies itself. This is a workload, not a library primitive: the
//! operators of later layers will have their own.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{ensure, Context, Result};
use clap::Args;
use numakit_placement::{BufferOptions, HugePages, NodeBuffer, Placement, Placer};
use numakit_pool::{NodeSlice, Pool};
use numakit_topology::NodeId;

/// Default morsel size in KiB: 2 MiB of u64. Smaller morsels (512 KiB)
/// measured 2-7% slower than a plain static read here, mostly with huge
/// pages; 2 MiB matched it.
pub const DEFAULT_MORSEL_KIB: usize = 2048;

/// One node's share of the data.
pub struct NodeData {
    /// The node whose workers own this share.
    pub worker_node: NodeId,
    /// The node the memory was placed on (differs for CPU-only nodes).
    pub memory_node: NodeId,
    /// Global index of the first element.
    pub first: u64,
    /// The share's values, placed on `memory_node`.
    pub buffer: NodeBuffer<u64>,
}

/// The whole data set.
pub struct PlacedData {
    /// One share per node of the pool, in the pool's node order.
    pub parts: Vec<NodeData>,
    /// u64 values in all the parts.
    pub elements: u64,
    /// Time the nodes' workers took to fill their shares (first touch
    /// included).
    pub fill_time: Duration,
}

impl PlacedData {
    /// The parts as node slices for the pool.
    pub fn slices(&self) -> Vec<NodeSlice<'_, u64>> {
        self.parts
            .iter()
            .map(|p| NodeSlice {
                node: p.worker_node,
                data: &p.buffer[..],
            })
            .collect()
    }

    /// Size of the data in bytes (8 per element).
    pub fn bytes(&self) -> u64 {
        self.elements * 8
    }

    /// The sum every method must produce: 0 + 1 + ... + (n-1), wrapping.
    pub fn expected_sum(&self) -> u64 {
        let n = u128::from(self.elements);
        (n * n.saturating_sub(1) / 2) as u64
    }
}

/// The nearest node with memory to `node` (itself if it has memory).
fn memory_node_for(placer: &Placer, node: NodeId) -> Result<NodeId> {
    let topo = placer.topology();
    let memory = topo.memory_nodes();
    if memory.contains(&node) {
        return Ok(node);
    }
    topo.nodes_by_distance(node)?
        .into_iter()
        .find(|n| memory.contains(n))
        .context("no node with memory is allowed")
}

/// Places `elements` u64 evenly over the pool's nodes (bound to the node,
/// first touched by that node's workers) and fills them in parallel.
pub fn place_and_fill(pool: &Pool, elements: u64, huge_pages: HugePages) -> Result<PlacedData> {
    let nodes = pool.nodes();
    let share = elements / nodes.len() as u64;
    let mut parts = Vec::with_capacity(nodes.len());
    let mut first = 0;
    for (i, &node) in nodes.iter().enumerate() {
        let len = if i + 1 == nodes.len() {
            elements - first
        } else {
            share
        };
        let memory_node = memory_node_for(pool.placer(), node)?;
        let mut options = BufferOptions::new(Placement::OnNode(memory_node));
        options.prefault = false;
        options.huge_pages = huge_pages;
        let buffer = NodeBuffer::with_options(pool.placer(), len as usize, options)
            .with_context(|| format!("placing {} MiB on node {memory_node}", (len * 8) >> 20))?;
        parts.push(NodeData {
            worker_node: node,
            memory_node,
            first,
            buffer,
        });
        first += len;
    }
    let start = Instant::now();
    fill(pool, &mut parts)?;
    Ok(PlacedData {
        parts,
        elements,
        fill_time: start.elapsed(),
    })
}

/// Each worker writes its slice of its own node's part (first touch).
fn fill(pool: &Pool, parts: &mut [NodeData]) -> Result<()> {
    let contexts = pool.worker_contexts();
    // Per worker: the global index of its first element and its slice.
    type Chunk<'a> = Mutex<Option<(u64, &'a mut [u64])>>;
    let mut chunks: Vec<Chunk<'_>> = contexts.iter().map(|_| Mutex::new(None)).collect();
    for part in parts.iter_mut() {
        let owners: Vec<usize> = contexts
            .iter()
            .filter(|c| c.node == part.worker_node)
            .map(|c| c.index)
            .collect();
        let per = part.buffer.len().div_ceil(owners.len().max(1)).max(1);
        let base = part.first;
        for (j, chunk) in part.buffer.chunks_mut(per).enumerate() {
            let start = base + (j * per) as u64;
            *chunks[owners[j]]
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner) = Some((start, chunk));
        }
    }
    pool.broadcast(|ctx| {
        let mut slot = chunks[ctx.index]
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some((start, chunk)) = slot.as_mut() {
            for (i, v) in chunk.iter_mut().enumerate() {
                *v = *start + i as u64;
            }
        }
    })?;
    Ok(())
}

fn sum_slice(data: &[u64]) -> u64 {
    data.iter().fold(0u64, |a, &x| a.wrapping_add(x))
}

/// Sums through the pool: morsels queued at their home node.
pub fn pool_sum(pool: &Pool, data: &PlacedData, morsel_kib: usize) -> Result<u64> {
    let morsel_len = (morsel_kib * 1024 / 8).max(1);
    let partials = pool.fold_morsels(
        &data.slices(),
        morsel_len,
        || 0u64,
        |acc, _, m| acc.wrapping_add(sum_slice(m.data)),
    )?;
    Ok(partials.into_iter().fold(0, u64::wrapping_add))
}

/// Sums with plain threads, one per pool worker and pinned like it, each
/// reading a fixed contiguous slice of its node's part: the static,
/// perfectly local baseline.
pub fn plain_sum(pool: &Pool, data: &PlacedData) -> Result<u64> {
    let contexts = pool.worker_contexts();
    let placer = pool.placer();
    let sums = std::thread::scope(|scope| {
        let handles: Vec<_> = contexts
            .iter()
            .map(|ctx| {
                let part = data.parts.iter().find(|p| p.worker_node == ctx.node);
                let peers = contexts.iter().filter(|c| c.node == ctx.node).count();
                scope.spawn(move || {
                    if let Some(cpu) = ctx.cpu {
                        placer.pin_to_cpu(cpu)?;
                    }
                    let Some(part) = part else { return Ok(0) };
                    let per = part.buffer.len().div_ceil(peers.max(1)).max(1);
                    let slice = part
                        .buffer
                        .chunks(per)
                        .nth(ctx.index_in_node)
                        .unwrap_or(&[]);
                    Ok::<u64, numakit_placement::PlacementError>(sum_slice(slice))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .map_err(|_| anyhow::anyhow!("a reader thread panicked"))?
                    .map_err(anyhow::Error::from)
            })
            .collect::<Result<Vec<u64>>>()
    })?;
    Ok(sums.into_iter().fold(0, u64::wrapping_add))
}

/// Checks a computed sum against the closed form.
pub fn verify(data: &PlacedData, sum: u64, method: &str) -> Result<()> {
    ensure!(
        sum == data.expected_sum(),
        "{method} sum {sum} differs from the expected {}",
        data.expected_sum()
    );
    Ok(())
}

/// Resident pages of each part per node: (memory node asked, pages on it,
/// pages in all).
pub fn placement_report(data: &PlacedData) -> Result<Vec<(NodeId, usize, usize)>> {
    data.parts
        .iter()
        .map(|p| {
            let counts = p.buffer.pages_per_node()?;
            let total = counts.values().sum();
            Ok((
                p.memory_node,
                counts.get(&p.memory_node).copied().unwrap_or(0),
                total,
            ))
        })
        .collect()
}

/// How the parallel sum of `run` and `bench pool` lays out and walks its
/// data.
#[derive(Debug, Clone, Args)]
pub struct SumArgs {
    /// Huge pages for the data: `never` (exact per-page placement),
    /// `transparent` (2 MiB THP, fewer TLB misses) or `reserved` (hugetlbfs pool).
    #[arg(long, default_value = "never", value_name = "MODE")]
    pub huge_pages: HugePages,

    /// Morsel size in KiB: the unit of work queued at a node.
    #[arg(long, default_value_t = crate::common::parallel_sum::DEFAULT_MORSEL_KIB, value_name = "KIB", value_parser = crate::common::parse::positive)]
    pub morsel_kib: usize,
}
