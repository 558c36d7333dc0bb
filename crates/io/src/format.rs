//! The file formats numakit reads and writes, and how to tell them from a
//! file name or a user's option.
//!
//! It deliberately does not sniff file contents: the extension (or an
//! explicit format) decides, so that a misnamed file fails loudly instead of
//! being read as something else. (Within Arrow IPC, the file and stream
//! variants are told apart by their magic bytes; see the `ipc` module.)

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use crate::error::{IoError, Result};

/// A table file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// Comma- (or otherwise-) separated text with a header row.
    Csv,
    /// Apache Parquet.
    Parquet,
    /// Apache Arrow IPC: the file format (Feather v2) is written; the file and
    /// the stream format are both read.
    ArrowIpc,
}

impl Format {
    /// Every format, in a stable order.
    pub const ALL: [Format; 3] = [Format::Csv, Format::Parquet, Format::ArrowIpc];

    /// Tells the format from the file's extension, case-insensitively:
    /// `.csv`; `.parquet` or `.pq`; `.arrow`, `.ipc` or `.feather`.
    pub fn from_path(path: impl AsRef<Path>) -> Result<Format> {
        let path = path.as_ref();
        let extension = path
            .extension()
            .map(|ext| ext.to_string_lossy().into_owned())
            .unwrap_or_default();
        Format::from_extension(&extension).ok_or_else(|| IoError::UnknownFormat {
            given: if extension.is_empty() {
                path.display().to_string()
            } else {
                format!(".{extension}")
            },
        })
    }

    fn from_extension(extension: &str) -> Option<Format> {
        match extension.to_ascii_lowercase().as_str() {
            "csv" => Some(Format::Csv),
            "parquet" | "pq" => Some(Format::Parquet),
            "arrow" | "ipc" | "feather" => Some(Format::ArrowIpc),
            _ => None,
        }
    }

    /// The format's short name, as accepted by [`FromStr`].
    pub fn name(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Parquet => "parquet",
            Format::ArrowIpc => "arrow",
        }
    }

    /// The explicit format if given, else the one the path's extension names.
    pub fn resolve(explicit: Option<Format>, path: &Path) -> Result<Format> {
        match explicit {
            Some(format) => Ok(format),
            None => Format::from_path(path),
        }
    }
}

impl FromStr for Format {
    type Err = IoError;

    /// Accepts the extensions of [`Format::from_path`] (with or without the
    /// dot) and the names `arrow-ipc`, `arrow_ipc`, `arrowipc`, case-insensitively.
    fn from_str(name: &str) -> Result<Format> {
        let trimmed = name.trim().trim_start_matches('.');
        let lowered = trimmed.to_ascii_lowercase();
        match lowered.as_str() {
            "arrow-ipc" | "arrow_ipc" | "arrowipc" => Ok(Format::ArrowIpc),
            other => Format::from_extension(other).ok_or_else(|| IoError::UnknownFormat {
                given: name.to_string(),
            }),
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_map_to_formats() {
        assert_eq!(Format::from_path("a/b.csv").unwrap(), Format::Csv);
        assert_eq!(Format::from_path("b.CSV").unwrap(), Format::Csv);
        assert_eq!(Format::from_path("b.parquet").unwrap(), Format::Parquet);
        assert_eq!(Format::from_path("b.pq").unwrap(), Format::Parquet);
        for name in ["b.arrow", "b.ipc", "b.Feather"] {
            assert_eq!(Format::from_path(name).unwrap(), Format::ArrowIpc);
        }
    }

    #[test]
    fn unknown_or_missing_extension_is_refused() {
        let message = Format::from_path("data.xlsx").unwrap_err().to_string();
        assert!(message.contains(".xlsx"), "{message}");
        assert!(message.contains("parquet"), "{message}");
        let message = Format::from_path("data").unwrap_err().to_string();
        assert!(message.contains("\"data\""), "{message}");
    }

    #[test]
    fn names_parse_and_round_trip() {
        for format in Format::ALL {
            assert_eq!(format.name().parse::<Format>().unwrap(), format);
            assert_eq!(format.to_string().parse::<Format>().unwrap(), format);
        }
        assert_eq!("Arrow-IPC".parse::<Format>().unwrap(), Format::ArrowIpc);
        assert_eq!(".pq".parse::<Format>().unwrap(), Format::Parquet);
        assert!("json".parse::<Format>().is_err());
    }
}
