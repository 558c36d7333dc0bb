//! Shuffle schedules: a plain description of which producer's partition
//! each consumer reads at each step, and on which socket it runs meanwhile.
//!
//! N = S x P threads on S sockets, numbered socket-major: thread t is
//! `s_{t/P}.p_{t%P}` and produces `s_{t/P}.d_{t%P}`, which holds one piece
//! for every consumer. A shuffle takes N steps; at each step every consumer
//! reads its piece of one producer's partition. The same description drives
//! the real primitive (`exec`) and the interconnect simulator, so what is
//! simulated is exactly what runs. This module only describes; it neither
//! moves data nor times anything.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// S sockets with P threads each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layout {
    /// S, the number of sockets (the pool's nodes, in pool order).
    pub sockets: usize,
    /// P, the threads (workers) on each socket.
    pub threads_per_socket: usize,
}

impl Layout {
    /// S sockets with P threads each.
    pub fn new(sockets: usize, threads_per_socket: usize) -> Self {
        Self {
            sockets,
            threads_per_socket,
        }
    }

    /// N, the number of threads (and of producers, consumers and steps).
    pub fn threads(&self) -> usize {
        self.sockets * self.threads_per_socket
    }

    /// The socket of thread (or producer) `t`.
    pub fn socket_of(&self, t: usize) -> usize {
        t / self.threads_per_socket.max(1)
    }
}

/// How consumers walk the producers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    /// Every consumer walks s0.d0, s0.d1, ... in the same order.
    Naive,
    /// Li Figure 5: inner ring of partitions by thread then socket, outer
    /// ring of threads by socket then thread, rotating one step at a time.
    Ring,
    /// A random Latin square: at every step each partition is read by one
    /// consumer, but the order ignores sockets.
    Random,
    /// Ring order, but the consumer moves to the socket of the partition it
    /// reads, so every read is local; its (small) state stays behind.
    Migration,
    /// Like migration, and the consumer carries its state along: a copy
    /// over the interconnect at every move.
    MigrationCopy,
}

impl Strategy {
    /// Every strategy, in the order reports list them.
    pub const ALL: [Strategy; 5] = [
        Strategy::Naive,
        Strategy::Ring,
        Strategy::Random,
        Strategy::Migration,
        Strategy::MigrationCopy,
    ];

    /// Whether the consumer moves to the data.
    pub fn migrates(self) -> bool {
        matches!(self, Strategy::Migration | Strategy::MigrationCopy)
    }

    /// The kebab-case name users type (`migration-copy`); `FromStr` parses it back.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Naive => "naive",
            Strategy::Ring => "ring",
            Strategy::Random => "random",
            Strategy::Migration => "migration",
            Strategy::MigrationCopy => "migration-copy",
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Strategy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Strategy::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Strategy::ALL.iter().map(|k| k.name()).collect();
                format!("unknown schedule `{s}` (known: {})", names.join(", "))
            })
    }
}

/// Whether steps are separated by barriers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SyncMode {
    /// All consumers finish step k before any starts step k+1.
    Tight,
    /// Each consumer moves on as soon as it finishes a step.
    Loose,
}

impl SyncMode {
    /// Both modes, tight first.
    pub const ALL: [SyncMode; 2] = [SyncMode::Tight, SyncMode::Loose];

    /// The name users type (`tight`, `loose`); `FromStr` parses it back.
    pub fn name(self) -> &'static str {
        match self {
            SyncMode::Tight => "tight",
            SyncMode::Loose => "loose",
        }
    }
}

impl fmt::Display for SyncMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for SyncMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "tight" => Ok(SyncMode::Tight),
            "loose" => Ok(SyncMode::Loose),
            other => Err(format!("unknown synchronization `{other}` (tight, loose)")),
        }
    }
}

/// What one consumer does in one step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Access {
    /// The producer whose partition it reads (its piece of it).
    pub producer: usize,
    /// The socket (position among the pool's nodes) the consumer runs on during the step.
    pub run_on: usize,
}

/// A complete schedule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Schedule {
    /// The S x P layout the schedule is for.
    pub layout: Layout,
    /// The strategy it was built with.
    pub strategy: Strategy,
    /// `steps[k][c]`: what consumer c does at step k.
    pub steps: Vec<Vec<Access>>,
}

impl Schedule {
    /// Builds the schedule; `seed` matters only for [`Strategy::Random`].
    pub fn build(layout: Layout, strategy: Strategy, seed: u64) -> Self {
        let n = layout.threads();
        let order: Vec<Vec<usize>> = match strategy {
            Strategy::Naive => (0..n).map(|_| (0..n).collect()).collect(),
            Strategy::Ring | Strategy::Migration | Strategy::MigrationCopy => ring_orders(layout),
            Strategy::Random => random_orders(n, seed),
        };
        let steps = (0..n)
            .map(|k| {
                (0..n)
                    .map(|c| {
                        let producer = order[c][k];
                        let run_on = if strategy.migrates() {
                            layout.socket_of(producer)
                        } else {
                            layout.socket_of(c)
                        };
                        Access { producer, run_on }
                    })
                    .collect()
            })
            .collect();
        Self {
            layout,
            strategy,
            steps,
        }
    }

    /// Number of steps (N).
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// Whether the schedule has no steps (a layout of zero threads).
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// What consumer `c` does at step `k`.
    pub fn access(&self, step: usize, consumer: usize) -> Access {
        self.steps[step][consumer]
    }

    /// Transfers per directed socket pair (from the data's socket to the
    /// socket the consumer runs on) at step `k`; local reads are not counted.
    pub fn link_loads(&self, step: usize) -> BTreeMap<(usize, usize), usize> {
        let mut loads = BTreeMap::new();
        for a in &self.steps[step] {
            let from = self.layout.socket_of(a.producer);
            if from != a.run_on {
                *loads.entry((from, a.run_on)).or_insert(0) += 1;
            }
        }
        loads
    }

    /// Readers per producer at step `k` (how many consumers hit the same
    /// partition at once).
    pub fn readers_per_producer(&self, step: usize) -> Vec<usize> {
        let mut readers = vec![0; self.layout.threads()];
        for a in &self.steps[step] {
            readers[a.producer] += 1;
        }
        readers
    }

    /// Checks that every consumer reads every producer exactly once and
    /// that every access names a real producer and socket.
    pub fn validate(&self) -> Result<(), String> {
        let n = self.layout.threads();
        if self.steps.len() != n || self.steps.iter().any(|s| s.len() != n) {
            return Err(format!(
                "a schedule for {n} threads needs {n} steps of {n} accesses"
            ));
        }
        for c in 0..n {
            let mut seen = vec![false; n];
            for (k, step) in self.steps.iter().enumerate() {
                let a = step[c];
                if a.producer >= n || a.run_on >= self.layout.sockets {
                    return Err(format!("step {k}, consumer {c}: access {a:?} out of range"));
                }
                if std::mem::replace(&mut seen[a.producer], true) {
                    return Err(format!("consumer {c} reads producer {} twice", a.producer));
                }
            }
        }
        Ok(())
    }
}

/// Li Figure 5. Inner ring position q holds partition s_{q mod S}.d_{q / S};
/// outer ring position o is thread o (socket-major); at step k thread o
/// reads inner position (o + k) mod N.
fn ring_orders(layout: Layout) -> Vec<Vec<usize>> {
    let (n, s, p) = (layout.threads(), layout.sockets, layout.threads_per_socket);
    let inner = |q: usize| (q % s) * p + q / s;
    (0..n)
        .map(|o| (0..n).map(|k| inner((o + k) % n)).collect())
        .collect()
}

/// A random Latin square: rows and columns of the cyclic square permuted
/// with a seeded generator, so each step is a permutation of producers.
fn random_orders(n: usize, seed: u64) -> Vec<Vec<usize>> {
    let mut rng = SplitMix64(seed ^ 0x9e37_79b9_7f4a_7c15);
    let rows = rng.permutation(n);
    let cols = rng.permutation(n);
    let symbols = rng.permutation(n);
    (0..n)
        .map(|c| (0..n).map(|k| symbols[(rows[c] + cols[k]) % n]).collect())
        .collect()
}

/// A small, well-known generator: enough for schedules, not for secrets.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn permutation(&mut self, n: usize) -> Vec<usize> {
        let mut v: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            let j = (self.next() % (i as u64 + 1)) as usize;
            v.swap(i, j);
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::{any, prop_assert, prop_assert_eq, proptest};

    #[test]
    fn ring_matches_li_figure_5() {
        // 2 sockets x 2 threads: inner ring s0.d0, s1.d0, s0.d1, s1.d1 = producers 0, 2, 1, 3.
        let s = Schedule::build(Layout::new(2, 2), Strategy::Ring, 0);
        let order: Vec<usize> = (0..4).map(|k| s.access(k, 0).producer).collect();
        assert_eq!(order, vec![0, 2, 1, 3]);
        let step0: Vec<usize> = (0..4).map(|c| s.access(0, c).producer).collect();
        assert_eq!(
            step0,
            vec![0, 2, 1, 3],
            "thread o starts at inner position o"
        );
        let naive = Schedule::build(Layout::new(2, 2), Strategy::Naive, 0);
        assert!((0..4).all(|c| naive.access(1, c).producer == 1));
        assert_eq!(naive.readers_per_producer(1), vec![0, 4, 0, 0]);
    }

    #[test]
    fn migration_reads_locally() {
        let s = Schedule::build(Layout::new(4, 3), Strategy::MigrationCopy, 0);
        for step in 0..s.len() {
            assert!(s.link_loads(step).is_empty());
            for c in 0..12 {
                let a = s.access(step, c);
                assert_eq!(a.run_on, s.layout.socket_of(a.producer));
            }
        }
    }

    #[test]
    fn names_parse() {
        for k in Strategy::ALL {
            assert_eq!(k.name().parse::<Strategy>().unwrap(), k);
        }
        assert!("zigzag".parse::<Strategy>().unwrap_err().contains("ring"));
        assert_eq!("loose".parse::<SyncMode>().unwrap(), SyncMode::Loose);
    }

    proptest! {
        #[test]
        fn every_schedule_visits_each_pair_once(sockets in 1usize..9, per in 1usize..9, seed in any::<u64>()) {
            for k in Strategy::ALL {
                let s = Schedule::build(Layout::new(sockets, per), k, seed);
                prop_assert_eq!(s.validate(), Ok(()));
            }
        }

        #[test]
        fn ring_meets_the_link_lower_bound(sockets in 1usize..9, per in 1usize..17) {
            let s = Schedule::build(Layout::new(sockets, per), Strategy::Ring, 0);
            let bound = per.div_ceil(sockets);
            for step in 0..s.len() {
                for (&(from, to), &load) in &s.link_loads(step) {
                    prop_assert!(load <= bound, "step {} link {}->{} carries {} > ceil(P/S) = {}", step, from, to, load, bound);
                }
                prop_assert!(s.readers_per_producer(step).iter().all(|&r| r == 1));
            }
        }

        #[test]
        fn random_and_ring_read_each_partition_once_per_step(sockets in 1usize..6, per in 1usize..6, seed in any::<u64>()) {
            let s = Schedule::build(Layout::new(sockets, per), Strategy::Random, seed);
            for step in 0..s.len() {
                prop_assert!(s.readers_per_producer(step).iter().all(|&r| r == 1));
            }
        }
    }
}
