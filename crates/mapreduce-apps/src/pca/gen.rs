//! Inputs for PCA: generated as the original generates its matrix, or
//! read from a matrix file.
//!
//! The original fills its `rows × cols` matrix row by row with
//! `rand() % grid_size` (grid 100 by default) and never calls `srand`, so
//! its matrix is that of seed 1; [`generate`] does the same from any seed.
//! It reads no file; a matrix file here is the raw integer format of
//! [`crate::numeric::int_file`], `cols` integers per row.

use std::path::Path;

use crate::numeric::{int_file, CRand};
use crate::pca::{PcaError, PcaMatrix};

/// The original's default number of rows.
pub const DEFAULT_ROWS: usize = 10;
/// The original's default number of columns.
pub const DEFAULT_COLS: usize = 10;
/// The original's default grid size (values in `0..100`).
pub const DEFAULT_GRID_SIZE: u32 = 100;
/// The seed of the original's inputs (it never calls `srand`).
pub const ORIGINAL_SEED: u32 = 1;

/// The `rows × cols` matrix the original computes on for `seed`.
pub fn generate(
    rows: usize,
    cols: usize,
    grid_size: u32,
    seed: u32,
) -> Result<PcaMatrix, PcaError> {
    if grid_size == 0 {
        return Err(PcaError::ZeroGridSize);
    }
    if cols < 2 {
        return Err(PcaError::TooFewColumns { cols });
    }
    let mut rand = CRand::new(seed);
    let values = (0..rows * cols)
        .map(|_| rand.below(grid_size) as i32)
        .collect();
    PcaMatrix::new(rows, cols, values)
}

/// A matrix from a file's bytes, `cols` integers per row.
pub fn matrix_from_le_bytes(bytes: &[u8], cols: usize) -> Result<PcaMatrix, PcaError> {
    if cols < 2 {
        return Err(PcaError::TooFewColumns { cols });
    }
    let values = int_file::records_from_le_bytes(bytes, cols)?;
    PcaMatrix::new(values.len() / cols, cols, values)
}

/// Reads a matrix file of `cols` integers per row.
pub fn read_matrix(path: &Path, cols: usize) -> Result<PcaMatrix, PcaError> {
    if cols < 2 {
        return Err(PcaError::TooFewColumns { cols });
    }
    let values = int_file::read_records(path, cols)?;
    PcaMatrix::new(values.len() / cols, cols, values)
}

/// Writes a matrix file (replacing `path` only when complete).
pub fn write_matrix(path: &Path, matrix: &PcaMatrix) -> Result<(), PcaError> {
    Ok(int_file::write_ints(path, matrix.values())?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numeric::IntFileError;

    #[test]
    fn row_by_row_from_the_stream() {
        let m = generate(2, 3, 100, 1).unwrap();
        // rand() after srand(1): 1804289383 846930886 1681692777 ...
        assert_eq!(m.row(0), [83, 86, 77]);
        assert_eq!(m.rows(), 2);
        assert!(generate(30, 30, 7, 5)
            .unwrap()
            .values()
            .iter()
            .all(|v| (0..7).contains(v)));
    }

    #[test]
    fn bad_parameters_are_refused() {
        assert!(matches!(generate(2, 2, 0, 1), Err(PcaError::ZeroGridSize)));
        assert!(matches!(
            generate(2, 1, 10, 1),
            Err(PcaError::TooFewColumns { cols: 1 })
        ));
    }

    #[test]
    fn files_hold_whole_rows() {
        let m = generate(4, 3, 100, 2).unwrap();
        let bytes = int_file::to_le_bytes(m.values());
        assert_eq!(matrix_from_le_bytes(&bytes, 3).unwrap(), m);
        let err = matrix_from_le_bytes(&bytes[..bytes.len() - 2], 3).unwrap_err();
        assert!(
            matches!(
                err,
                PcaError::File(IntFileError::PartialRecord { remainder: 10, .. })
            ),
            "{err}"
        );
        let dir = std::env::temp_dir().join(format!("numakit-pca-gen-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        write_matrix(&dir.join("m"), &m).unwrap();
        assert_eq!(read_matrix(&dir.join("m"), 3).unwrap(), m);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
