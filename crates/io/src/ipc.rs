//! Reading and writing Arrow IPC files.
//!
//! Reading accepts both the IPC file format (Feather v2; told by its
//! `ARROW1` magic) and the stream format, uncompressed or with LZ4 / Zstandard
//! buffer compression as Polars and pyarrow may write. The schema is read
//! first so that types are checked before any data; then only the requested
//! columns are decoded, batch by batch, into the `Vec<u64>` columns.
//!
//! Writing produces the file format, uncompressed (every Arrow reader
//! handles it and it is the fastest to load), in batches of about a million
//! rows. It deliberately does not write the stream format or dictionaries.

use std::fs::File;
use std::io::{BufReader, Read, Seek};
use std::path::Path;

use arrow_array::RecordBatch;
use arrow_ipc::reader::{FileReader, StreamReader};
use arrow_ipc::writer::FileWriter;
use arrow_schema::{ArrowError, Schema};

use crate::arrow_columns::{self, BatchCollector};
use crate::error::{IoError, Result};
use crate::projection;
use crate::table::Table;

/// The magic bytes that open (and close) an IPC file-format file.
pub(crate) const FILE_MAGIC: &[u8; 6] = b"ARROW1";
/// The word that opens each message of a (post-0.15) IPC stream.
const CONTINUATION_MARKER: u32 = 0xFFFF_FFFF;
/// Rows per record batch when writing.
const WRITE_BATCH_ROWS: usize = 1 << 20;

fn arrow_error(path: &Path) -> impl Fn(ArrowError) -> IoError + '_ {
    move |source| IoError::Arrow {
        path: path.to_path_buf(),
        source,
    }
}

fn file_error<'a>(path: &'a Path, action: &'static str) -> impl Fn(std::io::Error) -> IoError + 'a {
    move |source| IoError::file(action, path, source)
}

/// Reads the Arrow IPC file (file or stream format) at `path`, keeping the
/// `requested` columns (all when `None`).
pub(crate) fn read(path: &Path, requested: Option<&[String]>) -> Result<Table> {
    let mut file = File::open(path).map_err(file_error(path, "open"))?;
    let opening = read_opening(&mut file).map_err(file_error(path, "read"))?;
    if opening.starts_with(FILE_MAGIC) {
        read_file_format(path, file, requested)
    } else {
        let size = file.metadata().map_err(file_error(path, "read"))?.len();
        check_stream_opening(&opening, size).map_err(arrow_error(path))?;
        read_stream_format(path, file, requested)
    }
}

/// The first (up to) 8 bytes of the file; rewinds it.
pub(crate) fn read_opening(file: &mut File) -> std::io::Result<Vec<u8>> {
    let mut opening = Vec::with_capacity(8);
    file.by_ref().take(8).read_to_end(&mut opening)?;
    file.rewind()?;
    Ok(opening)
}

/// Refuses a stream whose first message claims more bytes than the file
/// holds (a truncated file or not Arrow at all), before the Arrow reader
/// would allocate that claimed size.
pub(crate) fn check_stream_opening(opening: &[u8], file_size: u64) -> Result<(), ArrowError> {
    let word = |at: usize| {
        opening
            .get(at..at + 4)
            .and_then(|bytes| bytes.try_into().ok())
            .map(u32::from_le_bytes)
    };
    let (claimed, prefix) = match word(0) {
        Some(CONTINUATION_MARKER) => (word(4), 8),
        first => (first, 4),
    };
    match claimed {
        Some(length) if prefix + u64::from(length) <= file_size => Ok(()),
        Some(length) => Err(not_ipc(&format!(
            "its first message claims {length} bytes, the file has {file_size}"
        ))),
        None => Err(not_ipc(&format!("the file has only {file_size} bytes"))),
    }
}

fn not_ipc(detail: &str) -> ArrowError {
    ArrowError::IpcError(format!(
        "not an IPC file (no ARROW1 magic) and not a complete IPC stream ({detail})"
    ))
}

fn read_file_format(path: &Path, mut file: File, requested: Option<&[String]>) -> Result<Table> {
    // The footer is read twice (once for the schema, once with the projection
    // that the schema decides); it is small.
    let schema = FileReader::try_new(&mut file, None)
        .map_err(arrow_error(path))?
        .schema();
    let (indices, collector) = prepare(&schema, requested)?;
    if indices.is_empty() {
        return Ok(collector.finish());
    }
    file.rewind().map_err(file_error(path, "read"))?;
    let reader = FileReader::try_new(file, Some(indices)).map_err(arrow_error(path))?;
    collect(path, reader, collector)
}

fn read_stream_format(path: &Path, mut file: File, requested: Option<&[String]>) -> Result<Table> {
    let schema = StreamReader::try_new(BufReader::new(&mut file), None)
        .map_err(arrow_error(path))?
        .schema();
    let (indices, collector) = prepare(&schema, requested)?;
    if indices.is_empty() {
        return Ok(collector.finish());
    }
    file.rewind().map_err(file_error(path, "read"))?;
    let reader =
        StreamReader::try_new(BufReader::new(file), Some(indices)).map_err(arrow_error(path))?;
    collect(path, reader, collector)
}

fn prepare(schema: &Schema, requested: Option<&[String]>) -> Result<(Vec<usize>, BatchCollector)> {
    let indices = projection::resolve(&arrow_columns::field_names(schema), requested)?;
    let collector = BatchCollector::new(schema, &indices, 0)?;
    Ok((indices, collector))
}

fn collect(
    path: &Path,
    batches: impl Iterator<Item = Result<RecordBatch, ArrowError>>,
    mut collector: BatchCollector,
) -> Result<Table> {
    for batch in batches {
        collector.append(&batch.map_err(arrow_error(path))?)?;
    }
    Ok(collector.finish())
}

/// Writes `table` (already validated) to `file` in the IPC file format;
/// `path` is for messages.
pub(crate) fn write(file: File, path: &Path, table: &Table) -> Result<()> {
    let schema = arrow_columns::schema_of(table);
    let mut writer = FileWriter::try_new_buffered(file, &schema).map_err(arrow_error(path))?;
    for (start, end) in arrow_columns::batch_ranges(table.rows(), WRITE_BATCH_ROWS) {
        let batch = arrow_columns::batch_of(table, &schema, start, end)?;
        writer.write(&batch).map_err(arrow_error(path))?;
    }
    writer.finish().map_err(arrow_error(path))?;
    let mut buffered = writer.into_inner().map_err(arrow_error(path))?;
    std::io::Write::flush(&mut buffered).map_err(file_error(path, "write"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_openings_are_checked_against_the_file_size() {
        let continued = [0xFF, 0xFF, 0xFF, 0xFF, 100, 0, 0, 0];
        assert!(check_stream_opening(&continued, 108).is_ok());
        assert!(check_stream_opening(&continued, 107).is_err());
        let legacy = [100, 0, 0, 0, 1, 2, 3, 4];
        assert!(check_stream_opening(&legacy, 104).is_ok());
        let text = b"key,valu";
        let message = check_stream_opening(text, 20).unwrap_err().to_string();
        assert!(
            message.contains("claims") && message.contains("20"),
            "{message}"
        );
        let message = check_stream_opening(b"AR", 2).unwrap_err().to_string();
        assert!(message.contains("only 2 bytes"), "{message}");
    }
}
