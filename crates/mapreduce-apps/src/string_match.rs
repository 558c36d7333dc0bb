//! String match, as Phoenix++ computes it: four fixed words are
//! "encrypted" (every byte plus 5), every line of a key file is encrypted
//! the same way and compared with them, and the result is how many lines
//! match each word. Lines end at `\n` or `\r`; empty lines never match.
//!
//! The shipped Phoenix++ program's comparisons are dead code that the
//! compiler deletes (a stray `;` after each test), so this follows the
//! variant that counts matches; the work per line (encrypt, compare) is
//! the original's. Lines of any length work (the original's stop at 1023
//! bytes). One difference on binary key files: the original compares
//! encrypted lines as C strings, so a byte 0xFB (which encrypts to 0) ends
//! a line's comparison early; here whole lines are compared.

use std::ops::Range;

use numakit_mapreduce::{
    split, ContainerKind, Emitter, Job, JobError, JobOptions, JobStats, MapReduceError,
    OutputOrder, Runtime, Split, Sum,
};
use rand::RngExt;

use crate::text::{random_word, rng};

/// The words searched for, as the original has them.
pub const WORDS: [&[u8]; 4] = [b"Helloworld", b"howareyou", b"ferrari", b"whotheman"];

/// The container string match runs with unless told otherwise: an array
/// with a slot per word.
pub const CONTAINER: ContainerKind = ContainerKind::Array { keys: WORDS.len() };
const SHIFT: u8 = 5;

fn encrypt(plain: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.extend(plain.iter().map(|b| b.wrapping_add(SHIFT)));
}

/// The job over the key file.
pub struct StringMatch {
    encrypted: Vec<Vec<u8>>,
}

impl Default for StringMatch {
    fn default() -> Self {
        let mut encrypted = Vec::new();
        for w in WORDS {
            let mut e = Vec::new();
            encrypt(w, &mut e);
            encrypted.push(e);
        }
        Self { encrypted }
    }
}

fn lines(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    text.split(|&b| b == b'\n' || b == b'\r')
        .filter(|l| !l.is_empty())
}

impl<'a> Job<'a> for StringMatch {
    type Record = u8;
    type Key = u8;
    type Value = u64;
    type Combiner = Sum<u64>;
    type Output = u64;

    fn split(&self, text: &'a [u8], target: usize) -> Vec<Range<usize>> {
        split::lines(text, target)
    }

    fn map(&self, split: Split<'a, u8>, out: &mut Emitter<'_, 'a, Self>) -> Result<(), JobError> {
        let mut found = [0u64; WORDS.len()];
        let mut line_encrypted = Vec::new();
        for line in lines(split.records) {
            encrypt(line, &mut line_encrypted);
            if let Some(i) = self.encrypted.iter().position(|e| *e == line_encrypted) {
                found[i] += 1;
            }
        }
        for (i, &n) in found.iter().enumerate() {
            out.emit(i as u8, n);
        }
        Ok(())
    }

    fn reduce(&self, _: &u8, n: Sum<u64>) -> Result<u64, JobError> {
        Ok(n.0)
    }

    fn key_index(&self, key: &u8) -> Option<usize> {
        Some(*key as usize)
    }
}

/// Matching lines per word of [`WORDS`].
pub fn run(
    rt: &Runtime,
    keys: &[u8],
    opts: &JobOptions,
) -> Result<([u64; 4], JobStats), MapReduceError> {
    let opts = JobOptions {
        container: opts.container.or(Some(CONTAINER)),
        order: OutputOrder::ByKey,
        ..opts.clone()
    };
    let out = rt.run(&StringMatch::default(), keys, &opts)?;
    let mut counts = [0u64; 4];
    out.pairs
        .into_iter()
        .for_each(|(k, n)| counts[k as usize] = n);
    Ok((counts, out.stats))
}

/// The sequential reference: plain comparison (adding 5 modulo 256 is a
/// bijection, so encrypted lines match exactly when plain ones do).
pub fn reference(keys: &[u8]) -> [u64; 4] {
    let mut counts = [0u64; 4];
    for line in lines(keys) {
        if let Some(i) = WORDS.iter().position(|w| *w == line) {
            counts[i] += 1;
        }
    }
    counts
}

/// About `bytes` of keys, one per line: random words, one in a thousand
/// one of [`WORDS`].
pub fn generate(bytes: usize, seed: u64) -> Vec<u8> {
    let mut rng = rng(seed);
    let mut out = Vec::with_capacity(bytes + 16);
    while out.len() < bytes {
        if rng.random_range(0..1000) == 0 {
            out.extend_from_slice(WORDS[rng.random_range(0..WORDS.len())]);
        } else {
            out.extend(random_word(&mut rng));
        }
        out.push(b'\n');
    }
    out.truncate(bytes);
    out
}
