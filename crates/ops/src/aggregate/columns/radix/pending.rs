//! Rows held owned on their way to a partition's table: what a worker
//! sends to an owner, and what an owner parks until it is worth adding.
//!
//! Segments are appended, and the whole is read back as one [`Segment`]. Clearing keeps the memory, so a
//! parked buffer that fills and empties again and again allocates once.
//! It does not aggregate anything.

use crate::aggregate::columns::{Segment, Validity, ValueColumn, Values};

/// The values of one held column.
#[derive(Debug)]
enum HeldValues {
    I64(Vec<i64>),
    I128(Vec<i128>),
    F64(Vec<f64>),
    /// No values (a column read only for its validity), or none yet.
    None,
}

impl HeldValues {
    fn values(&self) -> Values<'_> {
        match self {
            HeldValues::I64(v) => Values::I64(v),
            HeldValues::I128(v) => Values::I128(v),
            HeldValues::F64(v) => Values::F64(v),
            HeldValues::None => Values::None,
        }
    }

    /// Appends the first `rows` of `from`: the column takes the width of
    /// the first values it gets, and widens to 128 bits when 128-bit
    /// values come.
    fn push(&mut self, from: Values<'_>, rows: usize, held: usize) {
        if held == 0 && matches!(self, HeldValues::None) {
            *self = match from {
                Values::I64(_) => HeldValues::I64(Vec::new()),
                Values::I128(_) => HeldValues::I128(Vec::new()),
                Values::F64(_) => HeldValues::F64(Vec::new()),
                Values::None => HeldValues::None,
            };
        }
        if let (HeldValues::I64(v), Values::I128(_)) = (&*self, from) {
            *self = HeldValues::I128(v.iter().map(|&x| i128::from(x)).collect());
        }
        match (self, from) {
            (HeldValues::I64(dst), Values::I64(src)) => dst.extend_from_slice(&src[..rows]),
            (HeldValues::I128(dst), Values::I128(src)) => dst.extend_from_slice(&src[..rows]),
            (HeldValues::I128(dst), Values::I64(src)) => {
                dst.extend(src[..rows].iter().map(|&v| i128::from(v)));
            }
            (HeldValues::F64(dst), Values::F64(src)) => dst.extend_from_slice(&src[..rows]),
            _ => {}
        }
    }

    fn clear(&mut self) {
        match self {
            HeldValues::I64(v) => v.clear(),
            HeldValues::I128(v) => v.clear(),
            HeldValues::F64(v) => v.clear(),
            HeldValues::None => {}
        }
    }
}

/// One held column: values, and a validity bitmap once a row was null.
#[derive(Debug)]
struct HeldColumn {
    values: HeldValues,
    valid: Option<Vec<u8>>,
}

impl HeldColumn {
    fn push(&mut self, from: &ValueColumn<'_>, rows: usize, held: usize) {
        self.values.push(from.values, rows, held);
        if from.valid.is_none() && self.valid.is_none() {
            return;
        }
        let bits = self
            .valid
            .get_or_insert_with(|| vec![0xFF; held.div_ceil(8)]);
        bits.resize((held + rows).div_ceil(8), 0);
        for r in 0..rows {
            let valid = from.valid.as_ref().is_none_or(|v| v.get(r));
            let at = held + r;
            if valid {
                bits[at >> 3] |= 1 << (at & 7);
            } else {
                bits[at >> 3] &= !(1 << (at & 7));
            }
        }
    }
}

/// Rows held owned, in the order they were appended.
#[derive(Debug, Default)]
pub(super) struct Pending {
    codes: Vec<u64>,
    keyless: Vec<u32>,
    columns: Vec<HeldColumn>,
}

impl Pending {
    /// Rows held.
    pub(super) fn rows(&self) -> usize {
        self.codes.len()
    }

    /// Appends the rows of `from`.
    pub(super) fn push(&mut self, from: &Segment<'_>) {
        let held = self.codes.len();
        let rows = from.codes.len();
        if self.columns.len() < from.columns.len() {
            self.columns.resize_with(from.columns.len(), || HeldColumn {
                values: HeldValues::None,
                valid: None,
            });
        }
        self.codes.extend_from_slice(from.codes);
        self.keyless
            .extend(from.keyless.iter().map(|&r| r + held as u32));
        for (column, from) in self.columns.iter_mut().zip(&from.columns) {
            column.push(from, rows, held);
        }
    }

    /// The rows held, as one segment.
    pub(super) fn segment(&self) -> Segment<'_> {
        Segment {
            codes: &self.codes,
            keyless: &self.keyless,
            columns: self
                .columns
                .iter()
                .map(|c| ValueColumn {
                    values: c.values.values(),
                    valid: c.valid.as_deref().map(|b| Validity::new(b, 0)),
                })
                .collect(),
        }
    }

    /// Holds nothing, keeping the memory.
    pub(super) fn clear(&mut self) {
        self.codes.clear();
        self.keyless.clear();
        for column in &mut self.columns {
            column.values.clear();
            column.valid = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appended_rows_read_back_with_their_keys_values_and_nulls() {
        let codes = [10u64, 11, 12, 13];
        let ints = [1i64, 2, 3, 4];
        let wide = [5i128, 6, 7, 8];
        let valid = [0b0000_0101u8];
        let first = Segment {
            codes: &codes,
            keyless: &[1],
            columns: vec![ValueColumn {
                values: Values::I64(&ints),
                valid: Some(Validity::new(&valid, 0)),
            }],
        };
        let second = Segment {
            codes: &codes,
            keyless: &[3],
            columns: vec![ValueColumn {
                values: Values::I128(&wide),
                valid: None,
            }],
        };
        let mut held = Pending::default();
        held.push(&first);
        held.push(&second);
        let seg = held.segment();
        assert_eq!(seg.codes, &[10, 11, 12, 13, 10, 11, 12, 13]);
        assert_eq!(seg.keyless, &[1, 7]);
        let Values::I128(v) = seg.columns[0].values else {
            panic!("not widened: {:?}", seg.columns[0].values);
        };
        assert_eq!(v, &[1, 2, 3, 4, 5, 6, 7, 8]);
        let validity = seg.columns[0].valid.expect("a bitmap");
        let bits: Vec<bool> = (0..8).map(|i| validity.get(i)).collect();
        assert_eq!(bits, [true, false, true, false, true, true, true, true]);
        held.clear();
        assert_eq!(held.rows(), 0);
        held.push(&second);
        assert_eq!(held.segment().codes, &[10, 11, 12, 13]);
        assert!(held.segment().columns[0].valid.is_none());
    }
}
