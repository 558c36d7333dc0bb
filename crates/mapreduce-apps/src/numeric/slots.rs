//! Disjoint pieces of one output, each owned by the map task of one split
//! — how the numeric jobs write in place, as the originals' maps do
//! (Phoenix++'s matrix multiply writes output rows and emits nothing;
//! its k-means map stores each point's cluster).
//!
//! A job that uses [`SplitSlots`] returns [`SplitSlots::ranges`] from its
//! `split`, so the runtime's splits are exactly the slots' ranges; map
//! then takes its piece with [`SplitSlots::with`], found by the split's
//! first record. Every piece sits behind its own mutex, so no `unsafe` is
//! needed and a split run twice (it never is) would wait, not race; the
//! lock is uncontended. It holds no data of its own.

use std::ops::Range;
use std::sync::{Mutex, PoisonError};

/// A map task asked for a slot that does not exist.
#[derive(Debug, thiserror::Error)]
#[error("no output slot for the split starting at record {start} (splits and slots disagree)")]
pub struct NoSlot {
    /// The split's first record.
    pub start: usize,
}

/// Pieces of an output, one per input range.
#[derive(Debug)]
pub struct SplitSlots<'s, T> {
    ranges: Vec<Range<usize>>,
    slots: Vec<Mutex<&'s mut [T]>>,
}

impl<'s, T: Send> SplitSlots<'s, T> {
    /// Cuts `out` into consecutive pieces, the `i`-th `lengths[i]` long,
    /// owned by the input records `ranges[i]` (sorted, disjoint).
    ///
    /// # Panics
    /// If there is not one length per range or they do not add up to
    /// `out.len()`.
    pub fn new(ranges: Vec<Range<usize>>, out: &'s mut [T], lengths: &[usize]) -> Self {
        assert_eq!(ranges.len(), lengths.len(), "one length per range");
        assert_eq!(
            lengths.iter().sum::<usize>(),
            out.len(),
            "the pieces cover the output"
        );
        let mut slots = Vec::with_capacity(lengths.len());
        let mut rest = out;
        for &len in lengths {
            let (piece, tail) = rest.split_at_mut(len);
            slots.push(Mutex::new(piece));
            rest = tail;
        }
        SplitSlots { ranges, slots }
    }

    /// The input ranges, for the job's `split`.
    pub fn ranges(&self) -> Vec<Range<usize>> {
        self.ranges.clone()
    }

    /// Runs `f` on the piece of the split that starts at record `start`.
    pub fn with<R>(&self, start: usize, f: impl FnOnce(&mut [T]) -> R) -> Result<R, NoSlot> {
        let index = self
            .ranges
            .binary_search_by_key(&start, |r| r.start)
            .map_err(|_| NoSlot { start })?;
        let mut piece = self.slots[index]
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        Ok(f(&mut piece))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_are_written_in_place() {
        let mut out = vec![0u32; 6];
        {
            let slots = SplitSlots::new(vec![0..10, 10..12, 12..30], &mut out, &[3, 1, 2]);
            assert_eq!(slots.ranges(), vec![0..10, 10..12, 12..30]);
            slots.with(10, |p| p.fill(7)).unwrap();
            slots.with(12, |p| p.copy_from_slice(&[8, 9])).unwrap();
            slots.with(0, |p| assert_eq!(p.len(), 3)).unwrap();
            assert!(matches!(slots.with(5, |_| ()), Err(NoSlot { start: 5 })));
        }
        assert_eq!(out, [0, 0, 0, 7, 8, 9]);
    }

    #[test]
    fn threads_write_their_own_pieces() {
        let mut out = vec![0usize; 100];
        {
            let ranges: Vec<_> = (0..10).map(|i| i * 10..i * 10 + 10).collect();
            let slots = SplitSlots::new(ranges, &mut out, &[10; 10]);
            std::thread::scope(|s| {
                for i in 0..10 {
                    let slots = &slots;
                    s.spawn(move || slots.with(i * 10, |p| p.fill(i)).unwrap());
                }
            });
        }
        assert!(out.iter().enumerate().all(|(j, &v)| v == j / 10));
    }
}
