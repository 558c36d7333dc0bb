//! The scatter kernel with software write-combining buffers.
//!
//! Scattering tuple by tuple into thousands of partitions touches a new
//! cache line (and often a new page) per tuple. Instead every partition
//! gets a small buffer of [`SLOT_LINES`] cache lines in cache; a tuple goes
//! into its partition's buffer, and a buffer that holds a whole aligned
//! group of output lines is written out at once, with non-temporal stores
//! ([`Stores::Streaming`], x86-64 `_mm_stream_si128`) when the output is
//! too big to stay in cache, or plain stores ([`Stores::Cached`]) when the
//! next step reads it right away. Partial lines (a partition's first line
//! when its start is not line aligned, and every partition's last one)
//! are written with plain stores of just their own tuples, so neighbouring
//! pieces written by other workers are never touched.
//!
//! A [`ScatterTarget`] is the only way to write: it owns, for every
//! partition, a range of the output no other target can reach (built from
//! an exclusive borrow, or split from one by a prefix sum), and the kernel
//! checks every write against it. This is the crate's one module with
//! unsafe code for partitioning; it does not compute histograms or decide
//! where partitions live.

use std::marker::PhantomData;

use bytemuck::{Pod, Zeroable};

use crate::partition::simd::{self, BATCH};
use crate::partition::Radix;
use crate::tuple::{Tuple, TUPLE_BYTES};

/// Bytes per cache line.
pub const LINE_BYTES: usize = 64;
/// Tuples per cache line.
pub const LINE_TUPLES: usize = LINE_BYTES / TUPLE_BYTES;
/// Cache lines per partition buffer. One line is the textbook size; on
/// the measured machine (Zen 5, 1 MiB L2) larger buffers flush less often
/// and mispredict less: per tuple, 2 lines cost 5-15% more CPU than 4, and
/// 8 lines 2-6% less (at 2^8 and 2^11 partitions; 2^11 buffers of 8 lines
/// fill the L2 and still win).
pub const SLOT_LINES: usize = 8;
const SLOT_TUPLES: usize = SLOT_LINES * LINE_TUPLES;
const SLOT_BYTES: usize = SLOT_TUPLES * TUPLE_BYTES;

/// How full buffers are written out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stores {
    /// Non-temporal stores: no read-for-ownership, no cache pollution;
    /// for outputs far larger than the caches.
    Streaming,
    /// Plain stores: the output stays in cache for the next step.
    Cached,
}

impl Stores {
    /// Streaming for outputs above 4 MiB (about the L3 share one worker
    /// can count on here), cached below.
    pub fn for_output_bytes(bytes: usize) -> Self {
        if bytes > 4 << 20 {
            Self::Streaming
        } else {
            Self::Cached
        }
    }
}

/// One cache line of tuples, line aligned: the unit of aligned scratch
/// buffers that a [`ScatterTarget`] can write into.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct Line(pub [Tuple; LINE_TUPLES]);

/// A reusable, line-aligned tuple buffer (for pass-2 outputs and other
/// scratch space that a scatter writes).
#[derive(Debug, Default)]
pub struct AlignedTuples {
    lines: Vec<Line>,
}

impl AlignedTuples {
    /// An empty buffer; it allocates on the first [`AlignedTuples::get_mut`].
    pub fn new() -> Self {
        Self::default()
    }

    /// The first `len` tuples, growing the buffer if needed (contents
    /// are unspecified).
    pub fn get_mut(&mut self, len: usize) -> &mut [Tuple] {
        let lines = len.div_ceil(LINE_TUPLES);
        if self.lines.len() < lines {
            self.lines.resize(lines, Line::default());
        }
        &mut bytemuck::cast_slice_mut::<Line, Tuple>(&mut self.lines)[..len]
    }

    /// The first `len` tuples (`len` at most what `get_mut` last made).
    pub fn get(&self, len: usize) -> &[Tuple] {
        &bytemuck::cast_slice::<Line, Tuple>(&self.lines)[..len]
    }
}

#[repr(C, align(64))]
#[derive(Clone, Copy, Pod, Zeroable)]
struct Slot([Tuple; SLOT_TUPLES]);

/// The right to write, for every partition p, the tuples
/// `start[p]..end[p]` of some output, through write-combining buffers.
pub struct ScatterTarget<'a> {
    start: Vec<*mut Tuple>,
    next: Vec<*mut Tuple>,
    end: Vec<*mut Tuple>,
    slots: Vec<Slot>,
    /// Block mode: where new blocks come from (see [`ScatterTarget::blocks`]).
    arena: Option<BlockArena>,
    _out: PhantomData<&'a mut [Tuple]>,
}

/// Fixed-size blocks of one output, handed out in order; every block
/// holds tuples of one partition.
struct BlockArena {
    base: *mut Tuple,
    /// Tuples of the output before `base` (alignment).
    skip: usize,
    block: usize,
    capacity: usize,
    used: usize,
    /// Per partition, its blocks in order (offset in the output, length).
    filled: Vec<Vec<(usize, usize)>>,
}

/// Output length [`ScatterTarget::blocks`] needs for `len` tuples in
/// `fanout` partitions with blocks of `block` tuples (every partition
/// leaves at most one block not full, and one more may be opened empty).
pub fn block_output_len(len: usize, fanout: usize, block: usize) -> usize {
    (len.div_ceil(block) + fanout) * block + SLOT_TUPLES
}

// SAFETY: a target only writes its own ranges, which no other target or
// borrow can reach while `'a` lasts (see the constructors); moving it to
// another thread moves that exclusive right along, like a `&mut [T]`.
unsafe impl Send for ScatterTarget<'_> {}

/// Fails unless `out` is empty or aligned to 16 bytes (tuple slots must
/// map onto cache lines).
fn check_alignment(out: &[Tuple]) {
    assert!(
        out.is_empty() || out.as_ptr() as usize % TUPLE_BYTES == 0,
        "scatter outputs must be 16-byte aligned (use AlignedTuples or a NodeBuffer)"
    );
}

impl<'a> ScatterTarget<'a> {
    /// A target for all of `out`, partition p going to
    /// `out[bounds[p]..bounds[p + 1]]` (`bounds` from [`super::prefix_sum`]).
    pub fn exclusive(out: &'a mut [Tuple], bounds: &[usize]) -> Self {
        check_alignment(out);
        let fanout = bounds.len().saturating_sub(1);
        assert!(
            bounds.windows(2).all(|w| w[0] <= w[1])
                && bounds.last().is_none_or(|&e| e <= out.len()),
            "partition bounds must be ascending and within the output"
        );
        let base = out.as_mut_ptr();
        // `wrapping_add` stays within the allocation (checked above).
        let at = |i: usize| base.wrapping_add(i);
        let start: Vec<*mut Tuple> = bounds[..fanout].iter().map(|&b| at(b)).collect();
        let end = bounds[1..].iter().map(|&b| at(b)).collect();
        Self::from_ranges(start, end)
    }

    /// One target per worker over `outs` (one output per group of
    /// partitions): partition p lives in `outs[group_of[p]]`, partitions of
    /// a group one after another in partition order, and within partition
    /// p worker w's tuples (`counts[w][p]` of them) follow those of workers
    /// before it. Returns the targets and, per partition, its (group,
    /// start, end) in the group's output. Every output must hold exactly
    /// its group's tuples.
    pub fn split_by_counts(
        outs: Vec<&'a mut [Tuple]>,
        group_of: &[usize],
        counts: &[Vec<usize>],
    ) -> (Vec<Self>, Vec<(usize, usize, usize)>) {
        outs.iter().for_each(|o| check_alignment(o));
        let lens: Vec<usize> = outs.iter().map(|o| o.len()).collect();
        let fanout = group_of.len();
        assert!(
            counts.iter().all(|c| c.len() == fanout),
            "one count per partition"
        );
        let bases: Vec<*mut Tuple> = outs.into_iter().map(|o| o.as_mut_ptr()).collect();
        let mut fill = vec![0usize; bases.len()];
        let mut extents = Vec::with_capacity(fanout);
        let mut starts = vec![Vec::with_capacity(fanout); counts.len()];
        let mut ends = vec![Vec::with_capacity(fanout); counts.len()];
        for (p, &g) in group_of.iter().enumerate() {
            let first = fill[g];
            for (w, c) in counts.iter().enumerate() {
                starts[w].push(bases[g].wrapping_add(fill[g]));
                fill[g] += c[p];
                ends[w].push(bases[g].wrapping_add(fill[g]));
            }
            extents.push((g, first, fill[g]));
        }
        // The ranges tile each output in order, so they are disjoint; they
        // must also end within it.
        assert!(
            fill.iter().zip(&lens).all(|(f, l)| f <= l),
            "an output is shorter than its partitions"
        );
        (
            starts
                .into_iter()
                .zip(ends)
                .map(|(s, e)| Self::from_ranges(s, e))
                .collect(),
            extents,
        )
    }

    /// A target that needs no counts: partition p fills blocks of `block`
    /// tuples (a multiple of [`SLOT_LINES`] lines) taken in turn from `out`,
    /// which must be at least [`block_output_len`] long for the input.
    /// [`ScatterTarget::finish_blocks`] says which blocks hold what.
    pub fn blocks(out: &'a mut [Tuple], fanout: usize, block: usize) -> Self {
        check_alignment(out);
        assert!(
            block > 0 && block % SLOT_TUPLES == 0,
            "blocks are whole slot groups"
        );
        // The first block starts on a slot group boundary.
        let skip = slot_index(out.as_mut_ptr()).wrapping_neg() % SLOT_TUPLES;
        let capacity = out.len().saturating_sub(skip) / block;
        assert!(
            capacity >= fanout,
            "a block output needs a block per partition"
        );
        let base = out.as_mut_ptr().wrapping_add(skip);
        let start: Vec<*mut Tuple> = (0..fanout).map(|p| base.wrapping_add(p * block)).collect();
        let end = start.iter().map(|s| s.wrapping_add(block)).collect();
        let mut target = Self::from_ranges(start, end);
        target.arena = Some(BlockArena {
            base,
            skip,
            block,
            capacity,
            used: fanout,
            filled: vec![Vec::new(); fanout],
        });
        target
    }

    fn from_ranges(start: Vec<*mut Tuple>, end: Vec<*mut Tuple>) -> Self {
        let slots = vec![Slot::zeroed(); start.len()];
        Self {
            next: start.clone(),
            start,
            end,
            slots,
            arena: None,
            _out: PhantomData,
        }
    }

    /// Block mode: partition p's block is full; record it, open the next.
    #[cold]
    fn next_block(&mut self, p: usize) {
        let Some(arena) = self.arena.as_mut() else {
            return;
        };
        assert!(
            arena.used < arena.capacity,
            "block output too short for its input"
        );
        let offset = |at: *mut Tuple| (at as usize - arena.base as usize) / TUPLE_BYTES;
        arena.filled[p].push((offset(self.start[p]), arena.block));
        let start = arena.base.wrapping_add(arena.used * arena.block);
        arena.used += 1;
        self.start[p] = start;
        self.next[p] = start;
        self.end[p] = start.wrapping_add(arena.block);
    }

    /// Scatters `input` by `radix` (whose fanout must be the target's).
    /// May be called several times; [`ScatterTarget::finish`] writes what
    /// is still buffered. Panics if a partition receives more tuples than
    /// its range holds.
    pub fn scatter(&mut self, input: &[Tuple], radix: Radix, stores: Stores) {
        assert_eq!(radix.fanout(), self.start.len(), "radix fanout mismatch");
        let stream = stores == Stores::Streaming;
        #[cfg(target_arch = "x86_64")]
        if simd::wide() {
            // SAFETY: the CPU has the features the wrappers enable
            // (checked by `wide`).
            unsafe {
                match stream {
                    true => self.scatter_wide::<true>(input, radix),
                    false => self.scatter_wide::<false>(input, radix),
                }
            }
            return;
        }
        match stream {
            true => self.scatter_body::<true>(input, radix),
            false => self.scatter_body::<false>(input, radix),
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,bmi1,bmi2,popcnt")]
    unsafe fn scatter_wide<const STREAM: bool>(&mut self, input: &[Tuple], radix: Radix) {
        self.scatter_body::<STREAM>(input, radix);
    }

    #[inline(always)]
    fn scatter_body<const STREAM: bool>(&mut self, input: &[Tuple], radix: Radix) {
        if radix.within_top31() {
            self.scatter_batches::<STREAM, true>(input, radix);
        } else {
            self.scatter_batches::<STREAM, false>(input, radix);
        }
        if STREAM {
            store_fence();
        }
    }

    /// Partition numbers a batch at a time, then tuple by tuple into the
    /// buffers.
    #[inline(always)]
    fn scatter_batches<const STREAM: bool, const TOP31: bool>(
        &mut self,
        input: &[Tuple],
        radix: Radix,
    ) {
        let mut batches = input.chunks_exact(BATCH);
        for batch in &mut batches {
            let Ok(batch) = <&[Tuple; BATCH]>::try_from(batch) else {
                continue;
            };
            let ids = simd::batch_ids::<TOP31>(batch, radix);
            for (t, &p) in batch.iter().zip(&ids) {
                self.put::<STREAM>(p as usize, t);
            }
        }
        for t in batches.remainder() {
            self.put::<STREAM>(radix.of_with::<TOP31>(t.key), t);
        }
    }

    /// Puts `t` into partition p's buffer, writing the buffer out when it
    /// completes a group of lines. `p` must come from the target's radix.
    #[inline(always)]
    fn put<const STREAM: bool>(&mut self, p: usize, t: &Tuple) {
        debug_assert!(p < self.next.len());
        // SAFETY: p is a partition number of a radix whose fanout equals
        // the number of partitions (asserted in `scatter`), so it indexes
        // `next` and `slots` (both that long); the slot index is below
        // SLOT_TUPLES by construction.
        unsafe {
            let pos = *self.next.get_unchecked(p);
            put_in_slot(self.slots.get_unchecked_mut(p), slot_index(pos), t);
            let after = pos.wrapping_add(1);
            *self.next.get_unchecked_mut(p) = after;
            if (after as usize) % SLOT_BYTES == 0 {
                self.flush_full::<STREAM>(p, after);
            }
        }
    }

    /// Writes partition p's buffer, whose group of lines ends at `after`.
    #[inline]
    fn flush_full<const STREAM: bool>(&mut self, p: usize, after: *mut Tuple) {
        let group = after.wrapping_sub(SLOT_TUPLES);
        assert!(after <= self.end[p], "partition {p} overflows its range");
        if group >= self.start[p] {
            // SAFETY: [group, after) lies within [start[p], end[p]) (both
            // checks above), a range only this target writes; `group` is
            // aligned to SLOT_BYTES because `after` is.
            unsafe { write_group::<STREAM>(group, &self.slots[p]) };
        } else {
            self.write_partial(p, self.start[p], after);
        }
        if after == self.end[p] && self.arena.is_some() {
            self.next_block(p);
        }
    }

    /// Plain-stores the buffered tuples of partition p for [from, to),
    /// which lie in one slot group.
    fn write_partial(&self, p: usize, from: *mut Tuple, to: *mut Tuple) {
        assert!(from >= self.start[p] && to <= self.end[p] && from <= to);
        let mut at = from;
        while at < to {
            // SAFETY: `at` is within [start[p], end[p]) (asserted), a range
            // only this target writes, and 16-byte aligned.
            unsafe { at.write(self.slots[p].0[slot_index(at)]) };
            at = at.wrapping_add(1);
        }
    }

    /// Writes every partition's buffered tail. Panics if a partition
    /// received fewer tuples than its range holds (the range would keep
    /// stale data), so counts and input must agree. Not for block mode.
    pub fn finish(mut self) {
        assert!(
            self.arena.is_none(),
            "block targets finish with finish_blocks"
        );
        self.write_tails();
        for p in 0..self.start.len() {
            assert!(
                self.next[p] == self.end[p],
                "partition {p} received fewer tuples than counted"
            );
        }
    }

    /// Block mode: writes every partition's tail and returns, per
    /// partition, its blocks in order as (offset in the output, length).
    pub fn finish_blocks(mut self) -> Vec<Vec<(usize, usize)>> {
        self.write_tails();
        let Some(mut arena) = self.arena.take() else {
            panic!("finish_blocks is for block targets");
        };
        let skip = arena.skip;
        for (p, blocks) in arena.filled.iter_mut().enumerate() {
            let offset = (self.start[p] as usize - arena.base as usize) / TUPLE_BYTES;
            let len = (self.next[p] as usize - self.start[p] as usize) / TUPLE_BYTES;
            if len > 0 {
                blocks.push((offset, len));
            }
            blocks.iter_mut().for_each(|b| b.0 += skip);
        }
        arena.filled
    }

    fn write_tails(&mut self) {
        for p in 0..self.start.len() {
            let next = self.next[p];
            let group = next.wrapping_sub(slot_index(next));
            let from = group.max(self.start[p]);
            self.write_partial(p, from, next);
        }
    }
}

/// Position of the slot for output address `at` within its group.
#[inline(always)]
fn slot_index(at: *mut Tuple) -> usize {
    (at as usize / TUPLE_BYTES) % SLOT_TUPLES
}

/// Copies `t` into `slot.0[i]` with one 16-byte store, so that the 16-byte
/// loads of the flush can forward from it.
///
/// # Safety
/// `i < SLOT_TUPLES`.
#[inline(always)]
unsafe fn put_in_slot(slot: &mut Slot, i: usize, t: &Tuple) {
    debug_assert!(i < SLOT_TUPLES);
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_store_si128};
        // SAFETY: the slot is 64-byte aligned and `i` in bounds (caller), so
        // the destination is an aligned, writable 16 bytes; `t` is 16
        // readable bytes (unaligned load). SSE2 is part of x86-64.
        unsafe {
            let src = _mm_loadu_si128((t as *const Tuple).cast::<__m128i>());
            _mm_store_si128(slot.0.as_mut_ptr().add(i).cast::<__m128i>(), src);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        // SAFETY: `i < SLOT_TUPLES` (caller).
        unsafe { *slot.0.get_unchecked_mut(i) = *t };
    }
}

/// Writes a full slot to `dst` (SLOT_BYTES-aligned, SLOT_TUPLES writable).
///
/// # Safety
/// `dst` must be valid for writing `SLOT_TUPLES` tuples, aligned to
/// `SLOT_BYTES`, and not accessed by anyone else meanwhile.
#[inline(always)]
unsafe fn write_group<const STREAM: bool>(dst: *mut Tuple, slot: &Slot) {
    #[cfg(target_arch = "x86_64")]
    if STREAM {
        use std::arch::x86_64::{__m128i, _mm_load_si128, _mm_stream_si128};
        let src = slot.0.as_ptr().cast::<__m128i>();
        let dst = dst.cast::<__m128i>();
        for i in 0..SLOT_TUPLES {
            // SAFETY: both sides are 16-byte aligned and in bounds (slot is
            // 64-byte aligned; dst per the caller's contract).
            unsafe { _mm_stream_si128(dst.add(i), _mm_load_si128(src.add(i))) };
        }
        return;
    }
    let src = slot.0.as_ptr().cast::<Pair16>();
    let dst = dst.cast::<Pair16>();
    for i in 0..SLOT_TUPLES {
        // SAFETY: as above; a 16-byte copy per tuple keeps loads forwardable.
        unsafe { dst.add(i).write(src.add(i).read()) };
    }
}

/// Sixteen bytes copied as one unit.
#[repr(C, align(16))]
#[derive(Clone, Copy)]
struct Pair16([u64; 2]);

/// Orders the non-temporal stores before anything that follows (they are
/// weakly ordered); the pool's synchronisation then publishes them.
fn store_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `sfence` has no preconditions; SSE is part of x86-64.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}
