//! The types of a CSV file's columns, inferred from a sample of its first
//! rows, the way DuckDB and Polars do it.
//!
//! Each column gets the narrowest of these types that holds every sampled
//! value: Boolean (`true`/`false`), Int64, UInt64 (non-negative integers
//! beyond Int64), Decimal128(20, 0) (integers beyond both), Float64,
//! Date32 (`YYYY-MM-DD`), Timestamp in microseconds (`YYYY-MM-DD HH:MM:SS`
//! with an optional fraction, `T` allowed), or Utf8. Empty fields are
//! nulls and say nothing about the type; a column of nulls only is Utf8.
//! Every column is nullable.
//!
//! It reads the header and the sample only. A later value that does not fit
//! the inferred type makes decoding fail with the line named.

use std::fs::File;
use std::path::Path;

use arrow_schema::{DataType, Field, Schema, TimeUnit};

use crate::error::{IoError, Result};
use crate::options::CsvOptions;

/// Rows read to infer the columns' types.
pub const SAMPLE_ROWS: usize = 100_000;

/// The inferred schema and the byte offset where the first data record
/// starts (just after the header).
pub(crate) struct Inferred {
    pub(crate) schema: Schema,
    pub(crate) data_start: u64,
}

/// What the sampled values of one column allow.
#[derive(Clone, Copy, Debug)]
struct Evidence {
    values: u64,
    boolean: bool,
    integer: bool,
    beyond_i64: bool,
    negative: bool,
    float: bool,
    date: bool,
    timestamp: bool,
}

impl Default for Evidence {
    fn default() -> Self {
        Evidence {
            values: 0,
            boolean: true,
            integer: true,
            beyond_i64: false,
            negative: false,
            float: true,
            date: true,
            timestamp: true,
        }
    }
}

impl Evidence {
    fn see(&mut self, field: &str) {
        if field.is_empty() {
            return;
        }
        self.values += 1;
        self.boolean &= field.eq_ignore_ascii_case("true") || field.eq_ignore_ascii_case("false");
        if self.integer {
            match classify_integer(field) {
                Some(IntegerClass::Fits) => self.negative |= field.starts_with('-'),
                Some(IntegerClass::BeyondI64) => self.beyond_i64 = true,
                None => self.integer = false,
            }
        }
        self.float &= field.trim().parse::<f64>().is_ok();
        let is_date = is_date(field);
        self.date &= is_date;
        self.timestamp &= is_date || is_timestamp(field);
    }

    fn data_type(&self) -> DataType {
        if self.values == 0 {
            DataType::Utf8
        } else if self.boolean {
            DataType::Boolean
        } else if self.integer && !self.beyond_i64 {
            DataType::Int64
        } else if self.integer && !self.negative {
            DataType::UInt64
        } else if self.integer {
            DataType::Decimal128(20, 0)
        } else if self.float {
            DataType::Float64
        } else if self.date {
            DataType::Date32
        } else if self.timestamp {
            DataType::Timestamp(TimeUnit::Microsecond, None)
        } else {
            DataType::Utf8
        }
    }
}

enum IntegerClass {
    Fits,
    BeyondI64,
}

fn classify_integer(field: &str) -> Option<IntegerClass> {
    let digits = field.strip_prefix(['-', '+']).unwrap_or(field);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if field.parse::<i64>().is_ok() {
        return Some(IntegerClass::Fits);
    }
    // Up to 20 digits fit in Decimal128(20, 0).
    let significant = digits.trim_start_matches('0');
    (significant.len() <= 20).then_some(IntegerClass::BeyondI64)
}

fn digits_at(bytes: &[u8], range: std::ops::Range<usize>) -> bool {
    bytes
        .get(range)
        .is_some_and(|part| part.iter().all(u8::is_ascii_digit))
}

/// `YYYY-MM-DD`.
fn is_date(field: &str) -> bool {
    let b = field.as_bytes();
    b.len() == 10
        && digits_at(b, 0..4)
        && b[4] == b'-'
        && digits_at(b, 5..7)
        && b[7] == b'-'
        && digits_at(b, 8..10)
}

/// `YYYY-MM-DD HH:MM:SS[.fraction]`, with `T` allowed for the space.
fn is_timestamp(field: &str) -> bool {
    let b = field.as_bytes();
    if b.len() < 19 || !is_date(&field[..10]) || !matches!(b[10], b' ' | b'T') {
        return false;
    }
    let time_ok = digits_at(b, 11..13)
        && b[13] == b':'
        && digits_at(b, 14..16)
        && b[16] == b':'
        && digits_at(b, 17..19);
    let fraction = &b[19..];
    time_ok
        && (fraction.is_empty()
            || (fraction[0] == b'.'
                && (2..=10).contains(&fraction.len())
                && digits_at(fraction, 1..fraction.len())))
}

/// Reads the header and a sample of `path`'s rows.
pub(crate) fn infer(path: &Path, options: &CsvOptions) -> Result<Inferred> {
    options.validate()?;
    let file = File::open(path).map_err(|source| IoError::file("open", path, source))?;
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(options.delimiter)
        .has_headers(true)
        .flexible(true)
        .from_reader(std::io::BufReader::new(file));
    let csv_error = |source| IoError::Csv {
        path: path.to_path_buf(),
        source,
    };
    let names: Vec<String> = reader
        .headers()
        .map_err(csv_error)?
        .iter()
        .map(str::to_string)
        .collect();
    check_header(path, &names)?;
    let data_start = reader.position().byte();
    let mut evidence = vec![Evidence::default(); names.len()];
    let mut record = csv::StringRecord::new();
    for _ in 0..SAMPLE_ROWS {
        if !reader.read_record(&mut record).map_err(csv_error)? {
            break;
        }
        if record.len() != names.len() {
            return Err(IoError::CsvFieldCount {
                path: path.to_path_buf(),
                line: record.position().map_or(0, |p| p.line()),
                found: record.len(),
                expected: names.len(),
            });
        }
        for (column, field) in evidence.iter_mut().zip(record.iter()) {
            column.see(field);
        }
    }
    let fields: Vec<Field> = names
        .iter()
        .zip(&evidence)
        .map(|(name, e)| Field::new(name, e.data_type(), true))
        .collect();
    Ok(Inferred {
        schema: Schema::new(fields),
        data_start,
    })
}

/// A header of numbers only is a data row: the file has no header.
fn check_header(path: &Path, names: &[String]) -> Result<()> {
    let numeric = !names.is_empty()
        && names
            .iter()
            .all(|n| !n.trim().is_empty() && n.trim().parse::<f64>().is_ok());
    if numeric {
        return Err(IoError::CsvMissingHeader {
            path: path.to_path_buf(),
            first_line: names.join(","),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn type_of(values: &[&str]) -> DataType {
        let mut e = Evidence::default();
        for v in values {
            e.see(v);
        }
        e.data_type()
    }

    #[test]
    fn each_column_gets_the_narrowest_type_of_its_values() {
        assert_eq!(type_of(&["1", "-2", ""]), DataType::Int64);
        assert_eq!(type_of(&["1", "18446744073709551615"]), DataType::UInt64);
        assert_eq!(
            type_of(&["-1", "18446744073709551615"]),
            DataType::Decimal128(20, 0)
        );
        assert_eq!(type_of(&["1", "2.5", "NaN"]), DataType::Float64);
        assert_eq!(type_of(&["true", "FALSE"]), DataType::Boolean);
        assert_eq!(type_of(&["2024-01-31", ""]), DataType::Date32);
        assert_eq!(
            type_of(&["2024-01-31", "2024-01-31T10:00:00.25"]),
            DataType::Timestamp(TimeUnit::Microsecond, None)
        );
        assert_eq!(type_of(&["alice", "1"]), DataType::Utf8);
        assert_eq!(type_of(&["", ""]), DataType::Utf8);
        assert_eq!(type_of(&["999999999999999999999"]), DataType::Float64);
    }
}
