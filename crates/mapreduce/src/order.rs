//! The merge phase: the reduced partitions become one output, in the
//! order the job asks for.
//!
//! Unordered output is the partitions concatenated. Ordered output (by
//! key, or by the job's own comparison such as word count's most frequent
//! first) sorts each partition in its own task, then merges sorted runs
//! pairwise, each pair in its own task, until one run is left (Phoenix's
//! parallel merge). Sorting is stable, so equal elements keep their order.

use std::cmp::Ordering;
use std::sync::{Mutex, PoisonError};

use numakit_pool::Pool;

use crate::error::{MapReduceError, Result};
use crate::job::Job;
use crate::{Pairs, Parts};

/// The order of a job's output.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OutputOrder {
    /// Whatever order the partitions give (fastest).
    #[default]
    Unordered,
    /// Ascending keys.
    ByKey,
    /// The job's [`Job::compare`].
    ByJob,
}

/// Joins `parts` into one output in `order`.
pub(crate) fn merge<'a, J: Job<'a>>(
    pool: &Pool,
    job: &J,
    parts: Parts<J::Key, J::Output>,
    order: OutputOrder,
) -> Result<Pairs<J::Key, J::Output>> {
    let compare = |a: &(J::Key, J::Output), b: &(J::Key, J::Output)| match order {
        OutputOrder::ByJob => job.compare(a, b),
        _ => a.0.cmp(&b.0),
    };
    if order == OutputOrder::Unordered {
        return Ok(parts.into_iter().flatten().collect());
    }
    let mut runs = in_tasks(
        pool,
        parts.into_iter().map(|p| vec![p]).collect(),
        |mut p| {
            let mut run = p.pop().unwrap_or_default();
            run.sort_by(&compare);
            run
        },
    )?;
    while runs.len() > 1 {
        let mut pairs: Vec<Parts<J::Key, J::Output>> = Vec::with_capacity(runs.len().div_ceil(2));
        let mut rest = runs.into_iter();
        while let Some(a) = rest.next() {
            pairs.push(match rest.next() {
                Some(b) => vec![a, b],
                None => vec![a],
            });
        }
        runs = in_tasks(pool, pairs, |pair| merge_two(pair, compare))?;
    }
    Ok(runs.pop().unwrap_or_default())
}

/// Runs `f` on each group in its own pool task; results in group order.
fn in_tasks<T: Send, F>(pool: &Pool, groups: Vec<Vec<Vec<T>>>, f: F) -> Result<Vec<Vec<T>>>
where
    F: Fn(Vec<Vec<T>>) -> Vec<T> + Sync,
{
    let slots: Vec<Mutex<Vec<T>>> = groups.iter().map(|_| Mutex::new(Vec::new())).collect();
    pool.scope(|scope| {
        for (group, slot) in groups.into_iter().zip(&slots) {
            let f = &f;
            scope.spawn(move |_| *slot.lock().unwrap_or_else(PoisonError::into_inner) = f(group));
        }
    })
    .map_err(|e| match e {
        numakit_pool::PoolError::TaskPanicked { message, .. } => MapReduceError::Panicked {
            phase: "merge",
            message,
        },
        other => other.into(),
    })?;
    Ok(slots
        .into_iter()
        .map(|m| m.into_inner().unwrap_or_else(PoisonError::into_inner))
        .collect())
}

/// Merges two sorted runs (the first wins ties, keeping the sort stable).
fn merge_two<T>(mut pair: Vec<Vec<T>>, compare: impl Fn(&T, &T) -> Ordering) -> Vec<T> {
    if pair.len() < 2 {
        return pair.pop().unwrap_or_default();
    }
    let (b, a) = (
        pair.pop().unwrap_or_default(),
        pair.pop().unwrap_or_default(),
    );
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut a, mut b) = (a.into_iter().peekable(), b.into_iter().peekable());
    loop {
        let take_a = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) => compare(x, y) != Ordering::Greater,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => return out,
        };
        out.extend(if take_a { a.next() } else { b.next() });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_runs_merge_stably() {
        let a = vec![(1, 'a'), (3, 'a'), (3, 'b')];
        let b = vec![(0, 'b'), (3, 'c'), (9, 'b')];
        let got = merge_two(vec![a, b], |x: &(i32, char), y| x.0.cmp(&y.0));
        assert_eq!(
            got,
            vec![(0, 'b'), (1, 'a'), (3, 'a'), (3, 'b'), (3, 'c'), (9, 'b')]
        );
        assert_eq!(merge_two(vec![vec![1]], |x: &i32, y| x.cmp(y)), vec![1]);
    }
}
