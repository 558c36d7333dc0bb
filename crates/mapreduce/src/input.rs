//! Input files and bytes in memory where the map tasks will find them.
//!
//! Two ways in, as Phoenix Rebirth discusses (§V): a memory map of the
//! file (optionally populated up front and advised sequential; its pages
//! are wherever the page cache has them), or a read into one contiguous
//! buffer whose blocks are placed on the pool's nodes in turn: every
//! worker reads its share of its node's block, so the first touch puts
//! those pages on that node and the map tasks over them are queued there.
//! Generated inputs can be placed the same way ([`Input::place`]). This
//! module moves bytes; it does not parse any format.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::{Mutex, PoisonError};

use memmap2::{Advice, Mmap, MmapOptions};
use numakit_placement::buffer::{BufferOptions, HugePages, NodeBuffer};
use numakit_placement::policy::Placement;
use numakit_pool::{Pool, WorkerContext};

use crate::error::{MapReduceError, Result};

/// How a file reaches memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputMode {
    /// Memory-map it; `populate` reads every page in up front.
    Mmap {
        /// Fault every page in when mapping (`MAP_POPULATE`) rather than
        /// on first access during map.
        populate: bool,
    },
    /// Read it into node-placed blocks, one per node of the pool.
    Read,
}

enum Bytes {
    Mapped(Mmap),
    Placed(NodeBuffer<u8>),
}

/// Input bytes in memory.
pub struct Input {
    bytes: Bytes,
}

impl Input {
    /// Opens `path` as `mode` says.
    pub fn open(pool: &Pool, path: &Path, mode: InputMode) -> Result<Self> {
        let io = |source| MapReduceError::Io {
            path: path.display().to_string(),
            source,
        };
        let file = File::open(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len() as usize;
        match mode {
            InputMode::Mmap { populate } => {
                if len == 0 {
                    return Self::place(pool, &[]);
                }
                let mut options = MmapOptions::new();
                if populate {
                    options.populate();
                }
                // SAFETY: the map is read-only and private to this process; if
                // another process truncates the file while it is mapped, reads
                // past the new end fault (SIGBUS). That is the documented
                // contract of mapped input, as for Phoenix's mmap mode.
                let map = unsafe { options.map(&file) }.map_err(io)?;
                // Advice is a hint; a kernel that refuses it changes nothing.
                let _ = map.advise(Advice::Sequential);
                Ok(Self {
                    bytes: Bytes::Mapped(map),
                })
            }
            InputMode::Read => {
                let mut buffer = unplaced(pool, len)?;
                fill_by_node(pool, &mut buffer, |offset, piece| {
                    file.read_exact_at(piece, offset as u64)
                })
                .map_err(io)?;
                Ok(Self {
                    bytes: Bytes::Placed(buffer),
                })
            }
        }
    }

    /// Copies `data` into node-placed blocks, as [`InputMode::Read`] places
    /// a file.
    pub fn place(pool: &Pool, data: &[u8]) -> Result<Self> {
        let mut buffer = unplaced(pool, data.len())?;
        fill_by_node(pool, &mut buffer, |offset, piece| {
            piece.copy_from_slice(&data[offset..offset + piece.len()]);
            Ok(())
        })
        .map_err(|source| MapReduceError::Io {
            path: "generated input".into(),
            source,
        })?;
        Ok(Self {
            bytes: Bytes::Placed(buffer),
        })
    }

    /// The whole input, to hand to [`Runtime::run`](crate::Runtime::run).
    pub fn bytes(&self) -> &[u8] {
        match &self.bytes {
            Bytes::Mapped(m) => m,
            Bytes::Placed(b) => b,
        }
    }

    /// The bytes for in-place changes (placed input only; a map is
    /// read-only).
    pub fn bytes_mut(&mut self) -> Option<&mut [u8]> {
        match &mut self.bytes {
            Bytes::Mapped(_) => None,
            Bytes::Placed(b) => Some(b),
        }
    }

    /// Whether the bytes are a memory map of the file (read-only).
    pub fn is_mapped(&self) -> bool {
        matches!(self.bytes, Bytes::Mapped(_))
    }

    /// Length of the input in bytes.
    pub fn len(&self) -> usize {
        self.bytes().len()
    }

    /// Whether the input has no bytes (an empty file).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A buffer of `len` bytes, mapped but untouched, with no policy: the
/// first touch decides where each page lives.
fn unplaced(pool: &Pool, len: usize) -> Result<NodeBuffer<u8>> {
    let options = BufferOptions {
        placement: Placement::Anywhere,
        huge_pages: HugePages::Never,
        prefault: false,
    };
    Ok(NodeBuffer::with_options(pool.placer(), len, options)?)
}

/// Fills `buffer` in node blocks: the i-th of the pool's nodes gets the
/// i-th block, cut into one piece per worker of that node; each worker
/// fills its own piece (`fill(offset, piece)`), so it touches it first.
fn fill_by_node(
    pool: &Pool,
    buffer: &mut [u8],
    fill: impl Fn(usize, &mut [u8]) -> std::io::Result<()> + Sync,
) -> std::io::Result<()> {
    let contexts = pool.worker_contexts();
    let ranges = worker_ranges(buffer.len(), &contexts);
    // (offset in the input, the piece): one per worker, taken by it.
    type Piece<'b> = Mutex<Option<(usize, &'b mut [u8])>>;
    let mut pieces: Vec<Piece<'_>> = Vec::with_capacity(ranges.len());
    let mut rest: &mut [u8] = buffer;
    for range in &ranges {
        let (piece, tail) = std::mem::take(&mut rest).split_at_mut(range.len());
        pieces.push(Mutex::new(Some((range.start, piece))));
        rest = tail;
    }
    let results = pool
        .broadcast(|ctx| {
            let taken = pieces[ctx.index]
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            match taken {
                Some((offset, piece)) if !piece.is_empty() => fill(offset, piece),
                _ => Ok(()),
            }
        })
        .map_err(std::io::Error::other)?;
    results.into_iter().collect()
}

/// Worker i's byte range: node blocks in pool order (page aligned), each
/// cut evenly among the node's workers.
fn worker_ranges(len: usize, contexts: &[WorkerContext]) -> Vec<std::ops::Range<usize>> {
    const PAGE: usize = 4096;
    let nodes = contexts
        .iter()
        .map(|c| c.node_index)
        .max()
        .map_or(1, |m| m + 1);
    let node_block = |n: usize| {
        let edge = |i: usize| ((len / PAGE) * i / nodes * PAGE).min(len);
        edge(n)..if n + 1 == nodes { len } else { edge(n + 1) }
    };
    contexts
        .iter()
        .map(|c| {
            let block = node_block(c.node_index);
            let peers = contexts
                .iter()
                .filter(|o| o.node_index == c.node_index)
                .count()
                .max(1);
            let share = |i: usize| block.start + block.len() * i / peers;
            share(c.index_in_node)..share(c.index_in_node + 1)
        })
        .collect()
}
