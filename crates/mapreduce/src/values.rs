//! The values a [`crate::KeepAll`] combiner collects for one key: a
//! buffer of disjoint chunks and the [`Values`] iterator reduce reads
//! them through.
//!
//! Phoenix Rebirth §III-B: a key's values used to sit in one array that
//! was reallocated (and copied) as it grew; Rebirth keeps them in a few
//! disjoint chunks behind an iterator instead, and prefetches behind that
//! interface. [`ValueChunks`] does the same: the first chunk holds a few
//! values (most keys of a skewed job have few), each further chunk is as
//! large as everything stored so far (up to [`MAX_CHUNK_BYTES`]), and a
//! stored value never moves: a full chunk is never grown, a new one is
//! started. Merging another worker's values moves its chunks, not its
//! values. [`Values`] walks the chunks in order and, with
//! [`Prefetch::On`], prefetches a fixed distance ([`AHEAD_BYTES`]) ahead
//! of the value it yields, and the starts of the next few chunks
//! ([`CHUNKS_AHEAD`]); its `fold` (under `sum`, `for_each` and the like) walks a chunk
//! as a slice and prefetches once per cache line of values. There is no
//! random access: reduce reads values in order.

use std::fmt;
use std::iter::FusedIterator;
use std::mem::size_of;
use std::slice;

use crate::prefetch::{self, Prefetch, LINE};

/// Bytes of the first chunk (at least four values).
const FIRST_CHUNK_BYTES: usize = LINE;
/// Bytes of the largest chunk (at least one value): a key with more
/// values than that gets several chunks of this size.
pub const MAX_CHUNK_BYTES: usize = 4 << 20;
/// How far ahead of the value it yields [`Values`] prefetches, in bytes
/// (sixteen cache lines, at least one value).
pub const AHEAD_BYTES: usize = 16 * LINE;

/// How many chunks ahead of the one it reads [`Values`] has asked for
/// the start of (small chunks end before one fetch would arrive).
pub const CHUNKS_AHEAD: usize = 4;

/// Values in the first chunk.
const fn first_chunk<V>() -> usize {
    let n = FIRST_CHUNK_BYTES / max1(size_of::<V>());
    if n < 4 {
        4
    } else {
        n
    }
}

/// Values [`Values`] prefetches ahead.
const fn ahead<V>() -> usize {
    let n = AHEAD_BYTES / max1(size_of::<V>());
    if n < 1 {
        1
    } else {
        n
    }
}

const fn max1(n: usize) -> usize {
    if n == 0 {
        1
    } else {
        n
    }
}

/// A key's values in chunks that never move once stored.
///
/// ```
/// use numakit_mapreduce::{Prefetch, ValueChunks};
///
/// let mut values = ValueChunks::new();
/// (0..1000u64).for_each(|v| values.push(v));
/// assert!(values.chunk_count() > 1);
/// let it = values.iter();
/// assert_eq!(it.len(), 1000);
/// assert!(it.copied().eq(0..1000));
/// assert_eq!(values.iter_with(Prefetch::Off).next_back(), Some(&999));
/// assert_eq!(values.iter().sum::<u64>(), 999 * 1000 / 2);
/// ```
pub struct ValueChunks<V> {
    /// The full chunks, in order (no allocation until a second chunk).
    done: Vec<Vec<V>>,
    /// The chunk pushes go to, after every full one; kept in the state
    /// itself so that a push reads no other allocation's header.
    tail: Vec<V>,
    /// Where the first value lies: an address to prefetch, never read,
    /// kept here so that prefetching a key's values reads nothing else.
    head: usize,
    len: usize,
    prefetch: Prefetch,
}

impl<V> ValueChunks<V> {
    /// An empty buffer (it allocates on the first push), prefetching on.
    pub fn new() -> Self {
        Self {
            done: Vec::new(),
            tail: Vec::new(),
            head: 0,
            len: 0,
            prefetch: Prefetch::On,
        }
    }

    /// How many values are stored.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no value is stored.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many chunks hold values.
    pub fn chunk_count(&self) -> usize {
        self.chunks().count()
    }

    /// The chunks that hold values, in order.
    pub fn chunks(&self) -> impl Iterator<Item = &[V]> + '_ {
        self.done
            .iter()
            .map(Vec::as_slice)
            .chain(std::iter::once(self.tail.as_slice()))
            .filter(|c| !c.is_empty())
    }

    /// Appends `value` after every stored one, in the last chunk if it
    /// has room, else in a new chunk; stored values never move.
    #[inline]
    pub fn push(&mut self, value: V) {
        if self.tail.len() < self.tail.capacity() {
            self.tail.push(value);
        } else {
            self.push_to_new_chunk(value);
        }
        self.len += 1;
    }

    /// Starts a chunk as large as everything stored so far (within
    /// bounds) and pushes `value` there.
    #[cold]
    fn push_to_new_chunk(&mut self, value: V) {
        let most = max1(MAX_CHUNK_BYTES / max1(size_of::<V>()));
        let capacity = self
            .len
            .clamp(first_chunk::<V>(), most.max(first_chunk::<V>()));
        let full = std::mem::replace(&mut self.tail, Vec::with_capacity(capacity));
        if !full.is_empty() {
            self.done.push(full);
        }
        self.tail.push(value);
        if self.len == 0 {
            self.head = self.tail.as_ptr() as usize;
        }
    }

    /// Moves every value of `other` after this buffer's, chunk by chunk
    /// (no value is copied).
    pub fn append(&mut self, other: Self) {
        if other.len == 0 {
            return;
        }
        if self.len == 0 {
            let prefetch = self.prefetch;
            *self = other;
            self.prefetch = prefetch;
            return;
        }
        let Self {
            done, tail, len, ..
        } = other;
        let mine = std::mem::replace(&mut self.tail, tail);
        self.done.push(mine);
        self.done.extend(done);
        self.len += len;
    }

    /// The prefetch setting [`ValueChunks::iter`] uses.
    pub fn prefetch(&self) -> Prefetch {
        self.prefetch
    }

    /// Sets the prefetch setting [`ValueChunks::iter`] uses.
    pub fn set_prefetch(&mut self, prefetch: Prefetch) {
        self.prefetch = prefetch;
    }

    /// The values in order, prefetching as set ([`Prefetch::On`] unless
    /// changed, or as the job's options say during reduce).
    #[inline]
    pub fn iter(&self) -> Values<'_, V> {
        self.iter_with(self.prefetch)
    }

    /// The values in order, prefetching as `prefetch` says.
    pub fn iter_with(&self, prefetch: Prefetch) -> Values<'_, V> {
        let values = match self.done.split_first() {
            Some((first, rest)) => Values {
                front: first.iter(),
                middle: rest.iter(),
                back: self.tail.iter(),
                len: self.len,
                prefetch,
            },
            None => Values {
                front: self.tail.iter(),
                middle: [].iter(),
                back: [].iter(),
                len: self.len,
                prefetch,
            },
        };
        if prefetch.is_on() {
            let front = values.front.as_slice();
            prefetch::read_span(front.as_ptr(), span(front));
            (0..CHUNKS_AHEAD).for_each(|i| values.prefetch_chunk(i));
        }
        values
    }

    /// Starts fetching the first values into cache (a hint; the runtime
    /// calls it on the next key's values while it reduces one).
    #[inline]
    pub fn prefetch_start(&self) {
        let first = (self.len * size_of::<V>()).min(AHEAD_BYTES);
        prefetch::read_span(std::ptr::without_provenance::<u8>(self.head), first);
    }
}

/// The bytes of `chunk` worth prefetching on entering it.
#[inline]
fn span<V>(chunk: &[V]) -> usize {
    std::mem::size_of_val(chunk).min(AHEAD_BYTES)
}

impl<V> Default for ValueChunks<V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<V: Clone> Clone for ValueChunks<V> {
    /// A copy with the same values in one chunk.
    fn clone(&self) -> Self {
        let mut copy: Self = self.iter_with(Prefetch::Off).cloned().collect();
        copy.prefetch = self.prefetch;
        copy
    }
}

impl<V: fmt::Debug> fmt::Debug for ValueChunks<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.iter_with(Prefetch::Off))
            .finish()
    }
}

/// Equal when they hold equal values in the same order, however chunked.
impl<V: PartialEq> PartialEq for ValueChunks<V> {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len
            && self
                .iter_with(Prefetch::Off)
                .eq(other.iter_with(Prefetch::Off))
    }
}

impl<V: Eq> Eq for ValueChunks<V> {}

/// Keeps the vector as the first chunk (no value is copied); later
/// pushes fill its spare capacity first.
impl<V> From<Vec<V>> for ValueChunks<V> {
    fn from(values: Vec<V>) -> Self {
        Self {
            len: values.len(),
            head: values.as_ptr() as usize,
            done: Vec::new(),
            tail: values,
            prefetch: Prefetch::On,
        }
    }
}

impl<V> FromIterator<V> for ValueChunks<V> {
    fn from_iter<I: IntoIterator<Item = V>>(iter: I) -> Self {
        Self::from(iter.into_iter().collect::<Vec<V>>())
    }
}

impl<V> Extend<V> for ValueChunks<V> {
    fn extend<I: IntoIterator<Item = V>>(&mut self, iter: I) {
        iter.into_iter().for_each(|v| self.push(v));
    }
}

impl<'a, V> IntoIterator for &'a ValueChunks<V> {
    type Item = &'a V;
    type IntoIter = Values<'a, V>;
    fn into_iter(self) -> Values<'a, V> {
        self.iter()
    }
}

impl<V> IntoIterator for ValueChunks<V> {
    type Item = V;
    type IntoIter = IntoValues<V>;
    fn into_iter(self) -> IntoValues<V> {
        let mut chunks = self.done;
        chunks.push(self.tail);
        let mut rest = chunks.into_iter();
        IntoValues {
            current: rest.next().unwrap_or_default().into_iter(),
            rest,
            len: self.len,
        }
    }
}

/// The values of a [`ValueChunks`] in order, by reference, prefetching
/// ahead when asked (from the front only: [`DoubleEndedIterator::next_back`] reads
/// without prefetching).
pub struct Values<'a, V> {
    front: slice::Iter<'a, V>,
    middle: slice::Iter<'a, Vec<V>>,
    back: slice::Iter<'a, V>,
    len: usize,
    prefetch: Prefetch,
}

impl<'a, V> Values<'a, V> {
    /// The iterator's prefetch setting.
    pub fn prefetch(&self) -> Prefetch {
        self.prefetch
    }

    /// On entering a chunk: prefetch the start of the one
    /// [`CHUNKS_AHEAD`] on (the ones before it were asked for already).
    #[inline]
    fn prefetch_next_chunk(&self) {
        self.prefetch_chunk(CHUNKS_AHEAD - 1);
    }

    /// Prefetches the start of the chunk `i` after the front one.
    #[inline]
    fn prefetch_chunk(&self, i: usize) {
        let middle = self.middle.as_slice();
        let next = match middle.get(i) {
            Some(chunk) => chunk.as_slice(),
            None if i == middle.len() => self.back.as_slice(),
            None => return,
        };
        prefetch::read_span(next.as_ptr(), span(next));
    }

    /// After yielding a value: prefetch the one [`AHEAD_BYTES`] on, if it
    /// is in this chunk and starts a cache line not asked for yet.
    #[inline(always)]
    fn prefetch_ahead(&self) {
        if let Some(v) = self.front.as_slice().get(ahead::<V>()) {
            let address = v as *const V as usize;
            if address % LINE < max1(size_of::<V>()) {
                prefetch::read_span(v, size_of::<V>().min(AHEAD_BYTES));
            }
        }
    }
}

impl<'a, V> Iterator for Values<'a, V> {
    type Item = &'a V;

    #[inline]
    fn next(&mut self) -> Option<&'a V> {
        loop {
            if let Some(v) = self.front.next() {
                self.len -= 1;
                if self.prefetch.is_on() {
                    self.prefetch_ahead();
                }
                return Some(v);
            }
            self.front = match self.middle.next() {
                Some(chunk) => chunk.iter(),
                None if self.back.len() > 0 => std::mem::take(&mut self.back),
                None => return None,
            };
            if self.prefetch.is_on() {
                self.prefetch_next_chunk();
            }
        }
    }

    #[inline]
    fn fold<B, F>(mut self, init: B, mut f: F) -> B
    where
        F: FnMut(B, &'a V) -> B,
    {
        let mut acc = init;
        loop {
            acc = fold_chunk(self.front.as_slice(), acc, &mut f, self.prefetch);
            self.front = match self.middle.next() {
                Some(chunk) => chunk.iter(),
                None if self.back.len() > 0 => std::mem::take(&mut self.back),
                None => return acc,
            };
            if self.prefetch.is_on() {
                self.prefetch_next_chunk();
            }
        }
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.len, Some(self.len))
    }
}

/// Folds one chunk's values, with prefetch on asking for the line
/// [`AHEAD_BYTES`] on once per line's worth of values.
#[inline(always)]
fn fold_chunk<'a, V, B>(
    chunk: &'a [V],
    mut acc: B,
    f: &mut impl FnMut(B, &'a V) -> B,
    prefetch: Prefetch,
) -> B {
    if !prefetch.is_on() {
        return chunk.iter().fold(acc, f);
    }
    let step = max1(LINE / max1(size_of::<V>()));
    for (g, group) in chunk.chunks(step).enumerate() {
        if let Some(v) = chunk.get(g * step + ahead::<V>()) {
            prefetch::read_span(v, size_of::<V>().min(AHEAD_BYTES));
        }
        acc = group.iter().fold(acc, &mut *f);
    }
    acc
}

impl<V> DoubleEndedIterator for Values<'_, V> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(v) = self.back.next_back() {
                self.len -= 1;
                return Some(v);
            }
            match self.middle.next_back() {
                Some(chunk) => self.back = chunk.iter(),
                None => break,
            }
        }
        let v = self.front.next_back()?;
        self.len -= 1;
        Some(v)
    }
}

impl<V> ExactSizeIterator for Values<'_, V> {}

impl<V> FusedIterator for Values<'_, V> {}

impl<V> Clone for Values<'_, V> {
    fn clone(&self) -> Self {
        Self {
            front: self.front.clone(),
            middle: self.middle.clone(),
            back: self.back.clone(),
            len: self.len,
            prefetch: self.prefetch,
        }
    }
}

impl<V: fmt::Debug> fmt::Debug for Values<'_, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Values")
            .field("len", &self.len)
            .field("prefetch", &self.prefetch)
            .finish_non_exhaustive()
    }
}

/// The values of a [`ValueChunks`] in order, by value (no prefetching).
pub struct IntoValues<V> {
    current: std::vec::IntoIter<V>,
    rest: std::vec::IntoIter<Vec<V>>,
    len: usize,
}

impl<V> Iterator for IntoValues<V> {
    type Item = V;

    #[inline]
    fn next(&mut self) -> Option<V> {
        loop {
            if let Some(v) = self.current.next() {
                self.len -= 1;
                return Some(v);
            }
            self.current = self.rest.next()?.into_iter();
        }
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.len, Some(self.len))
    }
}

impl<V> ExactSizeIterator for IntoValues<V> {}

impl<V> FusedIterator for IntoValues<V> {}

impl<V: fmt::Debug> fmt::Debug for IntoValues<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IntoValues")
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests;
