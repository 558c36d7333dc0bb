//! The yardsticks: numakit's single-machine join of the same relations
//! (the whole R and S in one process), and a plain nested-loop join for
//! tiny inputs. A distributed join must give exactly what they give.

use numakit_ops::join::{choose, join, JoinKind, JoinOptions, JoinOutput};
use numakit_ops::timing::Silent;
use numakit_ops::{Relation, Tuple};
use numakit_pool::Pool;

use crate::error::Result;
use crate::message::Side;
use crate::predicate::{key_range, Predicate};
use crate::sink::{Output, PartialResult, ResultRow};

/// The join of `left` and `right` on one machine: numakit's equi-join
/// (the algorithm it recommends here) for `Equal`, a sequential
/// sort-based join for the others.
pub fn single_machine(
    pool: &Pool,
    left: &Relation,
    right: &Relation,
    predicate: Predicate,
    output: Output,
) -> Result<PartialResult> {
    if !predicate.is_equi() {
        return Ok(sequential_non_equi(
            &left.to_vec(),
            &right.to_vec(),
            predicate,
            output,
        ));
    }
    let (algorithm, _) = choose::recommend(pool, left.len(), right.len());
    let joined = join(
        pool,
        left,
        right,
        &JoinOptions {
            algorithm,
            kind: JoinKind::Inner,
            output: match output {
                Output::Count => JoinOutput::Count,
                Output::Checksum => JoinOutput::Checksum,
                Output::Sample(_) | Output::Rows => JoinOutput::Materialize,
            },
            row_limit: None,
            merge_exchange: numakit_ops::join::RING_MERGE,
        },
        &Silent,
    )?;
    let mut sample: Vec<ResultRow> = Vec::new();
    if let Output::Sample(n) = output {
        sample = joined
            .materialized
            .iter()
            .flatten()
            .map(|r| ResultRow {
                key: r.key,
                left: r.left,
                right: r.right.unwrap_or_default(),
            })
            .collect();
        sample.sort_unstable();
        sample.truncate(n);
    }
    Ok(PartialResult {
        rows: joined.rows,
        checksum: joined.checksum,
        sample,
    })
}

/// A non-equi join, sequentially: S sorted once, each R row's matches
/// found by binary search.
pub fn sequential_non_equi(
    left: &[Tuple],
    right: &[Tuple],
    predicate: Predicate,
    output: Output,
) -> PartialResult {
    let mut sorted = right.to_vec();
    sorted.sort_unstable();
    let keys: Vec<u64> = sorted.iter().map(|t| t.key).collect();
    let mut result = PartialResult::default();
    let mut rows = Vec::new();
    for r in left {
        let Some((lo, hi)) = predicate.partner_range(Side::Left, r.key) else {
            continue;
        };
        let range = key_range(&keys, lo, hi);
        result.rows += range.len() as u64;
        if output == Output::Count {
            continue;
        }
        for s in &sorted[range] {
            let row = ResultRow {
                key: r.key,
                left: r.payload,
                right: s.payload,
            };
            result.checksum = result.checksum.wrapping_add(row.checksum());
            if let Output::Sample(_) = output {
                rows.push(row);
            }
        }
    }
    if let Output::Sample(n) = output {
        rows.sort_unstable();
        rows.truncate(n);
        result.sample = rows;
    }
    result
}

/// Every matching pair by brute force, sorted (for tiny test inputs).
pub fn nested_loop(left: &[Tuple], right: &[Tuple], predicate: Predicate) -> Vec<ResultRow> {
    let mut rows: Vec<ResultRow> = left
        .iter()
        .flat_map(|r| {
            right
                .iter()
                .filter(move |s| predicate.matches(r.key, s.key))
                .map(move |s| ResultRow {
                    key: r.key,
                    left: r.payload,
                    right: s.payload,
                })
        })
        .collect();
    rows.sort_unstable();
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `--verify` compares (rows and the sum of the rows' hashes)
    /// tells a wrong result from the right one even when the wrong one has
    /// the right count and the right sums of every field: payloads paired
    /// with the wrong partners within one key.
    #[test]
    fn the_verified_hash_sees_payloads_paired_wrongly_within_a_key() {
        let row = |left, right| ResultRow {
            key: 5,
            left,
            right,
        };
        let hash = |rows: &[ResultRow]| rows.iter().fold(0u64, |a, r| a.wrapping_add(r.checksum()));
        let right = [row(1, 10), row(1, 20), row(2, 10), row(2, 20)];
        let wrong = [row(1, 10), row(1, 10), row(2, 20), row(2, 20)];
        assert_eq!(right.len(), wrong.len());
        let fields = |rows: &[ResultRow]| {
            rows.iter()
                .fold((0u64, 0u64), |(l, r), x| (l + x.left, r + x.right))
        };
        assert_eq!(
            fields(&right),
            fields(&wrong),
            "the same sums of every field"
        );
        assert_ne!(hash(&right), hash(&wrong));
        let tuples = |v: &[(u64, u64)]| {
            v.iter()
                .map(|&(key, payload)| Tuple { key, payload })
                .collect::<Vec<_>>()
        };
        let r = tuples(&[(5, 1), (5, 2)]);
        let s = tuples(&[(5, 10), (5, 20)]);
        for predicate in [Predicate::Equal, Predicate::Band { width: 0 }] {
            let got = sequential_non_equi(&r, &s, predicate, Output::Checksum);
            assert_eq!((got.rows, got.checksum), (4, hash(&right)), "{predicate:?}");
        }
    }

    #[test]
    fn the_sequential_non_equi_join_equals_the_nested_loop() {
        let l: Vec<Tuple> = [5u64, 0, 9, 9, u64::MAX, 3]
            .iter()
            .enumerate()
            .map(|(i, &k)| Tuple::new(k, i as u64))
            .collect();
        let r: Vec<Tuple> = [4u64, 9, 0, u64::MAX, 7, 7]
            .iter()
            .enumerate()
            .map(|(i, &k)| Tuple::new(k, 100 + i as u64))
            .collect();
        for p in [
            Predicate::Band { width: 2 },
            Predicate::Less,
            Predicate::Band { width: 0 },
        ] {
            let want = nested_loop(&l, &r, p);
            let got = sequential_non_equi(&l, &r, p, Output::Sample(1000));
            assert_eq!(got.sample, want, "{p:?}");
            assert_eq!(got.rows, want.len() as u64);
            let sum = want.iter().fold(0u64, |a, w| a.wrapping_add(w.checksum()));
            assert_eq!(got.checksum, sum);
        }
    }
}
