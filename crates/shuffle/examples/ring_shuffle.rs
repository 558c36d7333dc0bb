//! Shuffle 64 MiB of integers with the coordinated ring, tight, and check
//! every consumer's mean against the sequential reference.
//! Run with `cargo run --release -p numakit-shuffle --example ring_shuffle`.

use std::sync::Arc;

use numakit_placement::PlacementMode;
use numakit_pool::PoolBuilder;
use numakit_shuffle::{plain_read, shuffle, ShuffleData, ShuffleOptions, Skew, Strategy, SyncMode};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let topology = Arc::new(numakit_topology::discover()?);
    let pool = PoolBuilder::new(topology)
        .placement(PlacementMode::BestEffort)
        .build()?;
    let data = ShuffleData::generate(&pool, 8 << 20, Skew::Uniform, 42)?;
    let run = shuffle(
        &pool,
        &data,
        &ShuffleOptions::new(Strategy::Ring, SyncMode::Tight),
    )?;
    run.verify(&data.reference())?;
    let (seconds, _) = plain_read(&pool, &data)?;
    println!(
        "ring (tight): {:.1} GB/s; plain read of the same bytes: {:.1} GB/s",
        run.gbs(),
        data.bytes() as f64 / seconds / 1e9
    );
    for (consumer, mean) in run.means().iter().enumerate() {
        println!("consumer {consumer}: mean {mean:.1}");
    }
    Ok(())
}
