//! Typed reading in pieces: a file opened as a [`Source`] knows its Arrow
//! schema and is cut into *units* (Parquet row groups, byte ranges of a
//! CSV file that start at a record, Arrow IPC record batches) that can be
//! decoded independently, by different threads, in any order, keeping only
//! the projected columns.
//!
//! Every Arrow type is read as the file holds it: strings, decimals, dates,
//! timestamps, floats, dictionaries and nulls included. CSV files, which
//! carry no types, get them from a sample of their first rows (see
//! `csv_infer`); a later value that does not fit its column's type is an
//! error naming the line, never a silent reinterpretation.
//!
//! This module does not schedule the units on threads or place their
//! memory: the caller (numakit's table layer) does, on its pool. A unit is
//! decoded straight from the file (no whole-file buffer).

mod csv_infer;
mod csv_units;
mod ipc_units;
mod parquet_units;

use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use crate::error::{IoError, Result};
use crate::format::Format;
use crate::options::CsvOptions;
use crate::projection;

pub use csv_infer::SAMPLE_ROWS as CSV_SAMPLE_ROWS;

/// How a [`Source`] is opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceOptions {
    /// The format; from the file's extension when `None`.
    pub format: Option<Format>,
    /// CSV settings (delimiter).
    pub csv: CsvOptions,
    /// The size a CSV unit aims at, in bytes (units end at a record's end).
    pub csv_unit_bytes: u64,
    /// Read Parquet string and binary columns that are dictionary-encoded
    /// with few distinct values as Arrow dictionary arrays.
    pub keep_dictionaries: bool,
    /// Read Parquet decimals stored as 32- or 64-bit integers as Arrow
    /// `Decimal32`/`Decimal64` arrays over the file's values, instead of
    /// widening every value to 128 bits (`declared_schema` still gives the
    /// file's own `Decimal128`).
    pub narrow_decimals: bool,
}

impl Default for SourceOptions {
    fn default() -> Self {
        SourceOptions {
            format: None,
            csv: CsvOptions::default(),
            csv_unit_bytes: 16 << 20,
            keep_dictionaries: false,
            narrow_decimals: false,
        }
    }
}

/// The columns to decode, by position in the file's schema, and the
/// schema of what is decoded.
#[derive(Debug, Clone)]
pub struct Projection {
    indices: Vec<usize>,
    schema: SchemaRef,
}

impl Projection {
    /// Positions of the decoded columns in the file's schema.
    pub fn indices(&self) -> &[usize] {
        &self.indices
    }

    /// The schema of the decoded batches.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }
}

enum Units {
    Parquet(parquet_units::ParquetUnits),
    Csv(csv_units::CsvUnits),
    Ipc(ipc_units::IpcUnits),
}

/// A table file opened for decoding in units.
pub struct Source {
    path: PathBuf,
    format: Format,
    file_bytes: u64,
    units: Units,
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Source")
            .field("path", &self.path)
            .field("format", &self.format)
            .field("units", &self.units())
            .finish()
    }
}

impl Source {
    /// Opens `path`: reads its schema (a CSV file's header and a sample of
    /// its rows) and plans its units. Reads no other data.
    pub fn open(path: impl AsRef<Path>, options: &SourceOptions) -> Result<Source> {
        let path = path.as_ref().to_path_buf();
        let format = Format::resolve(options.format, &path)?;
        let file_bytes = std::fs::metadata(&path)
            .map_err(|source| IoError::file("open", &path, source))?
            .len();
        let units = match format {
            Format::Parquet => Units::Parquet(parquet_units::ParquetUnits::open(
                &path,
                parquet_units::ReadChoices {
                    dictionaries: options.keep_dictionaries,
                    narrow_decimals: options.narrow_decimals,
                },
            )?),
            Format::Csv => Units::Csv(csv_units::CsvUnits::open(
                &path,
                &options.csv,
                options.csv_unit_bytes,
            )?),
            Format::ArrowIpc => Units::Ipc(ipc_units::IpcUnits::open(&path)?),
        };
        Ok(Source {
            path,
            format,
            file_bytes,
            units,
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The file's full schema (every column).
    pub fn schema(&self) -> SchemaRef {
        match &self.units {
            Units::Parquet(u) => u.schema(),
            Units::Csv(u) => u.schema(),
            Units::Ipc(u) => u.schema(),
        }
    }

    /// The schema the file declares: [`Source::schema`] before the reading
    /// choices (Parquet string columns read as dictionaries are strings
    /// here).
    pub fn declared_schema(&self) -> SchemaRef {
        match &self.units {
            Units::Parquet(u) => u.declared_schema(),
            _ => self.schema(),
        }
    }

    /// The columns named in `columns`, in that order (all when `None`),
    /// refusing unknown, repeated and ambiguous names.
    pub fn project(&self, columns: Option<&[String]>) -> Result<Projection> {
        let schema = self.schema();
        let names: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
        let indices = projection::resolve(&names, columns)?;
        let projected = schema
            .project(&indices)
            .map_err(|source| self.arrow_error(source))?;
        Ok(Projection {
            indices,
            schema: std::sync::Arc::new(projected),
        })
    }

    /// Number of independently decodable units.
    pub fn units(&self) -> usize {
        match &self.units {
            Units::Parquet(u) => u.len(),
            Units::Csv(u) => u.len(),
            Units::Ipc(u) => u.len(),
        }
    }

    /// The number of rows, when the file says so without being decoded
    /// (Parquet and Arrow IPC files; not CSV).
    pub fn rows_hint(&self) -> Option<u64> {
        match &self.units {
            Units::Parquet(u) => Some(u.rows()),
            Units::Csv(_) => None,
            Units::Ipc(u) => u.rows(),
        }
    }

    /// About how many bytes the projected columns take once decoded: from
    /// the Parquet footer's uncompressed sizes, or the projected share of
    /// the file's size for CSV and Arrow IPC. For memory checks made
    /// before anything is read.
    pub fn decoded_bytes_hint(&self, projection: &Projection) -> u64 {
        match &self.units {
            Units::Parquet(u) => u.decoded_bytes(projection.indices()),
            _ => {
                let all = self.schema().fields().len().max(1) as u64;
                let share = self.file_bytes / all * projection.indices().len() as u64;
                // Text is rarely much smaller than its decoded values; keep
                // a margin for offsets and validity.
                share + share / 4
            }
        }
    }

    /// Decodes unit `unit` (in `0..units()`), keeping the projected
    /// columns. May be called from several threads at once.
    pub fn read_unit(&self, unit: usize, projection: &Projection) -> Result<Vec<RecordBatch>> {
        if unit >= self.units() {
            return Err(IoError::InvalidOption(format!(
                "unit {unit} of {:?} does not exist (it has {})",
                self.path,
                self.units()
            )));
        }
        match &self.units {
            Units::Parquet(u) => u.read(&self.path, unit, projection),
            Units::Csv(u) => u.read(&self.path, unit, projection),
            Units::Ipc(u) => u.read(&self.path, unit, projection),
        }
    }

    /// Decodes every unit in order on the calling thread.
    pub fn read_all(&self, projection: &Projection) -> Result<Vec<RecordBatch>> {
        let mut out = Vec::new();
        for unit in 0..self.units() {
            out.extend(self.read_unit(unit, projection)?);
        }
        Ok(out)
    }

    fn arrow_error(&self, source: arrow_schema::ArrowError) -> IoError {
        IoError::Decode {
            format: self.format.name(),
            path: self.path.clone(),
            message: source.to_string(),
        }
    }
}
