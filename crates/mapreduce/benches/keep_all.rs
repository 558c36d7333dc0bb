//! Reduce-side prefetching of a KeepAll job (Phoenix Rebirth §III-B): the
//! chunked value buffer read with prefetch on, the same with prefetch
//! off, and the plain growing vector KeepAll used to be (a combiner
//! defined here, the comparison path), run alternately in one process
//! (the order rotating every repetition) after one untimed run of each.
//!
//! The job: `--mib` MiB of 64-byte values (default 320), emitted under
//! `--keys` keys (default 65536: about 80 values per key) picked by a
//! hash of the record, so that every key's values are spread through
//! memory in the order map met them; reduce walks every value of a key
//! and sums its words (little work per byte: it waits on memory). Prints
//! per side the median (min..max) of the reduce phase and of the whole
//! run, and the ratios of medians against prefetch off; then the same
//! values walked alone on one thread (no map, merge or allocator in the
//! timing), the keys in a shuffled order. Run with
//! `cargo bench -p numakit-mapreduce --bench keep_all -- [--reps R]
//! [--threads T] [--mib M] [--keys K]`.

use std::sync::Arc;

use numakit_mapreduce::{
    Combiner, ContainerKind, Emitter, Job, JobError, JobOptions, KeepAll, Prefetch, Runtime, Split,
};
use numakit_pool::{Pool, PoolBuilder};

/// One value: a cache line.
type Value = [u64; 8];

struct Config {
    reps: usize,
    threads: usize,
    mib: usize,
    keys: u64,
}

fn config() -> Config {
    let mut c = Config {
        reps: 7,
        threads: 0,
        mib: 320,
        keys: 1 << 16,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let value = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--reps" => c.reps = value.parse().expect("--reps N"),
            "--threads" => c.threads = value.parse().expect("--threads N"),
            "--mib" => c.mib = value.parse().expect("--mib M"),
            "--keys" => c.keys = value.parse().expect("--keys K"),
            _ => i -= 1, // `--bench` from cargo, and anything else
        }
        i += 2;
    }
    c
}

/// The combiner KeepAll was before the chunked buffer: one vector per
/// key, grown by reallocation, merged by appending (copying).
struct VecAll(Vec<Value>);

impl Combiner<Value> for VecAll {
    fn start(value: Value) -> Self {
        VecAll(vec![value])
    }
    #[inline]
    fn add(&mut self, value: Value) {
        self.0.push(value);
    }
    fn merge(&mut self, mut other: Self) {
        if other.0.len() > self.0.len() {
            std::mem::swap(&mut self.0, &mut other.0);
        }
        self.0.append(&mut other.0);
    }
}

/// How reduce reads a key's values.
trait Walk {
    fn checksum(&self) -> u64;
}

/// Folds one value in; the sum does not depend on the values' order
/// (which worker got which value is the pool's choice).
fn fold(sum: u64, v: &Value) -> u64 {
    sum.wrapping_add(v.iter().fold(0, |s, w| s.rotate_left(5) ^ w))
}

impl Walk for KeepAll<Value> {
    fn checksum(&self) -> u64 {
        self.iter().fold(0, fold)
    }
}

impl Walk for VecAll {
    fn checksum(&self) -> u64 {
        self.0.iter().fold(0, fold)
    }
}

/// Record `i` emits one value under a hash of `i`.
struct Scatter<C> {
    keys: u64,
    _c: std::marker::PhantomData<fn() -> C>,
}

fn mix(x: u64) -> u64 {
    let x = (x ^ (x >> 31)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^ (x >> 29)
}

impl<'a, C: Combiner<Value> + Walk + 'a> Job<'a> for Scatter<C> {
    type Record = u32;
    type Key = u64;
    type Value = Value;
    type Combiner = C;
    type Output = u64;
    fn map(&self, s: Split<'a, u32>, out: &mut Emitter<'_, 'a, Self>) -> Result<(), JobError> {
        for &r in s.records {
            let h = mix(u64::from(r));
            out.emit(h % self.keys, [h; 8].map(|w| w ^ u64::from(r)));
        }
        Ok(())
    }
    fn reduce(&self, _: &u64, values: C) -> Result<u64, JobError> {
        Ok(values.checksum())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Vec,
    Off,
    On,
}

/// (reduce seconds, total seconds, checksum of the output).
fn run_side(rt: &Runtime, input: &[u32], keys: u64, side: Side) -> (f64, f64, u64) {
    let opts = JobOptions {
        container: Some(ContainerKind::GrowableHash {
            capacity: keys as usize,
        }),
        prefetch: if side == Side::On {
            Prefetch::On
        } else {
            Prefetch::Off
        },
        ..JobOptions::default()
    };
    let out = match side {
        Side::Vec => rt.run(&scatter::<VecAll>(keys), input, &opts),
        Side::Off | Side::On => rt.run(&scatter::<KeepAll<Value>>(keys), input, &opts),
    }
    .expect("run");
    let s = out.stats.seconds;
    let sum = out.pairs.iter().fold(0u64, |a, (k, v)| a ^ mix(k ^ v));
    (s.reduce, s.split + s.map + s.reduce + s.merge, sum)
}

fn scatter<C>(keys: u64) -> Scatter<C> {
    Scatter {
        keys,
        _c: std::marker::PhantomData,
    }
}

/// Median, min and max of `times`, in milliseconds.
fn summary(times: &[f64]) -> (f64, f64, f64) {
    let mut t = times.to_vec();
    t.sort_by(f64::total_cmp);
    (t[t.len() / 2] * 1e3, t[0] * 1e3, t[t.len() - 1] * 1e3)
}

fn main() {
    let c = config();
    let topology = Arc::new(numakit_topology::discover().expect("topology"));
    let mut b = PoolBuilder::new(topology).placement(numakit_placement::PlacementMode::BestEffort);
    if c.threads > 0 {
        b = b.threads(c.threads);
    }
    let pool: Pool = b.build().expect("pool");
    let rt = Runtime::new(&pool);
    let n = (c.mib << 20) / std::mem::size_of::<Value>();
    let input: Vec<u32> = (0..n as u32).collect();
    println!(
        "keep_all: {} MiB of {}-byte values, {} keys, {} workers, {} reps",
        c.mib,
        std::mem::size_of::<Value>(),
        c.keys,
        pool.workers(),
        c.reps
    );
    let sides = [Side::Vec, Side::Off, Side::On];
    let mut sums = sides.map(|side| run_side(&rt, &input, c.keys, side).2);
    assert!(
        sums.iter().all(|s| *s == sums[0]),
        "sides disagree: {sums:?}"
    );
    let mut times: [Vec<(f64, f64)>; 3] = Default::default();
    for rep in 0..c.reps {
        for i in 0..3 {
            let at = (i + rep) % 3;
            let (reduce, total, sum) = run_side(&rt, &input, c.keys, sides[at]);
            times[at].push((reduce, total));
            sums[at] = sum;
        }
    }
    assert!(
        sums.iter().all(|s| *s == sums[0]),
        "sides disagree: {sums:?}"
    );
    report(&sides, &times);
    walk_only(&c, n);
}

/// The reduce walk alone, on one thread: every key's values built as
/// map would (pushes interleaved across keys), then walked key by key in
/// a shuffled order, alternately as a plain vector, chunks with prefetch
/// off and chunks with prefetch on (which, as the runtime's reduce does,
/// also prefetches the next key's first values).
fn walk_only(c: &Config, n: usize) {
    let keys = c.keys as usize;
    let mut chunked: Vec<KeepAll<Value>> = (0..keys).map(|_| KeepAll::default()).collect();
    let mut vectors: Vec<Vec<Value>> = (0..keys).map(|_| Vec::new()).collect();
    for r in 0..n as u64 {
        let h = mix(r);
        let value = [h; 8].map(|w| w ^ r);
        Combiner::add(&mut chunked[(h % c.keys) as usize], value);
        vectors[(h % c.keys) as usize].push(value);
    }
    let mut order: Vec<usize> = (0..keys).collect();
    order.sort_by_key(|&k| mix(k as u64 ^ 0xABCD));
    let walk = |side: Side| -> (f64, u64) {
        let started = std::time::Instant::now();
        let mut sum = 0u64;
        for (i, &k) in order.iter().enumerate() {
            if side == Side::On {
                // As the runtime does: the next key's values while this
                // key is walked.
                if let Some(&next) = order.get(i + 1) {
                    chunked[next].0.prefetch_start();
                }
            }
            sum ^= match side {
                Side::Vec => vectors[k].iter().fold(0, fold),
                Side::Off => chunked[k].0.iter_with(Prefetch::Off).fold(0, fold),
                Side::On => chunked[k].0.iter_with(Prefetch::On).fold(0, fold),
            };
        }
        (started.elapsed().as_secs_f64(), sum)
    };
    let sides = [Side::Vec, Side::Off, Side::On];
    let mut times: [Vec<f64>; 3] = Default::default();
    let want = walk(Side::Vec).1;
    for rep in 0..c.reps * 3 {
        for i in 0..3 {
            let at = (i + rep) % 3;
            let (t, sum) = walk(sides[at]);
            assert_eq!(sum, want, "{:?} disagrees", sides[at]);
            times[at].push(t);
        }
    }
    println!("walk only (one thread, keys in shuffled order), ms: median (min..max)");
    for (i, side) in sides.iter().enumerate() {
        let (m, lo, hi) = summary(&times[i]);
        println!(
            "{:<14} {m:>10.1} ({lo:>6.1}..{hi:>6.1})",
            format!("{side:?}")
        );
    }
    let med = |i: usize| summary(&times[i]).0;
    println!(
        "ratio on / off {:.3}   vec / off {:.3}",
        med(2) / med(1),
        med(0) / med(1)
    );
}

fn report(sides: &[Side; 3], times: &[Vec<(f64, f64)>; 3]) {
    let med = |i: usize, total: bool| {
        let t: Vec<f64> = times[i]
            .iter()
            .map(|p| if total { p.1 } else { p.0 })
            .collect();
        summary(&t)
    };
    println!(
        "{:<14} {:>28} {:>28}",
        "side", "reduce ms: median (min..max)", "run ms: median (min..max)"
    );
    for (i, side) in sides.iter().enumerate() {
        let (r, t) = (med(i, false), med(i, true));
        println!(
            "{:<14} {:>10.1} ({:>6.1}..{:>6.1})    {:>10.1} ({:>6.1}..{:>6.1})",
            format!("{side:?}"),
            r.0,
            r.1,
            r.2,
            t.0,
            t.1,
            t.2
        );
    }
    let off = (med(1, false).0, med(1, true).0);
    for (i, name) in [(2, "on / off"), (0, "vec / off")] {
        println!(
            "ratio {name:<10} reduce {:.3}  run {:.3}",
            med(i, false).0 / off.0,
            med(i, true).0 / off.1
        );
    }
}
