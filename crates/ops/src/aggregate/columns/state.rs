//! The state of one aggregate over all groups of a table, as columns
//! indexed by group: updated a batch of rows at a time in tight loops (one
//! loop per aggregate, so the compiler sees one type and one operation),
//! and merged group by group.
//!
//! Every state counts the non-null values it saw per group, which is
//! COUNT(col) and tells a group whose values were all null (its SUM, MIN
//! and MAX are null). Integers are summed exactly in 128 bits; floats are
//! summed in input order; MIN and MAX of floats follow the total order with
//! every NaN above +infinity, as SQL engines do.

use crate::aggregate::columns::{Func, Validity, ValueColumn, Values};
use crate::error::{OpsError, Result};

use crate::sort::f64_to_ordered_u64 as order;

/// One aggregate's per-group state.
#[derive(Clone, Debug, PartialEq)]
pub enum State {
    /// COUNT(col).
    Count {
        /// Non-null values per group.
        n: Vec<u64>,
    },
    /// Exact integer sums: the sum is `carry * 2^128 + sum` (the 128-bit
    /// sum wraps and `carry` counts the wraps), so a sum that leaves 128
    /// bits on the way and comes back is still exact.
    SumInt {
        /// The low 128 bits of each group's sum (wrapping).
        sum: Vec<i128>,
        /// Non-null values per group.
        n: Vec<u64>,
        /// Net wraps of `sum` per group: +1 per wrap upwards, -1 per wrap
        /// downwards; 0 when the sum fits 128 bits.
        carry: Vec<i64>,
    },
    /// SUM of floats.
    SumFloat {
        /// Each group's sum so far (0.0 for a group without values).
        sum: Vec<f64>,
        /// Non-null values per group.
        n: Vec<u64>,
    },
    /// MIN of integers.
    MinInt {
        /// Each group's minimum; `i128::MAX` while it has no value.
        v: Vec<i128>,
        /// Non-null values per group.
        n: Vec<u64>,
    },
    /// MAX of integers.
    MaxInt {
        /// Each group's maximum; `i128::MIN` while it has no value.
        v: Vec<i128>,
        /// Non-null values per group.
        n: Vec<u64>,
    },
    /// MIN of floats, every NaN above +infinity.
    MinFloat {
        /// Each group's minimum; meaningless (0.0) while it has no value.
        v: Vec<f64>,
        /// Non-null values per group.
        n: Vec<u64>,
    },
    /// MAX of floats, every NaN above +infinity.
    MaxFloat {
        /// Each group's maximum; meaningless (0.0) while it has no value.
        v: Vec<f64>,
        /// Non-null values per group.
        n: Vec<u64>,
    },
}

impl State {
    /// An empty state for `func` over integer or `float` values.
    pub fn new(func: Func, float: bool) -> Self {
        match (func, float) {
            (Func::Count, _) => State::Count { n: Vec::new() },
            (Func::Sum, false) => State::SumInt {
                sum: Vec::new(),
                n: Vec::new(),
                carry: Vec::new(),
            },
            (Func::Sum, true) => State::SumFloat {
                sum: Vec::new(),
                n: Vec::new(),
            },
            (Func::Min, false) => State::MinInt {
                v: Vec::new(),
                n: Vec::new(),
            },
            (Func::Max, false) => State::MaxInt {
                v: Vec::new(),
                n: Vec::new(),
            },
            (Func::Min, true) => State::MinFloat {
                v: Vec::new(),
                n: Vec::new(),
            },
            (Func::Max, true) => State::MaxFloat {
                v: Vec::new(),
                n: Vec::new(),
            },
        }
    }

    /// The exact sum of group `g` of a [`State::SumInt`], or `None` when
    /// it does not fit 128 bits (or the state is not an integer sum).
    pub fn exact_sum(&self, g: usize) -> Option<i128> {
        match self {
            State::SumInt { sum, carry, .. } if carry[g] == 0 => Some(sum[g]),
            _ => None,
        }
    }

    /// The non-null values seen per group.
    pub fn counts(&self) -> &[u64] {
        match self {
            State::Count { n }
            | State::SumInt { n, .. }
            | State::SumFloat { n, .. }
            | State::MinInt { n, .. }
            | State::MaxInt { n, .. }
            | State::MinFloat { n, .. }
            | State::MaxFloat { n, .. } => n,
        }
    }

    /// Keeps groups `0..groups` only.
    pub fn truncate(&mut self, groups: usize) {
        match self {
            State::Count { n } => n.truncate(groups),
            State::SumInt { sum, n, carry } => {
                sum.truncate(groups);
                n.truncate(groups);
                carry.truncate(groups);
            }
            State::SumFloat { sum, n } => {
                sum.truncate(groups);
                n.truncate(groups);
            }
            State::MinInt { v, n } | State::MaxInt { v, n } => {
                v.truncate(groups);
                n.truncate(groups);
            }
            State::MinFloat { v, n } | State::MaxFloat { v, n } => {
                v.truncate(groups);
                n.truncate(groups);
            }
        }
    }

    /// Makes room for groups `0..groups`.
    pub fn grow(&mut self, groups: usize) {
        if groups <= self.counts().len() {
            return;
        }
        match self {
            State::Count { n } => n.resize(groups, 0),
            State::SumInt { sum, n, carry } => {
                sum.resize(groups, 0);
                n.resize(groups, 0);
                carry.resize(groups, 0);
            }
            State::SumFloat { sum, n } => {
                sum.resize(groups, 0.0);
                n.resize(groups, 0);
            }
            State::MinInt { v, n } => {
                v.resize(groups, i128::MAX);
                n.resize(groups, 0);
            }
            State::MaxInt { v, n } => {
                v.resize(groups, i128::MIN);
                n.resize(groups, 0);
            }
            State::MinFloat { v, n } | State::MaxFloat { v, n } => {
                v.resize(groups, 0.0);
                n.resize(groups, 0);
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
        if column.valid.is_none() {
            return self.update_all_valid(groups, column, start, aggregate);
        }
        let valid = |i: usize| column.valid.as_ref().is_none_or(|v| v.get(start + i));
        match (self, &column.values) {
            (State::Count { n }, _) => {
                for (i, &g) in groups.iter().enumerate() {
                    n[g as usize] += u64::from(valid(i));
                }
            }
            (State::SumInt { sum, n, .. }, Values::I64(values)) => {
                let values = &values[start..start + groups.len()];
                if column.valid.is_none() {
                    for (&g, &v) in groups.iter().zip(values) {
                        sum[g as usize] += i128::from(v);
                        n[g as usize] += 1;
                    }
                } else {
                    for (i, (&g, &v)) in groups.iter().zip(values).enumerate() {
                        if valid(i) {
                            sum[g as usize] += i128::from(v);
                            n[g as usize] += 1;
                        }
                    }
                }
            }
            (State::SumInt { sum, n, carry }, Values::I128(values)) => {
                for (i, &g) in groups.iter().enumerate() {
                    if valid(i) {
                        let (g, x) = (g as usize, values[start + i]);
                        let (v, wrapped) = sum[g].overflowing_add(x);
                        sum[g] = v;
                        if wrapped {
                            carry[g] += if x > 0 { 1 } else { -1 };
                        }
                        n[g] += 1;
                    }
                }
            }
            (State::SumFloat { sum, n }, Values::F64(values)) => {
                for (i, &g) in groups.iter().enumerate() {
                    if valid(i) {
                        sum[g as usize] += values[start + i];
                        n[g as usize] += 1;
                    }
                }
            }
            (State::MinInt { v, n }, Values::I64(values)) => extremes(
                v,
                n,
                groups,
                &valid,
                |i| i128::from(values[start + i]),
                |x, y| x < y,
            ),
            (State::MinInt { v, n }, Values::I128(values)) => {
                extremes(v, n, groups, &valid, |i| values[start + i], |x, y| x < y)
            }
            (State::MaxInt { v, n }, Values::I64(values)) => extremes(
                v,
                n,
                groups,
                &valid,
                |i| i128::from(values[start + i]),
                |x, y| x > y,
            ),
            (State::MaxInt { v, n }, Values::I128(values)) => {
                extremes(v, n, groups, &valid, |i| values[start + i], |x, y| x > y)
            }
            (State::MinFloat { v, n }, Values::F64(values)) => {
                for (i, &g) in groups.iter().enumerate() {
                    if valid(i) {
                        let (x, g) = (values[start + i], g as usize);
                        if n[g] == 0 || order(x) < order(v[g]) {
                            v[g] = x;
                        }
                        n[g] += 1;
                    }
                }
            }
            (State::MaxFloat { v, n }, Values::F64(values)) => {
                for (i, &g) in groups.iter().enumerate() {
                    if valid(i) {
                        let (x, g) = (values[start + i], g as usize);
                        if n[g] == 0 || order(x) > order(v[g]) {
                            v[g] = x;
                        }
                        n[g] += 1;
                    }
                }
            }
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
    /// aggregate and type.
    fn update_all_valid(
        &mut self,
        groups: &[u32],
        column: &ValueColumn<'_>,
        start: usize,
        aggregate: usize,
    ) -> Result<()> {
        let end = start + groups.len();
        match (self, &column.values) {
            (State::Count { n }, _) => {
                for &g in groups {
                    n[g as usize] += 1;
                }
            }
            (State::SumInt { sum, n, .. }, Values::I64(values)) => {
                for (&g, &v) in groups.iter().zip(&values[start..end]) {
                    sum[g as usize] += i128::from(v);
                    n[g as usize] += 1;
                }
            }
            (State::SumFloat { sum, n }, Values::F64(values)) => {
                for (&g, &v) in groups.iter().zip(&values[start..end]) {
                    sum[g as usize] += v;
                    n[g as usize] += 1;
                }
            }
            (State::MinInt { v, n }, Values::I64(values)) => {
                for (&g, &x) in groups.iter().zip(&values[start..end]) {
                    let (g, x) = (g as usize, i128::from(x));
                    if x < v[g] {
                        v[g] = x;
                    }
                    n[g] += 1;
                }
            }
            (State::MaxInt { v, n }, Values::I64(values)) => {
                for (&g, &x) in groups.iter().zip(&values[start..end]) {
                    let (g, x) = (g as usize, i128::from(x));
                    if x > v[g] {
                        v[g] = x;
                    }
                    n[g] += 1;
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
            (State::Count { n }, State::Count { n: m }) => n[into] += m[from],
            (
                State::SumInt { sum, n, carry },
                State::SumInt {
                    sum: s,
                    n: m,
                    carry: c,
                },
            ) => {
                let (v, wrapped) = sum[into].overflowing_add(s[from]);
                sum[into] = v;
                if wrapped {
                    carry[into] += if s[from] > 0 { 1 } else { -1 };
                }
                carry[into] += c[from];
                n[into] += m[from];
            }
            (State::SumFloat { sum, n }, State::SumFloat { sum: s, n: m }) => {
                sum[into] += s[from];
                n[into] += m[from];
            }
            (State::MinInt { v, n }, State::MinInt { v: w, n: m }) => {
                v[into] = v[into].min(w[from]);
                n[into] += m[from];
            }
            (State::MaxInt { v, n }, State::MaxInt { v: w, n: m }) => {
                v[into] = v[into].max(w[from]);
                n[into] += m[from];
            }
            (State::MinFloat { v, n }, State::MinFloat { v: w, n: m }) => {
                if m[from] > 0 && (n[into] == 0 || order(w[from]) < order(v[into])) {
                    v[into] = w[from];
                }
                n[into] += m[from];
            }
            (State::MaxFloat { v, n }, State::MaxFloat { v: w, n: m }) => {
                if m[from] > 0 && (n[into] == 0 || order(w[from]) > order(v[into])) {
                    v[into] = w[from];
                }
                n[into] += m[from];
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

/// MIN or MAX of integers: `better(x, current)` replaces the current one
/// (the states start at the identity, so no first-value branch).
#[inline(always)]
fn extremes(
    v: &mut [i128],
    n: &mut [u64],
    groups: &[u32],
    valid: &impl Fn(usize) -> bool,
    value: impl Fn(usize) -> i128,
    better: impl Fn(i128, i128) -> bool,
) {
    for (i, &g) in groups.iter().enumerate() {
        if valid(i) {
            let (x, g) = (value(i), g as usize);
            if better(x, v[g]) {
                v[g] = x;
            }
            n[g] += 1;
        }
    }
}
