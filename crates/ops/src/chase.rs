//! The random cyclic pointer chase over cache lines: the one
//! implementation that the cache probe ([`crate::cache_probe`]) and the
//! memory probe (`numakit-probe`'s `chase` module) both walk.
//!
//! Memory is viewed as 64-byte lines of eight `u64` words. Each line in
//! the cycle holds, in its first word, the word index of the next line to
//! visit, so every load waits for the one before it and nothing overlaps:
//! the time per load is the latency of wherever the lines are (a cache
//! level, local or remote memory). The order is a random cycle (a keyed
//! permutation of the line numbers, evaluated pointwise, so building it
//! needs no shuffle and only one write per line), which defeats the
//! prefetchers.
//!
//! This module links a cycle into a slice of words ([`link_cycle`] for any
//! visiting order, [`link_random_cycle`] for the random one) and walks it
//! ([`chase`]). Where the memory lies, how it is paged, which thread walks
//! it and how the times are read are the callers' business.

use std::time::{Duration, Instant};

use crate::datagen::Permutation;

/// Bytes of a cache line: the chase touches one word per line.
pub const LINE_BYTES: usize = 64;
/// `u64` words per cache line.
pub const LINE_WORDS: usize = LINE_BYTES / 8;

/// Links the first `lines` lines of `words` into one random cycle keyed by
/// `seed`; returns the word index of the cycle's first line (see
/// [`link_cycle`]).
///
/// # Panics
///
/// If `lines` is 0 or `words` holds fewer than `lines` lines.
pub fn link_random_cycle(words: &mut [u64], lines: usize, seed: u64) -> usize {
    assert!(lines > 0, "a cycle needs at least one line");
    let permutation = Permutation::new(lines as u64, seed);
    link_cycle(words, lines, |k| permutation.at(k as u64) as usize)
}

/// Writes a cycle through `lines` lines of `words`: the line visited k-th
/// (`line(k)`, for k in `0..lines`) holds the word index of the line
/// visited (k+1)-th, and the last one the first's. Returns the word index
/// of the first line. `line` must visit each line below `lines` once (a
/// permutation), else the cycle is shorter. The writes are independent,
/// so the CPU overlaps their cache misses. Only the first word of each
/// line is written; the first write to a page is its first touch.
///
/// # Panics
///
/// If `lines` is 0 or `line` returns a line that `words` does not hold.
pub fn link_cycle(words: &mut [u64], lines: usize, line: impl Fn(usize) -> usize) -> usize {
    assert!(lines > 0, "a cycle needs at least one line");
    let first = line(0) * LINE_WORDS;
    let mut at = first;
    for k in 1..lines {
        let next = line(k) * LINE_WORDS;
        words[at] = next as u64;
        at = next;
    }
    words[at] = first as u64;
    first
}

/// Follows a cycle through `words` for `loads` dependent loads from word
/// `from` (a line's first word, as [`link_cycle`] and this function
/// return); returns the time taken and where the chase stopped.
///
/// # Panics
///
/// If `from` or a word on the way points outside `words`.
pub fn chase(words: &[u64], from: usize, loads: u64) -> (Duration, usize) {
    let mut at = from;
    let started = Instant::now();
    for _ in 0..loads {
        at = words[at] as usize;
    }
    let taken = started.elapsed();
    (taken, std::hint::black_box(at))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How many lines the cycle through `from` has before it comes back, if
    /// it visits every one of them once and stays inside `words` (a check of
    /// a linked cycle: it walks the whole cycle).
    fn cycle_lines(words: &[u64], from: usize) -> Option<usize> {
        let lines = words.len() / LINE_WORDS;
        let mut seen = vec![false; lines];
        let mut at = from;
        for visited in 0..=lines {
            if at % LINE_WORDS != 0 || at / LINE_WORDS >= lines {
                return None;
            }
            if at == from && visited > 0 {
                return Some(visited);
            }
            if std::mem::replace(&mut seen[at / LINE_WORDS], true) {
                return None;
            }
            at = usize::try_from(words[at]).ok()?;
        }
        None
    }

    #[test]
    fn the_random_cycle_visits_every_line_once() {
        for lines in [1, 2, 3, 1000, 1024, 4097] {
            let mut words = vec![0u64; lines * LINE_WORDS + 5];
            let start = link_random_cycle(&mut words, lines, 7);
            assert_eq!(cycle_lines(&words, start), Some(lines), "{lines} lines");
        }
    }

    #[test]
    fn any_order_links_into_one_cycle_and_the_chase_follows_it() {
        let lines = 10;
        let mut words = vec![0u64; lines * LINE_WORDS];
        // Backwards from the last line.
        let start = link_cycle(&mut words, lines, |k| lines - 1 - k);
        assert_eq!(start, (lines - 1) * LINE_WORDS);
        assert_eq!(cycle_lines(&words, start), Some(lines));
        let (_, at) = chase(&words, start, 3);
        assert_eq!(at, (lines - 4) * LINE_WORDS);
        let (_, at) = chase(&words, start, lines as u64);
        assert_eq!(at, start, "a whole cycle comes back");
    }

    #[test]
    fn broken_cycles_are_found() {
        let lines = 8;
        let mut words = vec![0u64; lines * LINE_WORDS];
        // Only half the lines: a cycle of four.
        let start = link_cycle(&mut words, 4, |k| 2 * k);
        assert_eq!(cycle_lines(&words, start), Some(4));
        // A line pointing outside, or into the middle of a line.
        words[start] = (lines * LINE_WORDS) as u64;
        assert_eq!(cycle_lines(&words, start), None);
        words[start] = 3;
        assert_eq!(cycle_lines(&words, start), None);
        // A path that runs into a cycle not through its start.
        let mut words = vec![0u64; 3 * LINE_WORDS];
        words[0] = LINE_WORDS as u64;
        words[LINE_WORDS] = 2 * LINE_WORDS as u64;
        words[2 * LINE_WORDS] = LINE_WORDS as u64;
        assert_eq!(cycle_lines(&words, 0), None);
    }

    #[test]
    fn the_order_is_not_sequential() {
        let lines = 1024;
        let mut words = vec![0u64; lines * LINE_WORDS];
        let mut at = link_random_cycle(&mut words, lines, 3);
        let mut neighbours = 0;
        for _ in 0..lines {
            let next = words[at] as usize;
            neighbours += usize::from(next.abs_diff(at) == LINE_WORDS);
            at = next;
        }
        assert!(neighbours < 10, "{neighbours} steps to the next line");
    }
}
