//! Where a join's result rows go: each worker owns a [`Sink`] that counts,
//! checksums or keeps the rows it produces, with no sharing between
//! workers; [`finish`] merges the sinks into a [`JoinResult`].
//!
//! Every join algorithm emits through this, so the three outputs and the
//! checksum mean the same thing for all of them.

use crate::join::{JoinOutput, JoinResult, JoinRow};
use crate::timing::PhaseTime;

/// One worker's share of a join result.
#[derive(Debug)]
pub struct Sink {
    output: JoinOutput,
    rows: u64,
    checksum: u64,
    kept: Vec<JoinRow>,
}

impl Sink {
    pub fn new(output: JoinOutput) -> Self {
        Self {
            output,
            rows: 0,
            checksum: 0,
            kept: Vec::new(),
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
}
