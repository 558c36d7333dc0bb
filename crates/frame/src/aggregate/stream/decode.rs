//! Key columns of a streamed group-by's result, rebuilt from what the
//! workers kept of each group: its canonical key bytes (keys numbered by
//! the workers' tables), or its code where a code is the value itself
//! (integers, floats' total-order bits). It makes no codes.

use arrow_array::{ArrayRef, BinaryArray, StringArray};
use arrow_schema::{DataType, SchemaRef};

use super::coder::Coder;
use crate::error::{FrameError, Result};
use crate::keys::decode::numbers_array;

/// The key columns of groups from their canonical bytes.
pub(super) fn decode_keys(
    schema: &SchemaRef,
    keys: usize,
    rows: &[&[u8]],
) -> Result<Vec<ArrayRef>> {
    let mut cursors: Vec<&[u8]> = rows.to_vec();
    (0..keys)
        .map(|c| {
            let data_type = schema.field(c).data_type();
            let coder = Coder::for_type(data_type);
            let values: Vec<Option<Vec<u8>>> = cursors
                .iter_mut()
                .map(|rest| {
                    let (flag, tail) = rest.split_first().unwrap_or((&0, &[]));
                    if *flag == 0 {
                        *rest = tail;
                        return None;
                    }
                    let len = match coder {
                        Coder::Raw { .. } | Coder::Float => 8,
                        _ => {
                            let mut l = [0u8; 4];
                            l.copy_from_slice(&tail[..4]);
                            4 + u32::from_be_bytes(l) as usize
                        }
                    };
                    let value = tail[..len].to_vec();
                    *rest = &tail[len..];
                    Some(value)
                })
                .collect();
            decode_column(&coder, data_type, &values)
        })
        .collect()
}

fn decode_column(
    coder: &Coder,
    data_type: &DataType,
    values: &[Option<Vec<u8>>],
) -> Result<ArrayRef> {
    let word = |v: &[u8]| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&v[..8]);
        u64::from_be_bytes(w)
    };
    match coder {
        Coder::Raw { .. } | Coder::Float => {
            let codes: Vec<Option<u64>> = values.iter().map(|v| v.as_deref().map(word)).collect();
            decode_codes(coder, data_type, &codes)
        }
        Coder::Wide(_) => {
            let numbers = values.iter().map(|v| {
                v.as_ref().map(|v| {
                    let mut b = [0u8; 16];
                    b.copy_from_slice(&v[4..20]);
                    i128::from_be_bytes(b)
                })
            });
            numbers_array(numbers, data_type)
        }
        Coder::Bytes(_) => {
            let text = matches!(value_type_of_bytes(data_type), Some(true));
            let plain: ArrayRef = if text {
                let strings: Vec<Option<&str>> = values
                    .iter()
                    .map(|v| {
                        v.as_ref()
                            .map(|v| std::str::from_utf8(&v[4..]).unwrap_or(""))
                    })
                    .collect();
                std::sync::Arc::new(StringArray::from(strings))
            } else {
                let bytes: Vec<Option<&[u8]>> =
                    values.iter().map(|v| v.as_ref().map(|v| &v[4..])).collect();
                std::sync::Arc::new(BinaryArray::from(bytes))
            };
            if plain.data_type() == data_type {
                Ok(plain)
            } else {
                arrow_cast::cast(&plain, data_type)
                    .map_err(|e| FrameError::arrow("rebuilding a key column", e))
            }
        }
    }
}

/// A key column from codes that are the values themselves (integers, or
/// floats' total-order bits).
pub(super) fn decode_codes(
    coder: &Coder,
    data_type: &DataType,
    codes: &[Option<u64>],
) -> Result<ArrayRef> {
    let signed = match coder {
        Coder::Raw { signed } => *signed,
        Coder::Float => false,
        _ => {
            return Err(FrameError::InvalidRequest(format!(
                "a {data_type} key has no codes of its own values"
            )))
        }
    };
    let numbers = codes.iter().map(|c| {
        c.map(|c| {
            if signed {
                i128::from(c as i64)
            } else {
                i128::from(c)
            }
        })
    });
    numbers_array(numbers, data_type)
}

/// Whether a string-or-binary type holds text.
fn value_type_of_bytes(data_type: &DataType) -> Option<bool> {
    match data_type {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Some(true),
        DataType::Dictionary(_, v) => value_type_of_bytes(v),
        DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
        | DataType::FixedSizeBinary(_) => Some(false),
        _ => None,
    }
}
