//! The smallest useful job: how often each byte value occurs in a file,
//! with an array container (256 small integer keys) and a sum combiner.
//!
//! ```sh
//! cargo run --release -p numakit-mapreduce --example histogram_of_bytes -- FILE
//! ```

use std::sync::Arc;

use numakit_mapreduce::{
    ContainerKind, Emitter, Input, InputMode, Job, JobError, JobOptions, OutputOrder, Runtime,
    Split, Sum,
};
use numakit_placement::PlacementMode;
use numakit_pool::PoolBuilder;

/// Byte value -> occurrences.
struct ByteHistogram;

impl<'a> Job<'a> for ByteHistogram {
    type Record = u8;
    type Key = u8;
    type Value = u64;
    type Combiner = Sum<u64>;
    type Output = u64;

    fn map(&self, split: Split<'a, u8>, out: &mut Emitter<'_, 'a, Self>) -> Result<(), JobError> {
        // Count locally, emit each value once per split.
        let mut counts = [0u64; 256];
        split.records.iter().for_each(|&b| counts[b as usize] += 1);
        for (b, &n) in counts.iter().enumerate().filter(|(_, &n)| n > 0) {
            out.emit(b as u8, n);
        }
        Ok(())
    }

    fn reduce(&self, _: &u8, n: Sum<u64>) -> Result<u64, JobError> {
        Ok(n.0)
    }

    fn key_index(&self, key: &u8) -> Option<usize> {
        Some(*key as usize)
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: histogram_of_bytes FILE")?;
    let topology = Arc::new(numakit_topology::discover()?);
    let pool = PoolBuilder::new(topology)
        .placement(PlacementMode::BestEffort)
        .build()?;
    let input = Input::open(&pool, path.as_ref(), InputMode::Mmap { populate: true })?;
    let options = JobOptions {
        container: Some(ContainerKind::Array { keys: 256 }),
        order: OutputOrder::ByKey,
        ..JobOptions::default()
    };
    let out = Runtime::new(&pool).run(&ByteHistogram, input.bytes(), &options)?;
    for (byte, n) in out.pairs.iter().filter(|(_, n)| *n > 0) {
        println!("{byte:#04x} {n}");
    }
    let s = &out.stats.seconds;
    eprintln!(
        "split {:.4} s, map {:.4} s, reduce {:.4} s, merge {:.4} s",
        s.split, s.map, s.reduce, s.merge
    );
    Ok(())
}
