//! Histogram: the hand-written baseline and the bench of the app.

use std::time::Instant;

use numakit_mapreduce::{Input, JobOptions, Runtime};
use numakit_mapreduce_apps::histogram;
use numakit_pool::Pool;

use crate::queue::{fan_out, piece_bytes};
use crate::timing::{measure, Row, Sample, Side};
use crate::{Config, MIB};

/// Histogram by hand: pieces of whole rows, each thread counting into its
/// own 768 bins, the bins added up at the end.
fn histogram_baseline(file: &[u8], threads: usize) -> Vec<u64> {
    let l = histogram::layout(file).expect("a BMP");
    let pixels = &file[l.offset..l.offset + l.row_bytes * l.height as usize];
    let rows = (piece_bytes(pixels.len(), threads) / l.row_bytes.max(1)).max(1);
    let pieces: Vec<&[u8]> = pixels.chunks(rows * l.row_bytes.max(1)).collect();
    let used = l.width as usize * 3;
    let counted = fan_out(
        pieces,
        threads,
        || vec![0u64; histogram::BINS],
        |bins, piece| {
            let (blue, rest) = bins.split_at_mut(256);
            let (green, red) = rest.split_at_mut(256);
            for row in piece.chunks(l.row_bytes.max(1)) {
                for px in row[..used].chunks_exact(3) {
                    blue[px[0] as usize] += 1;
                    green[px[1] as usize] += 1;
                    red[px[2] as usize] += 1;
                }
            }
        },
    );
    let mut bins = vec![0u64; histogram::BINS];
    for thread in counted {
        bins.iter_mut().zip(thread).for_each(|(b, n)| *b += n);
    }
    bins
}

pub(crate) fn bench(pool: &Pool, rt: &Runtime, c: &Config, mib: usize) -> Row {
    let input = Input::place(pool, &histogram::generate(mib * MIB, c.seed)).expect("place");
    let file = input.bytes();
    let opts = JobOptions::default();
    measure("histogram", mib, c.reps, |side| {
        let t = Instant::now();
        match side {
            Side::App => {
                let out = histogram::run(rt, file, &opts).expect("histogram");
                Sample::app(t, out.stats.seconds, out.bins)
            }
            Side::Baseline => Sample::baseline(t, histogram_baseline(file, c.threads)),
        }
    })
}
