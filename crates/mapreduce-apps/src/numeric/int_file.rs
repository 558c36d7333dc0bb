//! The raw integer file format of the numeric applications: 32-bit signed
//! integers, little-endian (the `int`s Phoenix++'s matrix multiply writes
//! with `write(fd, &value, sizeof(int))` on x86), one record after the
//! other with no header. A record is a matrix row or a point.
//!
//! Reading checks that the bytes hold whole records and says how they fall
//! short; writing goes through the io layer's atomic writer (a temporary
//! file renamed into place, removed on failure or SIGINT, swept as an
//! orphan after SIGKILL), so no partial file is left behind. The shape beyond the record
//! length (a square matrix, a number of points) is the application's to
//! check.

use std::path::{Path, PathBuf};

/// Bytes per stored integer.
pub const INT_BYTES: usize = 4;

/// Why a raw integer file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum IntFileError {
    /// The length is not a whole number of records.
    #[error(
        "{len} bytes are not a whole number of {record_ints}-integer records \
         ({record_bytes} bytes each): {remainder} bytes left over (truncated file?)",
        record_bytes = .record_ints * INT_BYTES
    )]
    PartialRecord {
        /// Length of the data in bytes.
        len: usize,
        /// Integers per record.
        record_ints: usize,
        /// Bytes past the last whole record.
        remainder: usize,
    },

    /// A record length of zero integers was asked for.
    #[error("a record must hold at least one integer")]
    EmptyRecord,

    /// The data holds a different number of records than required.
    #[error("expected {expected} records of {record_ints} integers, found {found}")]
    RecordCount {
        /// Records required.
        expected: usize,
        /// Records present.
        found: usize,
        /// Integers per record.
        record_ints: usize,
    },

    /// The file could not be written whole.
    #[error(transparent)]
    Write(#[from] numakit_io::IoError),

    /// The file could not be read, created, written or renamed.
    #[error("cannot {action} {path:?}: {source}")]
    File {
        /// What was being done.
        action: &'static str,
        /// The file concerned.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
}

/// Decodes `bytes` into integers, requiring whole records of
/// `record_ints` integers.
pub fn records_from_le_bytes(bytes: &[u8], record_ints: usize) -> Result<Vec<i32>, IntFileError> {
    if record_ints == 0 {
        return Err(IntFileError::EmptyRecord);
    }
    let record_bytes = record_ints.saturating_mul(INT_BYTES);
    let remainder = bytes.len() % record_bytes;
    if remainder != 0 {
        return Err(IntFileError::PartialRecord {
            len: bytes.len(),
            record_ints,
            remainder,
        });
    }
    Ok(bytes
        .chunks_exact(INT_BYTES)
        .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}

/// Like [`records_from_le_bytes`], and there must be exactly `records` of
/// them.
pub fn exact_records_from_le_bytes(
    bytes: &[u8],
    record_ints: usize,
    records: usize,
) -> Result<Vec<i32>, IntFileError> {
    let values = records_from_le_bytes(bytes, record_ints)?;
    let found = values.len() / record_ints;
    if found != records {
        return Err(IntFileError::RecordCount {
            expected: records,
            found,
            record_ints,
        });
    }
    Ok(values)
}

/// Encodes integers as the file stores them.
pub fn to_le_bytes(values: &[i32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Reads a whole file of records of `record_ints` integers.
pub fn read_records(path: &Path, record_ints: usize) -> Result<Vec<i32>, IntFileError> {
    let bytes = std::fs::read(path).map_err(|source| IntFileError::File {
        action: "read",
        path: path.to_owned(),
        source,
    })?;
    records_from_le_bytes(&bytes, record_ints)
}

/// Writes `values` to `path`, replacing it only once everything is
/// written (through a temporary file beside it).
pub fn write_ints(path: &Path, values: &[i32]) -> Result<(), IntFileError> {
    Ok(numakit_io::write_file_atomically(
        path,
        &to_le_bytes(values),
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_extreme_values() {
        let values = [0, 1, -1, i32::MAX, i32::MIN, 123_456_789];
        let bytes = to_le_bytes(&values);
        assert_eq!(bytes.len(), values.len() * INT_BYTES);
        assert_eq!(records_from_le_bytes(&bytes, 3).unwrap(), values);
    }

    #[test]
    fn little_endian_on_every_host() {
        assert_eq!(to_le_bytes(&[0x0102_0304]), [4, 3, 2, 1]);
    }

    #[test]
    fn odd_lengths_are_partial_records() {
        let bytes = to_le_bytes(&[1, 2, 3, 4, 5, 6]);
        let err = records_from_le_bytes(&bytes[..bytes.len() - 1], 1).unwrap_err();
        assert!(matches!(
            err,
            IntFileError::PartialRecord { remainder: 3, .. }
        ));
        let err = records_from_le_bytes(&bytes[..16], 3).unwrap_err();
        assert!(matches!(
            err,
            IntFileError::PartialRecord { remainder: 4, .. }
        ));
        assert!(err.to_string().contains("truncated"));
    }

    #[test]
    fn empty_data_is_zero_records_and_zero_width_is_refused() {
        assert!(records_from_le_bytes(&[], 5).unwrap().is_empty());
        assert!(matches!(
            records_from_le_bytes(&[], 0),
            Err(IntFileError::EmptyRecord)
        ));
    }

    #[test]
    fn record_count_is_checked() {
        let bytes = to_le_bytes(&[1, 2, 3, 4]);
        assert_eq!(
            exact_records_from_le_bytes(&bytes, 2, 2).unwrap(),
            [1, 2, 3, 4]
        );
        let err = exact_records_from_le_bytes(&bytes, 2, 3).unwrap_err();
        assert!(matches!(
            err,
            IntFileError::RecordCount {
                expected: 3,
                found: 2,
                ..
            }
        ));
    }

    #[test]
    fn files_round_trip_and_leave_no_temporary() {
        let dir = std::env::temp_dir().join(format!("numakit-int-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("m.bin");
        write_ints(&path, &[7, -8, 9]).unwrap();
        assert_eq!(read_records(&path, 1).unwrap(), [7, -8, 9]);
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, [std::ffi::OsString::from("m.bin")]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_failed_write_names_the_file() {
        let path = Path::new("/nonexistent-dir-numakit/m.bin");
        let err = write_ints(path, &[1]).unwrap_err();
        assert!(err.to_string().contains("nonexistent-dir-numakit"));
    }
}
