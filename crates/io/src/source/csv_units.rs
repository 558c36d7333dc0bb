//! CSV files in units of byte ranges that start and end at a record
//! boundary.
//!
//! Opening infers the schema (`csv_infer`) and then finds the boundaries in
//! one sequential pass over the file that tracks quotes, so that a quoted
//! field holding a line break never splits a unit: a boundary is the first
//! line break at or after every `unit_bytes` that lies outside quotes. Each
//! unit is then read with one positioned read and decoded with Arrow's CSV
//! decoder under the inferred schema, empty fields as nulls.
//!
//! It does not guess a delimiter, skip comment lines or read files without
//! a header row.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use crate::error::{IoError, Result};
use crate::options::CsvOptions;
use crate::source::{csv_infer, Projection};

/// Rows per decoded batch.
const BATCH_ROWS: usize = 1 << 17;
/// Bytes read at a time while looking for boundaries.
const SCAN_BLOCK: usize = 1 << 20;

pub(crate) struct CsvUnits {
    schema: SchemaRef,
    delimiter: u8,
    /// Unit i is bytes `bounds[i]..bounds[i + 1]`.
    bounds: Vec<u64>,
}

impl CsvUnits {
    pub(crate) fn open(path: &Path, options: &CsvOptions, unit_bytes: u64) -> Result<Self> {
        let inferred = csv_infer::infer(path, options)?;
        let bounds = find_bounds(path, inferred.data_start, unit_bytes.max(1))?;
        Ok(CsvUnits {
            schema: Arc::new(inferred.schema),
            delimiter: options.delimiter,
            bounds,
        })
    }

    pub(crate) fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    pub(crate) fn len(&self) -> usize {
        self.bounds.len().saturating_sub(1)
    }

    pub(crate) fn read(
        &self,
        path: &Path,
        unit: usize,
        projection: &Projection,
    ) -> Result<Vec<RecordBatch>> {
        let (start, end) = (self.bounds[unit], self.bounds[unit + 1]);
        let bytes = read_range(path, start, end)?;
        let mut decoder = arrow_csv::ReaderBuilder::new(self.schema.clone())
            .with_header(false)
            .with_delimiter(self.delimiter)
            .with_batch_size(BATCH_ROWS)
            .with_projection(projection.indices().to_vec())
            .build_decoder();
        let mut out = Vec::new();
        let mut at = 0;
        let fail = |source: arrow_schema::ArrowError| self.decode_error(path, start, source);
        loop {
            let consumed = decoder.decode(&bytes[at..]).map_err(fail)?;
            at += consumed;
            if consumed == 0 || decoder.capacity() == 0 {
                if let Some(batch) = decoder.flush().map_err(fail)? {
                    out.push(batch);
                }
            }
            if consumed == 0 && at >= bytes.len() {
                return Ok(out);
            }
        }
    }

    /// An error of the unit starting at byte `start`, with the line the
    /// unit starts at (counted only now, on the error path).
    fn decode_error(&self, path: &Path, start: u64, source: arrow_schema::ArrowError) -> IoError {
        let first_line = lines_before(path, start).map_or(String::new(), |lines| {
            format!(
                " (lines counted from line {} of the file, the start of the part being read)",
                lines + 1
            )
        });
        IoError::Decode {
            format: "CSV",
            path: path.to_path_buf(),
            message: format!(
                "{source}{first_line}; column types were inferred from the first {} rows: {}",
                csv_infer::SAMPLE_ROWS,
                self.schema
                    .fields()
                    .iter()
                    .map(|f| format!("{} {}", f.name(), f.data_type()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}

fn read_range(path: &Path, start: u64, end: u64) -> Result<Vec<u8>> {
    let file = File::open(path).map_err(|source| IoError::file("open", path, source))?;
    let len = usize::try_from(end - start)
        .map_err(|_| IoError::InvalidOption(format!("a part of {path:?} is too large to read")))?;
    let mut bytes = vec![0u8; len];
    file.read_exact_at(&mut bytes, start)
        .map_err(|source| IoError::file("read", path, source))?;
    Ok(bytes)
}

fn lines_before(path: &Path, offset: u64) -> Option<u64> {
    let file = File::open(path).ok()?;
    let mut reader = std::io::BufReader::new(file).take(offset);
    let mut block = vec![0u8; SCAN_BLOCK];
    let mut lines = 0u64;
    loop {
        let n = reader.read(&mut block).ok()?;
        if n == 0 {
            return Some(lines);
        }
        lines += block[..n].iter().filter(|&&b| b == b'\n').count() as u64;
    }
}

/// The unit boundaries: `data_start`, then the first line break outside
/// quotes at or after each multiple of `unit_bytes`, then the file's end.
fn find_bounds(path: &Path, data_start: u64, unit_bytes: u64) -> Result<Vec<u64>> {
    let mut file = File::open(path).map_err(|source| IoError::file("open", path, source))?;
    let len = file
        .metadata()
        .map_err(|source| IoError::file("read", path, source))?
        .len();
    let mut bounds = vec![data_start];
    if data_start >= len {
        bounds.push(len);
        return Ok(bounds);
    }
    std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(data_start))
        .map_err(|source| IoError::file("read", path, source))?;
    let mut scanner = BoundaryScanner::new(data_start, unit_bytes);
    let mut block = vec![0u8; SCAN_BLOCK];
    loop {
        let n = file
            .read(&mut block)
            .map_err(|source| IoError::file("read", path, source))?;
        if n == 0 {
            break;
        }
        scanner.scan(&block[..n], &mut bounds);
    }
    if *bounds.last().unwrap_or(&0) < len {
        bounds.push(len);
    }
    Ok(bounds)
}

/// Walks the bytes once, tracking whether it is inside quotes.
struct BoundaryScanner {
    /// Offset of the next byte to scan.
    offset: u64,
    in_quotes: bool,
    /// The next boundary is the first free line break at or after this.
    next_target: u64,
    unit_bytes: u64,
}

impl BoundaryScanner {
    fn new(start: u64, unit_bytes: u64) -> Self {
        BoundaryScanner {
            offset: start,
            in_quotes: false,
            next_target: start + unit_bytes,
            unit_bytes,
        }
    }

    fn scan(&mut self, block: &[u8], bounds: &mut Vec<u64>) {
        let has_quote = block.contains(&b'"');
        if !has_quote && !self.in_quotes {
            self.scan_unquoted(block, bounds);
            return;
        }
        for (i, &b) in block.iter().enumerate() {
            match b {
                b'"' => self.in_quotes = !self.in_quotes,
                b'\n' if !self.in_quotes => {
                    let at = self.offset + i as u64;
                    if at + 1 >= self.next_target {
                        bounds.push(at + 1);
                        self.next_target = at + 1 + self.unit_bytes;
                    }
                }
                _ => {}
            }
        }
        self.offset += block.len() as u64;
    }

    /// A block without quotes (outside quotes): only line breaks past the
    /// target matter.
    fn scan_unquoted(&mut self, block: &[u8], bounds: &mut Vec<u64>) {
        let end = self.offset + block.len() as u64;
        while self.next_target <= end {
            let from = (self.next_target.saturating_sub(1)).max(self.offset) - self.offset;
            match block[from as usize..].iter().position(|&b| b == b'\n') {
                Some(p) => {
                    let at = self.offset + from + p as u64;
                    bounds.push(at + 1);
                    self.next_target = at + 1 + self.unit_bytes;
                }
                None => break,
            }
        }
        self.offset = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounds_of(text: &[u8], unit: u64, block: usize) -> Vec<u64> {
        let mut scanner = BoundaryScanner::new(0, unit);
        let mut bounds = vec![0];
        for piece in text.chunks(block) {
            scanner.scan(piece, &mut bounds);
        }
        bounds
    }

    #[test]
    fn boundaries_follow_line_breaks_outside_quotes() {
        let text = b"a,1\nbb,2\nccc,3\n\"d\ne\",4\nf,5\n";
        for block in [1, 3, 7, 100] {
            let bounds = bounds_of(text, 5, block);
            for &b in &bounds[1..] {
                assert_eq!(text[b as usize - 1], b'\n', "{bounds:?}");
            }
            // Never inside the quoted field "d\ne".
            assert!(!bounds.contains(&18), "{bounds:?}");
            assert_eq!(bounds, vec![0, 9, 15, 23], "block {block}");
        }
    }
}
