//! Linear regression, as Phoenix++ computes it: the least-squares line
//! through (x, y) points stored as pairs of bytes. Bytes are signed (the
//! original reads `char`s on x86-64) and the five sums wrap modulo 2^64,
//! exactly as there. A trailing odd byte is not a point and is ignored
//! (the result says how many bytes were). Map sums its split locally and
//! emits the five sums once; reduce adds them up.

use numakit_mapreduce::{
    ContainerKind, Emitter, Job, JobError, JobOptions, JobStats, MapReduceError, OutputOrder,
    Runtime, Split, Sum,
};
use rand::RngExt;

use crate::text::rng;

/// The sums, in key order: SX, SY, SXX, SYY, SXY.
/// The sums the job keys (x, y, x², y², xy): its array container's slots.
pub const SUMS: usize = 5;

/// The container linear regression runs with unless told otherwise: an
/// array of [`SUMS`] slots.
pub const CONTAINER: ContainerKind = ContainerKind::Array { keys: SUMS };

/// Wrapping sums, as the original's unsigned 64-bit ones.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Wrapping(pub u64);

impl std::ops::AddAssign for Wrapping {
    fn add_assign(&mut self, other: Self) {
        self.0 = self.0.wrapping_add(other.0);
    }
}

/// The job over byte pairs.
pub struct LinearRegression;

impl<'a> Job<'a> for LinearRegression {
    type Record = [u8; 2];
    type Key = u8;
    type Value = Wrapping;
    type Combiner = Sum<Wrapping>;
    type Output = u64;

    fn map(
        &self,
        split: Split<'a, [u8; 2]>,
        out: &mut Emitter<'_, 'a, Self>,
    ) -> Result<(), JobError> {
        for (k, v) in block_sums(split.records).into_iter().enumerate() {
            out.emit(k as u8, Wrapping(v));
        }
        Ok(())
    }

    fn reduce(&self, _: &u8, sum: Sum<Wrapping>) -> Result<u64, JobError> {
        Ok(sum.0 .0)
    }

    fn key_index(&self, key: &u8) -> Option<usize> {
        Some(*key as usize)
    }
}

/// The fitted line and the sums it comes from.
#[derive(Clone, Debug, PartialEq)]
pub struct Fit {
    /// Points: whole byte pairs of the input.
    pub n: u64,
    /// SX, SY, SXX, SYY, SXY as the original prints them (signed).
    pub sums: [i64; SUMS],
    /// Intercept of the line y = a + b x (NaN without points).
    pub a: f64,
    /// Slope of the line (NaN or infinite when every x is equal).
    pub b: f64,
    /// Mean of the x values.
    pub xbar: f64,
    /// Mean of the y values.
    pub ybar: f64,
    /// Coefficient of determination R², 0 to 1 (NaN when x or y is
    /// constant).
    pub r2: f64,
    /// Bytes after the last whole point (0 or 1).
    pub ignored_bytes: usize,
}

fn fit(n: u64, sums: [u64; SUMS], ignored_bytes: usize) -> Fit {
    let s = sums.map(|v| v as i64);
    let [sx, sy, sxx, syy, sxy] = s.map(|v| v as f64);
    let nf = n as f64;
    let b = (nf * sxy - sx * sy) / (nf * sxx - sx * sx);
    let a = (sy - b * sx) / nf;
    let r2 = (nf * sxy - sx * sy).powi(2) / ((nf * sxx - sx * sx) * (nf * syy - sy * sy));
    Fit {
        n,
        sums: s,
        a,
        b,
        xbar: sx / nf,
        ybar: sy / nf,
        r2,
        ignored_bytes,
    }
}

fn as_points(bytes: &[u8]) -> &[[u8; 2]] {
    bytemuck::cast_slice(&bytes[..bytes.len() / 2 * 2])
}

#[cfg(target_arch = "x86_64")]
#[path = "linear_regression_avx2.rs"]
mod avx2;

/// SX, SY, SXX, SYY, SXY of `points` (signed bytes), wrapping modulo 2^64
/// as the original's sums do: with AVX2 where the CPU has it (16-bit
/// multiply-adds, see `linear_regression_avx2.rs`; the build targets
/// baseline x86-64), else in exact 32-bit blocks.
fn block_sums(points: &[[u8; 2]]) -> [u64; SUMS] {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2, checked just above.
            return unsafe { avx2::sums(points.as_flattened()) };
        }
    }
    portable_sums(points)
}

/// Points per block summed in 32-bit lanes: |x * y| <= 2^14, so 2^16
/// products stay below 2^30 and the block's sums are exact.
const BLOCK: usize = 1 << 16;

/// [`block_sums`] without AVX2: exact 32-bit sums per block (which the
/// compiler vectorises) added into 64-bit ones.
fn portable_sums(points: &[[u8; 2]]) -> [u64; SUMS] {
    let mut s = [0u64; SUMS];
    for block in points.chunks(BLOCK) {
        for (acc, v) in s.iter_mut().zip(exact_block_sums(block)) {
            *acc = acc.wrapping_add(v as i64 as u64);
        }
    }
    s
}

/// Lanes of the block loop: eight points at a time in eight 32-bit lanes
/// per sum, a shape the compiler turns into vector instructions.
const LANES: usize = 8;

/// The exact sums of at most [`BLOCK`] points.
fn exact_block_sums(block: &[[u8; 2]]) -> [i32; SUMS] {
    let mut lanes = [[0i32; LANES]; SUMS];
    let groups = block.chunks_exact(LANES);
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
    let mut b = lanes.map(|l| l.iter().sum::<i32>());
    for &[x, y] in tail {
        let (x, y) = (x as i8 as i32, y as i8 as i32);
        b[0] += x;
        b[1] += y;
        b[2] += x * x;
        b[3] += y * y;
        b[4] += x * y;
    }
    b
}

/// The fit of the points in `bytes`, and what the run measured.
pub fn run(
    rt: &Runtime,
    bytes: &[u8],
    opts: &JobOptions,
) -> Result<(Fit, JobStats), MapReduceError> {
    let opts = JobOptions {
        container: opts.container.or(Some(CONTAINER)),
        order: OutputOrder::ByKey,
        ..opts.clone()
    };
    let points = as_points(bytes);
    let out = rt.run(&LinearRegression, points, &opts)?;
    let mut sums = [0u64; SUMS];
    out.pairs
        .into_iter()
        .for_each(|(k, v)| sums[k as usize] = v);
    Ok((fit(points.len() as u64, sums, bytes.len() % 2), out.stats))
}

/// The sequential reference.
pub fn reference(bytes: &[u8]) -> Fit {
    let mut s = [0u64; SUMS];
    for &[x, y] in as_points(bytes) {
        let (x, y) = (x as i8 as i64 as u64, y as i8 as i64 as u64);
        let terms = [
            x,
            y,
            x.wrapping_mul(x),
            y.wrapping_mul(y),
            x.wrapping_mul(y),
        ];
        for (acc, t) in s.iter_mut().zip(terms) {
            *acc = acc.wrapping_add(t);
        }
    }
    fit((bytes.len() / 2) as u64, s, bytes.len() % 2)
}

/// `bytes` of points scattered around y = x / 2 + 10.
pub fn generate(bytes: usize, seed: u64) -> Vec<u8> {
    let mut rng = rng(seed);
    let mut out = Vec::with_capacity(bytes);
    while out.len() + 2 <= bytes {
        let x: i8 = rng.random_range(-100..100);
        let y = (x / 2)
            .saturating_add(10)
            .saturating_add(rng.random_range(-20..=20));
        out.extend([x as u8, y as u8]);
    }
    if out.len() < bytes {
        out.push(0);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes from a small xorshift stream: every byte value turns up.
    fn noise(len: usize, seed: u64) -> Vec<u8> {
        let mut state = seed | 1;
        (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 32) as u8
            })
            .collect()
    }

    fn reference_sums(bytes: &[u8]) -> [u64; SUMS] {
        reference(bytes).sums.map(|v| v as u64)
    }

    #[test]
    fn every_path_equals_the_reference() {
        // Lengths around the vector step (32 bytes) and the widening run
        // (4 KiB), odd ones included.
        for len in [0, 1, 2, 30, 32, 34, 63, 4096, 4098, 4127, 100_001, 300_000] {
            let bytes = noise(len, len as u64 + 7);
            let points = as_points(&bytes);
            let want = reference_sums(&bytes);
            assert_eq!(block_sums(points), want, "len {len}");
            assert_eq!(portable_sums(points), want, "portable, len {len}");
        }
    }

    #[test]
    fn extreme_coordinates_stay_exact() {
        // All -128 or all 127 for long stretches: the 16-bit and 32-bit
        // lanes at their bounds before each widening.
        for (x, y) in [(0x80u8, 0x80u8), (0x7f, 0x7f), (0x80, 0x7f), (0x7f, 0x80)] {
            let bytes: Vec<u8> = [x, y].repeat(200_003);
            let want = reference_sums(&bytes);
            assert_eq!(block_sums(as_points(&bytes)), want, "{x:#x} {y:#x}");
            assert_eq!(portable_sums(as_points(&bytes)), want);
        }
    }

    #[test]
    fn the_job_equals_the_reference() {
        let pool = crate::test_pool::pool(3);
        let rt = Runtime::new(&pool);
        let bytes = generate(1 << 20, 5);
        let (fit, _) = run(&rt, &bytes, &JobOptions::default()).unwrap();
        assert_eq!(fit, reference(&bytes));
    }
}
