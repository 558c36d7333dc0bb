//! `IdSet`: a compact set of small integer ids (CPU ids or node ids).
//!
//! Linux describes CPU and node sets in two text forms: the list form
//! (`0-3,8,10-11`, as in `cpulist` files and `Cpus_allowed_list`) and the
//! hexadecimal mask form (`ff,00000003`, as in `Cpus_allowed`). This module
//! parses and prints both. It is a plain value type; it deliberately knows
//! nothing about which ids exist on a machine (that is the topology's job).

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::TopologyError;

/// The largest id accepted when parsing, to refuse absurd input such as
/// `0-4000000000` before allocating for it. Linux caps CPUs at 8192 today.
pub const MAX_ID: u32 = 1 << 16;

/// A set of ids, stored as a bit mask. Equality ignores trailing zero
/// words, so masks of different widths (the kernel's 1024-bit masks, ours)
/// compare by content.
#[derive(Clone, Default)]
pub struct IdSet {
    words: Vec<u64>,
}

impl IdSet {
    fn significant(&self) -> &[u64] {
        let len = self
            .words
            .iter()
            .rposition(|&w| w != 0)
            .map_or(0, |i| i + 1);
        &self.words[..len]
    }
}

impl PartialEq for IdSet {
    fn eq(&self, other: &Self) -> bool {
        self.significant() == other.significant()
    }
}

impl Eq for IdSet {}

impl std::hash::Hash for IdSet {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.significant().hash(state);
    }
}

/// A set of CPU ids.
pub type CpuSet = IdSet;
/// A set of NUMA node ids.
pub type NodeSet = IdSet;

impl IdSet {
    /// The empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// A set holding exactly one id.
    pub fn single(id: u32) -> Self {
        let mut set = Self::new();
        set.insert(id);
        set
    }

    /// The ids `0..n`.
    pub fn first_n(n: u32) -> Self {
        (0..n).collect()
    }

    /// Adds `id`; returns whether it was new.
    pub fn insert(&mut self, id: u32) -> bool {
        let (word, bit) = (id as usize / 64, id % 64);
        if self.words.len() <= word {
            self.words.resize(word + 1, 0);
        }
        let was = self.words[word] & (1 << bit) != 0;
        self.words[word] |= 1 << bit;
        !was
    }

    /// Removes `id`; returns whether it was present.
    pub fn remove(&mut self, id: u32) -> bool {
        let was = self.contains(id);
        if was {
            self.words[id as usize / 64] &= !(1 << (id % 64));
        }
        was
    }

    /// Whether `id` is in the set.
    pub fn contains(&self, id: u32) -> bool {
        self.words
            .get(id as usize / 64)
            .is_some_and(|w| w & (1 << (id % 64)) != 0)
    }

    /// Number of ids in the set.
    pub fn len(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// The ids in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &word)| {
            let mut rest = word;
            std::iter::from_fn(move || {
                if rest == 0 {
                    return None;
                }
                let bit = rest.trailing_zeros();
                rest &= rest - 1;
                Some(i as u32 * 64 + bit)
            })
        })
    }

    /// The smallest id, if any.
    pub fn first(&self) -> Option<u32> {
        self.iter().next()
    }

    /// The largest id, if any.
    pub fn last(&self) -> Option<u32> {
        self.iter().last()
    }

    /// Ids in both sets.
    pub fn intersection(&self, other: &Self) -> Self {
        let words = self
            .words
            .iter()
            .zip(&other.words)
            .map(|(a, b)| a & b)
            .collect();
        Self { words }
    }

    /// Ids in either set.
    pub fn union(&self, other: &Self) -> Self {
        let n = self.words.len().max(other.words.len());
        let get = |v: &Vec<u64>, i: usize| v.get(i).copied().unwrap_or(0);
        Self {
            words: (0..n)
                .map(|i| get(&self.words, i) | get(&other.words, i))
                .collect(),
        }
    }

    /// Ids in `self` but not in `other`.
    pub fn difference(&self, other: &Self) -> Self {
        let words = self
            .words
            .iter()
            .enumerate()
            .map(|(i, a)| a & !other.words.get(i).copied().unwrap_or(0))
            .collect();
        Self { words }
    }

    /// Whether every id of `self` is in `other`.
    pub fn is_subset(&self, other: &Self) -> bool {
        self.difference(other).is_empty()
    }

    /// The raw 64-bit words, lowest ids first (the layout `sched_setaffinity`
    /// and `mbind` expect on 64-bit Linux).
    pub fn as_words(&self) -> &[u64] {
        &self.words
    }

    /// Builds a set from raw 64-bit words, lowest ids first.
    pub fn from_words(words: Vec<u64>) -> Self {
        Self { words }
    }

    /// Parses the list form: `""`, `"3"`, `"0-3,8,10-11"`. Whitespace around
    /// the text is ignored.
    pub fn parse_list(text: &str) -> Result<Self, TopologyError> {
        let bad = |why: &str| TopologyError::BadIdList {
            text: text.trim().to_string(),
            why: why.to_string(),
        };
        let mut set = Self::new();
        let text = text.trim();
        if text.is_empty() {
            return Ok(set);
        }
        for part in text.split(',') {
            let part = part.trim();
            let (lo, hi) = match part.split_once('-') {
                Some((lo, hi)) => (parse_id(lo, text)?, parse_id(hi, text)?),
                None => {
                    let id = parse_id(part, text)?;
                    (id, id)
                }
            };
            if lo > hi {
                return Err(bad("a range runs backwards"));
            }
            for id in lo..=hi {
                set.insert(id);
            }
        }
        Ok(set)
    }

    /// Parses the hexadecimal mask form used by `Cpus_allowed`: comma
    /// separated 32-bit groups, most significant first (`"ff,00000003"`).
    pub fn parse_mask(text: &str) -> Result<Self, TopologyError> {
        let text = text.trim();
        let mut set = Self::new();
        for (group_index, group) in text.rsplit(',').enumerate() {
            let value =
                u32::from_str_radix(group.trim(), 16).map_err(|_| TopologyError::BadIdList {
                    text: text.to_string(),
                    why: format!("`{group}` is not a hexadecimal group"),
                })?;
            for bit in 0..32 {
                if value & (1 << bit) != 0 {
                    let id = group_index as u32 * 32 + bit;
                    if id > MAX_ID {
                        return Err(TopologyError::BadIdList {
                            text: text.to_string(),
                            why: format!("id {id} exceeds the limit of {MAX_ID}"),
                        });
                    }
                    set.insert(id);
                }
            }
        }
        Ok(set)
    }

    /// The list form, e.g. `0-3,8`; the empty set prints as an empty string.
    pub fn to_list_string(&self) -> String {
        let mut out = String::new();
        let mut ids = self.iter().peekable();
        while let Some(start) = ids.next() {
            let mut end = start;
            while ids.peek() == Some(&(end + 1)) {
                end += 1;
                ids.next();
            }
            if !out.is_empty() {
                out.push(',');
            }
            if start == end {
                out.push_str(&start.to_string());
            } else {
                out.push_str(&format!("{start}-{end}"));
            }
        }
        out
    }
}

fn parse_id(text: &str, whole: &str) -> Result<u32, TopologyError> {
    let id: u32 = text.trim().parse().map_err(|_| TopologyError::BadIdList {
        text: whole.to_string(),
        why: format!("`{}` is not a number", text.trim()),
    })?;
    if id > MAX_ID {
        return Err(TopologyError::BadIdList {
            text: whole.to_string(),
            why: format!("id {id} exceeds the limit of {MAX_ID}"),
        });
    }
    Ok(id)
}

impl FromIterator<u32> for IdSet {
    fn from_iter<I: IntoIterator<Item = u32>>(iter: I) -> Self {
        let mut set = Self::new();
        for id in iter {
            set.insert(id);
        }
        set
    }
}

impl fmt::Display for IdSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_list_string())
    }
}

impl fmt::Debug for IdSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{{}}}", self.to_list_string())
    }
}

/// Serialized as an ascending array of ids, the easiest form for scripts.
impl Serialize for IdSet {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for IdSet {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let ids = Vec::<u32>::deserialize(deserializer)?;
        if let Some(id) = ids.iter().find(|&&id| id > MAX_ID) {
            return Err(serde::de::Error::custom(format!(
                "id {id} exceeds the limit of {MAX_ID}"
            )));
        }
        Ok(ids.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_form_round_trips() {
        for text in ["", "0", "0-3", "0-3,8,10-11", "1,3,5", "63-65,127"] {
            let set = IdSet::parse_list(text).unwrap();
            assert_eq!(set.to_list_string(), text);
        }
        let set = IdSet::parse_list(" 2 , 0-1\n").unwrap();
        assert_eq!(set.iter().collect::<Vec<_>>(), vec![0, 1, 2]);
    }

    #[test]
    fn list_form_rejects_garbage() {
        for text in ["a", "3-1", "1-", "-", "1,,2", "70000"] {
            assert!(IdSet::parse_list(text).is_err(), "{text:?} should fail");
        }
    }

    #[test]
    fn mask_form_parses_groups() {
        let set = IdSet::parse_mask("00000001,80000003").unwrap();
        assert_eq!(set.iter().collect::<Vec<_>>(), vec![0, 1, 31, 32]);
        assert!(IdSet::parse_mask("xyz").is_err());
        assert_eq!(IdSet::parse_mask("0").unwrap().len(), 0);
    }

    #[test]
    fn set_algebra() {
        let a = IdSet::parse_list("0-7").unwrap();
        let b = IdSet::parse_list("4-11,100").unwrap();
        assert_eq!(a.intersection(&b).to_list_string(), "4-7");
        assert_eq!(a.union(&b).to_list_string(), "0-11,100");
        assert_eq!(a.difference(&b).to_list_string(), "0-3");
        assert!(IdSet::parse_list("4-5").unwrap().is_subset(&a));
        assert!(!b.is_subset(&a));
        assert_eq!(b.len(), 9);
        assert_eq!(b.first(), Some(4));
        assert_eq!(b.last(), Some(100));
    }

    #[test]
    fn equality_ignores_mask_width() {
        let narrow = IdSet::parse_list("0-1").unwrap();
        let wide = IdSet::from_words(vec![3, 0, 0, 0]);
        assert_eq!(narrow, wide);
        assert_eq!(IdSet::from_words(vec![0; 4]), IdSet::new());
        assert_ne!(narrow, IdSet::single(0));
    }

    #[test]
    fn remove_and_json() {
        let mut set = IdSet::parse_list("1-3").unwrap();
        assert!(set.remove(2));
        assert!(!set.remove(2));
        let json = serde_json::to_string(&set).unwrap();
        assert_eq!(json, "[1,3]");
        let back: IdSet = serde_json::from_str(&json).unwrap();
        assert_eq!(back, set);
    }
}
