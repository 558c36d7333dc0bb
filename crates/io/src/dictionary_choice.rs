//! Which columns of a Parquet file are worth dictionary encoding, judged
//! on a sample of their first rows.
//!
//! The Parquet writer interns every value of a dictionary-encoded column
//! (a hash and a comparison per value) until the dictionary outgrows its
//! page and the column falls back to plain encoding. For a column of
//! mostly distinct values (keys, prices) that work is wasted; for one of
//! few values (flags, dates, categories) the dictionary makes the file
//! several times smaller and is cheap. A column is dictionary encoded
//! when its sample has at most one distinct value in [`DISTINCT_SHARE`].
//!
//! Only flat columns of fixed-width values, strings and binaries are
//! judged; others keep the writer's default (dictionary on).

use std::collections::HashSet;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::DataType;

/// Values sampled per column.
const SAMPLE_ROWS: usize = 1 << 16;
/// A column is dictionary encoded with at most one distinct value in this
/// many sampled values.
pub(crate) const DISTINCT_SHARE: usize = 8;

/// Per column of `batches` (their first [`SAMPLE_ROWS`] rows): `Some(true)`
/// to dictionary encode it, `Some(false)` not to, `None` when it is not
/// judged.
pub(crate) fn choose(batches: &[RecordBatch], columns: usize) -> Vec<Option<bool>> {
    (0..columns)
        .map(|c| {
            let mut sample: Vec<ArrayRef> = Vec::new();
            let mut rows = 0;
            for batch in batches {
                if rows >= SAMPLE_ROWS {
                    break;
                }
                let take = (SAMPLE_ROWS - rows).min(batch.num_rows());
                sample.push(batch.column(c).slice(0, take));
                rows += take;
            }
            if rows == 0 {
                return None;
            }
            let distinct = distinct_values(&sample)?;
            Some(distinct * DISTINCT_SHARE <= rows)
        })
        .collect()
}

/// Distinct non-null values in `arrays` (all of one type), or `None` for a
/// type this module does not judge.
fn distinct_values(arrays: &[ArrayRef]) -> Option<usize> {
    let mut seen: HashSet<&[u8]> = HashSet::new();
    let mut numbers: HashSet<u128> = HashSet::new();
    for array in arrays {
        let valid = |i: usize| array.is_valid(i);
        match array.data_type() {
            DataType::Utf8 => {
                let a = array.as_string::<i32>();
                seen.extend(
                    (0..a.len())
                        .filter(|&i| valid(i))
                        .map(|i| a.value(i).as_bytes()),
                );
            }
            DataType::LargeUtf8 => {
                let a = array.as_string::<i64>();
                seen.extend(
                    (0..a.len())
                        .filter(|&i| valid(i))
                        .map(|i| a.value(i).as_bytes()),
                );
            }
            DataType::Utf8View => {
                let a = array.as_string_view();
                seen.extend(
                    (0..a.len())
                        .filter(|&i| valid(i))
                        .map(|i| a.value(i).as_bytes()),
                );
            }
            DataType::Binary => {
                let a = array.as_binary::<i32>();
                seen.extend((0..a.len()).filter(|&i| valid(i)).map(|i| a.value(i)));
            }
            DataType::LargeBinary => {
                let a = array.as_binary::<i64>();
                seen.extend((0..a.len()).filter(|&i| valid(i)).map(|i| a.value(i)));
            }
            DataType::BinaryView => {
                let a = array.as_binary_view();
                seen.extend((0..a.len()).filter(|&i| valid(i)).map(|i| a.value(i)));
            }
            other => {
                let width = other.primitive_width().filter(|&w| w <= 16)?;
                let data = array.to_data();
                let buffer = data.buffers().first()?;
                let start = data.offset() * width;
                let bytes = buffer.as_slice().get(start..start + data.len() * width)?;
                numbers.extend(
                    bytes
                        .chunks_exact(width)
                        .enumerate()
                        .filter(|&(i, _)| valid(i))
                        .map(|(_, v)| {
                            let mut word = [0u8; 16];
                            word[..width].copy_from_slice(v);
                            u128::from_le_bytes(word)
                        }),
                );
            }
        }
    }
    Some(seen.len() + numbers.len())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Date32Array, Int64Array, StringArray};
    use arrow_schema::{Field, Schema};

    use super::*;

    #[test]
    fn few_values_are_dictionary_encoded_and_many_are_not() {
        let rows = 10_000;
        let schema = Arc::new(Schema::new(vec![
            Field::new("flag", DataType::Utf8, true),
            Field::new("key", DataType::Int64, false),
            Field::new("day", DataType::Date32, false),
            Field::new("name", DataType::Utf8, false),
            Field::new("list", DataType::new_list(DataType::Int32, true), true),
        ]));
        let flags: StringArray = (0..rows)
            .map(|i| (i % 7 != 0).then(|| ["A", "N", "R"][i % 3]))
            .collect();
        let keys = Int64Array::from_iter_values(0..rows as i64);
        let days = Date32Array::from_iter_values((0..rows as i32).map(|i| i % 100));
        let names: StringArray = (0..rows).map(|i| Some(format!("n{i}"))).collect();
        let lists = arrow_array::new_null_array(schema.field(4).data_type(), rows);
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(flags),
                Arc::new(keys),
                Arc::new(days),
                Arc::new(names),
                lists,
            ],
        )
        .unwrap();
        // Two batches: the sample spans them, sliced ones included.
        let batches = [batch.slice(0, 3000), batch.slice(3000, rows - 3000)];
        assert_eq!(
            choose(&batches, 5),
            vec![Some(true), Some(false), Some(true), Some(false), None]
        );
        assert_eq!(choose(&[], 1), vec![None]);
    }
}
