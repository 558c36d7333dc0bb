//! Combiners: the state a container keeps per key while map runs, so that
//! values are folded as they are emitted instead of stored.
//!
//! A combiner starts from a key's first value, adds later ones, and merges
//! with the state other workers built for the same key. The built-in ones
//! are [`Sum`], [`Count`], [`Min`], [`Max`] and [`KeepAll`] (every value,
//! for reductions that need them all; reduce iterates them). Jobs with
//! richer state (k-means: a vector sum and a count) implement the trait.
//! Combiners do not know keys or partitions: that is the container's job.

use std::ops::AddAssign;

/// Per-key state folded from emitted values of type `V`.
pub trait Combiner<V>: Send + Sized {
    /// The state after the key's first value.
    fn start(value: V) -> Self;
    /// Folds one more value in.
    fn add(&mut self, value: V);
    /// Folds another worker's state for the same key in.
    fn merge(&mut self, other: Self);
}

/// The sum of the values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sum<V>(pub V);

impl<V: AddAssign + Send> Combiner<V> for Sum<V> {
    fn start(value: V) -> Self {
        Sum(value)
    }
    #[inline]
    fn add(&mut self, value: V) {
        self.0 += value;
    }
    fn merge(&mut self, other: Self) {
        self.0 += other.0;
    }
}

/// How many values were emitted (the values themselves are dropped).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Count(pub u64);

impl<V> Combiner<V> for Count {
    fn start(_: V) -> Self {
        Count(1)
    }
    #[inline]
    fn add(&mut self, _: V) {
        self.0 += 1;
    }
    fn merge(&mut self, other: Self) {
        self.0 += other.0;
    }
}

/// The smallest value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Min<V>(pub V);

impl<V: Ord + Send> Combiner<V> for Min<V> {
    fn start(value: V) -> Self {
        Min(value)
    }
    #[inline]
    fn add(&mut self, value: V) {
        if value < self.0 {
            self.0 = value;
        }
    }
    fn merge(&mut self, other: Self) {
        self.add(other.0);
    }
}

/// The largest value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Max<V>(pub V);

impl<V: Ord + Send> Combiner<V> for Max<V> {
    fn start(value: V) -> Self {
        Max(value)
    }
    #[inline]
    fn add(&mut self, value: V) {
        if value > self.0 {
            self.0 = value;
        }
    }
    fn merge(&mut self, other: Self) {
        self.add(other.0);
    }
}

/// Every value, in emission order per worker; reduce iterates them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeepAll<V>(pub Vec<V>);

impl<V: Send> Combiner<V> for KeepAll<V> {
    fn start(value: V) -> Self {
        KeepAll(vec![value])
    }
    #[inline]
    fn add(&mut self, value: V) {
        self.0.push(value);
    }
    fn merge(&mut self, mut other: Self) {
        if other.0.len() > self.0.len() {
            std::mem::swap(&mut self.0, &mut other.0);
        }
        self.0.append(&mut other.0);
    }
}

impl<V> IntoIterator for KeepAll<V> {
    type Item = V;
    type IntoIter = std::vec::IntoIter<V>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fold<C: Combiner<i64>>(values: &[i64]) -> C {
        let (first, rest) = values.split_first().unwrap();
        let mut c = C::start(*first);
        rest.iter().for_each(|&v| c.add(v));
        c
    }

    #[test]
    fn built_ins_fold_and_merge() {
        let (a, b) = ([3i64, -7, 10], [5i64, 1]);
        let mut sum: Sum<i64> = fold(&a);
        sum.merge(fold(&b));
        assert_eq!(sum.0, 12);
        let mut count: Count = fold(&a);
        Combiner::<i64>::merge(&mut count, fold::<Count>(&b));
        assert_eq!(count.0, 5);
        let mut min: Min<i64> = fold(&a);
        min.merge(fold(&b));
        assert_eq!(min.0, -7);
        let mut max: Max<i64> = fold(&b);
        max.merge(fold(&a));
        assert_eq!(max.0, 10);
        let mut all: KeepAll<i64> = fold(&a);
        all.merge(fold(&b));
        let mut got: Vec<i64> = all.into_iter().collect();
        got.sort();
        assert_eq!(got, vec![-7, 1, 3, 5, 10]);
    }
}
