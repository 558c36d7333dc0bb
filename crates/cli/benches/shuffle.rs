//! Benchmark: the ring, naive and migration shuffles (tight) against a
//! plain parallel read of the same bytes, side by side, medians of 3.
//! Run with `cargo bench -p numakit-cli --bench shuffle`; the data size
//! comes from NUMAKIT_BENCH_MIB (default 512).

use std::sync::Arc;

use numakit_cli::commands::shuffle::{quick_report, render};
use numakit_placement::PlacementMode;
use numakit_pool::PoolBuilder;

fn main() {
    // `cargo test --benches` runs this without --bench: keep that quick.
    let quick = !std::env::args().any(|a| a == "--bench");
    let mib = match quick {
        true => 8,
        false => std::env::var("NUMAKIT_BENCH_MIB")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(512),
    };
    let report = numakit_topology::discover()
        .map_err(|e| e.to_string())
        .and_then(|topo| {
            PoolBuilder::new(Arc::new(topo))
                .placement(PlacementMode::BestEffort)
                .build()
                .map_err(|e| e.to_string())
        })
        .and_then(|pool| quick_report(&pool, mib).map_err(|e| format!("{e:#}")));
    match report {
        Ok(report) => println!("{}", render(&report)),
        Err(e) => {
            eprintln!("bench failed: {e}");
            std::process::exit(1);
        }
    }
}
