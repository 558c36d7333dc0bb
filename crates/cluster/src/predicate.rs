//! Join predicates: the equi-join, joined by hash distribution, and the
//! non-equi joins, joined by broadcasting one relation (Chakraborty §II):
//! the band join |r.key - s.key| <= w and the inequality r.key < s.key.
//!
//! A non-equi join here is computed against a sorted relation: for each
//! row of the broadcast side, the matching rows of the stationary side
//! form one contiguous range of the sorted keys, found by two binary
//! searches. This module answers "which range"; it runs no tasks.

use serde::{Deserialize, Serialize};

use crate::message::Side;

/// Which rows of R x S belong to the result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Predicate {
    /// r.key == s.key.
    Equal,
    /// |r.key - s.key| <= width.
    Band {
        /// The largest key difference that still matches (0 is equality).
        width: u64,
    },
    /// r.key < s.key.
    Less,
}

impl Predicate {
    /// Parses `eq`, `band:W` or `lt`.
    ///
    /// # Examples
    ///
    /// ```
    /// use numakit_cluster::Predicate;
    ///
    /// let band = Predicate::parse("band:1_000").unwrap();
    /// assert_eq!(band, Predicate::Band { width: 1000 });
    /// assert!(band.matches(5_000, 4_000) && !band.matches(5_000, 3_999));
    /// assert!(!band.is_equi());
    /// assert_eq!(Predicate::parse("eq"), Ok(Predicate::Equal));
    /// assert!(Predicate::parse("gt").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<Self, String> {
        match text.split_once(':') {
            None if text == "eq" => Ok(Predicate::Equal),
            None if text == "lt" => Ok(Predicate::Less),
            Some(("band", w)) => w
                .replace('_', "")
                .parse()
                .map(|width| Predicate::Band { width })
                .map_err(|_| format!("band:W needs a whole number width, not `{w}`")),
            _ => Err(format!("unknown predicate `{text}` (eq, band:W, lt)")),
        }
    }

    /// The predicate as a formula over `r.key` and `s.key`, for reports.
    pub fn describe(&self) -> String {
        match self {
            Predicate::Equal => "r.key = s.key".into(),
            Predicate::Band { width } => format!("|r.key - s.key| <= {width}"),
            Predicate::Less => "r.key < s.key".into(),
        }
    }

    /// Whether this is the equi-join (joined by hash distribution; the
    /// others are joined by broadcast).
    pub fn is_equi(&self) -> bool {
        *self == Predicate::Equal
    }

    /// Whether (r, s) matches.
    pub fn matches(&self, r: u64, s: u64) -> bool {
        match *self {
            Predicate::Equal => r == s,
            Predicate::Band { width } => r.abs_diff(s) <= width,
            Predicate::Less => r < s,
        }
    }

    /// The keys of the other side that match `key` of `side`, as an
    /// inclusive range (`None` when nothing can match).
    pub fn partner_range(&self, side: Side, key: u64) -> Option<(u64, u64)> {
        match (*self, side) {
            (Predicate::Equal, _) => Some((key, key)),
            (Predicate::Band { width }, _) => {
                Some((key.saturating_sub(width), key.saturating_add(width)))
            }
            (Predicate::Less, Side::Left) => key.checked_add(1).map(|lo| (lo, u64::MAX)),
            (Predicate::Less, Side::Right) => key.checked_sub(1).map(|hi| (0, hi)),
        }
    }
}

/// Index range of `sorted` (ascending keys) whose keys lie in `lo..=hi`.
pub fn key_range(sorted: &[u64], lo: u64, hi: u64) -> std::ops::Range<usize> {
    let a = sorted.partition_point(|&k| k < lo);
    let b = sorted.partition_point(|&k| k <= hi);
    a..b.max(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_agree_with_the_predicate() {
        let keys: Vec<u64> = vec![0, 0, 1, 5, 9, 10, u64::MAX - 1, u64::MAX];
        let preds = [
            Predicate::Equal,
            Predicate::Band { width: 0 },
            Predicate::Band { width: 4 },
            Predicate::Band { width: u64::MAX },
            Predicate::Less,
        ];
        for p in preds {
            for side in [Side::Left, Side::Right] {
                for &k in keys.iter().chain(&[3, u64::MAX / 2]) {
                    let want: Vec<usize> = (0..keys.len())
                        .filter(|&i| match side {
                            Side::Left => p.matches(k, keys[i]),
                            Side::Right => p.matches(keys[i], k),
                        })
                        .collect();
                    let got: Vec<usize> = match p.partner_range(side, k) {
                        Some((lo, hi)) => key_range(&keys, lo, hi).collect(),
                        None => Vec::new(),
                    };
                    assert_eq!(got, want, "{p:?} {side:?} {k}");
                }
            }
        }
    }

    #[test]
    fn parses() {
        assert_eq!(Predicate::parse("eq"), Ok(Predicate::Equal));
        assert_eq!(
            Predicate::parse("band:1_000"),
            Ok(Predicate::Band { width: 1000 })
        );
        assert_eq!(Predicate::parse("lt"), Ok(Predicate::Less));
        assert!(Predicate::parse("band:x").is_err());
        assert!(Predicate::parse("gt").is_err());
    }
}
