//! Options of [`read_with`](crate::read_with) and
//! [`write_with`](crate::write_with): the format (when the extension should
//! not decide), the columns to read, the CSV delimiter and the Parquet
//! compression.
//!
//! It deliberately offers few knobs: everything has a default that suits
//! numakit's integer tables, and the plain [`read`](crate::read) and
//! [`write`](crate::write) use those defaults.

use crate::error::{IoError, Result};
use crate::format::Format;

/// How CSV files are split into fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CsvOptions {
    /// The field separator, an ASCII byte; `b','` by default.
    pub delimiter: u8,
}

impl Default for CsvOptions {
    fn default() -> Self {
        CsvOptions { delimiter: b',' }
    }
}

impl CsvOptions {
    /// Refuses delimiters that would make integer fields ambiguous: non-ASCII
    /// bytes, quotes, line breaks, digits and signs.
    pub fn validate(&self) -> Result<()> {
        let delimiter = self.delimiter;
        let clashes = !delimiter.is_ascii()
            || delimiter.is_ascii_digit()
            || matches!(delimiter, b'"' | b'\n' | b'\r' | b'-' | b'+');
        if clashes {
            return Err(IoError::InvalidOption(format!(
                "{:?} cannot be a CSV delimiter (use an ASCII byte other than a digit, sign, quote or line break)",
                char::from(delimiter)
            )));
        }
        Ok(())
    }
}

/// The compression of written Parquet files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ParquetCompression {
    /// Zstandard at level 1, the default: about as fast to write as Snappy
    /// but markedly smaller on integer data, and what Polars writes by
    /// default, so every current Parquet reader handles it.
    #[default]
    Zstd,
    /// Snappy: the fastest to decode, DuckDB's default.
    Snappy,
    /// No compression.
    None,
}

impl std::str::FromStr for ParquetCompression {
    type Err = IoError;

    /// `zstd`, `snappy` or `none` (also `uncompressed`), case-insensitively.
    fn from_str(name: &str) -> std::result::Result<Self, IoError> {
        match name.trim().to_ascii_lowercase().as_str() {
            "zstd" | "zstandard" => Ok(ParquetCompression::Zstd),
            "snappy" => Ok(ParquetCompression::Snappy),
            "none" | "uncompressed" => Ok(ParquetCompression::None),
            _ => Err(IoError::InvalidOption(format!(
                "`{name}` is not a Parquet compression (zstd, snappy, none)"
            ))),
        }
    }
}

/// Options for [`read_with`](crate::read_with).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// The file's format; `None` tells it from the extension.
    pub format: Option<Format>,
    /// The columns to read, in the order wanted; `None` reads all.
    pub columns: Option<Vec<String>>,
    /// How CSV files are split (ignored for other formats).
    pub csv: CsvOptions,
}

/// Options for [`write_with`](crate::write_with).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteOptions {
    /// The file's format; `None` tells it from the extension.
    pub format: Option<Format>,
    /// How CSV files are split (ignored for other formats).
    pub csv: CsvOptions,
    /// How Parquet files are compressed (ignored for other formats).
    pub parquet_compression: ParquetCompression,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compressions_are_named_as_users_write_them() {
        assert_eq!(
            "ZSTD".parse::<ParquetCompression>().unwrap(),
            ParquetCompression::Zstd
        );
        assert_eq!(
            " snappy".parse::<ParquetCompression>().unwrap(),
            ParquetCompression::Snappy
        );
        assert_eq!(
            "uncompressed".parse::<ParquetCompression>().unwrap(),
            ParquetCompression::None
        );
        let refused = "gzip"
            .parse::<ParquetCompression>()
            .unwrap_err()
            .to_string();
        assert!(refused.contains("zstd, snappy, none"), "{refused}");
    }

    #[test]
    fn delimiters_that_clash_with_integers_are_refused() {
        for good in [b',', b';', b'\t', b'|', b' '] {
            assert!(CsvOptions { delimiter: good }.validate().is_ok());
        }
        for bad in [b'"', b'\n', b'-', b'7', 0xC3] {
            assert!(CsvOptions { delimiter: bad }.validate().is_err());
        }
    }
}
