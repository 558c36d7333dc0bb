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
        let mut s = [0u64; SUMS];
        for &[x, y] in split.records {
            let (x, y) = (x as i8 as i64 as u64, y as i8 as i64 as u64);
            s[0] = s[0].wrapping_add(x);
            s[1] = s[1].wrapping_add(y);
            s[2] = s[2].wrapping_add(x.wrapping_mul(x));
            s[3] = s[3].wrapping_add(y.wrapping_mul(y));
            s[4] = s[4].wrapping_add(x.wrapping_mul(y));
        }
        for (k, v) in s.into_iter().enumerate() {
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
    pub n: u64,
    /// SX, SY, SXX, SYY, SXY as the original prints them (signed).
    pub sums: [i64; SUMS],
    pub a: f64,
    pub b: f64,
    pub xbar: f64,
    pub ybar: f64,
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
