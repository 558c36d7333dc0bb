//! The no-partitioning hash join (Blanas et al.; Balkesen et al.'s NPO):
//! one hash table for the whole build side R, shared by every worker and
//! interleaved over the nodes ([`SharedTable`]).
//!
//! Phases: "build" inserts R morsel by morsel, each morsel queued at the
//! node its tuples live on; "probe" looks up S the same way, every worker
//! emitting into its own [`Sink`] (prefetching bucket lines a group of
//! lookups ahead, the trick that makes a shared table competitive); for
//! left outer, semi and anti joins "left-outer scan" then walks the table
//! and emits R tuples by the matched flags the probe set. Semi and anti
//! probes only set flags; the scan emits each R tuple at most once.
//!
//! This module does not partition (that is the radix joins') and does not
//! know the table's layout.

use numakit_pool::Pool;

use crate::error::{OpsError, Result};
use crate::join::shared_table::{OverflowCursor, SharedTable, PREFETCH_GROUP};
use crate::join::sink::{finish_within, RowBudget, Sink};
use crate::join::{JoinKind, JoinOptions, JoinOutput, JoinResult};
use crate::par::{even_ranges, per_worker_mut};
use crate::relation::Relation;
use crate::timing::{PhaseTimer, Progress};
use crate::tuple::Tuple;

/// Tuples per morsel of build and probe (256 KiB).
const MORSEL_TUPLES: usize = 16 * 1024;

/// Joins `left` (R, build side) with `right` (S, probe side).
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
    timer.start("build");
    let table = build(pool, left)?;
    timer.start("probe");
    let budget = RowBudget::for_join(opts);
    let mut sinks = probe(pool, &table, right, opts, &budget)?;
    if opts.kind != JoinKind::Inner {
        timer.start("left-outer scan");
        scan(pool, &table, opts.kind, &mut sinks)?;
    }
    finish_within(sinks, timer.finish(), &budget)
}

/// A build side's hash table, kept to be probed by any number of right
/// relations in turn (a right side read piece by piece) and then, for left
/// outer, semi and anti joins, scanned once for the left rows they keep.
/// Probing every piece and then scanning gives the rows [`join`] gives for
/// the whole right side at once.
pub struct BuildSide {
    table: SharedTable,
}

impl BuildSide {
    /// The hash table of `left`.
    pub fn build(pool: &Pool, left: &Relation) -> Result<Self> {
        left.check_pool(pool)?;
        Ok(BuildSide {
            table: build(pool, left)?,
        })
    }

    /// The rows `right` (one piece of the right side) joins to: matched
    /// pairs for inner and left outer joins (whose matched left rows are
    /// marked), nothing but marks for semi and anti joins. `opts.row_limit`
    /// bounds the rows this piece may keep.
    pub fn probe(&self, pool: &Pool, right: &Relation, opts: &JoinOptions) -> Result<JoinResult> {
        right.check_pool(pool)?;
        let budget = RowBudget::for_join(opts);
        let sinks = probe(pool, &self.table, right, opts, &budget)?;
        finish_within(sinks, Vec::new(), &budget)
    }

    /// Like [`BuildSide::probe`], for probe tuples that are made as they
    /// are probed rather than held in a relation: worker `home(i) %
    /// workers` calls `fill(i, buffer)` for each of the `pieces` and probes
    /// what it put in the (cleared) buffer. A piece should be a morsel's
    /// size, so the buffer stays in cache.
    pub fn probe_pieces(
        &self,
        pool: &Pool,
        pieces: usize,
        home: &(dyn Fn(usize) -> usize + Sync),
        fill: &(dyn Fn(usize, &mut Vec<Tuple>) + Sync),
        opts: &JoinOptions,
    ) -> Result<JoinResult> {
        let budget = RowBudget::for_join(opts);
        let workers = pool.workers().max(1);
        let sinks = pool.broadcast(|ctx| {
            let mut sink = Sink::with_budget(opts.output, budget.clone());
            let mut buffer = Vec::with_capacity(MORSEL_TUPLES);
            for piece in (0..pieces).filter(|&i| home(i) % workers == ctx.index) {
                buffer.clear();
                fill(piece, &mut buffer);
                probe_morsel(&self.table, &buffer, opts, &mut sink);
            }
            sink
        })?;
        finish_within(sinks, Vec::new(), &budget)
    }

    /// After the last piece: the left rows a left outer join adds (those
    /// never matched), a semi join keeps (matched) or an anti join keeps
    /// (never matched), each once and without a right row. Nothing for an
    /// inner join.
    pub fn unmatched(&self, pool: &Pool, opts: &JoinOptions) -> Result<JoinResult> {
        let budget = RowBudget::for_join(opts);
        let mut sinks: Vec<Sink> = (0..pool.workers())
            .map(|_| Sink::with_budget(opts.output, budget.clone()))
            .collect();
        if opts.kind != JoinKind::Inner {
            scan(pool, &self.table, opts.kind, &mut sinks)?;
        }
        finish_within(sinks, Vec::new(), &budget)
    }
}

/// The table of `left`, filled by morsels at their home nodes.
fn build(pool: &Pool, left: &Relation) -> Result<SharedTable> {
    let table = SharedTable::new(pool, left.len())?;
    let cursors = pool.fold_morsels(
        &left.node_slices(),
        MORSEL_TUPLES,
        OverflowCursor::default,
        |mut cursor, _, morsel| {
            table.insert_all(morsel.data, &mut cursor);
            cursor
        },
    )?;
    if cursors.iter().any(|c| c.exhausted) {
        return Err(OpsError::InvalidArgument(
            "the hash table ran out of overflow entries".into(),
        ));
    }
    Ok(table)
}

/// A sink and the worker it belongs to.
struct WorkerSink {
    worker: usize,
    sink: Sink,
}

/// Probes `right` morsel by morsel; returns one sink per worker.
fn probe(
    pool: &Pool,
    table: &SharedTable,
    right: &Relation,
    opts: &JoinOptions,
    budget: &RowBudget,
) -> Result<Vec<Sink>> {
    let folded = pool.fold_morsels(
        &right.node_slices(),
        MORSEL_TUPLES,
        || WorkerSink {
            worker: 0,
            sink: Sink::with_budget(opts.output, budget.clone()),
        },
        |mut acc, ctx, morsel| {
            acc.worker = ctx.index;
            probe_morsel(table, morsel.data, opts, &mut acc.sink);
            acc
        },
    )?;
    let mut sinks: Vec<Sink> = (0..pool.workers())
        .map(|_| Sink::new(opts.output))
        .collect();
    for acc in folded {
        sinks[acc.worker] = acc.sink;
    }
    Ok(sinks)
}

fn probe_morsel(table: &SharedTable, probes: &[Tuple], opts: &JoinOptions, sink: &mut Sink) {
    match (opts.kind, opts.output) {
        (JoinKind::Inner, JoinOutput::Count) => for_each_group(table, probes, |hashes, group| {
            table.for_each_match_in_group(hashes, group, |_, _| {
                sink.count_only(1);
            })
        }),
        (JoinKind::Inner, _) => for_each_group(table, probes, |hashes, group| {
            table.for_each_match_in_group(hashes, group, |s, m| {
                sink.emit(s.key, m.payload, Some(s.payload));
            })
        }),
        (JoinKind::LeftOuter, _) => for_each_group(table, probes, |hashes, group| {
            table.for_each_match_in_group(hashes, group, |s, m| {
                m.mark();
                sink.emit(s.key, m.payload, Some(s.payload));
            })
        }),
        (JoinKind::Semi | JoinKind::Anti, _) => for_each_group(table, probes, |hashes, group| {
            for (&hash, s) in hashes.iter().zip(group) {
                table.mark_matches(hash, s.key);
            }
        }),
    }
}

/// Calls `lookup(hashes, group)` for groups of [`PREFETCH_GROUP`] probe
/// tuples and their hashes, with the group's buckets prefetched.
#[inline(always)]
fn for_each_group<F>(table: &SharedTable, probes: &[Tuple], mut lookup: F)
where
    F: FnMut(&[u64], &[Tuple]),
{
    let mut hashes = [0u64; PREFETCH_GROUP];
    for group in probes.chunks(PREFETCH_GROUP) {
        for (hash, s) in hashes.iter_mut().zip(group) {
            *hash = SharedTable::hash_of(s.key);
            table.prefetch(*hash);
        }
        lookup(&hashes[..group.len()], group);
    }
}

/// Emits the R tuples that a left outer, semi or anti join keeps after the
/// probe: each worker walks an even share of the buckets.
fn scan(pool: &Pool, table: &SharedTable, kind: JoinKind, sinks: &mut [Sink]) -> Result<()> {
    let ranges = even_ranges(table.buckets(), pool.workers());
    let keep_matched = kind == JoinKind::Semi;
    per_worker_mut(pool, sinks, |ctx, sink| {
        table.for_each_tuple(ranges[ctx.index].clone(), |key, payload, matched| {
            if matched == keep_matched {
                sink.emit(key, payload, None);
            }
        });
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::join::test_cases::check_algorithm;
    use crate::join::{JoinAlgorithm, JoinRow};

    #[test]
    fn npo_matches_the_reference_on_adversarial_data() {
        check_algorithm(JoinAlgorithm::NoPartition);
    }

    #[test]
    fn npo_matches_the_reference_on_random_data() {
        crate::join::test_cases::check_random(JoinAlgorithm::NoPartition, 48);
    }

    #[test]
    fn a_right_side_probed_in_pieces_gives_the_whole_join() {
        let pool = crate::testing::pool(2);
        let r = Relation::from_fn(&pool, 1000, |i| Tuple::new((i % 700) as u64, i as u64)).unwrap();
        let s = Relation::from_fn(&pool, 3000, |i| {
            Tuple::new((i * 7 % 1500 * 2) as u64, i as u64)
        })
        .unwrap();
        let pieces: Vec<Relation> = [0..1000, 1000..1001, 1001..3000]
            .into_iter()
            .map(|range| {
                Relation::from_fn(&pool, range.len(), |i| {
                    let i = range.start + i;
                    Tuple::new((i * 7 % 1500 * 2) as u64, i as u64)
                })
                .unwrap()
            })
            .collect();
        for kind in [
            JoinKind::Inner,
            JoinKind::LeftOuter,
            JoinKind::Semi,
            JoinKind::Anti,
        ] {
            let opts = JoinOptions {
                algorithm: JoinAlgorithm::NoPartition,
                kind,
                output: JoinOutput::Materialize,
                row_limit: None,
                merge_exchange: crate::join::RING_MERGE,
            };
            let whole = join(&pool, &r, &s, &opts, &crate::timing::Silent).unwrap();
            let built = BuildSide::build(&pool, &r).unwrap();
            let mut rows: Vec<JoinRow> = Vec::new();
            for piece in &pieces {
                let part = built.probe(&pool, piece, &opts).unwrap();
                rows.extend(part.materialized.into_iter().flatten());
            }
            // The same tuples made on the fly, 500 at a time.
            let made = BuildSide::build(&pool, &r).unwrap();
            let fill = |i: usize, out: &mut Vec<Tuple>| {
                out.extend(
                    (i * 500..(i + 1) * 500)
                        .map(|j| Tuple::new((j * 7 % 1500 * 2) as u64, j as u64)),
                )
            };
            let result = made.probe_pieces(&pool, 6, &|i| i, &fill, &opts).unwrap();
            let mut on_the_fly: Vec<JoinRow> = result.materialized.into_iter().flatten().collect();
            on_the_fly.extend(
                made.unmatched(&pool, &opts)
                    .unwrap()
                    .materialized
                    .into_iter()
                    .flatten(),
            );
            on_the_fly.sort_unstable();
            rows.extend(
                built
                    .unmatched(&pool, &opts)
                    .unwrap()
                    .materialized
                    .into_iter()
                    .flatten(),
            );
            let mut expected: Vec<JoinRow> = whole.materialized.into_iter().flatten().collect();
            rows.sort_unstable();
            expected.sort_unstable();
            assert!(!expected.is_empty(), "{kind:?}");
            assert_eq!(rows, expected, "{kind:?}");
            assert_eq!(on_the_fly, expected, "{kind:?}");
        }
    }

    #[test]
    fn npo_reports_its_phases() {
        let pool = crate::testing::pool(2);
        let r = Relation::from_fn(&pool, 100, |i| Tuple::new(i as u64, 0)).unwrap();
        for (kind, phases) in [
            (JoinKind::Inner, vec!["build", "probe"]),
            (JoinKind::Anti, vec!["build", "probe", "left-outer scan"]),
        ] {
            let opts = JoinOptions {
                algorithm: JoinAlgorithm::NoPartition,
                kind,
                output: JoinOutput::Count,
                row_limit: None,
                merge_exchange: crate::join::RING_MERGE,
            };
            let result = join(&pool, &r, &r, &opts, &crate::timing::Silent).unwrap();
            let names: Vec<_> = result.phases.iter().map(|p| p.name.as_str()).collect();
            assert_eq!(names, phases);
        }
    }
}
