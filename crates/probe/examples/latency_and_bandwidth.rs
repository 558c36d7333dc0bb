//! The probe's matrices on this machine, printed plainly: latency of every
//! (CPU node, memory node) pair and read bandwidth at saturation.
//!
//! `cargo run --release -p numakit-probe --example latency_and_bandwidth`

use std::sync::Arc;

use numakit_ops::timing::Silent;
use numakit_placement::{PlacementMode, Placer};
use numakit_probe::{matrix, MatrixOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let topology = Arc::new(numakit_topology::discover()?);
    let placer = Placer::new(topology, PlacementMode::BestEffort);
    let report = matrix::run(&placer, &MatrixOptions::quick(), &Silent)?;
    for (row, c) in report.cpu_nodes.iter().enumerate() {
        for (col, m) in report.memory_nodes.iter().enumerate() {
            let latency = &report.latency[row][col];
            let read = &report.read[row][col];
            println!(
                "node {c} -> node {m}: {:.0} ns per dependent load, {:.1} GB/s read with {} threads",
                latency.ns, read.gbs, read.threads
            );
        }
    }
    println!("placement verified: {}", report.placement_verified());
    Ok(())
}
