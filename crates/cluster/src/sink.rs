//! Where the join's result rows go (Chakraborty §IV-A): every task keeps
//! its rows in a local buffer and merges it into the process's result a
//! block at a time, so tasks rarely contend; each process then sends its
//! partial result to the sink (process 0), which merges them.
//!
//! A result is always counted; beyond that it is checksummed (the same
//! order-independent checksum as numakit's single-machine joins, so the
//! two can be compared), sampled (the N smallest rows in (key, left,
//! right) order, which does not depend on how the work was split), or
//! kept whole (written to files per process by the caller, for instance
//! through [`crate::result_dir`], which reports each file as a
//! [`PartRecord`]; the sink publishes the files only when every process's
//! part is complete). This module does not write files.

use std::collections::BinaryHeap;
use std::sync::{Mutex, PoisonError};

use numakit_ops::join::JoinRow;
use serde::{Deserialize, Serialize};

/// What the sink receives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Output {
    /// The number of result rows.
    Count,
    /// The count and a checksum of the rows (an aggregate computed on the fly).
    Checksum,
    /// The count, the checksum and the N smallest rows.
    Sample(usize),
    /// The count, the checksum and every row (kept per process).
    Rows,
}

impl Output {
    /// Whether rows are looked at one by one (everything but a count).
    pub fn needs_rows(self) -> bool {
        self != Output::Count
    }
}

/// One result row: R's key, R's payload, S's payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ResultRow {
    /// R's key (for a non-equi join, S's key may differ).
    pub key: u64,
    /// R's payload.
    pub left: u64,
    /// S's payload.
    pub right: u64,
}

impl ResultRow {
    /// This row's term of the checksum, as numakit's joins compute it.
    #[inline]
    pub fn checksum(&self) -> u64 {
        JoinRow {
            key: self.key,
            left: self.left,
            right: Some(self.right),
        }
        .checksum()
    }
}

/// A process's share of the result, or the merged result at the sink.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PartialResult {
    /// Result rows.
    pub rows: u64,
    /// Wrapping sum of [`ResultRow::checksum`] (0 for a count).
    pub checksum: u64,
    /// The smallest rows, ascending (empty unless sampling).
    pub sample: Vec<ResultRow>,
}

impl PartialResult {
    /// Adds `other` in; keeps the `sample` smallest rows.
    pub fn merge(&mut self, other: &PartialResult, sample: usize) {
        self.rows += other.rows;
        self.checksum = self.checksum.wrapping_add(other.checksum);
        self.sample.extend_from_slice(&other.sample);
        self.sample.sort_unstable();
        self.sample.truncate(sample);
    }
}

/// One process's share of the result as the caller delivered it (a part
/// of a [`crate::result_dir::ResultDir`]): what the sink's manifest lists.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartRecord {
    /// The process whose rows the part holds.
    pub process: usize,
    /// The part's file name (within the result's directory).
    pub file: String,
    /// Result rows in the part.
    pub rows: u64,
    /// Wrapping sum of [`ResultRow::checksum`] over the part's rows.
    pub checksum: u64,
    /// Size of the file, in bytes.
    pub bytes: u64,
}

/// A process's delivered part, or why it could not deliver it.
pub type PartOutcome = std::result::Result<PartRecord, String>;

/// Rows a task buffers before merging them into the process's result.
pub const BLOCK_ROWS: usize = 4096;

/// The process's result, filled by tasks.
#[derive(Debug)]
pub struct Collector {
    output: Output,
    inner: Mutex<Collected>,
}

#[derive(Debug, Default)]
struct Collected {
    result: PartialResult,
    blocks: Vec<Vec<ResultRow>>,
}

impl Collector {
    /// An empty result that keeps what `output` asks for.
    pub fn new(output: Output) -> Self {
        Self {
            output,
            inner: Mutex::new(Collected::default()),
        }
    }

    /// What this result keeps.
    pub fn output(&self) -> Output {
        self.output
    }

    /// A buffer for one task.
    pub fn task(&self) -> TaskSink<'_> {
        TaskSink {
            collector: self,
            result: PartialResult::default(),
            smallest: BinaryHeap::new(),
            block: Vec::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Collected> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The merged result and, for [`Output::Rows`], the rows in blocks.
    pub fn finish(self) -> (PartialResult, Vec<Vec<ResultRow>>) {
        let c = self
            .inner
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        (c.result, c.blocks)
    }
}

/// One task's local result buffer; merged into the collector when full
/// (rows) and when dropped (everything).
pub struct TaskSink<'a> {
    collector: &'a Collector,
    result: PartialResult,
    smallest: BinaryHeap<ResultRow>,
    block: Vec<ResultRow>,
}

impl TaskSink<'_> {
    /// Takes one row.
    #[inline]
    pub fn emit(&mut self, row: ResultRow) {
        self.result.rows += 1;
        match self.collector.output {
            Output::Count => {}
            Output::Checksum => self.add_checksum(&row),
            Output::Sample(n) => {
                self.add_checksum(&row);
                self.keep_if_small(row, n);
            }
            Output::Rows => {
                self.add_checksum(&row);
                self.block.push(row);
                if self.block.len() == BLOCK_ROWS {
                    let full = std::mem::replace(&mut self.block, Vec::with_capacity(BLOCK_ROWS));
                    self.collector.lock().blocks.push(full);
                }
            }
        }
    }

    /// Takes `n` rows at once when only their number matters; false (and
    /// nothing taken) otherwise.
    #[inline]
    pub fn count_only(&mut self, n: u64) -> bool {
        let only = !self.collector.output.needs_rows();
        if only {
            self.result.rows += n;
        }
        only
    }

    #[inline]
    fn add_checksum(&mut self, row: &ResultRow) {
        self.result.checksum = self.result.checksum.wrapping_add(row.checksum());
    }

    fn keep_if_small(&mut self, row: ResultRow, n: usize) {
        if self.smallest.len() < n {
            self.smallest.push(row);
        } else if self.smallest.peek().is_some_and(|top| row < *top) {
            self.smallest.pop();
            self.smallest.push(row);
        }
    }
}

impl Drop for TaskSink<'_> {
    fn drop(&mut self) {
        let sample = match self.collector.output {
            Output::Sample(n) => n,
            _ => 0,
        };
        self.result.sample = std::mem::take(&mut self.smallest).into_sorted_vec();
        let mut c = self.collector.lock();
        c.result.merge(&self.result, sample);
        if !self.block.is_empty() {
            c.blocks.push(std::mem::take(&mut self.block));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(k: u64) -> ResultRow {
        ResultRow {
            key: k,
            left: k * 2,
            right: k * 3,
        }
    }

    #[test]
    fn tasks_merge_into_one_result_whatever_the_output() {
        let outputs = [
            Output::Count,
            Output::Checksum,
            Output::Sample(3),
            Output::Rows,
        ];
        let results: Vec<(PartialResult, Vec<Vec<ResultRow>>)> = outputs
            .iter()
            .map(|&o| {
                let c = Collector::new(o);
                std::thread::scope(|s| {
                    for t in 0..4u64 {
                        let c = &c;
                        s.spawn(move || {
                            let mut sink = c.task();
                            for k in 0..5000 {
                                sink.emit(row(k * 4 + t));
                            }
                        });
                    }
                });
                c.finish()
            })
            .collect();
        assert!(results.iter().all(|(r, _)| r.rows == 20_000));
        assert_eq!(results[0].0.checksum, 0);
        let want: u64 = (0..20_000).fold(0u64, |a, k| a.wrapping_add(row(k).checksum()));
        for (r, _) in &results[1..] {
            assert_eq!(r.checksum, want);
        }
        assert_eq!(results[2].0.sample, vec![row(0), row(1), row(2)]);
        let kept: usize = results[3].1.iter().map(Vec::len).sum();
        assert_eq!(kept, 20_000);
        assert!(results[3].1.iter().all(|b| b.len() <= BLOCK_ROWS));
    }

    #[test]
    fn the_checksum_is_numakits() {
        let r = row(7);
        let j = JoinRow {
            key: 7,
            left: 14,
            right: Some(21),
        };
        assert_eq!(r.checksum(), j.checksum());
    }
}
