//! Join keys: the key columns of both sides coded in one code space, so
//! that equal codes mean equal keys across the tables.
//!
//! Per column pair: numbers are coded by value over the range both sides
//! share (a value outside it cannot match and gets no code); strings and
//! binaries through a dictionary of the left (build) side's keys, which the
//! right side only looks up. Composite keys are packed or, when too wide,
//! their left rows form a second dictionary that the right rows look up.
//! A null anywhere in a row's key leaves it without a code.

use numakit_pool::Pool;

use crate::error::{FrameError, Result};
use crate::keys::bytes::{ColumnBytes, FixedRows};
use crate::keys::compose::{pack, packed_layout, tuple_rows, ColumnRole};
use crate::keys::dictionary::Dictionary;
use crate::keys::family::{common_family, multiplier, Family};
use crate::keys::{key_family, numbers, span_of, ColumnCodes, KeyEncoding, Meaning, PartCodes};
use crate::table::Table;

/// Both sides' key codes.
#[derive(Debug)]
pub struct JoinKeys {
    pub left: Vec<PartCodes>,
    pub right: Vec<PartCodes>,
    pub encoding: KeyEncoding,
}

fn shapes(table: &Table) -> Vec<(usize, usize)> {
    table
        .parts()
        .iter()
        .map(|p| (p.batch.num_rows(), p.worker))
        .collect()
}

/// Every row without a code (a pair whose ranges do not meet).
fn no_codes(table: &Table) -> Vec<PartCodes> {
    table
        .parts()
        .iter()
        .map(|p| {
            PartCodes::new(
                vec![0; p.batch.num_rows()],
                (0..p.batch.num_rows() as u32).collect(),
            )
        })
        .collect()
}

fn column(parts: Vec<PartCodes>, span: u64, encoding: KeyEncoding) -> ColumnCodes {
    ColumnCodes {
        parts,
        span,
        meaning: Meaning::Offset {
            lo: 0,
            multiplier: 1,
        },
        encoding,
    }
}

/// Raw codes (the values themselves) of a column, part by part.
fn raw_column(pool: &Pool, table: &Table, column: usize) -> Result<Vec<PartCodes>> {
    let parts = table.parts();
    crate::par::per_part(
        pool,
        parts.len(),
        |p| parts[p].worker,
        |p| numbers::raw_codes(parts[p].batch.column(column)),
    )?
    .into_iter()
    .collect::<Option<Vec<_>>>()
    .ok_or_else(|| FrameError::InvalidRequest("a raw key column changed type".into()))
}

/// One column pair in a shared code space; `single` when it is the whole
/// key (then values that are their own codes need no range).
fn pair_codes(
    pool: &Pool,
    (left, lc): (&Table, usize),
    (right, rc): (&Table, usize),
    single: bool,
) -> Result<(ColumnCodes, ColumnCodes)> {
    let (lf, rf) = (key_family(left, lc)?, key_family(right, rc)?);
    let family = common_family(lf, rf).map_err(|why| {
        let (l, r) = (left.schema().field(lc), right.schema().field(rc));
        FrameError::KeyMismatch {
            left: l.name().clone(),
            left_type: l.data_type().to_string(),
            right: r.name().clone(),
            right_type: r.data_type().to_string(),
            why,
        }
    })?;
    if let Family::Bytes { .. } = family {
        let (lk, rk) = (ColumnBytes::new(left, lc)?, ColumnBytes::new(right, rc)?);
        return dictionary_pair(pool, &lk, &rk);
    }
    let (lt, rt) = (
        left.schema().field(lc).data_type(),
        right.schema().field(rc).data_type(),
    );
    let same_raw = numbers::raw_signed(lt).is_some()
        && numbers::raw_signed(lt) == numbers::raw_signed(rt)
        && multiplier(lt, family) == 1
        && multiplier(rt, family) == 1;
    if single && same_raw {
        return Ok((
            column(raw_column(pool, left, lc)?, u64::MAX, KeyEncoding::Value),
            column(raw_column(pool, right, rc)?, u64::MAX, KeyEncoding::Value),
        ));
    }
    let ranges = (
        numbers::range(pool, left, lc, family)?,
        numbers::range(pool, right, rc, family)?,
    );
    let (Some((llo, lhi)), Some((rlo, rhi))) = ranges else {
        return Ok((
            column(no_codes(left), 0, KeyEncoding::Value),
            column(no_codes(right), 0, KeyEncoding::Value),
        ));
    };
    let (lo, hi) = (llo.max(rlo), lhi.min(rhi));
    if lo > hi {
        return Ok((
            column(no_codes(left), 0, KeyEncoding::Value),
            column(no_codes(right), 0, KeyEncoding::Value),
        ));
    }
    if let Some(span) = span_of(lo, hi) {
        return Ok((
            column(
                numbers::offset_codes(pool, left, lc, family, (lo, hi))?,
                span,
                KeyEncoding::Value,
            ),
            column(
                numbers::offset_codes(pool, right, rc, family, (lo, hi))?,
                span,
                KeyEncoding::Value,
            ),
        ));
    }
    let (lk, rk) = (
        wide(pool, left, lc, family)?,
        wide(pool, right, rc, family)?,
    );
    dictionary_pair(pool, &lk, &rk)
}

fn wide(pool: &Pool, table: &Table, column: usize, family: Family) -> Result<FixedRows> {
    let m = multiplier(table.schema().field(column).data_type(), family);
    let shapes = shapes(table);
    let values = crate::par::try_per_part(
        pool,
        shapes.len(),
        |p| shapes[p].1,
        |p| {
            let mut out = Vec::with_capacity(shapes[p].0);
            numbers::each_number(table.parts()[p].batch.column(column).as_ref(), m, |_, v| {
                out.push(v)
            })?;
            Ok(out)
        },
    )?;
    FixedRows::build(pool, 16, &shapes, |p, row, out| match values[p][row] {
        Some(v) => {
            out.copy_from_slice(&v.to_be_bytes());
            true
        }
        None => false,
    })
}

fn dictionary_pair(
    pool: &Pool,
    left: &dyn crate::keys::dictionary::ByteKeys,
    right: &dyn crate::keys::dictionary::ByteKeys,
) -> Result<(ColumnCodes, ColumnCodes)> {
    let (dictionary, lcodes) = Dictionary::build(pool, left)?;
    let rcodes = dictionary.lookup(pool, right)?;
    let distinct = dictionary.len();
    let span = distinct.saturating_sub(1);
    let encoding = KeyEncoding::Dictionary { distinct };
    Ok((
        column(lcodes, span, encoding),
        column(rcodes, span, encoding),
    ))
}

impl JoinKeys {
    /// Codes `left`'s columns `lcols` and `right`'s `rcols` (pairwise).
    pub fn encode(
        pool: &Pool,
        left: &Table,
        lcols: &[usize],
        right: &Table,
        rcols: &[usize],
    ) -> Result<Self> {
        if lcols.len() != rcols.len() || lcols.is_empty() {
            return Err(FrameError::InvalidRequest(format!(
                "a join needs as many key columns on the left as on the right (got {} and {})",
                lcols.len(),
                rcols.len()
            )));
        }
        let mut lcoded = Vec::with_capacity(lcols.len());
        let mut rcoded = Vec::with_capacity(rcols.len());
        for (&lc, &rc) in lcols.iter().zip(rcols) {
            let (l, r) = pair_codes(pool, (left, lc), (right, rc), lcols.len() == 1)?;
            lcoded.push(l);
            rcoded.push(r);
        }
        if lcoded.len() == 1 {
            let encoding = lcoded[0].encoding;
            return Ok(JoinKeys {
                left: lcoded.remove(0).parts,
                right: rcoded.remove(0).parts,
                encoding,
            });
        }
        let roles = vec![ColumnRole::JOIN; lcoded.len()];
        let (lshapes, rshapes) = (shapes(left), shapes(right));
        if let Some(layout) = packed_layout(&lcoded, &roles) {
            let bits = layout.iter().map(|l| l.bits).sum();
            return Ok(JoinKeys {
                left: pack(pool, &lshapes, &lcoded, &layout)?,
                right: pack(pool, &rshapes, &rcoded, &layout)?,
                encoding: KeyEncoding::Packed {
                    columns: lcoded.len(),
                    bits,
                },
            });
        }
        let lrows = tuple_rows(pool, &lshapes, &lcoded, &roles)?;
        let rrows = tuple_rows(pool, &rshapes, &rcoded, &roles)?;
        drop((lcoded, rcoded));
        let (dictionary, lparts) = Dictionary::build(pool, &lrows)?;
        let rparts = dictionary.lookup(pool, &rrows)?;
        Ok(JoinKeys {
            left: lparts,
            right: rparts,
            encoding: KeyEncoding::TupleDictionary {
                columns: lcols.len(),
                distinct: dictionary.len(),
            },
        })
    }
}
