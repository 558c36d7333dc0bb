//! Linear regression: the hand-written baseline (vectorised block sums)
//! and the bench of the app.

use std::time::Instant;

use numakit_mapreduce::{Input, JobOptions, Runtime};
use numakit_mapreduce_apps::linear_regression;
use numakit_pool::Pool;

use crate::queue::{fan_out, piece_bytes};
use crate::timing::{measure, Row, Sample, Side};
use crate::{Config, MIB};

/// Points per block whose sums are exact in 32 bits: a product of two
/// signed bytes is at most 2^14 in magnitude, so 2^16 of them fit.
const POINTS_PER_BLOCK: usize = 1 << 16;
/// Points handled side by side (one 32-bit accumulator each per sum).
const WIDTH: usize = 8;

/// SX, SY, SXX, SYY, SXY of one block of points: sums in 32-bit lanes,
/// eight points at a time, which the compiler turns into vector code.
#[inline(always)]
fn block_sums(block: &[u8]) -> [i64; 5] {
    let points: &[[u8; 2]] = bytemuck::cast_slice(block);
    let mut lanes = [[0i32; WIDTH]; 5];
    let groups = points.chunks_exact(WIDTH);
    let tail = groups.remainder();
    for group in groups {
        for (l, &[x, y]) in group.iter().enumerate() {
            let (x, y) = (x as i8 as i32, y as i8 as i32);
            lanes[0][l] += x;
            lanes[1][l] += y;
            lanes[2][l] += x * x;
            lanes[3][l] += y * y;
            lanes[4][l] += x * y;
        }
    }
    let mut sums = lanes.map(|l| l.iter().map(|&v| v as i64).sum::<i64>());
    for &[x, y] in tail {
        let (x, y) = (x as i8 as i64, y as i8 as i64);
        let terms = [x, y, x * x, y * y, x * y];
        sums.iter_mut().zip(terms).for_each(|(s, t)| *s += t);
    }
    sums
}

#[inline(always)]
fn piece_sums_portable(piece: &[u8]) -> [i64; 5] {
    let mut sums = [0i64; 5];
    for block in piece.chunks(2 * POINTS_PER_BLOCK) {
        let b = block_sums(block);
        sums.iter_mut()
            .zip(b)
            .for_each(|(s, v)| *s = s.wrapping_add(v));
    }
    sums
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn piece_sums_avx2(piece: &[u8]) -> [i64; 5] {
    piece_sums_portable(piece)
}

/// The sums of `piece` (whole points), with AVX2 where the CPU has it.
fn piece_sums(piece: &[u8]) -> [i64; 5] {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked just above.
            return unsafe { piece_sums_avx2(piece) };
        }
    }
    piece_sums_portable(piece)
}

/// Linear regression by hand: pieces of whole points, per-thread sums
/// (wrapping, as the original's), added up at the end. Returns the point
/// count and SX, SY, SXX, SYY, SXY.
fn linear_regression_baseline(bytes: &[u8], threads: usize) -> (u64, [i64; 5]) {
    let points = &bytes[..bytes.len() / 2 * 2];
    let piece = piece_bytes(points.len(), threads) / 2 * 2;
    let pieces: Vec<&[u8]> = points.chunks(piece.max(2)).collect();
    let per_thread = fan_out(
        pieces,
        threads,
        || [0i64; 5],
        |sums, piece| {
            let p = piece_sums(piece);
            sums.iter_mut()
                .zip(p)
                .for_each(|(s, v)| *s = s.wrapping_add(v));
        },
    );
    let mut sums = [0i64; 5];
    for p in per_thread {
        sums.iter_mut()
            .zip(p)
            .for_each(|(s, v)| *s = s.wrapping_add(v));
    }
    ((points.len() / 2) as u64, sums)
}

pub(crate) fn bench(pool: &Pool, rt: &Runtime, c: &Config, mib: usize) -> Row {
    let input = Input::place(pool, &linear_regression::generate(mib * MIB, c.seed)).expect("place");
    let bytes = input.bytes();
    let opts = JobOptions::default();
    measure("linear-regression", mib, c.reps, |side| {
        let t = Instant::now();
        match side {
            Side::App => {
                let (fit, stats) = linear_regression::run(rt, bytes, &opts).expect("regression");
                Sample::app(t, stats.seconds, (fit.n, fit.sums))
            }
            Side::Baseline => Sample::baseline(t, linear_regression_baseline(bytes, c.threads)),
        }
    })
}
