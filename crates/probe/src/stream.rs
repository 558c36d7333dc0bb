//! Sequential bandwidth: threads streaming through a placed buffer,
//! reading, writing or copying it.
//!
//! Each thread of a team takes one contiguous share of the buffer and
//! goes over it a number of passes; bandwidth is the bytes of all passes
//! over the time from the common start to the last thread's end. The
//! kernels use plain loads and stores, as lmbench's `bw_mem rd`, `wr` and
//! `cp` do: writes therefore also read each line first (the cache's
//! write-allocate), and no streaming stores are used. Copy counts the bytes
//! copied once, as `bw_mem cp` and `mbw` do. Each thread's hardware
//! counters, where the kernel offers them, cover its passes; together they
//! are given per 64-byte line of the bytes counted. This module measures
//! one setting; which nodes and how many threads is [`crate::bandwidth`]'s
//! choice.

use std::sync::Mutex;

use numakit_placement::counters::Counts;
use numakit_placement::{BufferOptions, HugePages, NodeBuffer, Placement, Placer};
use serde::Serialize;

use crate::error::{ProbeError, Result};
use crate::team::{self, Seat, TeamRun, ThreadCheck};

/// What the threads do with the bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kernel {
    /// Sum every word of the source (lmbench's `bw_mem rd`).
    Read,
    /// Store to every word of the target; the cache reads each line
    /// first, which the bandwidth does not count (`bw_mem wr`).
    Write,
    /// Copy the source into the target word by word, the bytes counted
    /// once (`bw_mem cp`).
    Copy,
}

impl Kernel {
    /// Every kernel, in the order the matrices list them.
    pub const ALL: [Kernel; 3] = [Kernel::Read, Kernel::Write, Kernel::Copy];

    /// The kernel's name in reports and options (`read`, `write`, `copy`).
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Read => "read",
            Kernel::Write => "write",
            Kernel::Copy => "copy",
        }
    }
}

/// The memory a bandwidth measurement streams through: a source, and for
/// copies a destination of the same size, both placed alike.
pub struct StreamBuffers {
    source: NodeBuffer<u64>,
    target: NodeBuffer<u64>,
}

impl StreamBuffers {
    /// Two buffers of `bytes` each, placed as asked, every page touched.
    pub fn new(
        placer: &Placer,
        bytes: u64,
        placement: Placement,
        huge_pages: HugePages,
    ) -> Result<Self> {
        let words = usize::try_from(bytes / 8)
            .map_err(|_| ProbeError::BadSize(format!("{bytes} bytes do not fit in memory")))?;
        if words == 0 {
            return Err(ProbeError::BadSize(
                "a bandwidth buffer needs at least 8 bytes".into(),
            ));
        }
        let mut options = BufferOptions::new(placement);
        options.huge_pages = huge_pages;
        let make = || NodeBuffer::<u64>::with_options(placer, words, options.clone());
        let mut source = make()?;
        write(&mut source, 1);
        Ok(Self {
            source,
            target: make()?,
        })
    }

    /// The source's words (what read kernels read).
    pub fn source_words(&self) -> &[u64] {
        &self.source
    }

    /// Bytes of one buffer.
    pub fn bytes(&self) -> u64 {
        self.source.byte_len() as u64
    }

    /// Pages of both buffers, and how many of them are on `node`.
    pub fn pages_on(&self, node: numakit_topology::NodeId) -> Result<(usize, usize)> {
        let mut pages = 0;
        let mut on_node = 0;
        for buffer in [&self.source, &self.target] {
            let per_node = buffer.pages_per_node()?;
            pages += per_node.values().sum::<usize>();
            on_node += per_node.get(&node).copied().unwrap_or(0);
        }
        Ok((pages, on_node))
    }
}

/// One measurement: bytes moved, time, and where the threads ran.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Streamed {
    /// Bytes streamed: one buffer's size times the passes (a copy's bytes
    /// counted once).
    pub bytes: u64,
    /// Wall time in seconds from the team's common start to its last
    /// thread's end.
    pub seconds: f64,
    /// Where the threads ran, before and after their work.
    pub check: ThreadCheck,
    /// Every thread's hardware counts together, per 64-byte `line` of
    /// `bytes`; `None` where the kernel offers no counters or the run was
    /// not counted.
    pub counts: Option<Counts>,
}

impl Streamed {
    /// Bandwidth in GB/s (10^9 bytes per second): `bytes` over `seconds`,
    /// 0 when no time was measured.
    pub fn gbs(&self) -> f64 {
        if self.seconds > 0.0 {
            self.bytes as f64 / self.seconds / 1e9
        } else {
            0.0
        }
    }
}

/// Runs `kernel` with one thread per seat, each over its share of the
/// buffers, `passes` times.
pub fn stream(
    placer: &Placer,
    seats: &[Seat],
    buffers: &mut StreamBuffers,
    kernel: Kernel,
    passes: u32,
) -> Result<Streamed> {
    let threads = seats.len().max(1);
    let passes = passes.max(1);
    let share = buffers.source.len().div_ceil(threads);
    let sources: Vec<&[u64]> = buffers.source.chunks(share).collect();
    let targets: Vec<Mutex<&mut [u64]>> =
        buffers.target.chunks_mut(share).map(Mutex::new).collect();
    let run: TeamRun<u64> = team::run_counted(placer, seats, |i| {
        let (Some(source), Some(target)) = (sources.get(i), targets.get(i)) else {
            return 0;
        };
        let mut target = target
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut check = 0u64;
        for pass in 0..passes {
            check = check.wrapping_add(match kernel {
                Kernel::Read => read(source),
                Kernel::Write => {
                    write(&mut target, u64::from(pass));
                    0
                }
                Kernel::Copy => {
                    copy(source, &mut target);
                    0
                }
            });
        }
        check
    })?;
    std::hint::black_box(&run.results);
    let bytes = buffers.bytes() * u64::from(passes);
    let lines = bytes as f64 / LINE_BYTES;
    Ok(Streamed {
        bytes,
        seconds: run.wall.as_secs_f64(),
        check: run.check,
        counts: run.total_counts().map(|c| c.with_work(lines, "line")),
    })
}

/// Bytes per cache line, the unit counts are given in.
const LINE_BYTES: f64 = 64.0;

/// Sums the words with eight independent accumulators (so that the adds
/// do not wait on each other and the compiler can use vector registers).
#[inline(never)]
pub fn read(words: &[u64]) -> u64 {
    let mut lanes = [0u64; 8];
    let chunks = words.chunks_exact(8);
    let rest = chunks
        .remainder()
        .iter()
        .fold(0u64, |a, &w| a.wrapping_add(w));
    for chunk in chunks {
        for (lane, &w) in lanes.iter_mut().zip(chunk) {
            *lane = lane.wrapping_add(w);
        }
    }
    lanes.iter().fold(rest, |a, &l| a.wrapping_add(l))
}

/// Writes every word with plain stores (a value that changes with the
/// position, so that the compiler cannot turn the loop into `memset`).
#[inline(never)]
pub fn write(words: &mut [u64], seed: u64) {
    for (i, w) in words.iter_mut().enumerate() {
        *w = seed.wrapping_add(i as u64);
    }
}

/// Copies `source` into `target` word by word with plain loads and stores
/// (the xor with a value the compiler cannot see keeps it from calling
/// `memcpy`, which streams large copies past the cache).
#[inline(never)]
pub fn copy(source: &[u64], target: &mut [u64]) {
    let mask = std::hint::black_box(0u64);
    for (t, &s) in target.iter_mut().zip(source) {
        *t = s ^ mask;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use numakit_placement::PlacementMode;

    use super::*;

    #[test]
    fn kernels_compute_what_they_say() {
        let words: Vec<u64> = (0..1003).collect();
        assert_eq!(read(&words), 1002 * 1003 / 2);
        let mut target = vec![0u64; 1003];
        write(&mut target, 5);
        assert!(target.iter().enumerate().all(|(i, &w)| w == 5 + i as u64));
        copy(&words, &mut target);
        assert_eq!(target, words);
        assert_eq!(read(&[]), 0);
    }

    #[test]
    fn every_kernel_moves_every_byte_of_every_pass() {
        let topo = Arc::new(numakit_topology::discover().unwrap());
        let placer = Placer::new(topo.clone(), PlacementMode::BestEffort);
        let node = topo.compute_nodes()[0];
        let seats = team::seats_on_node(&placer, node, 2).unwrap();
        let mut buffers =
            StreamBuffers::new(&placer, 1 << 20, Placement::OnNode(node), HugePages::Never)
                .unwrap();
        for kernel in Kernel::ALL {
            let s = stream(&placer, &seats, &mut buffers, kernel, 3).unwrap();
            assert_eq!(s.bytes, 3 << 20);
            assert!(s.gbs() > 0.0);
            assert_eq!(s.check.threads, 4);
            if let Some(c) = s.counts {
                assert_eq!(c.work.map(|w| w.units), Some((3 << 20) as f64 / 64.0));
            }
        }
        // The copy really copied the source (written with seed 1).
        let expected: Vec<u64> = (0..buffers.source.len() as u64).map(|i| 1 + i).collect();
        assert_eq!(&buffers.target[..], &expected[..]);
        let (pages, on_node) = buffers.pages_on(node).unwrap();
        assert_eq!(pages, 2 * (1 << 20) / numakit_placement::sys::page_size());
        assert!(on_node <= pages);
    }

    #[test]
    fn an_empty_buffer_is_refused() {
        let topo = Arc::new(numakit_topology::discover().unwrap());
        let placer = Placer::new(topo.clone(), PlacementMode::BestEffort);
        let made = StreamBuffers::new(&placer, 4, Placement::Anywhere, HugePages::Never);
        assert!(matches!(made, Err(ProbeError::BadSize(_))));
    }
}
