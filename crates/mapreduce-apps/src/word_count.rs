//! Word count, as Phoenix++ computes it: the text is upper-cased, a word
//! is a letter followed by letters or apostrophes (everything else
//! separates words), and the result is every distinct word with its count,
//! most frequent first (ties by word).
//!
//! Upper-casing happens in place, in parallel, before the job (Phoenix++'s
//! map does it on its chunk); keys are then slices of the text, never
//! copied. The generator writes words drawn from a Zipf distribution over
//! a random vocabulary, in lines, so that counts are skewed as in real
//! text.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::ops::Range;

use numakit_mapreduce::{
    split, ContainerKind, Emitter, Job, JobError, JobOptions, JobStats, MapReduceError,
    OutputOrder, Runtime, Split, Sum,
};
use rand::RngExt;
use rand_distr::{Distribution, Zipf};

use crate::text::{random_word, rng};

/// Distinct words in generated text.
pub const VOCABULARY: usize = 50_000;
/// The Zipf exponent of generated text.
pub const ZIPF_EXPONENT: f64 = 1.0;

/// Bytes that may continue a word (after upper-casing).
#[inline]
fn in_word(b: u8) -> bool {
    b.is_ascii_uppercase() || b == b'\''
}

/// The words of `text` (already upper-cased), in order.
fn words(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut at = 0;
    std::iter::from_fn(move || {
        while at < text.len() && !text[at].is_ascii_uppercase() {
            at += 1;
        }
        if at == text.len() {
            return None;
        }
        let start = at;
        while at < text.len() && in_word(text[at]) {
            at += 1;
        }
        Some(&text[start..at])
    })
}

/// The job over upper-cased text.
pub struct WordCount;

impl<'a> Job<'a> for WordCount {
    type Record = u8;
    type Key = &'a [u8];
    type Value = u64;
    type Combiner = Sum<u64>;
    type Output = u64;

    fn split(&self, text: &'a [u8], target: usize) -> Vec<Range<usize>> {
        // Cuts between a non-word byte and anything never tear a word.
        split::words(text, target, in_word)
    }

    fn map(&self, split: Split<'a, u8>, out: &mut Emitter<'_, 'a, Self>) -> Result<(), JobError> {
        words(split.records).for_each(|w| out.emit(w, 1));
        Ok(())
    }

    fn reduce(&self, _: &&'a [u8], count: Sum<u64>) -> Result<u64, JobError> {
        Ok(count.0)
    }

    fn compare(&self, a: &(&'a [u8], u64), b: &(&'a [u8], u64)) -> Ordering {
        b.1.cmp(&a.1).then(a.0.cmp(b.0))
    }
}

/// Counts, most frequent first, and what the run measured.
pub struct WordCounts<'a> {
    /// Every distinct word (a slice of the upper-cased text) with its
    /// count, most frequent first, ties in byte order of the words.
    pub counts: Vec<(&'a [u8], u64)>,
    /// Phase times and task counts of the run.
    pub stats: JobStats,
}

impl WordCounts<'_> {
    /// All words counted.
    pub fn total(&self) -> u64 {
        self.counts.iter().map(|c| c.1).sum()
    }
}

/// Upper-cases `text` in place (in parallel on the runtime's pool) and
/// counts its words.
pub fn run<'a>(
    rt: &Runtime,
    text: &'a mut [u8],
    opts: &JobOptions,
) -> Result<WordCounts<'a>, MapReduceError> {
    upper_case(rt, text)?;
    let text: &'a [u8] = text;
    let opts = JobOptions {
        container: opts.container.or(default_options().container),
        order: OutputOrder::ByJob,
        ..opts.clone()
    };
    let out = rt.run(&WordCount, text, &opts)?;
    Ok(WordCounts {
        counts: out.pairs,
        stats: out.stats,
    })
}

/// The container word count runs with by default: a growable table.
pub const CONTAINER: ContainerKind = ContainerKind::GrowableHash { capacity: 1 << 14 };

/// The options word count runs with by default: [`CONTAINER`].
pub fn default_options() -> JobOptions {
    JobOptions {
        container: Some(CONTAINER),
        ..JobOptions::default()
    }
}

fn upper_case(rt: &Runtime, text: &mut [u8]) -> Result<(), MapReduceError> {
    let chunk = (text.len() / (rt.pool().workers() * 4)).max(1 << 16);
    rt.pool().scope(|scope| {
        for piece in text.chunks_mut(chunk) {
            scope.spawn(move |_| piece.make_ascii_uppercase());
        }
    })?;
    Ok(())
}

/// The sequential reference: counts, most frequent first, ties by word.
pub fn reference(text: &[u8]) -> Vec<(Vec<u8>, u64)> {
    let upper = text.to_ascii_uppercase();
    let mut counts: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
    words(&upper).for_each(|w| *counts.entry(w.to_vec()).or_default() += 1);
    let mut v: Vec<(Vec<u8>, u64)> = counts.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v
}

/// About `bytes` of text: Zipf-distributed words of a random vocabulary,
/// mixed case, separated by spaces, with a newline every dozen words and
/// now and then punctuation or an apostrophe.
pub fn generate(bytes: usize, seed: u64) -> Vec<u8> {
    let mut rng = rng(seed);
    let vocabulary: Vec<Vec<u8>> = (0..VOCABULARY).map(|_| random_word(&mut rng)).collect();
    let zipf = Zipf::new(VOCABULARY as f64, ZIPF_EXPONENT)
        .unwrap_or_else(|_| unreachable!("valid parameters"));
    let mut text = Vec::with_capacity(bytes + 16);
    let mut n = 0u64;
    while text.len() < bytes {
        let word = &vocabulary[zipf.sample(&mut rng) as usize - 1];
        match rng.random_range(0..40) {
            0 => text.extend(word.to_ascii_uppercase()),
            1 => {
                text.extend_from_slice(word);
                text.extend_from_slice(b"'s");
            }
            2 => {
                text.extend_from_slice(word);
                text.push(b',');
            }
            _ => text.extend_from_slice(word),
        }
        n += 1;
        text.push(if n % 12 == 0 { b'\n' } else { b' ' });
    }
    text.truncate(bytes);
    text
}
