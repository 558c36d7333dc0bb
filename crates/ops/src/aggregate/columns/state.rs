//! The state of one aggregate over all groups of a table, as columns
//! indexed by group: updated a batch of rows at a time in tight loops (one
//! loop per aggregate, so the compiler sees one type and one operation),
//! and merged group by group.
//!
//! Every state counts the *null* values it saw per group: a group's
//! COUNT(col) is its rows less those, and a group whose values were all
//! null has a null SUM, MIN and MAX. Counting nulls rather than values
//! means that a column without nulls (the common case) touches only its
//! values' array per row: with 2^16 groups, three arrays per row (rows,
//! sum, count) had missed the cache in turn. Integers are summed exactly in
//! 128 bits; floats are summed in input order; MIN and MAX of floats follow
//! the total order with every NaN above +infinity, as SQL engines do, and
//! start at that order's ends (NaN for MIN, -infinity for MAX), so no
//! first-value test is needed.

use crate::aggregate::columns::{Func, Validity, ValueColumn, Values};
use crate::error::{OpsError, Result};

use crate::sort::f64_to_ordered_u64 as order;

/// One aggregate's per-group state.
#[derive(Clone, Debug, PartialEq)]
pub enum State {
    /// COUNT(col).
    Count {
        /// Null values per group.
        nulls: Tally<u64>,
    },
    /// Exact integer sums: the sum is `carry * 2^128 + sum` (the 128-bit
    /// sum wraps and `carry` counts the wraps), so a sum that leaves 128
    /// bits on the way and comes back is still exact.
    SumInt {
        /// The low 128 bits of each group's sum (wrapping).
        sum: Vec<i128>,
        /// Null values per group.
        nulls: Tally<u64>,
        /// Net wraps of `sum` per group: +1 per wrap upwards, -1 per wrap
        /// downwards; 0 when the sum fits 128 bits.
        carry: Tally<i64>,
    },
    /// SUM of floats.
    SumFloat {
        /// Each group's sum so far (0.0 for a group without values).
        sum: Vec<f64>,
        /// Null values per group.
        nulls: Tally<u64>,
    },
    /// MIN of integers.
    MinInt {
        /// Each group's minimum; `i128::MAX` while it has no value.
        v: Vec<i128>,
        /// Null values per group.
        nulls: Tally<u64>,
    },
    /// MAX of integers.
    MaxInt {
        /// Each group's maximum; `i128::MIN` while it has no value.
        v: Vec<i128>,
        /// Null values per group.
        nulls: Tally<u64>,
    },
    /// MIN of floats, every NaN above +infinity.
    MinFloat {
        /// Each group's minimum; NaN (the top of the order) while it has
        /// no value.
        v: Vec<f64>,
        /// Null values per group.
        nulls: Tally<u64>,
    },
    /// MAX of floats, every NaN above +infinity.
    MaxFloat {
        /// Each group's maximum; -infinity (the bottom of the order) while
        /// it has no value.
        v: Vec<f64>,
        /// Null values per group.
        nulls: Tally<u64>,
    },
}

/// Per-group numbers that stay zero until one is not: the list (as long as
/// the groups) is made only then. A column without nulls, or an integer
/// sum that never leaves 128 bits, so costs no memory and no fresh pages:
/// with 16M groups each such list was 128 MiB.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tally<T> {
    len: usize,
    held: Vec<T>,
}

impl<T: Copy + Default + PartialEq + std::ops::AddAssign> Tally<T> {
    /// `groups` zeros.
    pub fn zeros(groups: usize) -> Self {
        Tally {
            len: groups,
            held: Vec::new(),
        }
    }

    /// Group `g`'s number.
    #[inline(always)]
    pub fn get(&self, g: usize) -> T {
        self.held.get(g).copied().unwrap_or_default()
    }

    /// Groups counted for.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no groups.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds `x` to group `g`'s number.
    #[inline(always)]
    pub fn add(&mut self, g: usize, x: T) {
        if x == T::default() {
            return;
        }
        if self.held.len() != self.len {
            self.held.resize(self.len, T::default());
        }
        self.held[g] += x;
    }

    fn resize(&mut self, groups: usize) {
        self.len = groups;
        if !self.held.is_empty() {
            self.held.resize(groups, T::default());
        }
    }

    fn truncate(&mut self, groups: usize) {
        self.len = self.len.min(groups);
        self.held.truncate(groups);
    }
}

impl State {
    /// An empty state for `func` over integer or `float` values.
    pub fn new(func: Func, float: bool) -> Self {
        let nulls = Tally::default();
        match (func, float) {
            (Func::Count, _) => State::Count { nulls },
            (Func::Sum, false) => State::SumInt {
                sum: Vec::new(),
                nulls,
                carry: Tally::default(),
            },
            (Func::Sum, true) => State::SumFloat {
                sum: Vec::new(),
                nulls,
            },
            (Func::Min, false) => State::MinInt {
                v: Vec::new(),
                nulls,
            },
            (Func::Max, false) => State::MaxInt {
                v: Vec::new(),
                nulls,
            },
            (Func::Min, true) => State::MinFloat {
                v: Vec::new(),
                nulls,
            },
            (Func::Max, true) => State::MaxFloat {
                v: Vec::new(),
                nulls,
            },
        }
    }

    /// The exact sum of group `g` of a [`State::SumInt`], or `None` when
    /// it does not fit 128 bits (or the state is not an integer sum).
    pub fn exact_sum(&self, g: usize) -> Option<i128> {
        match self {
            State::SumInt { sum, carry, .. } if carry.get(g) == 0 => Some(sum[g]),
            _ => None,
        }
    }

    /// The null values seen per group.
    pub fn nulls(&self) -> &Tally<u64> {
        match self {
            State::Count { nulls }
            | State::SumInt { nulls, .. }
            | State::SumFloat { nulls, .. }
            | State::MinInt { nulls, .. }
            | State::MaxInt { nulls, .. }
            | State::MinFloat { nulls, .. }
            | State::MaxFloat { nulls, .. } => nulls,
        }
    }

    /// The non-null values seen per group (COUNT(col)), given each group's
    /// rows (`rows[g]`, COUNT(*)).
    pub fn counts(&self, rows: &[u64]) -> Vec<u64> {
        let nulls = self.nulls();
        rows.iter()
            .enumerate()
            .map(|(g, r)| r - nulls.get(g))
            .collect()
    }

    /// Keeps groups `0..groups` only.
    pub fn truncate(&mut self, groups: usize) {
        match self {
            State::Count { nulls } => nulls.truncate(groups),
            State::SumInt { sum, nulls, carry } => {
                sum.truncate(groups);
                nulls.truncate(groups);
                carry.truncate(groups);
            }
            State::SumFloat { sum, nulls } => {
                sum.truncate(groups);
                nulls.truncate(groups);
            }
            State::MinInt { v, nulls } | State::MaxInt { v, nulls } => {
                v.truncate(groups);
                nulls.truncate(groups);
            }
            State::MinFloat { v, nulls } | State::MaxFloat { v, nulls } => {
                v.truncate(groups);
                nulls.truncate(groups);
            }
        }
    }

    /// Makes room for groups `0..groups`.
    pub fn grow(&mut self, groups: usize) {
        if groups <= self.nulls().len() {
            return;
        }
        match self {
            State::Count { nulls } => nulls.resize(groups),
            State::SumInt { sum, nulls, carry } => {
                sum.resize(groups, 0);
                nulls.resize(groups);
                carry.resize(groups);
            }
            State::SumFloat { sum, nulls } => {
                sum.resize(groups, 0.0);
                nulls.resize(groups);
            }
            State::MinInt { v, nulls } => {
                v.resize(groups, i128::MAX);
                nulls.resize(groups);
            }
            State::MaxInt { v, nulls } => {
                v.resize(groups, i128::MIN);
                nulls.resize(groups);
            }
            State::MinFloat { v, nulls } => {
                v.resize(groups, f64::NAN);
                nulls.resize(groups);
            }
            State::MaxFloat { v, nulls } => {
                v.resize(groups, f64::NEG_INFINITY);
                nulls.resize(groups);
            }
        }
    }

    /// Adds rows `start..start + groups.len()` of `column`, row i to group
    /// `groups[i - start]`. `aggregate` names the aggregate in errors.
    pub fn update(
        &mut self,
        groups: &[u32],
        column: &ValueColumn<'_>,
        start: usize,
        aggregate: usize,
    ) -> Result<()> {
        let Some(validity) = column.valid else {
            return self.update_all_valid(groups, column, start, aggregate);
        };
        let valid = |i: usize| validity.get(start + i);
        match (self, &column.values) {
            (State::Count { nulls }, _) => {
                for (i, &g) in groups.iter().enumerate() {
                    if !valid(i) {
                        nulls.add(g as usize, 1);
                    }
                }
            }
            (State::SumInt { sum, nulls, .. }, Values::I64(values)) => {
                let values = &values[start..start + groups.len()];
                for (i, (&g, &v)) in groups.iter().zip(values).enumerate() {
                    if valid(i) {
                        sum[g as usize] += i128::from(v);
                    } else {
                        nulls.add(g as usize, 1);
                    }
                }
            }
            (State::SumInt { sum, nulls, carry }, Values::I128(values)) => {
                for (i, &g) in groups.iter().enumerate() {
                    let g = g as usize;
                    if !valid(i) {
                        nulls.add(g, 1);
                        continue;
                    }
                    let x = values[start + i];
                    let (v, wrapped) = sum[g].overflowing_add(x);
                    sum[g] = v;
                    if wrapped {
                        carry.add(g, if x > 0 { 1 } else { -1 });
                    }
                }
            }
            (State::SumFloat { sum, nulls }, Values::F64(values)) => {
                for (i, &g) in groups.iter().enumerate() {
                    if valid(i) {
                        sum[g as usize] += values[start + i];
                    } else {
                        nulls.add(g as usize, 1);
                    }
                }
            }
            (State::MinInt { v, nulls }, Values::I64(values)) => extremes(
                v,
                nulls,
                groups,
                &valid,
                |i| i128::from(values[start + i]),
                |x, y| x < y,
            ),
            (State::MinInt { v, nulls }, Values::I128(values)) => extremes(
                v,
                nulls,
                groups,
                &valid,
                |i| values[start + i],
                |x, y| x < y,
            ),
            (State::MaxInt { v, nulls }, Values::I64(values)) => extremes(
                v,
                nulls,
                groups,
                &valid,
                |i| i128::from(values[start + i]),
                |x, y| x > y,
            ),
            (State::MaxInt { v, nulls }, Values::I128(values)) => extremes(
                v,
                nulls,
                groups,
                &valid,
                |i| values[start + i],
                |x, y| x > y,
            ),
            (State::MinFloat { v, nulls }, Values::F64(values)) => extremes(
                v,
                nulls,
                groups,
                &valid,
                |i| values[start + i],
                |x, y| order(x) < order(y),
            ),
            (State::MaxFloat { v, nulls }, Values::F64(values)) => extremes(
                v,
                nulls,
                groups,
                &valid,
                |i| values[start + i],
                |x, y| order(x) > order(y),
            ),
            _ => {
                return Err(OpsError::InvalidArgument(format!(
                    "aggregate {aggregate}: its state does not match its values"
                )))
            }
        }
        Ok(())
    }
}

impl State {
    /// [`State::update`] for a column without nulls: one tight loop per
    /// aggregate and type, touching only the values' array (COUNT(col)
    /// touches nothing).
    fn update_all_valid(
        &mut self,
        groups: &[u32],
        column: &ValueColumn<'_>,
        start: usize,
        aggregate: usize,
    ) -> Result<()> {
        let end = start + groups.len();
        match (self, &column.values) {
            (State::Count { .. }, _) => {}
            (State::SumInt { sum, .. }, Values::I64(values)) => {
                for (&g, &v) in groups.iter().zip(&values[start..end]) {
                    sum[g as usize] += i128::from(v);
                }
            }
            (State::SumFloat { sum, .. }, Values::F64(values)) => {
                for (&g, &v) in groups.iter().zip(&values[start..end]) {
                    sum[g as usize] += v;
                }
            }
            (State::MinInt { v, .. }, Values::I64(values)) => {
                for (&g, &x) in groups.iter().zip(&values[start..end]) {
                    let (g, x) = (g as usize, i128::from(x));
                    if x < v[g] {
                        v[g] = x;
                    }
                }
            }
            (State::MaxInt { v, .. }, Values::I64(values)) => {
                for (&g, &x) in groups.iter().zip(&values[start..end]) {
                    let (g, x) = (g as usize, i128::from(x));
                    if x > v[g] {
                        v[g] = x;
                    }
                }
            }
            (state, _) => {
                // The rarer kinds (128-bit values, float extremes) share the
                // general loop; an all-valid bitmap costs little there.
                let ones = vec![0xFFu8; groups.len().div_ceil(8) + 1];
                let column = ValueColumn {
                    values: column.values.slice(start, end),
                    valid: Some(Validity::new(&ones, 0)),
                };
                return state.update(groups, &column, 0, aggregate);
            }
        }
        Ok(())
    }

    /// Merges group `from` of `other` (a state of the same aggregate) into
    /// group `into`.
    pub fn merge(
        &mut self,
        into: usize,
        other: &State,
        from: usize,
        aggregate: usize,
    ) -> Result<()> {
        match (self, other) {
            (State::Count { nulls }, State::Count { nulls: m }) => nulls.add(into, m.get(from)),
            (
                State::SumInt { sum, nulls, carry },
                State::SumInt {
                    sum: s,
                    nulls: m,
                    carry: c,
                },
            ) => {
                let (v, wrapped) = sum[into].overflowing_add(s[from]);
                sum[into] = v;
                if wrapped {
                    carry.add(into, if s[from] > 0 { 1 } else { -1 });
                }
                carry.add(into, c.get(from));
                nulls.add(into, m.get(from));
            }
            (State::SumFloat { sum, nulls }, State::SumFloat { sum: s, nulls: m }) => {
                sum[into] += s[from];
                nulls.add(into, m.get(from));
            }
            (State::MinInt { v, nulls }, State::MinInt { v: w, nulls: m }) => {
                v[into] = v[into].min(w[from]);
                nulls.add(into, m.get(from));
            }
            (State::MaxInt { v, nulls }, State::MaxInt { v: w, nulls: m }) => {
                v[into] = v[into].max(w[from]);
                nulls.add(into, m.get(from));
            }
            // A group without values holds its order's end, which never
            // replaces anything.
            (State::MinFloat { v, nulls }, State::MinFloat { v: w, nulls: m }) => {
                if order(w[from]) < order(v[into]) {
                    v[into] = w[from];
                }
                nulls.add(into, m.get(from));
            }
            (State::MaxFloat { v, nulls }, State::MaxFloat { v: w, nulls: m }) => {
                if order(w[from]) > order(v[into]) {
                    v[into] = w[from];
                }
                nulls.add(into, m.get(from));
            }
            _ => {
                return Err(OpsError::InvalidArgument(format!(
                    "aggregate {aggregate}: merging states of different kinds"
                )))
            }
        }
        Ok(())
    }
}

/// MIN or MAX: `better(x, current)` replaces the current one (the states
/// start at the identity, so no first-value branch); a null is counted.
#[inline(always)]
fn extremes<T: Copy>(
    v: &mut [T],
    nulls: &mut Tally<u64>,
    groups: &[u32],
    valid: &impl Fn(usize) -> bool,
    value: impl Fn(usize) -> T,
    better: impl Fn(T, T) -> bool,
) {
    for (i, &g) in groups.iter().enumerate() {
        let g = g as usize;
        if !valid(i) {
            nulls.add(g, 1);
            continue;
        }
        let x = value(i);
        if better(x, v[g]) {
            v[g] = x;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column<'a>(values: &'a [i64], valid: Option<&'a [u8]>) -> ValueColumn<'a> {
        ValueColumn {
            values: Values::I64(values),
            valid: valid.map(|b| Validity::new(b, 0)),
        }
    }

    #[test]
    fn null_counts_and_carries_are_held_only_once_one_is_not_zero() {
        let mut sum = State::new(Func::Sum, false);
        sum.grow(3);
        let all_valid = [0xFFu8];
        sum.update(
            &[0, 1, 2, 1],
            &column(&[5, 6, 7, 8], Some(&all_valid)),
            0,
            0,
        )
        .unwrap();
        let State::SumInt { nulls, carry, .. } = &sum else {
            panic!("not a sum");
        };
        assert!(nulls.held.is_empty() && carry.held.is_empty());
        assert_eq!((nulls.len(), nulls.get(2)), (3, 0));
        // Row 1 is null: the counts are made, as long as the groups.
        sum.update(&[0, 2], &column(&[1, 2], Some(&[0b01])), 0, 0)
            .unwrap();
        assert_eq!(sum.nulls().held, vec![0, 0, 1]);
        assert_eq!(sum.exact_sum(1), Some(14));
        sum.grow(5);
        assert_eq!(sum.nulls().held.len(), 5);
        // Merging a group with a null into a state without any makes them.
        let mut other = State::new(Func::Sum, false);
        other.grow(1);
        other.merge(0, &sum, 2, 0).unwrap();
        assert_eq!((other.nulls().get(0), other.exact_sum(0)), (1, Some(7)));
        sum.truncate(2);
        assert_eq!(sum.counts(&[2, 2]), vec![2, 2]);
    }

    #[test]
    fn a_sum_that_wraps_holds_its_carry() {
        let mut sum = State::new(Func::Sum, false);
        sum.grow(2);
        let big = [i128::MAX, 1, i128::MIN];
        let values = ValueColumn {
            values: Values::I128(&big),
            valid: None,
        };
        sum.update(&[1, 1], &values, 0, 0).unwrap();
        assert_eq!(sum.exact_sum(1), None);
        let State::SumInt { carry, .. } = &sum else {
            panic!("not a sum");
        };
        assert_eq!((carry.get(0), carry.get(1)), (0, 1));
        sum.update(&[1], &values, 2, 0).unwrap();
        assert_eq!(sum.exact_sum(1), Some(0));
    }
}
