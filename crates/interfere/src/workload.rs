//! The workloads interference is measured between: numakit's own kernels,
//! each with the character it is declared to have (what it is expected to
//! need from the machine). [`crate::classify`] checks the declaration
//! against the measurements.
//!
//! A workload is prepared once per CPU it runs on (its memory placed on
//! that CPU's node and first touched there) and then run in steps of a
//! few milliseconds until a deadline, counting its units of work. It knows
//! nothing of pairs or matrices.

use std::hint::black_box;
use std::time::Instant;

use numakit_ops::aggregate::{aggregate, AggMethod, AggOptions};
use numakit_ops::datagen::{generate, splitmix64, GenSpec, KeyDist};
use numakit_ops::join::{join, JoinAlgorithm, JoinKind, JoinOptions, JoinOutput, RING_MERGE};
use numakit_ops::timing::Silent;
use numakit_ops::Relation;
use numakit_placement::{HugePages, NodeBuffer, Placement, Placer};
use numakit_pool::{Pool, PoolBuilder};
use numakit_probe::chase::ChaseBuffer;
use numakit_probe::team::{self, Seat};
use numakit_topology::IdSet;
use serde::Serialize;

use crate::error::{InterfereError, Result};

/// One of numakit's kernels, as a workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Workload {
    /// Reads a buffer far larger than the caches, again and again.
    Scan,
    /// Looks keys up in an open-addressing hash table the size of the
    /// usable last-level cache.
    Probe,
    /// Follows a random cycle of dependent loads through a large buffer.
    Chase,
    /// Mixes a word in registers: no memory traffic.
    Compute,
    /// numakit's radix join (PRO) of two generated relations.
    Join,
    /// numakit's aggregation of a generated relation into 64K groups.
    Aggregate,
}

impl Workload {
    /// Every workload, in the order reports list them.
    pub const ALL: [Workload; 6] = [
        Workload::Scan,
        Workload::Probe,
        Workload::Chase,
        Workload::Compute,
        Workload::Join,
        Workload::Aggregate,
    ];

    /// The name options and reports use.
    pub fn name(self) -> &'static str {
        match self {
            Workload::Scan => "scan",
            Workload::Probe => "probe",
            Workload::Chase => "chase",
            Workload::Compute => "compute",
            Workload::Join => "join",
            Workload::Aggregate => "aggregate",
        }
    }

    /// The character the workload is declared to have.
    pub fn declared(self) -> &'static str {
        match self {
            Workload::Scan => "bandwidth-hungry, cache-insensitive",
            Workload::Probe => "cache-sensitive",
            Workload::Chase => "latency-bound",
            Workload::Compute => "compute-bound",
            Workload::Join => "mixed: partitions stream, partition joins cache-sized",
            Workload::Aggregate => "mixed: streams its input into cache-sized tables",
        }
    }

    /// What its units of work are.
    pub fn unit(self) -> &'static str {
        match self {
            Workload::Scan => "bytes read",
            Workload::Probe => "lookups",
            Workload::Chase => "dependent loads",
            Workload::Compute => "rounds",
            Workload::Join | Workload::Aggregate => "input rows",
        }
    }
}

impl std::fmt::Display for Workload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Workload {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|w| w.name() == s)
            .ok_or_else(|| {
                format!("unknown workload `{s}` (scan, probe, chase, compute, join, aggregate)")
            })
    }
}

/// How big each workload's data is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Sizes {
    /// The probe's table: the usable last-level cache, as measured.
    pub cache_bytes: u64,
    /// The scan's buffer: far past every cache.
    pub scan_bytes: u64,
    /// The chase's buffer: far past every cache.
    pub chase_bytes: u64,
    /// Rows of the join's build side (the probe side has twice as many)
    /// and of the aggregation's input.
    pub rows: u64,
}

impl Sizes {
    /// Sizes for a machine whose usable last-level cache is `cache_bytes`.
    pub fn for_cache(cache_bytes: u64) -> Self {
        Sizes {
            cache_bytes: cache_bytes.max(64 << 10),
            scan_bytes: 128 << 20,
            chase_bytes: 128 << 20,
            rows: 256 << 10,
        }
    }
}

/// Lookups per step of the probe.
const PROBE_STEP: u64 = 1 << 16;
/// Loads per step of the chase.
const CHASE_STEP: u64 = 1 << 14;
/// Rounds per step of the compute loop.
const COMPUTE_STEP: u64 = 1 << 20;
/// Keeps generated probe keys apart from other splitmix streams.
const KEY_SALT: u64 = 0x7e57_ab1e_0dd5_eed5;

/// A workload's data, placed for one CPU.
enum Data {
    Scan(NodeBuffer<u64>),
    Probe {
        table: NodeBuffer<u64>,
        keys: u64,
    },
    Chase(ChaseBuffer),
    Compute,
    Join {
        pool: Pool,
        r: Relation,
        s: Relation,
    },
    Aggregate {
        pool: Pool,
        input: Relation,
    },
}

/// A workload ready to run on one CPU.
pub(crate) struct Prepared {
    data: Data,
}

fn probe_key(j: u64) -> u64 {
    splitmix64(j ^ KEY_SALT) | 1
}

fn slot_of(key: u64, bits: u32) -> usize {
    (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - bits)) as usize
}

/// A table of `cache_bytes` (a power of two of slots), half full.
fn probe_table(
    placer: &Placer,
    placement: Placement,
    cache_bytes: u64,
) -> Result<(NodeBuffer<u64>, u64)> {
    // The largest power of two of 8-byte slots that fits.
    let slots = 1u64 << (63 - (cache_bytes / 8).max(2).leading_zeros());
    let bits = slots.trailing_zeros();
    let mut table = NodeBuffer::<u64>::new(placer, slots as usize, placement)?;
    let keys = slots / 2;
    for j in 0..keys {
        let key = probe_key(j);
        let mut slot = slot_of(key, bits);
        while table[slot] != 0 {
            slot = (slot + 1) & (slots as usize - 1);
        }
        table[slot] = key;
    }
    Ok((table, keys))
}

/// A pool of one worker at `spot` (on its CPU, or free to run anywhere).
fn spot_pool(placer: &Placer, spot: &Spot) -> Result<Pool> {
    Ok(PoolBuilder::new(placer.topology().clone())
        .placement(placer.mode())
        .cpus(spot.cpus(placer))
        .threads(1)
        .build()?)
}

fn generated(pool: &Pool, rows: u64, keys: KeyDist, seed: u64) -> Result<Relation> {
    Ok(generate(pool, &GenSpec { rows, keys, seed })?)
}

/// Where a prepared workload's data lives and its pool's worker runs.
#[derive(Clone, Debug)]
pub(crate) enum Spot {
    /// On one CPU: memory bound to its node, the pool pinned to it.
    Seat(Seat),
    /// Anywhere: no memory policy (first touch by whichever CPU runs the
    /// preparing thread) and the pool free to run on every allowed CPU;
    /// what a program that ignores placement gets.
    Anywhere,
}

impl Spot {
    fn placement(&self) -> Placement {
        match self {
            Spot::Seat(seat) => Placement::OnNode(seat.node),
            Spot::Anywhere => Placement::Anywhere,
        }
    }

    fn cpus(&self, placer: &Placer) -> IdSet {
        match self {
            Spot::Seat(seat) => [seat.cpu].into_iter().collect(),
            Spot::Anywhere => placer.topology().allowed.cpus.clone(),
        }
    }
}

/// `w`'s data at `spot`, made by a thread there (so its pages land on the
/// spot's node and its pool starts there), then one untimed step, which
/// pays the first run's costs (the operators measure the cache once,
/// tables fault their pages in).
pub(crate) fn prepare(
    placer: &Placer,
    w: Workload,
    spot: Spot,
    sizes: &Sizes,
    seed: u64,
) -> Result<Prepared> {
    let make = || -> Result<Prepared> {
        let data = Prepared::at(w, placer, &spot, sizes, seed)?;
        data.run_until(Instant::now())?;
        Ok(data)
    };
    match &spot {
        Spot::Seat(seat) => team::run(placer, &[*seat], |_| make())?
            .results
            .into_iter()
            .next()
            .ok_or_else(|| {
                InterfereError::BadRequest("a preparing thread returned nothing".into())
            })?,
        Spot::Anywhere => std::thread::scope(|s| {
            s.spawn(make)
                .join()
                .map_err(|_| InterfereError::BadRequest("a preparing thread panicked".into()))?
        }),
    }
}

impl Prepared {
    /// `workload`'s data at `spot`, generated from `seed`.
    pub(crate) fn at(
        workload: Workload,
        placer: &Placer,
        spot: &Spot,
        sizes: &Sizes,
        seed: u64,
    ) -> Result<Self> {
        let placement = spot.placement();
        let data = match workload {
            Workload::Scan => {
                let words = usize::try_from(sizes.scan_bytes / 8).map_err(|_| {
                    InterfereError::BadRequest("the scan buffer is too large".into())
                })?;
                Data::Scan(NodeBuffer::new(placer, words, placement)?)
            }
            Workload::Probe => {
                let (table, keys) = probe_table(placer, placement, sizes.cache_bytes)?;
                Data::Probe { table, keys }
            }
            Workload::Chase => Data::Chase(ChaseBuffer::new(
                placer,
                sizes.chase_bytes,
                placement,
                HugePages::Never,
                seed,
            )?),
            Workload::Compute => Data::Compute,
            Workload::Join => {
                let pool = spot_pool(placer, spot)?;
                let r = generated(&pool, sizes.rows, KeyDist::Dense, seed)?;
                let fk = KeyDist::ForeignKey {
                    build_rows: sizes.rows,
                };
                let s = generated(&pool, sizes.rows * 2, fk, seed + 7)?;
                Data::Join { pool, r, s }
            }
            Workload::Aggregate => {
                let pool = spot_pool(placer, spot)?;
                let groups = KeyDist::Sparse { groups: 1 << 16 };
                let input = generated(&pool, sizes.rows * 2, groups, seed)?;
                Data::Aggregate { pool, input }
            }
        };
        Ok(Prepared { data })
    }

    /// Runs steps until at least `units` of work are done (at least
    /// one); returns the units done and the seconds taken.
    pub(crate) fn run_units(&self, units: f64) -> Result<(f64, f64)> {
        self.run_while(|done| (done as f64) < units)
    }

    /// Runs steps until `deadline` (at least one); returns the units of
    /// work done and the seconds taken.
    pub(crate) fn run_until(&self, deadline: Instant) -> Result<(f64, f64)> {
        self.run_while(|_| Instant::now() < deadline)
    }

    /// One step, then more while `more(units done)` says so.
    fn run_while(&self, more: impl Fn(u64) -> bool) -> Result<(f64, f64)> {
        let started = Instant::now();
        let mut done = 0u64;
        let mut state = splitmix64(started.elapsed().as_nanos() as u64 ^ 0x5eed);
        let mut at = match &self.data {
            Data::Chase(chase) => chase.start(),
            _ => 0,
        };
        loop {
            done += self.step(&mut state, &mut at)?;
            if !more(done) {
                break;
            }
        }
        Ok((done as f64, started.elapsed().as_secs_f64()))
    }

    /// One step; returns its units of work.
    fn step(&self, state: &mut u64, at: &mut usize) -> Result<u64> {
        Ok(match &self.data {
            Data::Scan(words) => {
                black_box(numakit_probe::stream::read(words));
                words.len() as u64 * 8
            }
            Data::Probe { table, keys } => {
                let bits = table.len().trailing_zeros();
                let mask = table.len() - 1;
                let mut found = 0u64;
                for _ in 0..PROBE_STEP {
                    *state = splitmix64(*state);
                    let key = probe_key(*state % (2 * keys));
                    let mut slot = slot_of(key, bits);
                    loop {
                        let there = table[slot];
                        if there == key {
                            found += 1;
                            break;
                        }
                        if there == 0 {
                            break;
                        }
                        slot = (slot + 1) & mask;
                    }
                }
                black_box(found);
                PROBE_STEP
            }
            Data::Chase(chase) => {
                let (_, next) = chase.chase(*at, CHASE_STEP);
                *at = next;
                CHASE_STEP
            }
            Data::Compute => {
                let mut x = *state;
                for _ in 0..COMPUTE_STEP {
                    x = splitmix64(black_box(x));
                }
                *state = x;
                COMPUTE_STEP
            }
            Data::Join { pool, r, s } => {
                let opts = JoinOptions {
                    algorithm: JoinAlgorithm::RadixPro,
                    kind: JoinKind::Inner,
                    output: JoinOutput::Count,
                    row_limit: None,
                    merge_exchange: RING_MERGE,
                };
                black_box(join(pool, r, s, &opts, &Silent)?.rows);
                (r.len() + s.len()) as u64
            }
            Data::Aggregate { pool, input } => {
                let opts = AggOptions::new(AggMethod::Local);
                black_box(aggregate(pool, input, &opts, &Silent)?.groups.len());
                input.len() as u64
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back() {
        for w in Workload::ALL {
            assert_eq!(w.name().parse::<Workload>(), Ok(w));
            assert!(!w.declared().is_empty() && !w.unit().is_empty());
        }
        assert!("disk"
            .parse::<Workload>()
            .unwrap_err()
            .contains("scan, probe"));
    }

    #[test]
    fn the_probe_table_is_half_full_and_finds_its_keys() {
        let placer = Placer::new(
            std::sync::Arc::new(numakit_topology::discover().unwrap()),
            numakit_placement::PlacementMode::BestEffort,
        );
        let node = placer.topology().compute_nodes()[0];
        let (table, keys) = probe_table(&placer, Placement::OnNode(node), 1 << 16).unwrap();
        assert_eq!(table.len(), 1 << 13);
        assert_eq!(keys, 1 << 12);
        assert_eq!(table.iter().filter(|&&k| k != 0).count() as u64, keys);
        let bits = table.len().trailing_zeros();
        for j in 0..keys {
            let key = probe_key(j);
            let mut slot = slot_of(key, bits);
            while table[slot] != key {
                assert_ne!(table[slot], 0, "key {j} lost");
                slot = (slot + 1) % table.len();
            }
        }
    }
}
