//! The radix joins PRO and CPRL (Balkesen et al.; the lecture's v1 and v2).
//!
//! Both partition R and S by the same top hash bits so that only
//! co-partitions can match, then join every pair (R_p, S_p) with a
//! cache-sized bucket table (`bucket_table`). They differ in pass 1
//! ([`crate::partition::Variant`]): PRO scatters into each partition's
//! home node (one contiguous local piece per partition), CPRL partitions
//! node-locally without any histogram (a partition is a few blocks per
//! worker, the remote ones read by the join task as large sequential
//! reads).
//!
//! The number of bits comes from the build side: a partition of R (and
//! its table) should fit the L2 ([`RadixConfig::target_partition_bytes`]);
//! more bits than one pass handles well add a second pass, fused into the
//! join task (sub-partition R_p and S_p into the worker's reusable
//! scratch, then join the sub-pairs while they are in cache).
//!
//! Join tasks are queued at the partition's home node (`spawn_on`), so
//! workers take local partitions first and steal remote ones only when
//! their node runs dry (a naive single queue makes most threads read
//! remote memory); larger partitions go first. Every worker has its own
//! [`Sink`] and table, so results and scratch are never shared. A pair
//! whose probe side is far above its share (skew: one key holding much
//! of S) gets one table and several probe tasks, so that one hot key does
//! not leave the other workers idle.
//!
//! This module plans and schedules the join; partitioning is
//! [`crate::partition`]'s, the per-partition kernel `bucket_table`'s.

mod bucket_table;

use std::sync::{Mutex, PoisonError};

use crossbeam_utils::CachePadded;
use numakit_pool::Pool;

use crate::error::{OpsError, Result};
use crate::join::sink::{self, RowBudget, Sink};
use crate::join::{JoinAlgorithm, JoinKind, JoinOptions, JoinResult};
use crate::partition::swwcb::AlignedTuples;
use crate::partition::{
    partition_relation, plan_passes, subpartition, Partitioned, PassPlan, Radix, Variant,
    MAX_BITS_PER_PASS,
};
use crate::relation::Relation;
use crate::timing::{PhaseTimer, Progress};

use bucket_table::BucketTable;

/// Tuning of the radix joins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RadixConfig {
    /// Bytes of R per partition to aim for (the table adds about half as
    /// much again); should fit the L2 with room to spare.
    pub target_partition_bytes: u64,
    /// Most radix bits in one pass ([`MAX_BITS_PER_PASS`]).
    pub max_bits_per_pass: u32,
    /// Partitions per worker at least (load balance; skew), when S is
    /// large enough to be worth it.
    pub min_partitions_per_worker: usize,
}

impl Default for RadixConfig {
    fn default() -> Self {
        Self {
            target_partition_bytes: 256 << 10,
            max_bits_per_pass: MAX_BITS_PER_PASS,
            min_partitions_per_worker: 8,
        }
    }
}

/// Joins `left` (R, build side) with `right` (S, probe side) with the
/// radix join `opts.algorithm` names (`RadixPro` or `RadixCprl`).
pub fn join(
    pool: &Pool,
    left: &Relation,
    right: &Relation,
    opts: &JoinOptions,
    progress: &dyn Progress,
) -> Result<JoinResult> {
    join_with(pool, left, right, opts, &RadixConfig::default(), progress)
}

/// [`join`] with explicit tuning.
pub fn join_with(
    pool: &Pool,
    left: &Relation,
    right: &Relation,
    opts: &JoinOptions,
    config: &RadixConfig,
    progress: &dyn Progress,
) -> Result<JoinResult> {
    left.check_pool(pool)?;
    right.check_pool(pool)?;
    let variant = match opts.algorithm {
        JoinAlgorithm::RadixPro => Variant::Pro,
        JoinAlgorithm::RadixCprl => Variant::Cprl,
        other => {
            return Err(OpsError::InvalidArgument(format!(
                "{} is not a radix join",
                other.name()
            )))
        }
    };
    let plan = plan_for(pool, left, right, config)?;
    let pass1 = PassPlan::one(plan.first_bits);
    let mut timer = PhaseTimer::new(progress);
    timer.start("partition R");
    let r = partition_relation(pool, left, pass1, variant)?;
    timer.start("partition S");
    let s = partition_relation(pool, right, pass1, variant)?;
    timer.start("build+probe");
    let second = match plan.second_bits {
        0 => None,
        bits => Some(Radix::new(plan.first_bits, bits)?),
    };
    let budget = RowBudget::for_join(opts);
    let sinks = join_partitions(pool, &r, &s, opts, second, &budget)?;
    drop((r, s));
    sink::finish_within(sinks, timer.finish(), &budget)
}

/// The pass plan: R's partitions fit the target, and there are enough
/// partitions to keep every worker busy when S is large.
fn plan_for(
    pool: &Pool,
    left: &Relation,
    right: &Relation,
    config: &RadixConfig,
) -> Result<PassPlan> {
    let mut plan = plan_passes(
        left.bytes(),
        config.target_partition_bytes,
        config.max_bits_per_pass,
    )?;
    let wanted = (pool.workers() * config.min_partitions_per_worker).max(1);
    let min_bits = (wanted.next_power_of_two().trailing_zeros()).min(config.max_bits_per_pass);
    if right.len() >= 1 << 16 && plan.first_bits < min_bits {
        plan.first_bits = min_bits;
    }
    Ok(plan)
}

/// One worker's join state, reused across its tasks.
struct WorkerState {
    sink: Sink,
    table: BucketTable,
    r_scratch: AlignedTuples,
    s_scratch: AlignedTuples,
}

/// What every join task of one join shares.
struct JoinContext<'a> {
    pool: &'a Pool,
    states: Vec<CachePadded<Mutex<WorkerState>>>,
    r: &'a Partitioned,
    s: &'a Partitioned,
    kind: JoinKind,
    second: Option<Radix>,
    /// Probe sides longer than this are split over several tasks.
    heavy_above: usize,
    /// The first failure of a task's own nested tasks.
    failure: Mutex<Option<OpsError>>,
}

impl JoinContext<'_> {
    fn state(&self, worker: usize) -> std::sync::MutexGuard<'_, WorkerState> {
        self.states[worker]
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// Joins every co-partition pair as a task on its home node, largest
/// first; pairs whose probe side is far above its fair share (skew) get
/// their probe side split over several tasks ([`join_heavy`]).
fn join_partitions(
    pool: &Pool,
    r: &Partitioned,
    s: &Partitioned,
    opts: &JoinOptions,
    second: Option<Radix>,
    budget: &RowBudget,
) -> Result<Vec<Sink>> {
    let cx = JoinContext {
        pool,
        states: (0..pool.workers())
            .map(|_| {
                CachePadded::new(Mutex::new(WorkerState {
                    sink: Sink::with_budget(opts.output, budget.clone()),
                    table: BucketTable::new(),
                    r_scratch: AlignedTuples::new(),
                    s_scratch: AlignedTuples::new(),
                }))
            })
            .collect(),
        r,
        s,
        kind: opts.kind,
        second,
        // Four times a worker's fair share of S, and at least 64K rows
        // (below that one task is quick anyway).
        heavy_above: (s.len() / (4 * pool.workers().max(1))).max(1 << 16),
        failure: Mutex::new(None),
    };
    let keeps_unmatched = matches!(cx.kind, JoinKind::LeftOuter | JoinKind::Anti);
    let mut tasks: Vec<usize> = (0..r.fanout())
        .filter(|&p| r.partition_len(p) > 0 && (keeps_unmatched || s.partition_len(p) > 0))
        .collect();
    tasks.sort_by_key(|&p| std::cmp::Reverse(r.partition_len(p) + s.partition_len(p)));
    pool.scope(|scope| -> Result<()> {
        for p in tasks {
            let cx = &cx;
            scope.spawn_on(r.home(p), move |ctx| join_task(cx, ctx.index, p))?;
        }
        Ok(())
    })??;
    if let Some(e) = cx
        .failure
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner)
    {
        return Err(e);
    }
    Ok(cx
        .states
        .into_iter()
        .map(|m| {
            CachePadded::into_inner(m)
                .into_inner()
                .unwrap_or_else(PoisonError::into_inner)
                .sink
        })
        .collect())
}

/// The task of pair p, run by `worker`.
fn join_task(cx: &JoinContext<'_>, worker: usize, p: usize) {
    let (r, s, kind) = (cx.r, cx.s, cx.kind);
    if s.partition_len(p) > cx.heavy_above {
        return join_heavy(cx, worker, p);
    }
    let mut state = cx.state(worker);
    match cx.second {
        None => join_one(&mut state, r, s, p, kind),
        Some(radix) => join_two_pass(&mut state, r, s, p, kind, radix),
    }
}

/// A skewed pair: one table over R_p, shared (read-only but for the
/// atomic match marks) by probe tasks of a slice of S_p each, queued
/// where their rows live; then the unmatched (or matched) rows of R_p are
/// emitted. The task holds no worker state while it waits, so the worker
/// may run probe tasks itself meanwhile.
fn join_heavy(cx: &JoinContext<'_>, worker: usize, p: usize) {
    let mut table = BucketTable::new();
    table.build(cx.r.slices(p));
    let table = &table;
    let chunk = (cx.heavy_above / 2).max(1);
    let probed = cx.pool.scope(|scope| -> Result<()> {
        for piece in cx.s.pieces(p) {
            for rows in piece.data.chunks(chunk) {
                scope.spawn_on(piece.node, move |ctx| {
                    table.probe(rows, cx.kind, &mut cx.state(ctx.index).sink);
                })?;
            }
        }
        Ok(())
    });
    if let Err(e) = probed.map_err(OpsError::from).and_then(|inner| inner) {
        let mut failure = cx.failure.lock().unwrap_or_else(PoisonError::into_inner);
        failure.get_or_insert(e);
        return;
    }
    table.emit_unprobed(cx.kind, &mut cx.state(worker).sink);
}

/// Builds on R_p, probes with S_p.
fn join_one(state: &mut WorkerState, r: &Partitioned, s: &Partitioned, p: usize, kind: JoinKind) {
    let WorkerState { sink, table, .. } = state;
    table.build(r.slices(p));
    for piece in s.slices(p) {
        table.probe(piece, kind, sink);
    }
    table.emit_unprobed(kind, sink);
}

/// Partitions R_p and S_p again by `radix` into the worker's scratch,
/// then joins every sub-pair.
fn join_two_pass(
    state: &mut WorkerState,
    r: &Partitioned,
    s: &Partitioned,
    p: usize,
    kind: JoinKind,
    radix: Radix,
) {
    let WorkerState {
        sink,
        table,
        r_scratch,
        s_scratch,
    } = state;
    let (r_len, s_len) = (r.partition_len(p), s.partition_len(p));
    let r_bounds = subpartition(r.slices(p), radix, r_scratch.get_mut(r_len));
    let s_bounds = subpartition(s.slices(p), radix, s_scratch.get_mut(s_len));
    let (r_rows, s_rows) = (r_scratch.get(r_len), s_scratch.get(s_len));
    for q in 0..radix.fanout() {
        let build = &r_rows[r_bounds[q]..r_bounds[q + 1]];
        if build.is_empty() {
            continue;
        }
        table.build(std::iter::once(build));
        table.probe(&s_rows[s_bounds[q]..s_bounds[q + 1]], kind, sink);
        table.emit_unprobed(kind, sink);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::join::test_cases::{adversarial_cases, check_algorithm, check_random};
    use crate::join::{JoinOutput, JoinRow};
    use crate::reference;
    use crate::testing::pool;
    use crate::timing::Silent;
    use crate::Tuple;

    #[test]
    fn pro_matches_the_reference() {
        check_algorithm(JoinAlgorithm::RadixPro);
    }

    #[test]
    fn cprl_matches_the_reference() {
        check_algorithm(JoinAlgorithm::RadixCprl);
    }

    #[test]
    fn random_inputs_match_the_reference() {
        check_random(JoinAlgorithm::RadixPro, 24);
        check_random(JoinAlgorithm::RadixCprl, 24);
    }

    /// A tiny partition target and at most 3 bits per pass force two
    /// passes on all but the smallest inputs.
    #[test]
    fn two_passes_match_the_reference() {
        let forced = RadixConfig {
            target_partition_bytes: 64,
            max_bits_per_pass: 3,
            min_partitions_per_worker: 1,
        };
        for threads in [1, 2] {
            let pool = pool(threads);
            for case in adversarial_cases(&pool) {
                let l = Relation::from_tuples(&pool, &case.left).unwrap();
                let r = Relation::from_tuples(&pool, &case.right).unwrap();
                let plan = plan_for(&pool, &l, &r, &forced).unwrap();
                assert!(case.left.len() < 200 || plan.passes() == 2, "{}", case.name);
                for algorithm in [JoinAlgorithm::RadixPro, JoinAlgorithm::RadixCprl] {
                    for kind in [
                        JoinKind::Inner,
                        JoinKind::LeftOuter,
                        JoinKind::Semi,
                        JoinKind::Anti,
                    ] {
                        let opts = JoinOptions {
                            algorithm,
                            kind,
                            output: JoinOutput::Materialize,
                            row_limit: None,
                            merge_exchange: crate::join::RING_MERGE,
                        };
                        let got = join_with(&pool, &l, &r, &opts, &forced, &Silent).unwrap();
                        let mut rows: Vec<JoinRow> = got.materialized.concat();
                        rows.sort_unstable();
                        let expected = reference::join(&case.left, &case.right, kind);
                        assert!(rows == expected, "{}: {algorithm:?} {kind:?}", case.name);
                    }
                }
            }
        }
    }

    /// One key holds most of S: its partition's probe side is split over
    /// several tasks sharing one table (match marks included).
    #[test]
    fn skewed_probe_sides_are_split_and_stay_correct() {
        let left: Vec<Tuple> = [7u64, 7, 7, 8, 9, 0, u64::MAX]
            .iter()
            .enumerate()
            .map(|(i, &k)| Tuple::new(k, i as u64))
            .collect();
        let right: Vec<Tuple> = (0..200_000u64)
            .map(|i| Tuple::new(if i % 4 == 0 { i % 20 } else { 7 }, i))
            .collect();
        for threads in [1, 2] {
            let pool = pool(threads);
            let (l, r) = (
                Relation::from_tuples(&pool, &left).unwrap(),
                Relation::from_tuples(&pool, &right).unwrap(),
            );
            for algorithm in [JoinAlgorithm::RadixPro, JoinAlgorithm::RadixCprl] {
                for kind in [
                    JoinKind::Inner,
                    JoinKind::LeftOuter,
                    JoinKind::Semi,
                    JoinKind::Anti,
                ] {
                    let expected = reference::join(&left, &right, kind);
                    for output in [JoinOutput::Materialize, JoinOutput::Count] {
                        let opts = JoinOptions {
                            algorithm,
                            kind,
                            output,
                            row_limit: None,
                            merge_exchange: crate::join::RING_MERGE,
                        };
                        let got = join(&pool, &l, &r, &opts, &Silent).unwrap();
                        assert_eq!(got.rows, expected.len() as u64, "{algorithm:?} {kind:?}");
                        if output == JoinOutput::Materialize {
                            let mut rows: Vec<JoinRow> = got.materialized.concat();
                            rows.sort_unstable();
                            assert!(rows == expected, "{algorithm:?} {kind:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn phases_are_reported_and_other_algorithms_refused() {
        let pool = pool(2);
        let l = Relation::from_fn(&pool, 100, |i| crate::Tuple::new(i as u64, 0)).unwrap();
        let mut opts = JoinOptions {
            algorithm: JoinAlgorithm::RadixCprl,
            kind: JoinKind::Inner,
            output: JoinOutput::Count,
            row_limit: None,
            merge_exchange: crate::join::RING_MERGE,
        };
        let result = join(&pool, &l, &l, &opts, &Silent).unwrap();
        assert_eq!(result.rows, 100);
        let names: Vec<_> = result.phases.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["partition R", "partition S", "build+probe"]);
        opts.algorithm = JoinAlgorithm::Mpsm;
        assert!(join(&pool, &l, &l, &opts, &Silent).is_err());
    }
}
