//! Combiners: the state a container keeps per key while map runs, so that
//! values are folded as they are emitted instead of stored.
//!
//! A combiner starts from a key's first value, adds later ones, and merges
//! with the state other workers built for the same key. The built-in ones
//! are [`Sum`], [`Count`], [`Min`], [`Max`] and [`KeepAll`] (every value,
//! for reductions that need them all; reduce iterates them). Jobs with
//! richer state (k-means: a vector sum and a count) implement the trait.
//! Combiners do not know keys or partitions: that is the container's job.
//! Two hooks let a state take part in reduce-side prefetching (Phoenix
//! Rebirth §III-B); only [`KeepAll`] uses them.

use std::ops::AddAssign;

use crate::prefetch::Prefetch;
use crate::values::{IntoValues, ValueChunks, Values};

/// Per-key state folded from emitted values of type `V`.
pub trait Combiner<V>: Send + Sized {
    /// The state after the key's first value.
    fn start(value: V) -> Self;
    /// Folds one more value in.
    fn add(&mut self, value: V);
    /// Folds another worker's state for the same key in.
    fn merge(&mut self, other: Self);
    /// Takes the run's [`Prefetch`] setting, just before reduce reads
    /// the state ([`KeepAll`] iterates by it). Default: ignores it.
    fn set_prefetch(&mut self, _prefetch: Prefetch) {}
    /// Starts bringing the state's memory into cache: with prefetch on,
    /// the runtime calls it on the next key's state while it reduces the
    /// current one. A hint; default: nothing.
    #[inline]
    fn prefetch(&self) {}
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

/// Every value, in emission order per worker; reduce iterates them
/// ([`KeepAll::iter`]) or takes them ([`IntoIterator`]).
///
/// The values sit in a [`ValueChunks`]: disjoint chunks that never move
/// once written (no reallocation as a key's values grow), merged across
/// workers by moving chunks, one worker's values after another's. Reduce
/// reads them through [`Values`], which prefetches ahead as the job's
/// [`crate::JobOptions::prefetch`] says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeepAll<V>(pub ValueChunks<V>);

impl<V> KeepAll<V> {
    /// How many values the key has.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the key has no value (never, once map has emitted one).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The values in order, prefetching as the run's options say.
    pub fn iter(&self) -> Values<'_, V> {
        self.0.iter()
    }
}

impl<V: Send> Combiner<V> for KeepAll<V> {
    fn start(value: V) -> Self {
        let mut values = ValueChunks::new();
        values.push(value);
        KeepAll(values)
    }
    #[inline]
    fn add(&mut self, value: V) {
        self.0.push(value);
    }
    fn merge(&mut self, other: Self) {
        self.0.append(other.0);
    }
    fn set_prefetch(&mut self, prefetch: Prefetch) {
        self.0.set_prefetch(prefetch);
    }
    #[inline]
    fn prefetch(&self) {
        self.0.prefetch_start();
    }
}

/// The values as they are, in one chunk.
impl<V> From<Vec<V>> for KeepAll<V> {
    fn from(values: Vec<V>) -> Self {
        KeepAll(ValueChunks::from(values))
    }
}

impl<V> IntoIterator for KeepAll<V> {
    type Item = V;
    type IntoIter = IntoValues<V>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a, V> IntoIterator for &'a KeepAll<V> {
    type Item = &'a V;
    type IntoIter = Values<'a, V>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
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

    #[test]
    fn keep_all_keeps_emission_order_and_merges_after() {
        let mut a: KeepAll<i64> = fold(&(0..1000).collect::<Vec<i64>>());
        let b: KeepAll<i64> = fold(&(1000..1500).collect::<Vec<i64>>());
        a.merge(b);
        a.add(1500);
        assert_eq!(a.len(), 1501);
        let by_ref: Vec<i64> = a.iter().copied().collect();
        assert_eq!(by_ref, (0..1501).collect::<Vec<i64>>());
        for p in [Prefetch::On, Prefetch::Off] {
            a.set_prefetch(p);
            Combiner::<i64>::prefetch(&a);
            assert_eq!((&a).into_iter().copied().collect::<Vec<_>>(), by_ref);
        }
        assert_eq!(a.into_iter().collect::<Vec<_>>(), by_ref);
        assert_eq!(KeepAll::from(vec![1u8, 2]).iter().len(), 2);
    }
}
