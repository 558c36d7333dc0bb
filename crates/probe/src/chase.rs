//! Dependent loads: a pointer chase through every cache line of a placed
//! buffer in a random order, the measure of memory latency.
//!
//! Each line's first word holds the index of the next line to visit, so
//! every load waits for the one before it and nothing overlaps: the time
//! per load is the latency. The order is a random cycle (a keyed
//! permutation of the line numbers, evaluated pointwise, so that building
//! it needs no shuffle and only one random write per line), which defeats
//! the prefetchers and, with base pages, costs a TLB miss on almost every
//! load, as a database's random accesses do; with huge pages the TLB
//! misses mostly go away.
//!
//! A second order, [`ChaseOrder::PageRounds`], is lmbench's `lat_mem_rd
//! -t` pattern: every load goes to another page, the pages in one random
//! order that repeats once for each line of a page (each round at another
//! line of every page). It touches the same lines, but its page walks
//! revisit page-table entries in a fixed order, so it lets the probe be
//! compared with that tool on equal terms. Like lmbench, it leaves the
//! first touch of each page to the linking of the cycle, so the kernel
//! hands out physical frames in the order the walk visits the pages; the
//! walk then runs through physical memory almost page by page in order,
//! which a virtual machine's nested page tables and the memory's open
//! rows reward (30% lower latency than the same walk over pages touched
//! in address order, measured on our VMs).
//!
//! The linking of a cycle and the dependent-load walk are
//! [`numakit_ops::chase`]'s, the chase the operators' cache probe walks
//! too; this module places the buffer, picks the order and times the
//! walk. Which thread walks it, and on which node the buffer lies, is the
//! caller's choice.

use std::time::Duration;

use numakit_ops::chase::{self as cycle, LINE_WORDS};
use numakit_ops::datagen::Permutation;
use numakit_placement::{BufferOptions, HugePages, NodeBuffer, Placement, Placer};
use numakit_topology::NodeId;
use serde::Serialize;

use crate::error::{ProbeError, Result};

pub use numakit_ops::chase::LINE_BYTES;

/// The order in which the chase visits the lines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChaseOrder {
    /// Every line in one random order (the default).
    #[default]
    Random,
    /// Pages in one random order, visited once per line of a page, each
    /// round at another line (lmbench's `lat_mem_rd -t`).
    PageRounds,
}

impl ChaseOrder {
    /// The order named `random` or `page-rounds` (as options spell it),
    /// `None` for any other name.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "random" => Some(Self::Random),
            "page-rounds" => Some(Self::PageRounds),
            _ => None,
        }
    }
}

/// A placed buffer whose cache lines form one random cycle.
pub struct ChaseBuffer {
    words: NodeBuffer<u64>,
    lines: usize,
    /// Word index of the first line of the cycle.
    start: usize,
}

impl ChaseBuffer {
    /// `bytes` of memory placed as `placement` (pages touched by the
    /// target node's threads), its lines linked into a random cycle keyed
    /// by `seed`.
    pub fn new(
        placer: &Placer,
        bytes: u64,
        placement: Placement,
        huge_pages: HugePages,
        seed: u64,
    ) -> Result<Self> {
        Self::with_order(
            placer,
            bytes,
            placement,
            huge_pages,
            seed,
            ChaseOrder::Random,
        )
    }

    /// As [`ChaseBuffer::new`], the lines visited in `order`.
    pub fn with_order(
        placer: &Placer,
        bytes: u64,
        placement: Placement,
        huge_pages: HugePages,
        seed: u64,
        order: ChaseOrder,
    ) -> Result<Self> {
        let lines = usize::try_from(bytes / LINE_BYTES as u64)
            .map_err(|_| ProbeError::BadSize(format!("{bytes} bytes do not fit in memory")))?;
        if lines < 2 {
            return Err(ProbeError::BadSize(format!(
                "a pointer chase needs at least two cache lines, got {bytes} bytes"
            )));
        }
        let mut options = BufferOptions::new(placement);
        options.huge_pages = huge_pages;
        // lmbench's pages are first touched while the chain is linked, so
        // the kernel hands out physical frames in the walk's order; the
        // page-rounds order does the same (the placement policy is set
        // before, so the pages still land on their node).
        options.prefault = order == ChaseOrder::Random;
        let mut words = NodeBuffer::<u64>::with_options(placer, lines * LINE_WORDS, options)?;
        let (start, lines) = match order {
            ChaseOrder::Random => (cycle::link_random_cycle(&mut words, lines, seed), lines),
            ChaseOrder::PageRounds => {
                let rounds = PageRounds::new(lines, page_lines().min(lines), seed);
                let covered = rounds.lines();
                let start = cycle::link_cycle(&mut words, covered, |k| rounds.line(k));
                (start, covered)
            }
        };
        Ok(Self {
            words,
            lines,
            start,
        })
    }

    /// Cache lines in the cycle.
    pub fn lines(&self) -> usize {
        self.lines
    }

    /// Size of the buffer in bytes.
    pub fn bytes(&self) -> u64 {
        self.words.byte_len() as u64
    }

    /// Where the buffer's pages are.
    pub fn pages_per_node(&self) -> Result<std::collections::BTreeMap<NodeId, usize>> {
        Ok(self.words.pages_per_node()?)
    }

    /// Follows the cycle for `loads` dependent loads from word `from` (a
    /// line's first word, as [`ChaseBuffer::start`] and this function
    /// return); returns the time taken and where the chase stopped.
    pub fn chase(&self, from: usize, loads: u64) -> (Duration, usize) {
        cycle::chase(&self.words, from, loads)
    }

    /// Where the cycle starts.
    pub fn start(&self) -> usize {
        self.start
    }

    /// Nanoseconds per load over `loads` loads, after `warm` untimed ones
    /// that bring the page-walk caches into their steady state; the timed
    /// loads go on from where the warm ones stopped, onto lines not yet
    /// visited (unless the cycle is shorter than both together).
    pub fn ns_per_load(&self, warm: u64, loads: u64) -> f64 {
        let (_, at) = self.chase(self.start, warm);
        let loads = loads.max(1);
        let (taken, _) = self.chase(at, loads);
        taken.as_nanos() as f64 / loads as f64
    }
}

/// Lines in a base page.
fn page_lines() -> usize {
    (numakit_placement::sys::page_size() / LINE_BYTES).max(1)
}

/// lmbench's order: visit k is page `pages[k mod P]` (P pages in a random
/// order) at line `(k mod P + k div P) mod L` of it, so that each round
/// of P visits sees every page once and each page sees all its L lines
/// over the L rounds.
struct PageRounds {
    pages: Permutation,
    page_count: usize,
    lines_per_page: usize,
}

impl PageRounds {
    /// The whole pages of `lines` lines, in pages of `lines_per_page`
    /// lines (a last partial page is left out).
    fn new(lines: usize, lines_per_page: usize, seed: u64) -> Self {
        let page_count = (lines / lines_per_page).max(1);
        Self {
            pages: Permutation::new(page_count as u64, seed),
            page_count,
            lines_per_page,
        }
    }

    /// Lines in the cycle.
    fn lines(&self) -> usize {
        self.page_count * self.lines_per_page
    }

    fn line(&self, k: usize) -> usize {
        let (round, i) = (k / self.page_count, k % self.page_count);
        let page = self.pages.at(i as u64) as usize;
        page * self.lines_per_page + (i + round) % self.lines_per_page
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use numakit_placement::PlacementMode;

    use super::*;

    fn placer() -> Placer {
        let topo = Arc::new(numakit_topology::discover().unwrap());
        Placer::new(topo, PlacementMode::BestEffort)
    }

    /// Walks the cycle from the chase's start and checks it visits every
    /// line once before coming back.
    fn visits_every_line_once(buffer: &ChaseBuffer) {
        let words: &[u64] = &buffer.words;
        let lines = buffer.lines();
        let start = buffer.start;
        let mut seen = vec![false; lines];
        let mut at = start;
        for step in 0..lines {
            assert_eq!(at % LINE_WORDS, 0, "a line's first word");
            let line = at / LINE_WORDS;
            assert!(!seen[line], "line {line} visited twice (step {step})");
            seen[line] = true;
            at = words[at] as usize;
        }
        assert_eq!(at, start, "the cycle closes after every line");
    }

    #[test]
    fn the_chase_is_one_cycle_through_every_line() {
        let placer = placer();
        let node = placer.topology().compute_nodes()[0];
        for bytes in [128, 64 * 3, 64 * 1000, 64 * 1024, 1 << 20] {
            let b = ChaseBuffer::new(&placer, bytes, Placement::OnNode(node), HugePages::Never, 7)
                .unwrap();
            assert_eq!(b.lines() as u64, bytes / 64);
            visits_every_line_once(&b);
        }
    }

    #[test]
    fn a_chase_takes_time_and_too_small_buffers_are_refused() {
        let placer = placer();
        let node = placer.topology().compute_nodes()[0];
        let b = ChaseBuffer::new(
            &placer,
            1 << 20,
            Placement::OnNode(node),
            HugePages::Never,
            1,
        )
        .unwrap();
        assert!(b.ns_per_load(1000, 10_000) > 0.0);
        let small = ChaseBuffer::new(&placer, 64, Placement::OnNode(node), HugePages::Never, 1);
        assert!(matches!(small, Err(ProbeError::BadSize(_))));
    }

    #[test]
    fn the_order_is_not_sequential() {
        let placer = placer();
        let node = placer.topology().compute_nodes()[0];
        let b = ChaseBuffer::new(
            &placer,
            64 << 10,
            Placement::OnNode(node),
            HugePages::Never,
            3,
        )
        .unwrap();
        let words: &[u64] = &b.words;
        let mut at = b.start();
        let mut neighbours = 0;
        for _ in 0..b.lines() {
            let next = words[at] as usize;
            neighbours += usize::from(next.abs_diff(at) == LINE_WORDS);
            at = next;
        }
        assert!(neighbours < 10, "{neighbours} steps to the next line");
    }

    #[test]
    fn page_rounds_visit_every_line_of_the_whole_pages_each_load_on_another_page() {
        let placer = placer();
        let node = placer.topology().compute_nodes()[0];
        let page = numakit_placement::sys::page_size() as u64;
        let per_page = (page / 64) as usize;
        for bytes in [128, page, 5 * page, 5 * page + 192] {
            let b = ChaseBuffer::with_order(
                &placer,
                bytes,
                Placement::OnNode(node),
                HugePages::Never,
                5,
                ChaseOrder::PageRounds,
            )
            .unwrap();
            let whole = (bytes / page).max(1) as usize * per_page;
            assert_eq!(b.lines(), whole.min((bytes / 64) as usize), "{bytes} bytes");
            visits_every_line_once(&b);
        }
        let b = ChaseBuffer::with_order(
            &placer,
            16 * page,
            Placement::OnNode(node),
            HugePages::Never,
            5,
            ChaseOrder::PageRounds,
        )
        .unwrap();
        let words: &[u64] = &b.words;
        let page_words = per_page * LINE_WORDS;
        let mut at = b.start();
        let mut pages_in_round = Vec::new();
        for step in 0..b.lines() {
            let next = words[at] as usize;
            assert_ne!(
                next / page_words,
                at / page_words,
                "step {step} stays on its page"
            );
            if step < 16 {
                pages_in_round.push(at / page_words);
            }
            at = next;
        }
        pages_in_round.sort_unstable();
        pages_in_round.dedup();
        assert_eq!(
            pages_in_round.len(),
            16,
            "the first round sees every page once"
        );
        assert_eq!(
            ChaseOrder::parse("page-rounds"),
            Some(ChaseOrder::PageRounds)
        );
        assert_eq!(ChaseOrder::parse("sequential"), None);
    }
}
