//! Keys of every common type as 64-bit codes, the form the operators'
//! kernels (radix, no-partition and MPSM joins, the aggregation methods,
//! the radix sort) work on.
//!
//! # Design
//!
//! A key is one column or several. Each key column is first coded on its
//! own ([`family`] says which types meet which):
//! - fixed-width values (integers of every width and sign, decimals, dates,
//!   times, timestamps, durations, booleans, floats) by *value*: the number
//!   in the family's common unit minus the smallest value both sides share
//!   ([`numbers`]). Equal values get equal codes, so -1 (int64) never
//!   meets 2^64-1 (uint64), and the codes keep the values' order;
//! - strings and binaries (and numbers too wide for 64 bits) through an
//!   exact [`dictionary`]: hashed, but every hash match is confirmed by
//!   comparing the real keys, so a collision costs a comparison and never
//!   merges two keys. Sorting needs order, so sort keys use the dictionary's
//!   ranks (its keys in byte order). A group-by's string or binary key
//!   comes back from the dictionary's own copies of its keys ([`stored`]),
//!   read in code order rather than gathered by row from the input.
//!
//! A composite key packs its columns' codes into one word, first column in
//! the high bits, when their widths add up to at most 64 bits (the common
//! case: TPC-H's (l_orderkey, l_linenumber) needs 26 bits). Otherwise its
//! rows become fixed-width byte rows of the column codes, coded by the
//! dictionary again.
//!
//! Nulls: a row whose join key has a null (or a value the other side cannot
//! hold) gets no code and never matches. In a group-by a null single-column
//! key is marked the same way and the operator puts those rows into one
//! group of their own; in composite keys and sort keys a null is a value
//! with a code of its own (sorting first or last as asked).
//!
//! This module codes keys; it does not run operators or build relations.

pub(crate) mod bytes;
pub(crate) mod decode;
pub(crate) mod dictionary;
pub(crate) mod family;
pub(crate) mod key_table;
pub(crate) mod numbers;
pub(crate) mod stored;

use arrow_buffer::ScalarBuffer;
use serde::Serialize;

use numakit_pool::Pool;

use crate::error::{FrameError, Result};
use crate::keys::bytes::{ColumnBytes, FixedRows};
use crate::keys::dictionary::Dictionary;
use crate::keys::family::{family_of, Family};
use crate::keys::stored::StoredKeys;
use crate::table::{RowRef, Table};

/// One part's codes: `codes[row]`, meaningless for the rows listed (sorted)
/// in `invalid`, which have no code. The codes may share the memory of an
/// Arrow column (a 64-bit integer key is its own code).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartCodes {
    /// One code per row of the part, in row order.
    pub codes: ScalarBuffer<u64>,
    /// Rows (indices within the part, ascending) that have no code: a
    /// null key, or a value the other side of a join cannot hold.
    pub invalid: Vec<u32>,
}

impl PartCodes {
    /// The codes of a part, with `invalid` the rows (ascending) without one.
    pub fn new(codes: Vec<u64>, invalid: Vec<u32>) -> Self {
        PartCodes {
            codes: codes.into(),
            invalid,
        }
    }

    /// Rows with a code.
    pub fn valid_rows(&self) -> usize {
        self.codes.len() - self.invalid.len()
    }
}

/// How a key was coded (for reports).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum KeyEncoding {
    /// The value itself, less the smallest one.
    Value,
    /// Codes of an exact dictionary of the distinct keys.
    Dictionary {
        /// Keys in the dictionary (a join's: the left side's distinct keys).
        distinct: u64,
    },
    /// Several columns' codes packed into one word.
    Packed {
        /// Key columns packed, at least 2.
        columns: usize,
        /// Bits of the word the codes take together, at most 64.
        bits: u32,
    },
    /// Several columns' codes as byte rows, coded by a dictionary.
    TupleDictionary {
        /// Key columns in each byte row.
        columns: usize,
        /// Distinct key rows in the dictionary (a join's: the left side's).
        distinct: u64,
    },
    /// Codes of each worker's own, made as a file is read, and the
    /// groups merged by their keys' values.
    PerWorker {
        /// Key columns.
        columns: usize,
    },
}

impl KeyEncoding {
    /// A short name for tables: `values`, `dictionary of 12 keys`...
    pub fn describe(&self) -> String {
        match self {
            KeyEncoding::Value => "values".into(),
            KeyEncoding::Dictionary { distinct } => format!("dictionary of {distinct} keys"),
            KeyEncoding::Packed { columns, bits } => {
                format!("{columns} columns packed into {bits} bits")
            }
            KeyEncoding::TupleDictionary { columns, distinct } => {
                format!("dictionary of {distinct} {columns}-column keys")
            }
            KeyEncoding::PerWorker { columns } => {
                format!("{columns} column(s) coded by each worker as read, merged by value")
            }
        }
    }
}

/// How one column's codes map back to its values.
#[derive(Clone, Debug)]
pub(crate) enum Meaning {
    /// The code is the value (sign-extended when `signed`).
    Raw { signed: bool },
    /// `code + lo` is the value in units that are `multiplier` times the
    /// column's own.
    Offset { lo: i128, multiplier: i128 },
    /// `representatives[code]` is a row holding the value.
    Rows { representatives: Vec<RowRef> },
    /// The code is a dictionary code of a string or binary column whose
    /// keys `keys` holds.
    Stored { keys: std::sync::Arc<StoredKeys> },
}

/// One column's codes, all in `0..=span`.
pub(crate) struct ColumnCodes {
    pub(crate) parts: Vec<PartCodes>,
    pub(crate) span: u64,
    pub(crate) meaning: Meaning,
    pub(crate) encoding: KeyEncoding,
}

impl ColumnCodes {
    fn has_invalid(&self) -> bool {
        self.parts.iter().any(|p| !p.invalid.is_empty())
    }
}

pub(crate) fn key_family(table: &Table, column: usize) -> Result<Family> {
    let field = table.schema().field(column);
    family_of(field.data_type()).map_err(|why| FrameError::UnsupportedType {
        column: field.name().clone(),
        data_type: field.data_type().to_string(),
        role: "a key",
        why: format!(": {why}"),
    })
}

/// The codes of one column of one table (group-by and sort keys), by value
/// where the range fits in 64 bits and by dictionary otherwise; `ranked`
/// makes dictionary codes order-preserving.
pub(crate) fn column_codes(
    pool: &Pool,
    table: &Table,
    column: usize,
    ranked: bool,
) -> Result<ColumnCodes> {
    let family = key_family(table, column)?;
    if let Family::Bytes { .. } = family {
        let keys = ColumnBytes::new(table, column)?;
        let stored = !ranked && StoredKeys::decodes(table.schema().field(column).data_type());
        return dictionary_codes(pool, &keys, ranked, stored);
    }
    let Some((lo, hi)) = numbers::range(pool, table, column, family)? else {
        // No values at all: every row is null.
        let parts = table
            .parts()
            .iter()
            .map(|p| {
                PartCodes::new(
                    vec![0; p.batch.num_rows()],
                    (0..p.batch.num_rows() as u32).collect(),
                )
            })
            .collect();
        return Ok(ColumnCodes {
            parts,
            span: 0,
            meaning: Meaning::Offset {
                lo: 0,
                multiplier: 1,
            },
            encoding: KeyEncoding::Value,
        });
    };
    let multiplier = family::multiplier(table.schema().field(column).data_type(), family);
    if let Some(span) = span_of(lo, hi) {
        return Ok(ColumnCodes {
            parts: numbers::offset_codes(pool, table, column, family, (lo, hi))?,
            span,
            meaning: Meaning::Offset { lo, multiplier },
            encoding: KeyEncoding::Value,
        });
    }
    let wide = wide_rows(pool, table, column, family)?;
    dictionary_codes(pool, &wide, ranked, false)
}

/// Key columns whose range spans at most this many values get dense
/// offset codes (direct-indexed groups) rather than raw ones.
const DENSE_SPAN: u64 = 1 << 22;

/// The codes of a single group-by key column: its values themselves when
/// the column is 32 or 64-bit integers spanning a wide range (nothing is
/// copied), dense offsets when the range is narrow, else [`column_codes`].
pub(crate) fn group_column_codes(pool: &Pool, table: &Table, column: usize) -> Result<ColumnCodes> {
    let data_type = table.schema().field(column).data_type().clone();
    let Some(signed) = numbers::raw_signed(&data_type) else {
        return column_codes(pool, table, column, false);
    };
    let family = key_family(table, column)?;
    let range = numbers::range(pool, table, column, family)?;
    if range.is_none_or(|(lo, hi)| span_of(lo, hi).is_some_and(|s| s < DENSE_SPAN)) {
        return column_codes(pool, table, column, false);
    }
    let parts = table.parts();
    let coded = crate::par::per_part(
        pool,
        parts.len(),
        |p| parts[p].worker,
        |p| numbers::raw_codes(parts[p].batch.column(column)),
    )?;
    let parts = coded
        .into_iter()
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| FrameError::InvalidRequest("a raw key column changed type".into()))?;
    Ok(ColumnCodes {
        parts,
        span: u64::MAX,
        meaning: Meaning::Raw { signed },
        encoding: KeyEncoding::Value,
    })
}

/// 128-bit values as 16 order-preserving bytes (sign bit flipped, big
/// endian), for a dictionary.
pub(crate) fn wide_rows(
    pool: &Pool,
    table: &Table,
    column: usize,
    family: Family,
) -> Result<FixedRows> {
    let multiplier = family::multiplier(table.schema().field(column).data_type(), family);
    let shapes: Vec<(usize, usize)> = table
        .parts()
        .iter()
        .map(|p| (p.batch.num_rows(), p.worker))
        .collect();
    let values = crate::par::try_per_part(
        pool,
        shapes.len(),
        |p| shapes[p].1,
        |p| {
            let mut out = Vec::with_capacity(shapes[p].0);
            numbers::each_number(
                table.parts()[p].batch.column(column).as_ref(),
                multiplier,
                |_, v| out.push(v),
            )?;
            Ok(out)
        },
    )?;
    FixedRows::build(pool, 16, &shapes, |p, row, out| match values[p][row] {
        Some(v) => {
            out.copy_from_slice(&((v as u128) ^ (1u128 << 127)).to_be_bytes());
            true
        }
        None => false,
    })
}

fn dictionary_codes(
    pool: &Pool,
    keys: &dyn dictionary::ByteKeys,
    ranked: bool,
    stored: bool,
) -> Result<ColumnCodes> {
    let (dictionary, mut parts) = Dictionary::build(pool, keys)?;
    let distinct = dictionary.len();
    if stored {
        return Ok(ColumnCodes {
            parts,
            span: distinct.saturating_sub(1),
            meaning: Meaning::Stored {
                keys: std::sync::Arc::new(dictionary.into_stored()),
            },
            encoding: KeyEncoding::Dictionary { distinct },
        });
    }
    let mut representatives: Vec<RowRef> = (0..distinct)
        .map(|c| dictionary.representative(c))
        .collect();
    if ranked {
        let ranks = dictionary.ranks(pool)?;
        remap(pool, &mut parts, &ranks)?;
        let mut by_rank = vec![0; representatives.len()];
        for (code, &rank) in ranks.iter().enumerate() {
            by_rank[rank as usize] = representatives[code];
        }
        representatives = by_rank;
    }
    Ok(ColumnCodes {
        parts,
        span: distinct.saturating_sub(1),
        meaning: Meaning::Rows { representatives },
        encoding: KeyEncoding::Dictionary { distinct },
    })
}

/// Replaces every code `c` by `map[c]`, part by part on the pool.
fn remap(pool: &Pool, parts: &mut [PartCodes], map: &[u64]) -> Result<()> {
    let workers = pool.workers().max(1);
    let cells: Vec<std::sync::Mutex<&mut PartCodes>> =
        parts.iter_mut().map(std::sync::Mutex::new).collect();
    crate::par::per_part(
        pool,
        cells.len(),
        |p| p % workers,
        |p| {
            if let Ok(mut part) = cells[p].lock() {
                let mut skip = part.invalid.iter().peekable();
                let mut codes = Vec::with_capacity(part.codes.len());
                for (row, &code) in part.codes.iter().enumerate() {
                    if skip.peek() == Some(&&(row as u32)) {
                        skip.next();
                        codes.push(0);
                    } else {
                        codes.push(map[code as usize]);
                    }
                }
                part.codes = codes.into();
            }
        },
    )?;
    Ok(())
}

/// `hi - lo` when it fits in 64 bits (128-bit decimals may not).
pub(crate) fn span_of(lo: i128, hi: i128) -> Option<u64> {
    hi.checked_sub(lo).and_then(|d| u64::try_from(d).ok())
}

/// Bits needed to hold values `0..=max`.
pub(crate) fn bits_for(max: u64) -> u32 {
    64 - max.leading_zeros()
}

pub(crate) mod compose;
pub(crate) mod group;
pub(crate) mod join;
pub(crate) mod order;

pub use group::GroupKeys;
pub use join::JoinKeys;
pub use order::{SortKey, SortKeys};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths() {
        assert_eq!(bits_for(0), 0);
        assert_eq!(bits_for(1), 1);
        assert_eq!(bits_for(255), 8);
        assert_eq!(bits_for(u64::MAX), 64);
    }

    #[test]
    fn encodings_describe_themselves() {
        assert_eq!(
            KeyEncoding::Packed {
                columns: 2,
                bits: 26
            }
            .describe(),
            "2 columns packed into 26 bits"
        );
    }
}
