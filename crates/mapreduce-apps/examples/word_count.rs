//! Counts the words of a text file (or of generated text) with the
//! MapReduce runtime and prints the most frequent ones, as Phoenix's
//! word_count does.
//!
//! ```sh
//! cargo run --release -p numakit-mapreduce-apps --example word_count -- [FILE] [TOP]
//! ```

use std::sync::Arc;

use numakit_mapreduce::{Input, InputMode, Runtime};
use numakit_mapreduce_apps::word_count;
use numakit_placement::PlacementMode;
use numakit_pool::PoolBuilder;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let top: usize = args.get(1).map_or(Ok(10), |t| t.parse())?;
    let topology = Arc::new(numakit_topology::discover()?);
    let pool = PoolBuilder::new(topology)
        .placement(PlacementMode::BestEffort)
        .build()?;
    // The text, read into blocks placed on the pool's nodes (or generated).
    let mut input = match args.first() {
        Some(path) => Input::open(&pool, path.as_ref(), InputMode::Read)?,
        None => Input::place(&pool, &word_count::generate(16 << 20, 1))?,
    };
    let runtime = Runtime::new(&pool);
    let text = input.bytes_mut().ok_or("the input is not writable")?;
    let counts = word_count::run(&runtime, text, &word_count::default_options())?;
    println!(
        "{} words, {} distinct, in {:.3} s",
        counts.total(),
        counts.counts.len(),
        counts.stats.seconds.total()
    );
    for (word, n) in counts.counts.iter().take(top) {
        println!("{:>15} - {n}", String::from_utf8_lossy(word));
    }
    Ok(())
}
