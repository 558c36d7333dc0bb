//! The radix joins on Balkesen et al.'s workload A: a dense build side
//! joined with a foreign-key probe side (every probe row matches once),
//! with PRO and with CPRL, printing each phase; then the partitioning API
//! on its own.
//!
//! `cargo run --release -p numakit-ops --example radix_join -- [BUILD_ROWS
//! [PROBE_ROWS [THREADS]]]` (defaults: 1M, 16M, all CPUs).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use numakit_ops::datagen::{generate, GenSpec, KeyDist};
use numakit_ops::join::{join, JoinAlgorithm, JoinKind, JoinOptions, JoinOutput};
use numakit_ops::partition::{
    partition_relation, plan_passes, Partitioned, Variant, MAX_BITS_PER_PASS,
};
use numakit_ops::timing::Silent;
use numakit_ops::Relation;
use numakit_placement::pages::pages_per_node;
use numakit_placement::PlacementMode;
use numakit_pool::{Pool, PoolBuilder};

fn arg(i: usize, default: u64) -> u64 {
    std::env::args()
        .nth(i)
        .and_then(|a| a.replace('_', "").parse().ok())
        .unwrap_or(default)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (build_rows, probe_rows) = (arg(1, 1 << 20), arg(2, 16 << 20));
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = arg(3, cpus as u64) as usize;
    let pool = PoolBuilder::new(Arc::new(numakit_topology::discover()?))
        .threads(threads)
        .placement(PlacementMode::BestEffort)
        .build()?;
    let r = generate(
        &pool,
        &GenSpec {
            rows: build_rows,
            keys: KeyDist::Dense,
            seed: 1,
        },
    )?;
    let s = generate(
        &pool,
        &GenSpec {
            rows: probe_rows,
            keys: KeyDist::ForeignKey { build_rows },
            seed: 2,
        },
    )?;
    println!(
        "{build_rows} x {probe_rows} rows on {} workers",
        pool.workers()
    );
    for algorithm in [JoinAlgorithm::RadixPro, JoinAlgorithm::RadixCprl] {
        let opts = JoinOptions {
            algorithm,
            kind: JoinKind::Inner,
            output: JoinOutput::Count,
            row_limit: None,
            merge_exchange: numakit_ops::join::RING_MERGE,
        };
        // The first run pays the page faults of fresh partition buffers;
        // the second reuses them.
        for run in ["cold", "warm"] {
            let start = Instant::now();
            let result = join(&pool, &r, &s, &opts, &Silent)?;
            let phases: Vec<String> = result
                .phases
                .iter()
                .map(|p| format!("{} {:.1} ms", p.name, p.seconds * 1e3))
                .collect();
            println!(
                "{:>4} {run}: {:7.1} ms, {} rows ({})",
                algorithm.name(),
                start.elapsed().as_secs_f64() * 1e3,
                result.rows,
                phases.join(", ")
            );
        }
    }
    show_partitioning(&pool, &r)
}

/// The partitioning API: plan by size, partition, look at the pieces.
fn show_partitioning(pool: &Pool, r: &Relation) -> Result<(), Box<dyn std::error::Error>> {
    let plan = plan_passes(r.bytes(), 256 << 10, MAX_BITS_PER_PASS)?;
    for variant in [Variant::Pro, Variant::Cprl] {
        let parts = partition_relation(pool, r, plan, variant)?;
        let sizes: Vec<usize> = (0..parts.fanout())
            .map(|p| parts.partition_len(p))
            .collect();
        println!(
            "{}: {} partitions ({} pass(es)), {}..{} rows each, partition 0 in {} piece(s) on node {}; {}",
            variant.name(),
            parts.fanout(),
            plan.passes(),
            sizes.iter().min().unwrap_or(&0),
            sizes.iter().max().unwrap_or(&0),
            parts.pieces(0).count(),
            parts.home(0),
            placement_summary(&parts)?
        );
    }
    Ok(())
}

/// Where the pieces' pages really are (move_pages), against where the
/// partitioning says they are, and how many partitions each node is home
/// to.
fn placement_summary(parts: &Partitioned) -> Result<String, Box<dyn std::error::Error>> {
    let (mut right, mut wrong) = (0usize, 0usize);
    let mut homes: BTreeMap<u32, usize> = BTreeMap::new();
    for p in 0..parts.fanout() {
        *homes.entry(parts.home(p)).or_default() += 1;
        for piece in parts.pieces(p) {
            let bytes = std::mem::size_of_val(piece.data);
            for (node, pages) in pages_per_node(piece.data.as_ptr().cast(), bytes)? {
                if node == piece.node {
                    right += pages;
                } else {
                    wrong += pages;
                }
            }
        }
    }
    Ok(format!(
        "pages on the pieces' nodes: {right}, elsewhere: {wrong}; partitions per home node: {homes:?}"
    ))
}
