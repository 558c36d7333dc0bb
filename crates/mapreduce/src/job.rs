//! What a MapReduce job is: the [`Job`] trait an application implements,
//! the [`Split`] a map task reads and the [`Emitter`] it writes to.
//!
//! A job names its input record type, its key and value types, the
//! [`Combiner`] that folds a key's values as they are emitted, and its
//! reduced output. It may choose how its input is split (on word
//! boundaries, whole records...) and, for small integer keys, give each
//! key an index so that an array container can hold it. The trait has a
//! lifetime so that keys may borrow from the input (a word count's keys
//! are slices of the text, never copied). Jobs are plain values: a
//! k-means iteration builds a new one around the current means and runs
//! it on the same [`crate::Runtime`].

use std::cmp::Ordering;
use std::hash::Hash;
use std::ops::Range;

use crate::combiner::Combiner;
use crate::container::Store;
use crate::error::JobError;
use crate::split;

/// A MapReduce computation over a slice of `Record`s that live for `'a`.
pub trait Job<'a>: Sync {
    /// One element of the input: `u8` for text and images, `i32` for
    /// points and matrices, or a record struct.
    type Record: Sync + 'a;
    /// What map emits values under.
    type Key: Hash + Eq + Ord + Send + Sync + 'a;
    /// What map emits.
    type Value;
    /// The per-key state values are folded into during map.
    type Combiner: Combiner<Self::Value>;
    /// What reduce makes of one key's combined state.
    type Output: Send;

    /// Cuts the input into map tasks of about `target` records each.
    /// Default: even ranges.
    fn split(&self, input: &'a [Self::Record], target: usize) -> Vec<Range<usize>> {
        split::even(input.len(), target)
    }

    /// Maps one split, emitting key/value pairs.
    fn map(
        &self,
        split: Split<'a, Self::Record>,
        out: &mut Emitter<'_, 'a, Self>,
    ) -> Result<(), JobError>;

    /// Reduces every value of one key, folded by the combiner (a
    /// [`crate::KeepAll`] combiner iterates them all).
    fn reduce(&self, key: &Self::Key, combined: Self::Combiner) -> Result<Self::Output, JobError>;

    /// The key's slot in an array container (`ContainerKind::Array`), for
    /// small integer keys; `None` puts it in the container's overflow table.
    fn key_index(&self, _key: &Self::Key) -> Option<usize> {
        None
    }

    /// The order of `OutputOrder::ByJob` (word count: most frequent first).
    fn compare(&self, a: &(Self::Key, Self::Output), b: &(Self::Key, Self::Output)) -> Ordering {
        a.0.cmp(&b.0)
    }
}

/// What one map task reads.
#[derive(Clone, Copy, Debug)]
pub struct Split<'a, R> {
    /// The split's records.
    pub records: &'a [R],
    /// The index of its first record in the whole input.
    pub start: usize,
}

/// Where a map task emits: its worker's container, folding as it goes.
pub struct Emitter<'c, 'a, J: Job<'a> + ?Sized> {
    pub(crate) job: &'c J,
    pub(crate) store: &'c mut Store<J::Key, J::Combiner>,
}

impl<'a, J: Job<'a> + ?Sized> Emitter<'_, 'a, J> {
    /// Folds `value` into `key`'s state in this worker's container.
    #[inline]
    pub fn emit(&mut self, key: J::Key, value: J::Value) {
        let index = if self.store.is_array() {
            self.job.key_index(&key)
        } else {
            None
        };
        self.store.emit(index, key, value);
    }
}
