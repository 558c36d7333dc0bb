//! The three methods of Li §4.3, driven by the shuffle's exchange: every
//! worker splits its chunk by owner (one part per worker), then consumer c
//! visits every producer in schedule order and aggregates piece c of its
//! split into c's table, which holds all of c's groups.
//!
//! - [`Strategy::Ring`]: shuffling. The consumer stays home and reads the
//!   pieces across the interconnect in the coordinated ring order (tight).
//! - [`Strategy::Naive`]: shuffling in the naive order (every consumer
//!   reads producer 0's piece first, then 1's, ...), Li's baseline.
//! - [`Strategy::Migration`]: the consumer moves to the producer's node;
//!   its table stays home (see `migration.rs`).
//! - [`Strategy::MigrationCopy`]: the consumer moves and copies its table
//!   along.
//!
//! On one node the three do the same work. This module does not choose
//! between them (`choose.rs`) and keeps a consumer's whole state in one
//! table, as the paper does; [`super::partitioned`] is the variant whose
//! state stays cache-sized.

use numakit_pool::Pool;
use numakit_shuffle::{exchange, Exchange, Strategy, SyncMode};

use crate::aggregate::migration::Consumer;
use crate::aggregate::split::{by_hash, split_chunks};
use crate::aggregate::table::GroupTable;
use crate::aggregate::{ExchangeBreakdown, Group, StateMoves};
use crate::error::Result;
use crate::par::per_worker_mut;
use crate::relation::Relation;
use crate::timing::PhaseTimer;

/// Runs the exchange-driven aggregation with `strategy`; `expected_groups`
/// sizes the tables.
pub fn run(
    pool: &Pool,
    input: &Relation,
    strategy: Strategy,
    expected_groups: u64,
    timer: &mut PhaseTimer<'_>,
) -> Result<(Vec<Vec<Group>>, StateMoves, ExchangeBreakdown)> {
    let workers = pool.workers();
    timer.start("split by owner");
    let splits = split_chunks(pool, input, workers, by_hash(workers))?;
    let expected = usize::try_from(expected_groups)
        .unwrap_or(usize::MAX)
        .min(input.len());
    let carry = strategy == Strategy::MigrationCopy;
    let states = pool.broadcast(|ctx| -> Result<Consumer<'_>> {
        let table = GroupTable::with_capacity(pool, ctx.node, expected / workers)?;
        Ok(Consumer::new(table, carry))
    })?;
    let states = states.into_iter().collect::<Result<Vec<_>>>()?;
    timer.start("exchange");
    let ex = Exchange::new(strategy, SyncMode::Tight);
    let started = std::time::Instant::now();
    let (states, report) = exchange(pool, &ex, states, |ctx, state, visit| {
        state.visit(ctx.index, &splits[visit.producer], visit);
    })?;
    let exchange_seconds = started.elapsed().as_secs_f64();
    let mut states = states
        .into_iter()
        .map(Consumer::finish)
        .collect::<Result<Vec<_>>>()?;
    timer.start("emit");
    let groups = per_worker_mut(pool, &mut states, |_, state| {
        state.table.groups().collect::<Vec<_>>()
    })?;
    let moves = StateMoves {
        copies: states.iter().map(|s| s.copies).sum(),
        copied_bytes: states.iter().map(|s| s.copied_bytes).sum(),
        visits: (workers * workers) as u64,
        local_state_visits: states.iter().map(|s| s.local_state_visits).sum(),
        misplaced_visits: report.misplaced_visits,
    };
    let sum = |f: fn(&Consumer<'_>) -> std::time::Duration| -> f64 {
        states.iter().map(|s| f(s).as_secs_f64()).sum()
    };
    let (copy, read, update) = (
        sum(|s| s.times.copy),
        sum(|s| s.times.read),
        sum(|s| s.times.update),
    );
    let breakdown = ExchangeBreakdown {
        copy_seconds: copy,
        read_seconds: read,
        update_seconds: update,
        wait_seconds: (exchange_seconds * workers as f64 - copy - read - update).max(0.0),
    };
    Ok((groups, moves, breakdown))
}
