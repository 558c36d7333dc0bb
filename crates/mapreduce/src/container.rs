//! Containers: where a worker's emitted pairs are folded during map, and
//! how they are cut into partitions for reduce.
//!
//! Phoenix §IV-C1: no single layout fits every job, so the job chooses.
//! An array indexed by the key (small integer keys: histogram bins,
//! cluster ids), a hash table of a fixed bucket count (no resizing, chained
//! buckets; good when the key count is known), or a growable hash table
//! (the default). Each worker has its own container, so map threads never
//! share one and never contend; the hash layouts are split into one table
//! per reduce partition as keys arrive (by the hash's high bits), so that
//! reduce reads one partition of every worker without scanning the rest.
//! Containers fold values with the job's combiner; they do not reduce.

use std::hash::{BuildHasher, Hash};

use hashbrown::HashTable;

use crate::combiner::Combiner;

/// The container a job's map output goes into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum ContainerKind {
    /// Slots `0..keys`, indexed by `Job::key_index`; other keys go to a
    /// growable overflow table.
    Array {
        /// Array slots per worker: the indices `0..keys`.
        keys: usize,
    },
    /// A hash table with this many buckets per worker, never resized.
    FixedHash {
        /// Buckets per worker, rounded up to a multiple of the reduce
        /// partitions (at least one per partition).
        buckets: usize,
    },
    /// A hash table per partition that grows as keys arrive, starting
    /// with room for `capacity` keys per worker.
    GrowableHash {
        /// Keys per worker the tables have room for before they first
        /// grow, spread over the partitions (default 1024).
        capacity: usize,
    },
}

impl Default for ContainerKind {
    fn default() -> Self {
        Self::GrowableHash { capacity: 1024 }
    }
}

impl ContainerKind {
    /// Parses the CLI's `--container`: `array` (slots for `own_keys`, the
    /// application's key range), `array:N`, `fixed-hash:N` (N buckets per
    /// worker), `hash` (growable, the default start) or `hash:N` (room for
    /// N keys per worker before it first grows).
    pub fn parse(spec: &str, own_keys: usize) -> Result<Self, String> {
        let (name, size) = match spec.split_once(':') {
            Some((name, size)) => {
                let size: usize = size.trim().parse().map_err(|_| {
                    format!("container size `{size}` in `{spec}` is not a whole number")
                })?;
                (name.trim(), Some(size))
            }
            None => (spec.trim(), None),
        };
        match (name, size) {
            ("array", size) => Ok(Self::Array {
                keys: size.unwrap_or(own_keys),
            }),
            ("fixed-hash", Some(buckets)) if buckets > 0 => Ok(Self::FixedHash { buckets }),
            ("fixed-hash", _) => Err(format!(
                "`{spec}`: a fixed hash table needs its buckets per worker, e.g. fixed-hash:4096"
            )),
            ("hash", size) => Ok(Self::GrowableHash {
                capacity: size.unwrap_or(1024),
            }),
            _ => Err(format!(
                "unknown container `{spec}` (array, array:N, fixed-hash:N, hash, hash:N)"
            )),
        }
    }

    /// The container as `parse` reads it (`fixed-hash:4096`).
    pub fn spec(&self) -> String {
        match self {
            Self::Array { keys } => format!("array:{keys}"),
            Self::FixedHash { buckets } => format!("fixed-hash:{buckets}"),
            Self::GrowableHash { capacity } => format!("hash:{capacity}"),
        }
    }
}

/// The hash every container and the reduce merge agree on.
pub(crate) fn hash_of<K: Hash>(key: &K) -> u64 {
    foldhash::fast::FixedState::with_seed(0x006e_756d_616b_6974).hash_one(key)
}

/// The partition of a hash among `parts` (its high bits).
#[inline]
pub(crate) fn part_of(hash: u64, parts: usize) -> usize {
    (((hash >> 32) * parts as u64) >> 32) as usize
}

enum Layout<K, C> {
    Array {
        slots: Vec<Option<(K, C)>>,
        overflow: Vec<HashTable<(K, C)>>,
    },
    Fixed {
        buckets: Vec<Vec<(K, C)>>,
    },
    Growable {
        tables: Vec<HashTable<(K, C)>>,
    },
}

/// One worker's container.
pub(crate) struct Store<K, C> {
    layout: Layout<K, C>,
    parts: usize,
}

impl<K: Hash + Eq, C> Store<K, C> {
    pub(crate) fn new(kind: ContainerKind, parts: usize) -> Self {
        let parts = parts.max(1);
        let tables = |cap: usize| (0..parts).map(|_| HashTable::with_capacity(cap)).collect();
        let layout = match kind {
            ContainerKind::Array { keys } => Layout::Array {
                slots: (0..keys).map(|_| None).collect(),
                overflow: tables(0),
            },
            // A whole number of buckets per partition, so that a bucket's
            // partition is the one `part_of` gives its keys.
            ContainerKind::FixedHash { buckets } => Layout::Fixed {
                buckets: (0..buckets.max(1).div_ceil(parts) * parts)
                    .map(|_| Vec::new())
                    .collect(),
            },
            ContainerKind::GrowableHash { capacity } => Layout::Growable {
                tables: tables(capacity / parts),
            },
        };
        Self { layout, parts }
    }

    pub(crate) fn is_array(&self) -> bool {
        matches!(self.layout, Layout::Array { .. })
    }

    /// Folds `value` into `key`'s state (`index`: its array slot, if any).
    #[inline]
    pub(crate) fn emit<V>(&mut self, index: Option<usize>, key: K, value: V)
    where
        C: Combiner<V>,
    {
        let parts = self.parts;
        match &mut self.layout {
            Layout::Array { slots, overflow } => match index.and_then(|i| slots.get_mut(i)) {
                Some(Some((_, state))) => state.add(value),
                Some(slot) => *slot = Some((key, C::start(value))),
                None => fold_into_tables(overflow, parts, key, value),
            },
            Layout::Fixed { buckets } => {
                let b = part_of(hash_of(&key), buckets.len());
                let bucket = &mut buckets[b];
                match bucket.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, state)) => state.add(value),
                    None => bucket.push((key, C::start(value))),
                }
            }
            Layout::Growable { tables } => fold_into_tables(tables, parts, key, value),
        }
    }

    /// The pairs of every partition, in partition order.
    pub(crate) fn into_parts(self) -> Vec<Vec<(K, C)>> {
        let parts = self.parts;
        match self.layout {
            Layout::Array { slots, overflow } => {
                let per_part = slots.len().div_ceil(parts).max(1);
                let mut out: Vec<Vec<(K, C)>> = overflow
                    .into_iter()
                    .map(|t| t.into_iter().collect())
                    .collect();
                for (i, slot) in slots.into_iter().enumerate() {
                    if let Some(pair) = slot {
                        out[i / per_part].push(pair);
                    }
                }
                out
            }
            Layout::Fixed { buckets } => {
                let per_part = buckets.len() / parts;
                let mut out: Vec<Vec<(K, C)>> = (0..parts).map(|_| Vec::new()).collect();
                for (b, bucket) in buckets.into_iter().enumerate() {
                    // floor(floor(x * n) / m) = floor(x * n / m) for whole m.
                    out[b / per_part].extend(bucket);
                }
                out
            }
            Layout::Growable { tables } => tables
                .into_iter()
                .map(|t| t.into_iter().collect())
                .collect(),
        }
    }
}

/// Folds into the table of the key's partition.
#[inline]
fn fold_into_tables<K: Hash + Eq, C: Combiner<V>, V>(
    tables: &mut [HashTable<(K, C)>],
    parts: usize,
    key: K,
    value: V,
) {
    let hash = hash_of(&key);
    let table = &mut tables[part_of(hash, parts)];
    match table.find_mut(hash, |(k, _)| *k == key) {
        Some((_, state)) => state.add(value),
        None => {
            table.insert_unique(hash, (key, C::start(value)), |(k, _)| hash_of(k));
        }
    }
}

/// Merges the pairs of one partition from every worker into one state
/// per key.
pub(crate) fn merge_part<K: Hash + Eq, C, V>(from_workers: Vec<Vec<(K, C)>>) -> Vec<(K, C)>
where
    C: Combiner<V>,
{
    let total: usize = from_workers.iter().map(Vec::len).sum();
    if from_workers.iter().filter(|p| !p.is_empty()).count() <= 1 {
        return from_workers.into_iter().flatten().collect();
    }
    let mut table: HashTable<(K, C)> = HashTable::with_capacity(total);
    for (key, state) in from_workers.into_iter().flatten() {
        let hash = hash_of(&key);
        match table.find_mut(hash, |(k, _)| *k == key) {
            Some((_, mine)) => mine.merge(state),
            None => {
                table.insert_unique(hash, (key, state), |(k, _)| hash_of(k));
            }
        }
    }
    table.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::combiner::{KeepAll, Sum};

    fn fill(kind: ContainerKind, keys: &[u32], index: bool) -> Vec<Vec<(u32, Sum<u64>)>> {
        let mut store: Store<u32, Sum<u64>> = Store::new(kind, 4);
        for &k in keys {
            store.emit(index.then_some(k as usize), k, 1u64);
        }
        store.into_parts()
    }

    fn counts(parts: Vec<Vec<(u32, Sum<u64>)>>) -> Vec<(u32, u64)> {
        let mut all: Vec<(u32, u64)> = parts.into_iter().flatten().map(|(k, s)| (k, s.0)).collect();
        all.sort();
        all
    }

    #[test]
    fn every_layout_folds_the_same_counts() {
        let keys: Vec<u32> = (0..5000u32).map(|i| (i * 7919) % 300).collect();
        let mut want: Vec<(u32, u64)> = (0..300).map(|k| (k, 0)).collect();
        keys.iter().for_each(|&k| want[k as usize].1 += 1);
        for (kind, index) in [
            (ContainerKind::Array { keys: 300 }, true),
            (ContainerKind::Array { keys: 100 }, true), // most keys overflow
            (ContainerKind::FixedHash { buckets: 64 }, false),
            (ContainerKind::FixedHash { buckets: 1 }, false),
            (ContainerKind::GrowableHash { capacity: 0 }, false),
        ] {
            assert_eq!(counts(fill(kind, &keys, index)), want, "{kind:?}");
        }
    }

    #[test]
    fn a_key_lands_in_the_same_partition_everywhere() {
        let keys: Vec<u32> = (0..2000).collect();
        let fixed = fill(ContainerKind::FixedHash { buckets: 37 }, &keys, false);
        let growable = fill(ContainerKind::GrowableHash { capacity: 16 }, &keys, false);
        for (a, b) in fixed.iter().zip(&growable) {
            let (mut a, mut b): (Vec<u32>, Vec<u32>) = (
                a.iter().map(|p| p.0).collect(),
                b.iter().map(|p| p.0).collect(),
            );
            a.sort();
            b.sort();
            assert_eq!(a, b);
        }
    }

    #[test]
    fn merging_partitions_combines_equal_keys() {
        let a = vec![
            (1u32, KeepAll::from(vec![1u8])),
            (2, KeepAll::from(vec![2])),
        ];
        let b = vec![
            (2u32, KeepAll::from(vec![3u8])),
            (3, KeepAll::from(vec![4])),
        ];
        let mut merged = merge_part::<u32, KeepAll<u8>, u8>(vec![a, b]);
        merged.sort_by_key(|p| p.0);
        let keys: Vec<u32> = merged.iter().map(|p| p.0).collect();
        assert_eq!(keys, vec![1, 2, 3]);
        let mut two: Vec<u8> = merged[1].1.iter().copied().collect();
        two.sort();
        assert_eq!(two, vec![2, 3]);
    }
    #[test]
    fn container_specs_parse_and_print_back() {
        for (spec, kind) in [
            ("array", ContainerKind::Array { keys: 768 }),
            ("array:12", ContainerKind::Array { keys: 12 }),
            (
                "fixed-hash:4096",
                ContainerKind::FixedHash { buckets: 4096 },
            ),
            ("hash", ContainerKind::GrowableHash { capacity: 1024 }),
            ("hash:16", ContainerKind::GrowableHash { capacity: 16 }),
        ] {
            let parsed = ContainerKind::parse(spec, 768).unwrap();
            assert_eq!(parsed, kind, "{spec}");
            assert_eq!(ContainerKind::parse(&parsed.spec(), 0).unwrap(), parsed);
        }
        for bad in ["fixed-hash", "fixed-hash:0", "array:x", "tree", "hash:-1"] {
            assert!(ContainerKind::parse(bad, 8).is_err(), "{bad}");
        }
    }
}
