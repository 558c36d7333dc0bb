//! Composite keys: several columns' codes made into one code per row,
//! packed into one word when their widths allow, or as byte rows for the
//! dictionary otherwise (see the module above for the design).
//!
//! A column may be *descending* (its codes inverted) and its nulls may be
//! *kept* as a value that sorts first or last (group-by and sort keys) or
//! make the row keyless (join keys).

use numakit_pool::Pool;

use crate::error::Result;
use crate::keys::bytes::FixedRows;
use crate::keys::{bits_for, ColumnCodes, PartCodes};
use crate::par::per_part;

/// How one column takes part in a composite code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ColumnRole {
    pub(crate) descending: bool,
    /// Nulls are a value of their own (else a null makes the row keyless).
    pub(crate) keep_nulls: bool,
    pub(crate) nulls_first: bool,
}

impl ColumnRole {
    pub(crate) const JOIN: ColumnRole = ColumnRole {
        descending: false,
        keep_nulls: false,
        nulls_first: false,
    };
    pub(crate) const GROUP: ColumnRole = ColumnRole {
        descending: false,
        keep_nulls: true,
        nulls_first: true,
    };
}

/// Where a column sits in a packed code, and how to read it back.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PackedColumn {
    pub(crate) shift: u32,
    pub(crate) bits: u32,
    pub(crate) role: ColumnRole,
    /// The column's own codes are `0..=span`.
    pub(crate) span: u64,
    /// Whether a null code was set aside.
    pub(crate) null_code: bool,
}

impl PackedColumn {
    /// The column's part of `code` as (own code, or `None` for null).
    pub(crate) fn unpack(&self, code: u64) -> Option<u64> {
        let mask = if self.bits == 64 {
            u64::MAX
        } else {
            (1u64 << self.bits) - 1
        };
        let mut c = if self.bits == 0 {
            0
        } else {
            (code >> self.shift) & mask
        };
        if self.null_code {
            let null = if self.role.nulls_first {
                0
            } else {
                self.span + 1
            };
            if c == null {
                return None;
            }
            if self.role.nulls_first {
                c -= 1;
            }
        }
        Some(if self.role.descending {
            self.span - c
        } else {
            c
        })
    }
}

/// Whether a row is listed as invalid.
#[inline]
fn is_listed(invalid: &[u32], row: usize) -> bool {
    !invalid.is_empty() && invalid.binary_search(&(row as u32)).is_ok()
}

/// A column's code for one row in the packed layout, or `None` when the
/// row becomes keyless.
#[inline]
fn field(column: &ColumnCodes, at: &PackedColumn, part: usize, row: usize) -> Option<u64> {
    let codes = &column.parts[part];
    if is_listed(&codes.invalid, row) {
        if !at.role.keep_nulls {
            return None;
        }
        return Some(if at.role.nulls_first {
            0
        } else {
            column.span + 1
        });
    }
    let own = codes.codes[row];
    let own = if at.role.descending {
        column.span - own
    } else {
        own
    };
    Some(if at.null_code && at.role.nulls_first {
        own + 1
    } else {
        own
    })
}

/// The packed layout of `columns`, first column highest, or `None` when
/// the codes need more than 64 bits.
pub(crate) fn packed_layout(
    columns: &[ColumnCodes],
    roles: &[ColumnRole],
) -> Option<Vec<PackedColumn>> {
    let mut widths = Vec::with_capacity(columns.len());
    for (column, role) in columns.iter().zip(roles) {
        let null_code = role.keep_nulls && column.has_invalid();
        if null_code && column.span == u64::MAX {
            return None;
        }
        widths.push((bits_for(column.span + u64::from(null_code)), null_code));
    }
    let total: u32 = widths.iter().map(|w| w.0).sum();
    if total > 64 {
        return None;
    }
    let mut shift = total;
    Some(
        widths
            .into_iter()
            .zip(columns.iter().zip(roles))
            .map(|((bits, null_code), (column, &role))| {
                shift -= bits;
                PackedColumn {
                    shift,
                    bits,
                    role,
                    span: column.span,
                    null_code,
                }
            })
            .collect(),
    )
}

/// The packed codes of every row; `shapes[p]` is (rows, worker) of part p.
pub(crate) fn pack(
    pool: &Pool,
    shapes: &[(usize, usize)],
    columns: &[ColumnCodes],
    layout: &[PackedColumn],
) -> Result<Vec<PartCodes>> {
    per_part(
        pool,
        shapes.len(),
        |p| shapes[p].1,
        |p| {
            let rows = shapes[p].0;
            let mut codes = Vec::with_capacity(rows);
            let mut invalid = Vec::new();
            'rows: for row in 0..rows {
                let mut code = 0u64;
                for (column, at) in columns.iter().zip(layout) {
                    match field(column, at, p, row) {
                        Some(c) if at.bits > 0 => code |= c << at.shift,
                        Some(_) => {}
                        None => {
                            codes.push(0);
                            invalid.push(row as u32);
                            continue 'rows;
                        }
                    }
                }
                codes.push(code);
            }
            PartCodes::new(codes, invalid)
        },
    )
}

/// Byte rows of the columns' codes, 9 bytes a column: a flag (0 a null
/// sorting first, 1 a value, 2 a null sorting last) and the big-endian
/// code, so byte order is key order. Keyless rows are left out.
pub(crate) fn tuple_rows(
    pool: &Pool,
    shapes: &[(usize, usize)],
    columns: &[ColumnCodes],
    roles: &[ColumnRole],
) -> Result<FixedRows> {
    FixedRows::build(pool, 9 * columns.len(), shapes, |p, row, out| {
        for (i, (column, role)) in columns.iter().zip(roles).enumerate() {
            let slot = &mut out[9 * i..9 * (i + 1)];
            let codes = &column.parts[p];
            if is_listed(&codes.invalid, row) {
                if !role.keep_nulls {
                    return false;
                }
                slot[0] = if role.nulls_first { 0 } else { 2 };
                slot[1..].fill(0);
            } else {
                let own = codes.codes[row];
                let own = if role.descending {
                    column.span - own
                } else {
                    own
                };
                slot[0] = 1;
                slot[1..].copy_from_slice(&own.to_be_bytes());
            }
        }
        true
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::{KeyEncoding, Meaning};

    fn column(codes: Vec<u64>, invalid: Vec<u32>, span: u64) -> ColumnCodes {
        ColumnCodes {
            parts: vec![PartCodes::new(codes, invalid)],
            span,
            meaning: Meaning::Offset {
                lo: 0,
                multiplier: 1,
            },
            encoding: KeyEncoding::Value,
        }
    }

    #[test]
    fn packed_codes_keep_order_nulls_and_direction() {
        let pool = crate::testing::pool(2);
        let a = column(vec![2, 0, 0, 1], vec![2], 2);
        let b = column(vec![5, 7, 5, 0], vec![], 7);
        let roles = [
            ColumnRole {
                descending: true,
                keep_nulls: true,
                nulls_first: false,
            },
            ColumnRole {
                descending: false,
                keep_nulls: true,
                nulls_first: true,
            },
        ];
        let layout = packed_layout(&[a, b], &roles).unwrap();
        let a = column(vec![2, 0, 0, 1], vec![2], 2);
        let b = column(vec![5, 7, 5, 0], vec![], 7);
        let codes = pack(&pool, &[(4, 0)], &[a, b], &layout).unwrap();
        let c = &codes[0].codes;
        // a descending: 2 first, then 1, then 0, then null (last).
        assert!(c[0] < c[3] && c[3] < c[1] && c[1] < c[2], "{c:?}");
        assert_eq!(layout[0].unpack(c[2]), None);
        assert_eq!(layout[0].unpack(c[3]), Some(1));
        assert_eq!(layout[1].unpack(c[1]), Some(7));
        assert!(codes[0].invalid.is_empty());
        let join = packed_layout(&[column(vec![1, 0], vec![1], 1)], &[ColumnRole::JOIN]).unwrap();
        let codes = pack(&pool, &[(2, 0)], &[column(vec![1, 0], vec![1], 1)], &join).unwrap();
        assert_eq!(codes[0].invalid, vec![1]);
        assert!(
            packed_layout(&[column(vec![0], vec![0], u64::MAX)], &[ColumnRole::GROUP]).is_none()
        );
    }
}
