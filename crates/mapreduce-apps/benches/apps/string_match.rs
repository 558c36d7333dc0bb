//! String match: the hand-written baseline and the bench of the app.

use std::time::Instant;

use numakit_mapreduce::{Input, JobOptions, Runtime};
use numakit_mapreduce_apps::string_match;
use numakit_pool::Pool;

use crate::queue::{cut, fan_out, piece_bytes, pieces_of};
use crate::timing::{measure, Row, Sample, Side};
use crate::{Config, MIB};

fn is_line_end(b: u8) -> bool {
    b == b'\n' || b == b'\r'
}

/// String match by hand: pieces cut after line ends; every non-empty line
/// is encrypted (each byte plus 5) and compared with the encrypted words;
/// per-thread counts added up at the end.
fn string_match_baseline(keys: &[u8], threads: usize) -> [u64; 4] {
    let encrypted: Vec<Vec<u8>> = string_match::WORDS
        .iter()
        .map(|w| w.iter().map(|b| b.wrapping_add(5)).collect())
        .collect();
    let ends = cut(keys.len(), piece_bytes(keys.len(), threads), |i| {
        is_line_end(keys[i - 1])
    });
    let encrypted = &encrypted;
    let per_thread = fan_out(
        pieces_of(keys, &ends),
        threads,
        || ([0u64; 4], Vec::with_capacity(64)),
        |(found, line_encrypted), piece| {
            for line in piece.split(|&b| is_line_end(b)) {
                if line.is_empty() {
                    continue;
                }
                line_encrypted.clear();
                line_encrypted.extend(line.iter().map(|b| b.wrapping_add(5)));
                if let Some(i) = encrypted.iter().position(|e| e == line_encrypted) {
                    found[i] += 1;
                }
            }
        },
    );
    let mut found = [0u64; 4];
    for (f, _) in per_thread {
        found.iter_mut().zip(f).for_each(|(a, n)| *a += n);
    }
    found
}

pub(crate) fn bench(pool: &Pool, rt: &Runtime, c: &Config, mib: usize) -> Row {
    let input = Input::place(pool, &string_match::generate(mib * MIB, c.seed)).expect("place");
    let keys = input.bytes();
    let opts = JobOptions::default();
    measure("string-match", mib, c.reps, |side| {
        let t = Instant::now();
        match side {
            Side::App => {
                let (found, stats) = string_match::run(rt, keys, &opts).expect("string match");
                Sample::app(t, stats.seconds, found)
            }
            Side::Baseline => Sample::baseline(t, string_match_baseline(keys, c.threads)),
        }
    })
}
