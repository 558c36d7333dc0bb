//! Benchmark: parallel sum of node-placed u64 through the pool against
//! plain pinned threads reading the same memory, side by side; and the cost
//! of dispatching one task. Run with `cargo bench -p numakit-cli`; options
//! through the environment: NUMAKIT_BENCH_MIB (default 1024) and
//! NUMAKIT_BENCH_REPS (default 7).

use numakit_cli::args::{PoolArgs, PoolBenchArgs, SumArgs};
use numakit_cli::commands::bench::{pool_bench, render};
use numakit_cli::common::parallel_sum::DEFAULT_MORSEL_KIB;
use numakit_placement::{HugePages, PlacementMode};

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    // `cargo test --benches` runs this with --bench absent: keep that quick.
    let quick = !std::env::args().any(|a| a == "--bench");
    let args = PoolBenchArgs {
        size_mib: if quick {
            16
        } else {
            env_or("NUMAKIT_BENCH_MIB", 1024)
        },
        reps: if quick {
            1
        } else {
            env_or("NUMAKIT_BENCH_REPS", 7) as usize
        },
        pool: PoolArgs::default(),
        sum: SumArgs {
            huge_pages: HugePages::Never,
            morsel_kib: DEFAULT_MORSEL_KIB,
        },
        tasks: if quick { 1000 } else { 200_000 },
    };
    match pool_bench(&args, PlacementMode::BestEffort, false) {
        Ok(report) => println!("{}", render(&report)),
        Err(e) => {
            eprintln!("bench failed: {e:#}");
            std::process::exit(1);
        }
    }
}
