//! The runtime's overhead on the byte-input applications: per
//! application, the MapReduce app (`word_count::run`, `histogram::run`,
//! `linear_regression::run`, `string_match::run` on a `Runtime` over a
//! numakit pool) against a hand-written, single-purpose threaded program
//! for the same task (`std::thread::scope`, per-thread state merged at the
//! end, no runtime), on the same input and the same number of threads.
//!
//! Each input is generated once with the app's generator and placed on
//! the pool's nodes with `Input::place`. The two sides run alternately
//! (the order swapping every repetition) after one untimed run of each
//! whose results must be equal. Prints each side's median and spread,
//! the ratio of medians app / baseline against the goal (at most
//! 1.15), and the app's median phase times.
//!
//! Run with `cargo bench -p numakit-mapreduce-apps --bench apps --
//! [--reps R] [--mib M] [--threads T] [--seed S]
//! [--apps word-count,histogram,linear-regression,string-match]`.
//! Defaults: 9 repetitions, 2 threads, the reference sizes (word
//! count 100 MiB, histogram 400 MiB, linear regression 400 MiB, string
//! match 100 MiB). `MR_BENCH_MIB` (or `--mib`) sets every input to that
//! many MiB for a quick run; `MR_BENCH_REPS` sets the repetitions.
//!
//! The baselines are deliberately not tuned beyond what a careful
//! programmer would write for the one task: they share only the work
//! queue below, and none of the runtime's code.

use std::sync::Arc;

use numakit_mapreduce::Runtime;
use numakit_pool::{Pool, PoolBuilder};

/// The goal: each app within 15% of its baseline.
pub(crate) const GOAL: f64 = 1.15;
pub(crate) const MIB: usize = 1 << 20;

mod histogram;
mod linear_regression;
mod queue;
mod string_match;
mod timing;
mod word_count;

pub(crate) struct Config {
    pub(crate) reps: usize,
    pub(crate) threads: usize,
    pub(crate) mib: Option<usize>,
    pub(crate) seed: u64,
    pub(crate) apps: Vec<String>,
}

fn env_number(name: &str) -> Option<usize> {
    let value = std::env::var(name).ok()?;
    Some(value.parse().unwrap_or_else(|_| panic!("{name}: a number")))
}

fn config() -> Config {
    let mut c = Config {
        reps: env_number("MR_BENCH_REPS").unwrap_or(9),
        threads: 2,
        mib: env_number("MR_BENCH_MIB"),
        seed: 42,
        apps: [
            "word-count",
            "histogram",
            "linear-regression",
            "string-match",
        ]
        .map(String::from)
        .to_vec(),
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let value = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--reps" => c.reps = value.parse().expect("--reps N"),
            "--threads" => c.threads = value.parse().expect("--threads N"),
            "--mib" => c.mib = Some(value.parse().expect("--mib M")),
            "--seed" => c.seed = value.parse().expect("--seed S"),
            "--apps" => c.apps = value.split(',').map(String::from).collect(),
            _ => i -= 1, // `--bench` from cargo, and anything else
        }
        i += 2;
    }
    c
}

fn pool(threads: usize) -> Pool {
    let topology = Arc::new(numakit_topology::discover().expect("topology"));
    PoolBuilder::new(topology)
        .placement(numakit_placement::PlacementMode::BestEffort)
        .threads(threads)
        .build()
        .expect("pool")
}

fn main() {
    let c = config();
    let pool = pool(c.threads);
    let rt = Runtime::new(&pool);
    println!(
        "# byte apps: MapReduce app vs hand-written threads, {} threads, median of {} alternating runs (s; ratio = app / baseline)",
        pool.workers(),
        c.reps
    );
    let mut rows = Vec::new();
    for app in &c.apps {
        let size = |default: usize| c.mib.unwrap_or(default);
        rows.push(match app.as_str() {
            "word-count" => word_count::bench(&pool, &rt, &c, size(100)),
            "histogram" => histogram::bench(&pool, &rt, &c, size(400)),
            "linear-regression" => linear_regression::bench(&pool, &rt, &c, size(400)),
            "string-match" => string_match::bench(&pool, &rt, &c, size(100)),
            other => {
                eprintln!("unknown app {other:?} (word-count, histogram, linear-regression, string-match)");
                continue;
            }
        });
    }
    timing::print_rows(&mut rows);
}
