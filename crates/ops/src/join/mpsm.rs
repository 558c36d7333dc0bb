//! The massively parallel sort-merge join, P-MPSM (Albutiu, Kemper and
//! Neumann, VLDB 2012; Li et al. §4.2).
//!
//! Phases:
//! 1. "sort S runs": every worker sorts a copy of its own chunk of the
//!    public input S into a local run (no exchange at all for S);
//! 2. "partition R": splitters from a sample of R's keys give worker i the
//!    key range i, and every worker scatters its chunk of the private
//!    input R into the ranges' buffers (range i on worker i's node);
//! 3. "sort R": every worker sorts its range into its private run;
//! 4. "merge join": worker i merge-joins its private run with the part of
//!    every S run that overlaps its key range (found by binary search),
//!    visiting the S runs in the order of the shuffle's coordinated ring
//!    ([`mod@numakit_shuffle::exchange`]), so that at every step each node's
//!    memory is read by one consumer group instead of all piling on one
//!    (or in the schedule [`JoinOptions::merge_exchange`] names: Li Figure
//!    8 compares the naive order with the ring, tight and loose);
//! 5. "left-outer scan" (left outer, semi, anti): each worker emits the
//!    tuples of its private run by the matched flags its merges set.
//!
//! This module orchestrates; sorting is the sort module's radix sort
//! ([`crate::sort::lsd`]), the range split is `range_split.rs` and the
//! merge kernel `merge.rs`.

use numakit_pool::Pool;
use numakit_shuffle::{exchange, Visit};

use crate::error::{OpsError, Result};
use crate::join::merge::merge_join;
use crate::join::range_split::{self, RangeSplit};
use crate::join::sink::{finish_within, RowBudget, Sink};
use crate::join::{JoinKind, JoinOptions, JoinResult};
use crate::par::per_worker_mut;
use crate::relation::{Chunk, Relation};
use crate::sort::lsd::radix_sort_into;
use crate::sort::sort_local;
use crate::timing::{PhaseTimer, Progress};
use crate::tuple::Tuple;

/// Joins `left` (R, the private input) with `right` (S, the public input).
pub fn join(
    pool: &Pool,
    left: &Relation,
    right: &Relation,
    opts: &JoinOptions,
    progress: &dyn Progress,
) -> Result<JoinResult> {
    left.check_pool(pool)?;
    right.check_pool(pool)?;
    let mut timer = PhaseTimer::new(progress);
    timer.start("sort S runs");
    let s_runs = sorted_copies(pool, right)?;
    timer.start("partition R");
    let split = RangeSplit::from_sample(left, pool.workers());
    let mut r_runs = range_split::partition(pool, left, &split)?;
    timer.start("sort R");
    per_worker_mut(pool, &mut r_runs, |_, run| sort_local(&mut run.tuples))?;
    timer.start("merge join");
    let budget = RowBudget::for_join(opts);
    let mut states = merge_all(pool, &r_runs, &s_runs, opts, &budget)?;
    if opts.kind != JoinKind::Inner {
        timer.start("left-outer scan");
        let keep_matched = opts.kind == JoinKind::Semi;
        per_worker_mut(pool, &mut states, |ctx, state| {
            let run = &r_runs[ctx.index].tuples;
            for (t, &matched) in run.iter().zip(&state.matched) {
                if matched == keep_matched {
                    state.sink.emit(t.key, t.payload, None);
                }
            }
        })?;
    }
    let sinks = states.into_iter().map(|s| s.sink).collect();
    finish_within(sinks, timer.finish(), &budget)
}

/// Each worker's sorted copy of its own chunk of `input`. The radix sort
/// reads the chunk in its first pass, so no separate copy pass is needed.
fn sorted_copies(pool: &Pool, input: &Relation) -> Result<Vec<Chunk>> {
    let mut runs = input
        .chunks()
        .iter()
        .map(|c| Chunk::alloc(pool, c.worker, c.node, c.tuples.len()))
        .collect::<Result<Vec<_>>>()?;
    let sorted = per_worker_mut(pool, &mut runs, |ctx, run| {
        let chunk = &input.chunks()[ctx.index];
        let mut scratch = Chunk::alloc(pool, ctx.index, ctx.node, chunk.tuples.len())?;
        radix_sort_into(&chunk.tuples, &mut run.tuples, &mut scratch.tuples);
        Ok::<(), OpsError>(())
    })?;
    sorted.into_iter().collect::<Result<()>>()?;
    Ok(runs)
}

/// A worker's merge state: its sink and, for the kinds that need them,
/// one matched flag per tuple of its private run.
struct MergeState {
    sink: Sink,
    matched: Vec<bool>,
}

/// Merges every private run with every S run, in ring order.
fn merge_all(
    pool: &Pool,
    r_runs: &[Chunk],
    s_runs: &[Chunk],
    opts: &JoinOptions,
    budget: &RowBudget,
) -> Result<Vec<MergeState>> {
    let states = r_runs
        .iter()
        .map(|run| MergeState {
            sink: Sink::with_budget(opts.output, budget.clone()),
            matched: match opts.kind {
                JoinKind::Inner => Vec::new(),
                _ => vec![false; run.tuples.len()],
            },
        })
        .collect();
    let visit = |ctx: &numakit_pool::WorkerContext, state: &mut MergeState, v: Visit| {
        let private = &r_runs[ctx.index].tuples;
        let public = overlap(&s_runs[v.producer].tuples, private);
        merge_join(
            private,
            public,
            opts.kind,
            &mut state.matched,
            &mut state.sink,
        );
    };
    let (states, report) = exchange(pool, &opts.merge_exchange, states, visit)?;
    if report.misplaced_visits > 0 {
        log::debug!(
            "mpsm merge: {} visits ran off their node",
            report.misplaced_visits
        );
    }
    Ok(states)
}

/// The part of the sorted run `public` whose keys lie within the key
/// range of the sorted run `private` (empty when `private` is).
fn overlap<'a>(public: &'a [Tuple], private: &[Tuple]) -> &'a [Tuple] {
    let (Some(first), Some(last)) = (private.first(), private.last()) else {
        return &[];
    };
    let start = public.partition_point(|t| t.key < first.key);
    let end = public.partition_point(|t| t.key <= last.key);
    &public[start..end.max(start)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::join::test_cases::{check_algorithm, check_random};
    use crate::join::{JoinAlgorithm, JoinOutput};
    use crate::testing::pool;

    #[test]
    fn mpsm_matches_the_reference_on_adversarial_data() {
        check_algorithm(JoinAlgorithm::Mpsm);
    }

    #[test]
    fn mpsm_matches_the_reference_on_random_data() {
        check_random(JoinAlgorithm::Mpsm, 48);
    }

    #[test]
    fn overlap_finds_the_private_key_range() {
        let public: Vec<Tuple> = [1, 2, 2, 4, 6, 6, 9].map(|k| Tuple::new(k, 0)).to_vec();
        let private: Vec<Tuple> = [2, 5, 6].map(|k| Tuple::new(k, 0)).to_vec();
        let keys: Vec<u64> = overlap(&public, &private).iter().map(|t| t.key).collect();
        assert_eq!(keys, [2, 2, 4, 6, 6]);
        assert!(overlap(&public, &[]).is_empty());
    }

    #[test]
    fn mpsm_reports_its_phases() {
        let pool = pool(2);
        let r = Relation::from_fn(&pool, 100, |i| Tuple::new(i as u64, 0)).unwrap();
        let opts = JoinOptions {
            algorithm: JoinAlgorithm::Mpsm,
            kind: JoinKind::Semi,
            output: JoinOutput::Count,
            row_limit: None,
            merge_exchange: crate::join::RING_MERGE,
        };
        let result = join(&pool, &r, &r, &opts, &crate::timing::Silent).unwrap();
        assert_eq!(result.rows, 100);
        let names: Vec<_> = result.phases.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "sort S runs",
                "partition R",
                "sort R",
                "merge join",
                "left-outer scan"
            ]
        );
    }

    /// Li Figure 8's comparison: the merge exchange changes the order of
    /// the visits, never the result (every schedule, tight and loose, and
    /// every kind).
    #[test]
    fn every_merge_exchange_gives_the_same_result() {
        use numakit_shuffle::{Exchange, Strategy, SyncMode};
        let pool = pool(2);
        let r = Relation::from_fn(&pool, 5_000, |i| {
            Tuple::new(crate::datagen::splitmix64(i as u64) % 3_000, i as u64)
        })
        .unwrap();
        let s = Relation::from_fn(&pool, 20_000, |i| {
            Tuple::new(crate::datagen::splitmix64(!(i as u64)) % 4_000, i as u64)
        })
        .unwrap();
        for kind in [JoinKind::Inner, JoinKind::LeftOuter, JoinKind::Anti] {
            let run = |merge_exchange| {
                let opts = JoinOptions {
                    algorithm: JoinAlgorithm::Mpsm,
                    kind,
                    output: JoinOutput::Checksum,
                    row_limit: None,
                    merge_exchange,
                };
                let r = join(&pool, &r, &s, &opts, &crate::timing::Silent).unwrap();
                (r.rows, r.checksum)
            };
            let ring = run(crate::join::RING_MERGE);
            assert!(ring.0 > 0, "{kind:?}");
            for strategy in Strategy::ALL {
                for sync in [SyncMode::Tight, SyncMode::Loose] {
                    let got = run(Exchange::new(strategy, sync));
                    assert_eq!(got, ring, "{kind:?} {strategy:?} {sync:?}");
                }
            }
        }
    }
}
