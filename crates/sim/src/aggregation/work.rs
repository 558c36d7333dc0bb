//! What each consumer moves at each step of a partitioned aggregation, in
//! bytes: its piece of the producer's partition, the hash-table lines its
//! updates miss in the cache, and (migration & copy) its table. The
//! engine ([`super::engine`]) turns bytes into time.
//!
//! The hash-table model, and where each piece comes from:
//!
//! * A row and a group take 16 bytes (Li §4.3: "the size of both the key
//!   and the value is 8 bytes"); the table is its groups, unpadded (Li
//!   counts 32K keys per partition as about an L2's worth).
//! * Keys are uniform over the partition's `K` keys: after `n` rows the
//!   table holds `K (1 - e^(-n/K))` groups, and a step's `r` updates touch
//!   `lines (1 - e^(-r/lines))` distinct lines.
//! * A thread keeps what fits of its table in its cache: the largest, over
//!   the preset's data caches, of the cache's size over the consumer
//!   threads sharing it. Beyond it, an update misses with probability
//!   `1 - cache/table` (uniform keys over a table the cache holds part of).
//! * A cache that has not seen the table since the thread arrived is cold:
//!   every line's first touch misses too (Li §4.3: after a migration "the
//!   first memory request to each thread's aggregation state will cause a
//!   cache miss and a resulting remote memory access"). The line is taken
//!   from the table's home memory, not from the cache of the socket the
//!   thread left.
//! * A miss moves one line from the table's memory, at the rate a thread
//!   streams lines (the calibrated per-thread cap, i.e. a fixed number of
//!   lines in flight), and writes one dirty line back there.
//! * An update that hits costs nothing: Li §4.3 finds that with small
//!   tables the methods differ as their reads did in Figure 6, and gives
//!   no cost for the arithmetic.
//!
//! It does not model the hash function, probing, table resizing, TLB
//! misses, prefetching of table lines, or the cost of moving a thread.

use numakit_shuffle::{Schedule, Strategy};
use numakit_topology::{CacheKind, Topology};

use super::engine::{Kind, Task, Transfer};
use crate::machine::Machine;

/// Bytes of one row and of one group (Li §4.3: 8-byte key, 8-byte value).
pub const ROW_BYTES: f64 = 16.0;

/// Line size when the topology does not say.
const DEFAULT_LINE_BYTES: f64 = 64.0;

/// Groups after `rows` uniform rows over `keys` keys.
pub(super) fn distinct_groups(keys: f64, rows: f64) -> f64 {
    if keys <= 0.0 {
        return 0.0;
    }
    -keys * (-rows / keys).exp_m1()
}

/// Distinct lines touched by `updates` uniform updates over `lines` lines.
fn touched_lines(lines: f64, updates: f64) -> f64 {
    distinct_groups(lines, updates)
}

/// Expected misses of `updates` uniform updates on a table of `lines`
/// lines with `cache` lines of room, cold (nothing cached yet) or warm
/// (whatever fits is cached).
pub(super) fn misses(lines: f64, cache: f64, updates: f64, cold: bool) -> f64 {
    if lines <= 0.0 || updates <= 0.0 {
        return 0.0;
    }
    let kept = (cache / lines).min(1.0);
    let first_touch = if cold {
        kept * touched_lines(lines, updates)
    } else {
        0.0
    };
    updates * (1.0 - kept) + first_touch
}

/// The cache room of one consumer thread, when `per_socket` consumers run
/// on each socket: the largest data or unified cache's share (its size
/// over the consumers that share it), and the line size.
pub(super) fn cache_per_thread(
    topo: &Topology,
    machine: &Machine,
    per_socket: usize,
) -> (f64, f64) {
    let mut best = 0.0f64;
    let mut line = DEFAULT_LINE_BYTES;
    for s in 0..machine.socket_count() {
        let id = machine.socket(s).id;
        let Some(node) = topo.nodes.iter().find(|n| n.id == id) else {
            continue;
        };
        let hw = node.cpus.len().max(1);
        let mut room = 0.0f64;
        for cache in topo
            .caches
            .iter()
            .filter(|c| c.kind != CacheKind::Instruction)
        {
            let mine = cache.cpus.intersection(&node.cpus).len();
            if mine == 0 {
                continue;
            }
            let sharers = (per_socket * mine).div_ceil(hw).max(1);
            room = room.max(cache.size_bytes as f64 / sharers as f64);
            if let Some(l) = cache.line_bytes {
                line = f64::from(l);
            }
        }
        best = if s == 0 { room } else { best.min(room) };
    }
    (best, line)
}

/// The sizes a run needs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Sizes {
    /// Rows aggregated in all.
    pub rows: f64,
    /// Distinct keys of each partition (one partition per consumer).
    pub keys: f64,
    /// Cache room of one thread, in bytes.
    pub cache_bytes: f64,
    pub line_bytes: f64,
}

/// The work of every consumer at every step of `schedule`: ring or naive
/// for shuffling, migration or migration-copy.
pub(super) fn build(schedule: &Schedule, sizes: &Sizes) -> Vec<Vec<Task>> {
    let n = schedule.layout.threads();
    let piece_rows = sizes.rows / (n * n) as f64;
    let mut at: Vec<usize> = (0..n).map(|c| schedule.layout.socket_of(c)).collect();
    schedule
        .steps
        .iter()
        .enumerate()
        .map(|(k, step)| {
            let before = distinct_groups(sizes.keys, k as f64 * piece_rows);
            let after = distinct_groups(sizes.keys, (k + 1) as f64 * piece_rows);
            step.iter()
                .enumerate()
                .map(|(c, access)| {
                    let from = std::mem::replace(&mut at[c], access.run_on);
                    let table = Table {
                        home: schedule.layout.socket_of(c),
                        groups_before: before,
                        groups_after: after,
                    };
                    let step = Step {
                        first: k == 0,
                        from,
                        run_on: access.run_on,
                        producer_socket: schedule.layout.socket_of(access.producer),
                        piece_rows,
                    };
                    task(schedule.strategy, &table, &step, sizes)
                })
                .collect()
        })
        .collect()
}

/// A consumer's table around one step.
struct Table {
    home: usize,
    groups_before: f64,
    groups_after: f64,
}

/// Where one consumer is at one step.
struct Step {
    first: bool,
    /// The socket it ran on in the previous step (its home at step 0).
    from: usize,
    run_on: usize,
    producer_socket: usize,
    piece_rows: f64,
}

/// Copy (migration & copy, when it moves), read, then the missed lines.
fn task(strategy: Strategy, table: &Table, step: &Step, sizes: &Sizes) -> Task {
    let moved = step.from != step.run_on;
    let (table_socket, cold, copy) = match strategy {
        // The table stays home; a new socket's cache has not seen it.
        Strategy::Migration => (table.home, step.first || moved, 0.0),
        // The thread copies the table along, through its cache.
        Strategy::MigrationCopy => {
            let copy = if moved {
                table.groups_before * ROW_BYTES
            } else {
                0.0
            };
            (step.run_on, step.first, copy)
        }
        // Shuffling: the thread and its table stay home.
        Strategy::Naive | Strategy::Ring | Strategy::Random => (table.home, step.first, 0.0),
    };
    let lines = table.groups_after * ROW_BYTES / sizes.line_bytes;
    let cache_lines = sizes.cache_bytes / sizes.line_bytes;
    let missed = misses(lines, cache_lines, step.piece_rows, cold);
    let transfer = |kind, from, bytes| Transfer { kind, from, bytes };
    Task {
        run_on: step.run_on,
        transfers: vec![
            transfer(Kind::Copy, step.from, copy),
            transfer(
                Kind::Read,
                step.producer_socket,
                step.piece_rows * ROW_BYTES,
            ),
            transfer(Kind::Update, table_socket, missed * sizes.line_bytes),
        ],
    }
}
