//! The runtime's overhead on the numeric applications: per application,
//! the MapReduce job (`kmeans::run`, `pca::run`, `matrix_multiply::run`)
//! against the hand-written threaded baseline on the same input and the
//! same number of threads, run alternately in one process (the order
//! swapping every repetition), after one untimed run of each. Prints each
//! side's median and spread and the ratio of medians, job / baseline (the
//! issue's goal: at most 1.15).
//!
//! Inputs are the reference sizes, generated from seed 1 (the data
//! Phoenix++ itself computes on): kmeans 500k 3-d points, 100 clusters;
//! PCA 1000 x 1000; matrix multiply 1000 x 1000. Run with
//! `cargo bench -p numakit-mapreduce-apps --bench numeric -- [--reps R]
//! [--threads T] [--apps kmeans,pca,matrix-multiply] [--small]`
//! (`--small`: a tenth of each size, for a quick check).

use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::Instant;

use numakit_mapreduce::Runtime;
use numakit_mapreduce_apps::kmeans::{self, KmeansLimits};
use numakit_mapreduce_apps::{matrix_multiply, pca};
use numakit_pool::{Pool, PoolBuilder};

struct Config {
    reps: usize,
    threads: usize,
    apps: Vec<String>,
    small: bool,
}

fn config() -> Config {
    let mut c = Config {
        reps: 9,
        threads: 0,
        apps: ["kmeans", "pca", "matrix-multiply"]
            .map(String::from)
            .to_vec(),
        small: false,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let value = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--reps" => c.reps = value.parse().expect("--reps N"),
            "--threads" => c.threads = value.parse().expect("--threads N"),
            "--apps" => c.apps = value.split(',').map(String::from).collect(),
            "--small" => {
                c.small = true;
                i -= 1;
            }
            _ => i -= 1, // `--bench` from cargo, and anything else
        }
        i += 2;
    }
    c
}

fn pool(threads: usize) -> Pool {
    let topology = Arc::new(numakit_topology::discover().expect("topology"));
    let mut b = PoolBuilder::new(topology).placement(numakit_placement::PlacementMode::BestEffort);
    if threads > 0 {
        b = b.threads(threads);
    }
    b.build().expect("pool")
}

/// Median and (min, max) of `times`, in milliseconds.
fn summary(times: &mut [f64]) -> (f64, f64, f64) {
    times.sort_by(f64::total_cmp);
    (
        times[times.len() / 2] * 1e3,
        times[0] * 1e3,
        times[times.len() - 1] * 1e3,
    )
}

/// Times `job` and `baseline` alternately `reps` times after one untimed
/// run of each, checking that they agree; prints one table row.
fn compare<T: PartialEq + std::fmt::Debug>(
    app: &str,
    reps: usize,
    mut job: impl FnMut() -> T,
    mut baseline: impl FnMut() -> T,
) {
    assert_eq!(
        job(),
        baseline(),
        "{app}: the job and the baseline disagree"
    );
    let (mut job_times, mut base_times) = (Vec::new(), Vec::new());
    let timed = |f: &mut dyn FnMut() -> T, into: &mut Vec<f64>| {
        let t = Instant::now();
        std::hint::black_box(f());
        into.push(t.elapsed().as_secs_f64());
    };
    for rep in 0..reps.max(1) {
        if rep % 2 == 0 {
            timed(&mut job, &mut job_times);
            timed(&mut baseline, &mut base_times);
        } else {
            timed(&mut baseline, &mut base_times);
            timed(&mut job, &mut job_times);
        }
    }
    let (jm, jlo, jhi) = summary(&mut job_times);
    let (bm, blo, bhi) = summary(&mut base_times);
    println!(
        "{app:<16} {bm:>10.2} ({blo:.2}-{bhi:.2}) {jm:>10.2} ({jlo:.2}-{jhi:.2}) {:>7.3}",
        jm / bm
    );
}

fn main() {
    let c = config();
    let pool = pool(c.threads);
    let rt = Runtime::new(&pool);
    let threads = NonZeroUsize::new(pool.workers()).expect("a worker");
    let scale = if c.small { 10 } else { 1 };
    println!(
        "# numeric apps: MapReduce job vs hand-written threads, {} threads, median of {} alternating runs (ms; ratio = job / baseline)",
        threads,
        c.reps
    );
    println!(
        "{:<16} {:>24} {:>24} {:>7}",
        "app", "baseline", "job", "ratio"
    );
    for app in &c.apps {
        match app.as_str() {
            "kmeans" => bench_kmeans(&rt, threads, 500_000 / scale, c.reps),
            "pca" => bench_pca(&rt, threads, 1000 / scale, c.reps),
            "matrix-multiply" => bench_product(&rt, threads, 1000 / scale, c.reps),
            other => eprintln!("unknown app {other:?} (kmeans, pca, matrix-multiply)"),
        }
    }
}

fn bench_kmeans(rt: &Runtime, threads: NonZeroUsize, points: usize, reps: usize) {
    let params = kmeans::gen::KmeansParams {
        points,
        dim: 3,
        clusters: 100,
        grid_size: 1000,
    };
    let input = kmeans::gen::generate(&params, 1).expect("kmeans input");
    let limits = KmeansLimits::default();
    compare(
        "kmeans",
        reps,
        || kmeans::run(rt, &input, limits).expect("kmeans job").0,
        || kmeans::baseline::kmeans(&input, limits, threads),
    );
}

fn bench_pca(rt: &Runtime, threads: NonZeroUsize, side: usize, reps: usize) {
    let matrix = pca::gen::generate(side, side, 100, 1).expect("pca input");
    compare(
        "pca",
        reps,
        || pca::run(rt, &matrix).expect("pca job").0,
        || pca::baseline::pca(&matrix, threads),
    );
}

fn bench_product(rt: &Runtime, threads: NonZeroUsize, side: usize, reps: usize) {
    let pair = matrix_multiply::gen::generate(side, 1);
    compare(
        "matrix-multiply",
        reps,
        || {
            matrix_multiply::run(rt, &pair)
                .expect("matrix multiply job")
                .0
        },
        || matrix_multiply::baseline::multiply(&pair, threads),
    );
}
