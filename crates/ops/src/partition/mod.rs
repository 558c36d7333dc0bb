//! Radix partitioning: split tuples by some bits of their key's hash.
//!
//! The kernel ([`scatter`]) is the classic three steps: a histogram of
//! partition sizes, a prefix sum into write offsets, and a scatter.
//! Parallel NUMA variants build on it (see the submodules).
//!
//! This module partitions; it does not join or aggregate.

use crate::tuple::Tuple;

/// Writes `input` into `out` grouped by `part_of(key)` (values below
/// `fanout`), partitions in order, and returns the `fanout + 1` partition
/// boundaries. `out` must be as long as `input`.
pub fn scatter<F>(input: &[Tuple], out: &mut [Tuple], fanout: usize, part_of: F) -> Vec<usize>
where
    F: Fn(u64) -> usize,
{
    assert_eq!(
        input.len(),
        out.len(),
        "scatter needs an output as long as its input"
    );
    let mut counts = vec![0usize; fanout];
    for t in input {
        counts[part_of(t.key)] += 1;
    }
    let bounds = prefix_sum(&counts);
    let mut next = bounds[..fanout].to_vec();
    for t in input {
        let p = part_of(t.key);
        out[next[p]] = *t;
        next[p] += 1;
    }
    bounds
}

/// `counts` turned into boundaries: `[0, c0, c0 + c1, ..., total]`.
pub fn prefix_sum(counts: &[usize]) -> Vec<usize> {
    let mut bounds = Vec::with_capacity(counts.len() + 1);
    let mut total = 0;
    bounds.push(0);
    for &c in counts {
        total += c;
        bounds.push(total);
    }
    bounds
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::radix_of;

    #[test]
    fn scatter_groups_by_partition_and_keeps_every_tuple() {
        let input: Vec<Tuple> = (0..1000u64).map(|i| Tuple::new(i * 7919, i)).collect();
        let mut out = vec![Tuple::default(); input.len()];
        let bounds = scatter(&input, &mut out, 16, |k| radix_of(k, 0, 4));
        assert_eq!(bounds.len(), 17);
        for p in 0..16 {
            assert!(out[bounds[p]..bounds[p + 1]]
                .iter()
                .all(|t| radix_of(t.key, 0, 4) == p));
        }
        let mut a = input.clone();
        let mut b = out.clone();
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b);
    }

    #[test]
    fn scatter_of_nothing_is_nothing() {
        let bounds = scatter(&[], &mut [], 4, |_| 0);
        assert_eq!(bounds, vec![0; 5]);
    }
}
