//! How a streaming worker turns one key column of a batch into codes that
//! mean the same in every batch it sees: integers are their own codes,
//! floats their total-order bits, strings and other values numbers from
//! the worker's own [`KeyTable`]. A dictionary-encoded string column with
//! a small dictionary (flags and modes, as the Parquet reader gives them)
//! has its dictionary's values numbered once per batch, and each row then
//! takes its value's number by one lookup. It does not combine columns
//! (the worker does) and knows nothing of other workers.

use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use arrow_array::{Array, ArrayRef, DictionaryArray};
use arrow_schema::DataType;

use crate::error::{FrameError, Result};
use crate::keys::dictionary::{key_hash, ByteKeys};
use crate::keys::key_table::KeyTable;
use crate::keys::numbers::{each_number, raw_signed};
use crate::keys::PartCodes;
use crate::request::aggregate::spec::{value_type, ValueType};
use crate::table::RowRef;

/// How one key column's values become codes in a worker.
pub(super) enum Coder {
    /// Integers of 32 or 64 bits: the value (sign-extended when signed).
    Raw { signed: bool },
    /// Floats: total-order bits.
    Float,
    /// Strings and binaries: numbers from the worker's table of them.
    Bytes(KeyTable),
    /// Anything else (wide decimals, booleans): numbers from a table of
    /// their 16-byte values.
    Wide(KeyTable),
}

impl Coder {
    pub(super) fn for_type(data_type: &DataType) -> Self {
        match (value_type(data_type), raw_signed(data_type)) {
            (ValueType::Float, _) => Coder::Float,
            (ValueType::Bytes, _) => Coder::Bytes(KeyTable::with_capacity(64)),
            (_, Some(signed)) => Coder::Raw { signed },
            _ => Coder::Wide(KeyTable::with_capacity(64)),
        }
    }

    /// The codes of a batch's column, nulls listed.
    pub(super) fn codes(&mut self, array: &ArrayRef) -> Result<PartCodes> {
        match self {
            Coder::Raw { .. } => crate::keys::numbers::raw_codes(array)
                .ok_or_else(|| FrameError::InvalidRequest("a key column changed type".into())),
            Coder::Float => number_codes(array.as_ref(), |v| v as u64),
            Coder::Wide(table) => {
                let mut numbers = Vec::with_capacity(array.len());
                let mut invalid = Vec::new();
                each_number(array.as_ref(), 1, |row, v| match v {
                    Some(v) => {
                        let bytes = v.to_be_bytes();
                        numbers.push(u64::from(table.insert(key_hash(&bytes), &bytes, 0)));
                    }
                    None => {
                        numbers.push(0);
                        invalid.push(row as u32);
                    }
                })?;
                Ok(PartCodes::new(numbers, invalid))
            }
            Coder::Bytes(table) => match small_dictionary(array) {
                Some(dictionary) => dictionary_codes(table, dictionary),
                None => bytes_codes(table, array),
            },
        }
    }

    /// The string or binary key numbered `code` (`None` for other coders).
    pub(super) fn key(&self, code: u64) -> Option<&[u8]> {
        match self {
            Coder::Bytes(table) => Some(table.key(code as usize)),
            _ => None,
        }
    }

    /// The mean length of the keys numbered so far (`None` without a
    /// table of keys, or before any key).
    pub(super) fn mean_key_len(&self) -> Option<usize> {
        match self {
            Coder::Bytes(table) | Coder::Wide(table) if table.len() > 0 => {
                Some(table.key_bytes() / table.len())
            }
            _ => None,
        }
    }

    /// The canonical bytes of code `code` (appended to `out`).
    pub(super) fn canonical(&self, code: u64, out: &mut Vec<u8>) {
        match self {
            Coder::Raw { .. } | Coder::Float => out.extend_from_slice(&code.to_be_bytes()),
            Coder::Bytes(table) | Coder::Wide(table) => {
                let key = table.key(code as usize);
                out.extend_from_slice(&(key.len() as u32).to_be_bytes());
                out.extend_from_slice(key);
            }
        }
    }
}

fn number_codes(array: &dyn Array, f: impl Fn(i128) -> u64) -> Result<PartCodes> {
    let mut codes = Vec::with_capacity(array.len());
    let mut invalid = Vec::new();
    each_number(array, 1, |row, v| match v {
        Some(v) => codes.push(f(v)),
        None => {
            codes.push(0);
            invalid.push(row as u32);
        }
    })?;
    Ok(PartCodes::new(codes, invalid))
}

/// Dictionaries of at most one value per this many rows are numbered whole
/// ahead of the rows (larger ones only as rows use their values).
const ROWS_PER_DICTIONARY_VALUE: usize = 4;

/// `array` as a dictionary array with 32-bit keys (the type the reader
/// gives) whose dictionary is small beside its rows.
fn small_dictionary(array: &ArrayRef) -> Option<&DictionaryArray<Int32Type>> {
    let dictionary = array.as_dictionary_opt::<Int32Type>()?;
    (dictionary.values().len() * ROWS_PER_DICTIONARY_VALUE <= dictionary.len())
        .then_some(dictionary)
}

/// A dictionary-encoded column's codes: every dictionary value numbered
/// once through the worker's `table`, then each row its value's number in
/// one pass (a lookup per row, no bytes touched).
fn dictionary_codes(
    table: &mut KeyTable,
    dictionary: &DictionaryArray<Int32Type>,
) -> Result<PartCodes> {
    let values = dictionary.values();
    let bytes = OneArray::new(values)?;
    let numbers: Vec<u64> = (0..values.len())
        .map(|i| match bytes.0.key(0, i) {
            Some(key) => u64::from(table.insert(key_hash(key), key, 0)),
            None => NO_NUMBER,
        })
        .collect();
    let keys = dictionary.keys();
    let mut codes: Vec<u64> = keys
        .values()
        .iter()
        .map(|&k| {
            usize::try_from(k)
                .ok()
                .and_then(|k| numbers.get(k))
                .copied()
                .unwrap_or(NO_NUMBER)
        })
        .collect();
    let mut invalid = Vec::new();
    if keys.null_count() > 0 || numbers.contains(&NO_NUMBER) {
        for (row, code) in codes.iter_mut().enumerate() {
            if *code == NO_NUMBER || keys.is_null(row) {
                *code = 0;
                invalid.push(row as u32);
            }
        }
    }
    Ok(PartCodes::new(codes, invalid))
}

/// Marks a dictionary value (or key) that stands for no value: a null.
const NO_NUMBER: u64 = u64::MAX;

/// A string or binary column's codes through the worker's `table`.
fn bytes_codes(table: &mut KeyTable, array: &ArrayRef) -> Result<PartCodes> {
    let keys = OneArray::new(array)?;
    let mut insert = |key: &[u8], _: RowRef| table.insert(key_hash(key), key, 0);
    let numbers = match keys.0.number_by_values(0, &mut insert) {
        Some(numbers) => numbers,
        None => (0..array.len())
            .map(|row| match keys.0.key(0, row) {
                Some(key) => insert(key, 0),
                None => u32::MAX,
            })
            .collect(),
    };
    let invalid = numbers
        .iter()
        .enumerate()
        .filter(|(_, &n)| n == u32::MAX)
        .map(|(row, _)| row as u32)
        .collect();
    Ok(PartCodes::new(
        numbers
            .into_iter()
            .map(|n| if n == u32::MAX { 0 } else { u64::from(n) })
            .collect(),
        invalid,
    ))
}

/// One array seen as the byte keys of a one-part table.
struct OneArray<'a>(crate::keys::bytes::ColumnBytes<'a>);

impl<'a> OneArray<'a> {
    fn new(array: &'a ArrayRef) -> Result<Self> {
        Ok(OneArray(crate::keys::bytes::ColumnBytes::of_array(array)?))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Int32Array, StringArray};

    use super::*;

    /// A dictionary column of `rows` rows: a duplicated value, a null
    /// value, null keys and an empty string among the values.
    fn dictionary(rows: usize) -> (ArrayRef, Vec<Option<&'static str>>) {
        let values = [
            Some("x"),
            Some(""),
            Some("long shared prefix a"),
            None,
            Some("x"),
        ];
        let keys: Vec<Option<i32>> = (0..rows)
            .map(|r| (r % 7 != 6).then_some((r * 3 % 5) as i32))
            .collect();
        let expected = keys
            .iter()
            .map(|k| k.and_then(|k| values[k as usize]))
            .collect();
        let array = DictionaryArray::<Int32Type>::try_new(
            Int32Array::from(keys),
            Arc::new(StringArray::from(values.to_vec())),
        )
        .unwrap();
        (Arc::new(array), expected)
    }

    /// Every row's code names its own value, and the null rows are listed.
    fn check(coder: &Coder, codes: &PartCodes, expected: &[Option<&str>]) {
        let Coder::Bytes(table) = coder else {
            panic!("a string column is numbered by a table")
        };
        let nulls: Vec<u32> = (0..expected.len() as u32)
            .filter(|&r| expected[r as usize].is_none())
            .collect();
        assert_eq!(codes.invalid, nulls);
        for (row, value) in expected.iter().enumerate() {
            if let Some(value) = value {
                assert_eq!(
                    table.key(codes.codes[row] as usize),
                    value.as_bytes(),
                    "row {row}"
                );
            }
        }
    }

    #[test]
    fn small_dictionaries_are_numbered_by_their_values_like_any_strings() {
        let (array, expected) = dictionary(200);
        assert!(small_dictionary(&array).is_some());
        // Two batches through one coder (the second sliced): the codes
        // keep their meaning across batches.
        let mut coder = Coder::for_type(array.data_type());
        let first = coder.codes(&array).unwrap();
        check(&coder, &first, &expected);
        let sliced = array.slice(3, 150);
        let codes = coder.codes(&sliced).unwrap();
        check(&coder, &codes, &expected[3..153]);
        assert_eq!(codes.codes[0], first.codes[3]);
        // A dictionary as large as its rows goes the row-by-row way, to
        // the same numbers.
        let (few, expected_few) = dictionary(8);
        assert!(small_dictionary(&few).is_none());
        let codes = coder.codes(&few).unwrap();
        check(&coder, &codes, &expected_few);
        assert_eq!(codes.codes[0], first.codes[0]);
    }
}
