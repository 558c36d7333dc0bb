//! Li et al. §2's "every socket reads remote memory": the threads of
//! every node read at the same time, first each node its own memory (all
//! local), then each node the other nodes' memory, its threads spread
//! over them round-robin (all remote). Li measured 99 GB/s against
//! 61 GB/s on four Nehalem-EX sockets: with every socket reading remote
//! memory, the links and the snoop traffic, not the memory controllers,
//! set the pace.
//!
//! Only nodes with CPUs take part, as Li's sockets do (a memory-only
//! node has no readers of its own). With one such node there is no
//! remote memory, and the report says so instead of a figure.
//!
//! This module measures; which nodes and how many threads are the
//! caller's, and tables are the CLI's.

use std::time::Instant;

use numakit_placement::{BufferOptions, NodeBuffer, Placement, Placer};
use numakit_topology::NodeId;
use serde::Serialize;

use crate::error::{ProbeError, Result};
use crate::stream;
use crate::team::{self, Seat, ThreadCheck};

/// What to measure, and how long.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct AllRemoteOptions {
    /// Reading threads per node; `None`: every allowed CPU of the node.
    pub threads_per_node: Option<usize>,
    /// Bytes of the buffer placed on each node (read by every thread
    /// assigned to that node, each its share).
    pub buffer_bytes: u64,
    /// Passes over its share each thread reads.
    pub passes: u32,
    /// Repetitions of each scenario (the median is reported).
    pub reps: usize,
}

/// One node's readers in one scenario.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NodeFlow {
    /// The node whose CPUs read.
    pub cpu_node: NodeId,
    /// The nodes whose memory they read (one per thread, round-robin).
    pub memory_nodes: Vec<NodeId>,
    /// Reading threads.
    pub threads: usize,
    /// Their bandwidth together in the median repetition, GB/s (their
    /// bytes over the time the slowest of them took).
    pub gbs: f64,
}

/// Every node reading at once, in one arrangement.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Scenario {
    /// `all local` or `all remote`.
    pub name: String,
    /// Every thread's bytes over the team's wall time, GB/s: the median
    /// repetition.
    pub gbs: f64,
    /// The slowest repetition, GB/s.
    pub min_gbs: f64,
    /// The fastest repetition, GB/s.
    pub max_gbs: f64,
    /// Per reading node, in the median repetition.
    pub nodes: Vec<NodeFlow>,
    /// Where the threads ran, over every repetition.
    pub thread_check: ThreadCheck,
}

/// Both scenarios, side by side.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AllRemoteReport {
    /// The options measured with.
    pub options: AllRemoteOptions,
    /// The nodes whose CPUs read (and whose memory was read).
    pub nodes: Vec<NodeId>,
    /// Pages of the buffers, and how many were on the node they were
    /// placed on (page-location queries).
    pub pages: (usize, usize),
    /// Each node reading its own memory.
    pub all_local: Scenario,
    /// Each node reading the others' memory; `None` with one node.
    pub all_remote: Option<Scenario>,
    /// all remote / all local bandwidth (Li: 61 / 99 = 0.62).
    pub ratio: Option<f64>,
    /// One line on what was (or could not be) measured.
    pub note: String,
}

/// Measures both scenarios on `nodes` (nodes with CPUs the placer may use).
pub fn measure(
    placer: &Placer,
    nodes: &[NodeId],
    opts: &AllRemoteOptions,
) -> Result<AllRemoteReport> {
    if nodes.is_empty() {
        return Err(ProbeError::Zero { what: "nodes" });
    }
    let buffers = nodes
        .iter()
        .map(|&n| place(placer, n, opts.buffer_bytes))
        .collect::<Result<Vec<_>>>()?;
    let pages = pages_placed(nodes, &buffers)?;
    let mut seats = Vec::new();
    for &node in nodes {
        let threads = match opts.threads_per_node {
            Some(t) => t,
            None => placer.cpus_of_node(node)?.len(),
        };
        seats.extend(team::seats_on_node(placer, node, threads)?);
    }
    let local: Vec<usize> = seats.iter().map(|s| position(nodes, s.node)).collect();
    let all_local = scenario(placer, "all local", (&seats, &local), nodes, &buffers, opts)?;
    if nodes.len() < 2 {
        return Ok(AllRemoteReport {
            options: *opts,
            nodes: nodes.to_vec(),
            pages,
            all_local,
            all_remote: None,
            ratio: None,
            note: "one node with CPUs: there is no remote memory to read (Li §2 needs two or more)"
                .into(),
        });
    }
    let targets = remote_targets(&seats, nodes);
    let all_remote = scenario(
        placer,
        "all remote",
        (&seats, &targets),
        nodes,
        &buffers,
        opts,
    )?;
    let ratio = all_remote.gbs / all_local.gbs.max(f64::MIN_POSITIVE);
    Ok(AllRemoteReport {
        options: *opts,
        nodes: nodes.to_vec(),
        pages,
        note: format!(
            "{} nodes reading at once: remote memory gives {:.2} of the local bandwidth (Li §2, four Nehalem-EX sockets: 61 / 99 = 0.62)",
            nodes.len(),
            ratio
        ),
        all_local,
        all_remote: Some(all_remote),
        ratio: Some(ratio),
    })
}

/// The all-remote arrangement: thread j of a node reads the j-th other
/// node (round-robin over them); positions in `nodes`.
fn remote_targets(seats: &[Seat], nodes: &[NodeId]) -> Vec<usize> {
    let others = nodes.len().saturating_sub(1).max(1);
    let mut nth_on_node = vec![0usize; nodes.len()];
    seats
        .iter()
        .map(|s| {
            let me = position(nodes, s.node);
            let j = nth_on_node[me];
            nth_on_node[me] += 1;
            (me + 1 + j % others) % nodes.len()
        })
        .collect()
}

/// Position of `node` in `nodes` (0 when absent, which callers rule out).
fn position(nodes: &[NodeId], node: NodeId) -> usize {
    nodes.iter().position(|&n| n == node).unwrap_or(0)
}

/// A buffer of `bytes` on `node`, every page touched.
fn place(placer: &Placer, node: NodeId, bytes: u64) -> Result<NodeBuffer<u64>> {
    let words = usize::try_from(bytes / 8).unwrap_or(0);
    if words == 0 {
        return Err(ProbeError::BadSize(format!(
            "a buffer of {bytes} bytes is too small to read"
        )));
    }
    let options = BufferOptions::new(Placement::OnNode(node));
    let mut buffer = NodeBuffer::<u64>::with_options(placer, words, options)?;
    stream::write(&mut buffer, 1);
    Ok(buffer)
}

fn pages_placed(nodes: &[NodeId], buffers: &[NodeBuffer<u64>]) -> Result<(usize, usize)> {
    let (mut pages, mut placed) = (0, 0);
    for (&node, buffer) in nodes.iter().zip(buffers) {
        let per_node = buffer.pages_per_node()?;
        pages += per_node.values().sum::<usize>();
        placed += per_node.get(&node).copied().unwrap_or(0);
    }
    Ok((pages, placed))
}

/// Every seat reads its share of the buffer its target names (a position
/// in `nodes`), all at once, `opts.reps` times; the median repetition is
/// reported.
fn scenario(
    placer: &Placer,
    name: &str,
    (seats, targets): (&[Seat], &[usize]),
    nodes: &[NodeId],
    buffers: &[NodeBuffer<u64>],
    opts: &AllRemoteOptions,
) -> Result<Scenario> {
    let shares = shares(targets, buffers);
    let mut runs = Vec::new();
    let mut check = ThreadCheck::default();
    for _ in 0..opts.reps.max(1) {
        let run = team::run(placer, seats, |i| {
            let started = Instant::now();
            let mut sum = 0u64;
            for _ in 0..opts.passes.max(1) {
                sum = sum.wrapping_add(stream::read(shares[i]));
            }
            std::hint::black_box(sum);
            (
                8 * shares[i].len() as u64 * u64::from(opts.passes.max(1)),
                started.elapsed(),
            )
        })?;
        check = check.merge(run.check);
        runs.push(run);
    }
    let gbs = |r: &team::TeamRun<(u64, std::time::Duration)>| {
        let bytes: u64 = r.results.iter().map(|x| x.0).sum();
        bytes as f64 / r.wall.as_secs_f64().max(f64::MIN_POSITIVE) / 1e9
    };
    runs.sort_by(|a, b| gbs(a).total_cmp(&gbs(b)));
    let median = &runs[runs.len() / 2];
    let per_node = nodes
        .iter()
        .map(|&node| {
            let mine: Vec<usize> = (0..seats.len())
                .filter(|&i| seats[i].node == node)
                .collect();
            let bytes: u64 = mine.iter().map(|&i| median.results[i].0).sum();
            let slowest = mine
                .iter()
                .map(|&i| median.results[i].1.as_secs_f64())
                .fold(0.0, f64::max);
            let mut memory: Vec<NodeId> = mine.iter().map(|&i| nodes[targets[i]]).collect();
            memory.sort_unstable();
            memory.dedup();
            NodeFlow {
                cpu_node: node,
                memory_nodes: memory,
                threads: mine.len(),
                gbs: bytes as f64 / slowest.max(f64::MIN_POSITIVE) / 1e9,
            }
        })
        .collect();
    Ok(Scenario {
        name: name.to_string(),
        gbs: gbs(median),
        min_gbs: gbs(&runs[0]),
        max_gbs: gbs(&runs[runs.len() - 1]),
        nodes: per_node,
        thread_check: check,
    })
}

/// Each seat's share of its target buffer: the buffer split evenly among
/// the seats reading it.
fn shares<'a>(targets: &[usize], buffers: &'a [NodeBuffer<u64>]) -> Vec<&'a [u64]> {
    let mut readers = vec![0usize; buffers.len()];
    for &t in targets {
        readers[t] += 1;
    }
    let mut taken = vec![0usize; buffers.len()];
    targets
        .iter()
        .map(|&t| {
            let words: &[u64] = &buffers[t];
            let share = words.len().div_ceil(readers[t].max(1));
            let start = (taken[t] * share).min(words.len());
            taken[t] += 1;
            &words[start..(start + share).min(words.len())]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use numakit_placement::PlacementMode;

    use super::*;

    #[test]
    fn one_node_measures_local_and_says_why_not_remote() {
        let topo = Arc::new(numakit_topology::discover().unwrap());
        let placer = Placer::new(topo.clone(), PlacementMode::BestEffort);
        let node = topo.compute_nodes()[0];
        let opts = AllRemoteOptions {
            threads_per_node: Some(2),
            buffer_bytes: 4 << 20,
            passes: 2,
            reps: 3,
        };
        let r = measure(&placer, &[node], &opts).unwrap();
        assert!(r.all_local.gbs > 0.0);
        assert!(r.all_local.min_gbs <= r.all_local.gbs && r.all_local.gbs <= r.all_local.max_gbs);
        assert_eq!(r.all_local.nodes[0].threads, 2);
        assert_eq!(r.all_local.nodes[0].memory_nodes, vec![node]);
        assert!(r.all_remote.is_none() && r.ratio.is_none());
        assert!(r.note.contains("no remote memory"), "{}", r.note);
        // 2 threads, checked before and after, 3 repetitions.
        assert_eq!(r.all_local.thread_check.threads, 12);
    }

    #[test]
    fn shares_split_each_buffer_among_its_readers() {
        let topo = Arc::new(numakit_topology::discover().unwrap());
        let placer = Placer::new(topo.clone(), PlacementMode::BestEffort);
        let node = topo.compute_nodes()[0];
        let buffers = vec![
            place(&placer, node, 800).unwrap(),
            place(&placer, node, 80).unwrap(),
        ];
        let s = shares(&[0, 1, 0, 0], &buffers);
        assert_eq!(
            s.iter().map(|x| x.len()).collect::<Vec<_>>(),
            [34, 10, 34, 32]
        );
        assert!(place(&placer, node, 4).is_err());
    }
}
