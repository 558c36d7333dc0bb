//! Three processes of the distributed join, as threads of this program
//! talking over loopback through timely: each generates its share of R
//! (a primary key) and S (foreign keys), the equi-join runs by hash
//! distribution in ring order, and the sink prints the result and every
//! process's loads, join span and intra-node gain (Chakraborty §V).
//!
//! `cargo run --release -p numakit-cluster --example three_process_join`
//! (add a number of bytes, `-- 1048576`, to bound what each process
//! holds of its peers' pieces: a receive budget; the senders' waits and
//! the peak held bytes are printed too).

use std::sync::Arc;
use std::time::Duration;

use numakit_cluster::launch::free_local_addresses;
use numakit_cluster::partition::generated_share;
use numakit_cluster::transport::connect::Endpoints;
use numakit_cluster::{run_process, JoinSpec, Predicate};
use numakit_ops::datagen::{GenSpec, KeyDist};
use numakit_placement::PlacementMode;
use numakit_pool::PoolBuilder;

const PROCESSES: usize = 3;

/// Process `i`: its pool, its share of the data, its connections, its join.
fn process(
    i: usize,
    addresses: Vec<String>,
    spec: &JoinSpec,
    r: &GenSpec,
    s: &GenSpec,
) -> numakit_cluster::Result<numakit_cluster::ProcessRun> {
    let topology = numakit_topology::discover()
        .map_err(|e| numakit_cluster::ClusterError::InvalidArgument(e.to_string()))?;
    let pool = PoolBuilder::new(Arc::new(topology))
        .placement(PlacementMode::Off)
        .threads(1)
        .build()?;
    let left = generated_share(&pool, r, i, PROCESSES)?;
    let right = generated_share(&pool, s, i, PROCESSES)?;
    let endpoints = Endpoints {
        process: i,
        addresses,
        timeout: Duration::from_secs(20),
        peer_timeout: numakit_cluster::transport::connect::DEFAULT_PEER_TIMEOUT,
        fingerprint: spec.fingerprint(),
    };
    let transport = numakit_cluster::transport::connect(&endpoints)?;
    run_process(
        &pool,
        transport,
        &left,
        &right,
        spec,
        Duration::from_secs(600),
    )
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addresses = free_local_addresses(PROCESSES)?;
    let r = GenSpec {
        rows: 300_000,
        keys: KeyDist::Dense,
        seed: 1,
    };
    let s = GenSpec {
        rows: 1_200_000,
        keys: KeyDist::ForeignKey {
            build_rows: 300_000,
        },
        seed: 2,
    };
    let mut spec = JoinSpec::new(Predicate::Equal);
    spec.receive_budget = std::env::args().nth(1).map(|b| b.parse()).transpose()?;
    let handles: Vec<_> = (0..PROCESSES)
        .map(|i| {
            let (addresses, spec) = (addresses.clone(), spec.clone());
            std::thread::spawn(move || process(i, addresses, &spec, &r, &s))
        })
        .collect();
    for h in handles {
        let run = h.join().map_err(|_| "a process panicked")??;
        if let Some(c) = run.cluster {
            println!(
                "{} result rows (every S row matches once: {})",
                c.result.rows,
                c.result.rows == s.rows
            );
            for m in &c.processes {
                println!(
                    "process {}: compute {:.3} s, send {:.3} s, receive {:.3} s, span {:.3} s, gain {:.2}, \
                     {} sender waits ({:.3} s), peak held {} bytes",
                    m.process, m.compute_seconds, m.send_seconds, m.receive_seconds, m.span_seconds,
                    m.intra_node_gain(), m.sender_waits, m.sender_wait_seconds, m.peak_held_bytes
                );
            }
        }
    }
    Ok(())
}
