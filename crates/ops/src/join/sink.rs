//! Where a join's result rows go: each worker owns a [`Sink`] that counts,
//! checksums or keeps the rows it produces, with no sharing between
//! workers; [`finish`] merges the sinks into a [`JoinResult`].
//!
//! Every join algorithm emits through this, so the three outputs and the
//! checksum mean the same thing for all of them.
//!
//! A materializing join may be given a row limit (the memory limit turned
//! into rows): the sinks of one join then share a [`RowBudget`], take rows
//! from it in batches, and stop keeping rows once it is spent, so that a
//! result too large for memory fails cleanly instead of exhausting it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use crate::error::{OpsError, Result};
use crate::join::{JoinOptions, JoinOutput, JoinResult, JoinRow};
use crate::timing::PhaseTime;

/// Rows a sink takes from the shared budget at a time.
const BUDGET_BATCH: u64 = 4096;

/// The rows the sinks of one join may keep together.
#[derive(Clone, Debug, Default)]
pub struct RowBudget {
    shared: Option<Arc<BudgetState>>,
}

#[derive(Debug)]
struct BudgetState {
    limit: u64,
    left: AtomicU64,
    exceeded: AtomicBool,
}

impl RowBudget {
    /// The budget of a join with these options (unlimited without a row
    /// limit or when rows are not kept).
    pub fn for_join(opts: &JoinOptions) -> Self {
        match (opts.output, opts.row_limit) {
            (JoinOutput::Materialize, Some(limit)) => Self {
                shared: Some(Arc::new(BudgetState {
                    limit,
                    left: AtomicU64::new(limit),
                    exceeded: AtomicBool::new(false),
                })),
            },
            _ => Self::default(),
        }
    }

    /// Takes up to `want` rows; returns how many were granted.
    fn take(&self, want: u64) -> u64 {
        let Some(state) = &self.shared else {
            return want;
        };
        let mut left = state.left.load(Ordering::Relaxed);
        loop {
            let grant = want.min(left);
            if grant == 0 {
                state.exceeded.store(true, Ordering::Relaxed);
                return 0;
            }
            match state.left.compare_exchange_weak(
                left,
                left - grant,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return grant,
                Err(now) => left = now,
            }
        }
    }

    /// Fails if some sink wanted more rows than the budget had.
    fn check(&self, rows: u64) -> Result<()> {
        match &self.shared {
            Some(state) if state.exceeded.load(Ordering::Relaxed) => {
                Err(OpsError::ResultTooLarge {
                    limit: state.limit,
                    rows,
                })
            }
            _ => Ok(()),
        }
    }
}

/// One worker's share of a join result.
#[derive(Debug)]
pub struct Sink {
    output: JoinOutput,
    rows: u64,
    checksum: u64,
    kept: Vec<JoinRow>,
    budget: RowBudget,
    /// Rows this sink may still keep before asking the budget again.
    granted: u64,
}

impl Sink {
    /// A sink without a row limit.
    pub fn new(output: JoinOutput) -> Self {
        Self::with_budget(output, RowBudget::default())
    }

    /// A sink that keeps rows only while `budget` lasts.
    pub fn with_budget(output: JoinOutput, budget: RowBudget) -> Self {
        Self {
            output,
            rows: 0,
            checksum: 0,
            kept: Vec::new(),
            budget,
            granted: 0,
        }
    }

    /// Takes one result row.
    #[inline(always)]
    pub fn emit(&mut self, key: u64, left: u64, right: Option<u64>) {
        self.rows += 1;
        if self.output == JoinOutput::Count {
            return;
        }
        let row = JoinRow { key, left, right };
        self.checksum = self.checksum.wrapping_add(row.checksum());
        if self.output == JoinOutput::Materialize {
            if self.granted == 0 {
                self.granted = self.budget.take(BUDGET_BATCH);
                if self.granted == 0 {
                    return;
                }
            }
            self.granted -= 1;
            self.kept.push(row);
        }
    }

    /// Takes `n` rows at once when only their number matters; returns
    /// false (taking nothing) when the output needs the rows themselves.
    #[inline(always)]
    pub fn count_only(&mut self, n: u64) -> bool {
        if self.output == JoinOutput::Count {
            self.rows += n;
            true
        } else {
            false
        }
    }

    /// Rows taken so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }
}

/// Merges the workers' sinks into the join's result.
pub fn finish(sinks: impl IntoIterator<Item = Sink>, phases: Vec<PhaseTime>) -> JoinResult {
    let mut result = JoinResult {
        phases,
        ..JoinResult::default()
    };
    for s in sinks {
        result.rows += s.rows;
        result.checksum = result.checksum.wrapping_add(s.checksum);
        if s.output == JoinOutput::Materialize {
            result.materialized.push(s.kept);
        }
    }
    result
}

/// Like [`finish`], but fails when the sinks' budget was exceeded.
pub fn finish_within(
    sinks: Vec<Sink>,
    phases: Vec<PhaseTime>,
    budget: &RowBudget,
) -> Result<JoinResult> {
    let result = finish(sinks, phases);
    budget.check(result.rows)?;
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_agree_on_rows_and_checksum() {
        let mut sinks: Vec<Sink> = [
            JoinOutput::Count,
            JoinOutput::Checksum,
            JoinOutput::Materialize,
        ]
        .into_iter()
        .map(Sink::new)
        .collect();
        for s in &mut sinks {
            s.emit(1, 2, Some(3));
            s.emit(4, 5, None);
            if !s.count_only(2) {
                s.emit(6, 7, Some(8));
                s.emit(6, 7, Some(9));
            }
        }
        let results: Vec<JoinResult> = sinks.into_iter().map(|s| finish([s], Vec::new())).collect();
        assert!(results.iter().all(|r| r.rows == 4));
        assert_eq!(results[0].checksum, 0);
        assert_eq!(results[1].checksum, results[2].checksum);
        assert_eq!(results[2].materialized[0].len(), 4);
        assert!(results[0].materialized.is_empty());
    }

    #[test]
    fn the_checksum_sees_payloads_swapped_between_rows_of_a_key() {
        let row = |key, left, right| JoinRow { key, left, right };
        let sum = |rows: &[JoinRow]| rows.iter().fold(0u64, |a, r| a.wrapping_add(r.checksum()));
        let right = [row(5, 1, Some(10)), row(5, 2, Some(20))];
        let swapped = [row(5, 1, Some(20)), row(5, 2, Some(10))];
        let reordered = [row(5, 2, Some(20)), row(5, 1, Some(10))];
        assert_ne!(sum(&right), sum(&swapped));
        assert_eq!(sum(&right), sum(&reordered));
        assert_ne!(row(5, 1, None).checksum(), row(5, 1, Some(0)).checksum());
        assert_ne!(row(1, 2, Some(3)).checksum(), row(2, 1, Some(3)).checksum());
    }

    #[test]
    fn a_spent_budget_stops_keeping_rows_and_fails_the_join() {
        let opts = JoinOptions {
            algorithm: crate::join::JoinAlgorithm::NoPartition,
            kind: crate::join::JoinKind::Inner,
            output: JoinOutput::Materialize,
            row_limit: Some(5000),
            merge_exchange: crate::join::RING_MERGE,
        };
        let budget = RowBudget::for_join(&opts);
        let mut sinks: Vec<Sink> = (0..2)
            .map(|_| Sink::with_budget(opts.output, budget.clone()))
            .collect();
        for i in 0..3000 {
            sinks[0].emit(i, i, Some(i));
            sinks[1].emit(i, i, None);
        }
        let err = finish_within(sinks, Vec::new(), &budget).unwrap_err();
        assert!(matches!(
            err,
            OpsError::ResultTooLarge {
                limit: 5000,
                rows: 6000
            }
        ));
        let budget = RowBudget::for_join(&JoinOptions {
            row_limit: Some(6000),
            merge_exchange: crate::join::RING_MERGE,
            ..opts
        });
        let mut sink = Sink::with_budget(opts.output, budget.clone());
        for i in 0..6000 {
            sink.emit(i, i, None);
        }
        let result = finish_within(vec![sink], Vec::new(), &budget).unwrap();
        assert_eq!(result.materialized[0].len(), 6000);
    }
}
