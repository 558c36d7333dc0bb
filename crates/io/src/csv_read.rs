//! Reading CSV files into a [`Table`]: a header row names the columns, every
//! requested column must hold 64-bit integers, and the other columns may
//! hold anything (they are split but never parsed).
//!
//! Records are read into one reused byte record (no per-cell allocation) and
//! integers are parsed from the bytes directly. A column is signed unless it
//! holds a value above `i64::MAX`, in which case it is unsigned; a column
//! holding both such a value and a negative one is refused.
//!
//! It deliberately does not infer other types, guess whether a header exists
//! (a first row of numbers only is refused), or treat empty fields as
//! anything but nulls, which are refused.

use std::fs::File;
use std::path::Path;

use csv::{ByteRecord, ReaderBuilder};

use crate::error::{IoError, Result};
use crate::options::CsvOptions;
use crate::projection;
use crate::table::{Column, IntKind, Table};

/// Bytes the CSV reader buffers from the file at a time.
const READ_BUFFER_BYTES: usize = 1 << 20;
/// Longest offending field quoted in an error message.
const QUOTED_FIELD_CHARS: usize = 40;

/// A parsed integer field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ParsedInt {
    /// Zero or more (up to `u64::MAX`).
    NonNegative(u64),
    /// Below zero (down to `i64::MIN`).
    Negative(i64),
}

/// Why a field is not an integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IntIssue {
    Empty,
    NotInteger,
    OutOfRange,
}

impl IntIssue {
    fn reason(self) -> &'static str {
        match self {
            IntIssue::Empty => "empty: empty fields (nulls) are not supported",
            IntIssue::NotInteger => "not an integer",
            IntIssue::OutOfRange => "outside the 64-bit integer range",
        }
    }
}

/// Parses an optionally signed decimal integer, ignoring surrounding ASCII
/// whitespace.
pub(crate) fn parse_int(field: &[u8]) -> Result<ParsedInt, IntIssue> {
    let field = field.trim_ascii();
    let (negative, digits) = match field.split_first() {
        None => return Err(IntIssue::Empty),
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        Some(_) => (false, field),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return Err(IntIssue::NotInteger);
    }
    let magnitude = digits.iter().try_fold(0u64, |acc, &digit| {
        acc.checked_mul(10)?.checked_add(u64::from(digit - b'0'))
    });
    match (negative, magnitude) {
        (_, None) => Err(IntIssue::OutOfRange),
        (false, Some(value)) | (true, Some(value @ 0)) => Ok(ParsedInt::NonNegative(value)),
        (true, Some(value)) if value <= 1u64 << 63 => {
            Ok(ParsedInt::Negative(0u64.wrapping_sub(value) as i64))
        }
        (true, Some(_)) => Err(IntIssue::OutOfRange),
    }
}

/// One requested column while it is being read.
struct ColumnBuilder {
    name: String,
    source_index: usize,
    values: Vec<u64>,
    first_negative_line: Option<u64>,
    first_large_line: Option<u64>,
}

impl ColumnBuilder {
    fn push(&mut self, parsed: ParsedInt, line: u64) {
        match parsed {
            ParsedInt::NonNegative(value) => {
                if value > i64::MAX as u64 && self.first_large_line.is_none() {
                    self.first_large_line = Some(line);
                }
                self.values.push(value);
            }
            ParsedInt::Negative(value) => {
                if self.first_negative_line.is_none() {
                    self.first_negative_line = Some(line);
                }
                self.values.push(value as u64);
            }
        }
    }

    fn finish(self, path: &Path) -> Result<Column> {
        let kind = match (self.first_negative_line, self.first_large_line) {
            (Some(negative_line), Some(large_line)) => {
                return Err(IoError::CsvMixedSign {
                    path: path.to_path_buf(),
                    column: self.name,
                    negative_line,
                    large_line,
                })
            }
            (_, Some(_)) => IntKind::Unsigned,
            _ => IntKind::Signed,
        };
        Ok(Column::from_raw(self.name, kind, self.values))
    }
}

/// Reads the CSV file at `path`, keeping the `requested` columns (all when `None`).
pub(crate) fn read(
    path: &Path,
    requested: Option<&[String]>,
    options: &CsvOptions,
) -> Result<Table> {
    options.validate()?;
    let file = File::open(path).map_err(|source| IoError::file("open", path, source))?;
    let mut reader = ReaderBuilder::new()
        .delimiter(options.delimiter)
        .has_headers(false)
        .flexible(true)
        .buffer_capacity(READ_BUFFER_BYTES)
        .from_reader(file);
    let csv_error = |source| IoError::Csv {
        path: path.to_path_buf(),
        source,
    };
    let mut record = ByteRecord::new();
    let names = if reader.read_byte_record(&mut record).map_err(csv_error)? {
        header_names(path, &record)?
    } else {
        Vec::new() // An empty file: a table without columns.
    };
    let indices = projection::resolve(&names, requested)?;
    let mut builders: Vec<ColumnBuilder> = indices
        .iter()
        .map(|&index| ColumnBuilder {
            name: names[index].clone(),
            source_index: index,
            values: Vec::new(),
            first_negative_line: None,
            first_large_line: None,
        })
        .collect();
    while reader.read_byte_record(&mut record).map_err(csv_error)? {
        parse_record(path, &record, names.len(), &mut builders)?;
    }
    let columns = builders
        .into_iter()
        .map(|builder| builder.finish(path))
        .collect::<Result<Vec<_>>>()?;
    Ok(Table::new(columns))
}

/// The column names of a header record, refusing a record of numbers only.
fn header_names(path: &Path, record: &ByteRecord) -> Result<Vec<String>> {
    let looks_like_data = record.iter().all(|field| parse_int(field).is_ok());
    if looks_like_data {
        let first_line = record
            .iter()
            .map(String::from_utf8_lossy)
            .collect::<Vec<_>>()
            .join(",");
        return Err(IoError::CsvMissingHeader {
            path: path.to_path_buf(),
            first_line: shorten(&first_line),
        });
    }
    Ok(record
        .iter()
        .map(|field| String::from_utf8_lossy(field).into_owned())
        .collect())
}

fn parse_record(
    path: &Path,
    record: &ByteRecord,
    expected_fields: usize,
    builders: &mut [ColumnBuilder],
) -> Result<()> {
    let line = record.position().map_or(0, |position| position.line());
    if record.len() != expected_fields {
        return Err(IoError::CsvFieldCount {
            path: path.to_path_buf(),
            line,
            found: record.len(),
            expected: expected_fields,
        });
    }
    for builder in builders {
        let field = &record[builder.source_index];
        match parse_int(field) {
            Ok(parsed) => builder.push(parsed, line),
            Err(issue) => {
                return Err(IoError::CsvValue {
                    path: path.to_path_buf(),
                    line,
                    column: builder.name.clone(),
                    field: shorten(&String::from_utf8_lossy(field)),
                    reason: issue.reason(),
                })
            }
        }
    }
    Ok(())
}

fn shorten(text: &str) -> String {
    if text.chars().count() <= QUOTED_FIELD_CHARS {
        text.to_string()
    } else {
        let mut short: String = text.chars().take(QUOTED_FIELD_CHARS).collect();
        short.push('…');
        short
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_parse_across_the_whole_range() {
        assert_eq!(parse_int(b"0"), Ok(ParsedInt::NonNegative(0)));
        assert_eq!(parse_int(b"-0"), Ok(ParsedInt::NonNegative(0)));
        assert_eq!(parse_int(b" +42 "), Ok(ParsedInt::NonNegative(42)));
        assert_eq!(parse_int(b"-1"), Ok(ParsedInt::Negative(-1)));
        let min = i64::MIN.to_string();
        assert_eq!(parse_int(min.as_bytes()), Ok(ParsedInt::Negative(i64::MIN)));
        let max = u64::MAX.to_string();
        assert_eq!(
            parse_int(max.as_bytes()),
            Ok(ParsedInt::NonNegative(u64::MAX))
        );
    }

    #[test]
    fn non_integers_are_told_apart() {
        assert_eq!(parse_int(b""), Err(IntIssue::Empty));
        assert_eq!(parse_int(b"  "), Err(IntIssue::Empty));
        for bad in [&b"-"[..], b"1.5", b"abc", b"1e3", b"0x10", b"--1", b"1 2"] {
            assert_eq!(parse_int(bad), Err(IntIssue::NotInteger), "{bad:?}");
        }
        assert_eq!(
            parse_int(b"18446744073709551616"),
            Err(IntIssue::OutOfRange)
        );
        assert_eq!(
            parse_int(b"-9223372036854775809"),
            Err(IntIssue::OutOfRange)
        );
    }

    #[test]
    fn long_fields_are_shortened_in_messages() {
        let long = "x".repeat(100);
        assert_eq!(shorten(&long).chars().count(), QUOTED_FIELD_CHARS + 1);
        assert_eq!(shorten("short"), "short");
    }
}
