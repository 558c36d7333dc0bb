//! Plain sequential implementations of every operator: the yardstick the
//! tests hold the parallel operators against. Obviously correct, not fast.

use std::collections::{BTreeMap, HashMap};

use crate::aggregate::Group;
use crate::join::{JoinKind, JoinRow};
use crate::tuple::Tuple;

/// The rows of `left JOIN right` of the given kind, sorted.
pub fn join(left: &[Tuple], right: &[Tuple], kind: JoinKind) -> Vec<JoinRow> {
    let mut by_key: HashMap<u64, Vec<u64>> = HashMap::new();
    for s in right {
        by_key.entry(s.key).or_default().push(s.payload);
    }
    let mut rows = Vec::new();
    for r in left {
        let matches = by_key.get(&r.key);
        let row = |right| JoinRow {
            key: r.key,
            left: r.payload,
            right,
        };
        match (kind, matches) {
            (JoinKind::Inner | JoinKind::LeftOuter, Some(m)) => {
                rows.extend(m.iter().map(|&p| row(Some(p))));
            }
            (JoinKind::LeftOuter, None) | (JoinKind::Anti, None) | (JoinKind::Semi, Some(_)) => {
                rows.push(row(None));
            }
            _ => {}
        }
    }
    rows.sort_unstable();
    rows
}

/// The groups of `input` by key, sorted by key.
pub fn aggregate(input: &[Tuple]) -> Vec<Group> {
    let mut groups: BTreeMap<u64, Group> = BTreeMap::new();
    for t in input {
        let v = t.payload as i64;
        groups
            .entry(t.key)
            .and_modify(|g| g.add(v))
            .or_insert_with(|| Group::of(t.key, v));
    }
    groups.into_values().collect()
}

/// `input` sorted by key, then payload (compare with a sort's output
/// after sorting equal keys by payload).
pub fn sort(input: &[Tuple]) -> Vec<Tuple> {
    let mut v = input.to_vec();
    v.sort_unstable();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_kinds_on_a_small_example() {
        let l = [
            Tuple::new(1, 10),
            Tuple::new(2, 20),
            Tuple::new(2, 21),
            Tuple::new(3, 30),
        ];
        let r = [Tuple::new(2, 200), Tuple::new(2, 201), Tuple::new(4, 400)];
        assert_eq!(join(&l, &r, JoinKind::Inner).len(), 4);
        assert_eq!(join(&l, &r, JoinKind::LeftOuter).len(), 6);
        let semi = join(&l, &r, JoinKind::Semi);
        assert_eq!(semi.iter().map(|r| r.left).collect::<Vec<_>>(), [20, 21]);
        let anti = join(&l, &r, JoinKind::Anti);
        assert_eq!(anti.iter().map(|r| r.left).collect::<Vec<_>>(), [10, 30]);
    }

    #[test]
    fn aggregate_computes_all_five() {
        let g = aggregate(&[
            Tuple::new(5, 3),
            Tuple::new(5, (-7i64) as u64),
            Tuple::new(1, 0),
        ]);
        assert_eq!(g.len(), 2);
        assert_eq!((g[1].count, g[1].sum, g[1].min, g[1].max), (2, -4, -7, 3));
        assert_eq!(g[1].avg(), -2.0);
    }
}
