//! Writing a [`Table`] as CSV: a header row (quoted where a name needs it),
//! then one line per row of decimal integers, signed or unsigned by column.
//!
//! Rows are formatted into a large byte buffer with `itoa` and written in
//! big pieces. It deliberately writes no quoting, padding or type hints in
//! the data lines: integers never need them.

use std::fs::File;
use std::io::Write;
use std::path::Path;

use crate::error::{IoError, Result};
use crate::options::CsvOptions;
use crate::table::{IntKind, Table};

/// Bytes gathered before each write to the file.
const WRITE_BUFFER_BYTES: usize = 1 << 20;

/// Writes `table` (already validated) to `file` as CSV; `path` is for messages.
pub(crate) fn write(file: File, path: &Path, table: &Table, options: &CsvOptions) -> Result<()> {
    options.validate()?;
    let mut file = file;
    if table.columns.is_empty() {
        return Ok(()); // An empty file reads back as a table without columns.
    }
    let mut buffer = header_line(path, table, options)?;
    buffer.reserve(WRITE_BUFFER_BYTES);
    let write_error = |source| IoError::file("write", path, source);
    let mut formatter = itoa::Buffer::new();
    for row in 0..table.rows() {
        for (index, column) in table.columns.iter().enumerate() {
            if index > 0 {
                buffer.push(options.delimiter);
            }
            let raw = column.values[row];
            let text = match column.kind {
                IntKind::Signed => formatter.format(raw as i64),
                IntKind::Unsigned => formatter.format(raw),
            };
            buffer.extend_from_slice(text.as_bytes());
        }
        buffer.push(b'\n');
        if buffer.len() >= WRITE_BUFFER_BYTES {
            file.write_all(&buffer).map_err(write_error)?;
            buffer.clear();
        }
    }
    file.write_all(&buffer).map_err(write_error)?;
    file.flush().map_err(write_error)
}

/// The header line, quoted by the csv crate wherever a name contains the
/// delimiter, a quote or a line break.
fn header_line(path: &Path, table: &Table, options: &CsvOptions) -> Result<Vec<u8>> {
    let mut writer = csv::WriterBuilder::new()
        .delimiter(options.delimiter)
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    let csv_error = |source| IoError::Csv {
        path: path.to_path_buf(),
        source,
    };
    writer
        .write_record(table.columns.iter().map(|column| column.name.as_bytes()))
        .map_err(csv_error)?;
    writer
        .into_inner()
        .map_err(|error| IoError::file("write", path, error.into_error()))
}
