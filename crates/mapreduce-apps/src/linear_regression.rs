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
const SUMS: usize = 5;

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

/// Points per block summed in 32-bit lanes: |x * y| <= 2^14, so 2^16
/// products stay below 2^30 and the block's sums are exact.
const BLOCK: usize = 1 << 16;

/// SX, SY, SXX, SYY, SXY of `points` (signed bytes), wrapping modulo 2^64
/// as the original's sums do. Exact 32-bit sums per block (which the
/// compiler vectorises) added into 64-bit ones give the same result.
fn block_sums(points: &[[u8; 2]]) -> [u64; SUMS] {
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

/// The exact sums of at most [`BLOCK`] points, with AVX2 where the CPU
/// has it (the build targets baseline x86-64, whose SSE2 cannot multiply
/// 32-bit lanes; measured: 2.4x faster on one core).
fn exact_block_sums(block: &[[u8; 2]]) -> [i32; SUMS] {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2, checked just above.
            return unsafe { exact_block_sums_avx2(block) };
        }
    }
    exact_block_sums_portable(block)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn exact_block_sums_avx2(block: &[[u8; 2]]) -> [i32; SUMS] {
    exact_block_sums_portable(block)
}

#[inline(always)]
fn exact_block_sums_portable(block: &[[u8; 2]]) -> [i32; SUMS] {
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
        container: ContainerKind::Array { keys: SUMS },
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
