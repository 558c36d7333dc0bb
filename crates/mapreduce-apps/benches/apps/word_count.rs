//! Word count: the hand-written baseline and the bench of the app.

use std::hash::{BuildHasherDefault, Hasher};
use std::time::Instant;

use numakit_mapreduce::{Input, Runtime};
use numakit_mapreduce_apps::word_count;
use numakit_pool::Pool;

use crate::queue::{cut, fan_out, piece_bytes};
use crate::timing::{measure, Row, Sample, Side};
use crate::{Config, MIB};

/// A hash for short byte strings: eight bytes at a time (the last eight
/// overlapping), each folded in by a 128-bit multiply.
#[derive(Default)]
struct WordHasher(u64);

const SEED: u64 = 0x9e37_79b9_7f4a_7c15;

#[inline(always)]
fn fold(h: u64, v: u64) -> u64 {
    let wide = (h ^ v) as u128 * SEED as u128;
    (wide as u64) ^ ((wide >> 64) as u64)
}

fn load8(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or([0; 8]))
}

fn load4(b: &[u8], at: usize) -> u64 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap_or([0; 4])) as u64
}

impl Hasher for WordHasher {
    #[inline]
    fn write(&mut self, b: &[u8]) {
        let n = b.len();
        let mut h = self.0;
        if n > 8 {
            let mut at = 0;
            while at + 8 < n {
                h = fold(h, load8(b, at));
                at += 8;
            }
            h = fold(h, load8(b, n - 8));
        } else if n >= 4 {
            h = fold(h, (load4(b, 0) << 32) | load4(b, n - 4));
        } else if n > 0 {
            h = fold(
                h,
                ((b[0] as u64) << 16) | ((b[n / 2] as u64) << 8) | b[n - 1] as u64,
            );
        }
        self.0 = h;
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.0 = fold(self.0, n as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

type Counts<'a> = std::collections::HashMap<&'a [u8], u64, BuildHasherDefault<WordHasher>>;

/// Bytes that belong to a word before upper-casing.
fn wordish(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'\''
}

/// Upper-cases `piece` in place and counts its words into `counts`.
fn count_words<'a>(counts: &mut Counts<'a>, piece: &'a mut [u8]) {
    piece.make_ascii_uppercase();
    let text: &'a [u8] = piece;
    let n = text.len();
    let mut at = 0;
    loop {
        while at < n && !text[at].is_ascii_uppercase() {
            at += 1;
        }
        if at == n {
            return;
        }
        let start = at;
        at += 1;
        while at < n && (text[at].is_ascii_uppercase() || text[at] == b'\'') {
            at += 1;
        }
        *counts.entry(&text[start..at]).or_insert(0) += 1;
    }
}

/// Word count by hand: pieces cut between words, each upper-cased and
/// counted by whichever thread takes it; the threads' tables merged and
/// sorted most frequent first, ties by word.
fn word_count_baseline(text: &mut [u8], threads: usize) -> Vec<(&[u8], u64)> {
    let ends = cut(text.len(), piece_bytes(text.len(), threads), |i| {
        !wordish(text[i])
    });
    let mut pieces = Vec::with_capacity(ends.len());
    let mut rest = text;
    let mut start = 0;
    for end in ends {
        let (piece, tail) = std::mem::take(&mut rest).split_at_mut(end - start);
        pieces.push(piece);
        rest = tail;
        start = end;
    }
    let mut tables = fan_out(pieces, threads, Counts::default, count_words);
    tables.sort_by_key(|t| std::cmp::Reverse(t.len()));
    let mut rest = tables.into_iter();
    let mut all = rest.next().unwrap_or_default();
    for table in rest {
        for (word, n) in table {
            *all.entry(word).or_insert(0) += n;
        }
    }
    let mut counts: Vec<(&[u8], u64)> = all.into_iter().collect();
    counts.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    counts
}

pub(crate) fn bench(pool: &Pool, rt: &Runtime, c: &Config, mib: usize) -> Row {
    let mut input = Input::place(pool, &word_count::generate(mib * MIB, c.seed)).expect("place");
    let text = input.bytes_mut().expect("placed input is writable");
    let opts = word_count::default_options();
    let owned = |counts: &[(&[u8], u64)]| -> Vec<(Vec<u8>, u64)> {
        counts.iter().map(|(w, n)| (w.to_vec(), *n)).collect()
    };
    measure("word-count", mib, c.reps, |side| {
        // The owned copy of the counts (for comparing the sides) is made
        // after the clock is read, on both sides.
        let t = Instant::now();
        match side {
            Side::App => {
                let out = word_count::run(rt, text, &opts).expect("word count");
                let timed = Sample::app(t, out.stats.seconds, ());
                Sample {
                    result: owned(&out.counts),
                    seconds: timed.seconds,
                    phases: timed.phases,
                }
            }
            Side::Baseline => {
                let out = word_count_baseline(text, c.threads);
                let timed = Sample::baseline(t, ());
                Sample {
                    result: owned(&out),
                    seconds: timed.seconds,
                    phases: None,
                }
            }
        }
    })
}
