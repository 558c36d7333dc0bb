//! Place data on every node, then sum it with morsels that run next to
//! their data. Run with `cargo run --release -p numakit-pool --example morsel_sum`.

use std::sync::Arc;

use numakit_placement::{NodeBuffer, Placement, PlacementMode};
use numakit_pool::{NodeSlice, PoolBuilder};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let topology = Arc::new(numakit_topology::discover()?);
    let pool = PoolBuilder::new(topology)
        .placement(PlacementMode::BestEffort)
        .build()?;

    // 16 MiB of u64 per node, bound to that node.
    let mut buffers = Vec::new();
    for node in pool.nodes() {
        let mut buffer = NodeBuffer::<u64>::new(pool.placer(), 2 << 20, Placement::OnNode(node))?;
        buffer
            .iter_mut()
            .enumerate()
            .for_each(|(i, v)| *v = i as u64);
        buffers.push((node, buffer));
    }
    let parts: Vec<NodeSlice<'_, u64>> = buffers
        .iter()
        .map(|(node, b)| NodeSlice {
            node: *node,
            data: &b[..],
        })
        .collect();

    let partials = pool.fold_morsels(
        &parts,
        64 * 1024,
        || 0u64,
        |acc, _ctx, morsel| acc + morsel.data.iter().sum::<u64>(),
    )?;
    println!("sum = {}", partials.iter().sum::<u64>());
    for s in pool.stats() {
        println!(
            "worker {} (node {}): {} local, {} stolen morsels",
            s.worker, s.node, s.tasks_local, s.tasks_stolen
        );
    }
    Ok(())
}
