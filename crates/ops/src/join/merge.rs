//! The merge join of two runs sorted by key: the kernel of the MPSM join.
//!
//! Equal-key groups on both sides meet once: an inner or left outer join
//! emits their cross product (or only counts it, when the sink just
//! counts), and every R tuple of a group that met S is flagged matched,
//! so that the caller can emit outer, semi and anti rows once all S runs
//! have been merged. The kernel reads slices; it neither sorts nor knows
//! where the runs live.

use crate::join::sink::Sink;
use crate::join::JoinKind;
use crate::tuple::Tuple;

/// Joins `r` (sorted by key) with `s` (sorted by key). Inner and left
/// outer joins emit every matching pair into `sink`; all other kinds need
/// `matched` (one flag per tuple of `r`), where every matched R tuple is
/// flagged.
pub(super) fn merge_join(
    r: &[Tuple],
    s: &[Tuple],
    kind: JoinKind,
    matched: &mut [bool],
    sink: &mut Sink,
) {
    let (mut i, mut j) = (0, 0);
    while i < r.len() && j < s.len() {
        let (r_key, s_key) = (r[i].key, s[j].key);
        if r_key < s_key {
            i += 1;
        } else if s_key < r_key {
            j += 1;
        } else {
            let r_end = group_end(r, i);
            let s_end = group_end(s, j);
            if matches!(kind, JoinKind::Inner | JoinKind::LeftOuter) {
                emit_pairs(&r[i..r_end], &s[j..s_end], sink);
            }
            if kind != JoinKind::Inner {
                matched[i..r_end].fill(true);
            }
            i = r_end;
            j = s_end;
        }
    }
}

/// The end of the group of tuples with the key of `run[start]`.
#[inline(always)]
fn group_end(run: &[Tuple], start: usize) -> usize {
    let key = run[start].key;
    let mut end = start + 1;
    while end < run.len() && run[end].key == key {
        end += 1;
    }
    end
}

/// The cross product of two groups with the same key.
#[inline(always)]
fn emit_pairs(r: &[Tuple], s: &[Tuple], sink: &mut Sink) {
    if sink.count_only((r.len() * s.len()) as u64) {
        return;
    }
    for a in r {
        for b in s {
            sink.emit(a.key, a.payload, Some(b.payload));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::join::sink::finish;
    use crate::join::JoinOutput;
    use crate::reference;

    fn sorted(keys: &[u64]) -> Vec<Tuple> {
        let mut v: Vec<Tuple> = keys
            .iter()
            .enumerate()
            .map(|(i, &k)| Tuple::new(k, i as u64))
            .collect();
        v.sort_unstable_by_key(|t| t.key);
        v
    }

    #[test]
    fn merges_groups_like_the_reference() {
        let r = sorted(&[0, 1, 1, 3, 5, 5, 5, u64::MAX]);
        let s = sorted(&[1, 1, 2, 5, 5, u64::MAX, u64::MAX]);
        let mut sink = Sink::new(JoinOutput::Materialize);
        let mut matched = vec![false; r.len()];
        merge_join(&r, &s, JoinKind::LeftOuter, &mut matched, &mut sink);
        let mut rows = finish([sink], Vec::new()).materialized.concat();
        rows.sort_unstable();
        let expected = reference::join(&r, &s, JoinKind::Inner);
        assert_eq!(rows, expected);
        let flagged: Vec<u64> = r
            .iter()
            .zip(&matched)
            .filter(|p| *p.1)
            .map(|p| p.0.key)
            .collect();
        assert_eq!(flagged, [1, 1, 5, 5, 5, u64::MAX]);
        let mut counter = Sink::new(JoinOutput::Count);
        merge_join(&r, &s, JoinKind::Inner, &mut [], &mut counter);
        assert_eq!(counter.rows(), expected.len() as u64);
    }
}
