//! The baselines' one shared piece: the input cut into pieces on record
//! boundaries and a queue the threads take them from. No app logic.

use std::sync::{Mutex, PoisonError};

use crate::MIB;

/// Pieces of about this many bytes: enough per thread to balance when
/// the machine is busy, large enough that taking one costs nothing.
pub(crate) fn piece_bytes(len: usize, threads: usize) -> usize {
    (len / (threads.max(1) * 16)).clamp(256 << 10, 8 * MIB)
}

/// Cuts `bytes` into pieces of about `target` bytes, each cut moved
/// forward to the first position `i` where `boundary(i)` holds.
pub(crate) fn cut(len: usize, target: usize, boundary: impl Fn(usize) -> bool) -> Vec<usize> {
    let mut ends = Vec::new();
    let mut end = 0;
    while end < len {
        end = (end + target.max(1)).min(len);
        while end < len && !boundary(end) {
            end += 1;
        }
        ends.push(end);
    }
    ends
}

/// Runs `threads` scoped threads; each starts from `init()`, takes pieces
/// from the queue until it is empty, folding each into its state with
/// `work`, and hands its state back.
pub(crate) fn fan_out<P: Send, S: Send>(
    pieces: Vec<P>,
    threads: usize,
    init: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, P) + Sync,
) -> Vec<S> {
    let queue = Mutex::new(pieces.into_iter());
    let (queue, init, work) = (&queue, &init, &work);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads.max(1))
            .map(|_| {
                s.spawn(move || {
                    let mut state = init();
                    loop {
                        let next = queue.lock().unwrap_or_else(PoisonError::into_inner).next();
                        match next {
                            Some(piece) => work(&mut state, piece),
                            None => return state,
                        }
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a baseline thread panicked"))
            .collect()
    })
}

/// Splits `bytes` at `ends` (from [`cut`]) into shared pieces.
pub(crate) fn pieces_of<'a>(bytes: &'a [u8], ends: &[usize]) -> Vec<&'a [u8]> {
    let mut start = 0;
    ends.iter()
        .map(|&end| {
            let piece = &bytes[start..end];
            start = end;
            piece
        })
        .collect()
}
