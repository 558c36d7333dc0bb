//! Inputs for matrix multiply: generated as the original writes its
//! matrix files, and those files read and written.
//!
//! The original, when asked to create its files, writes `A` and then `B`,
//! every value `rand() % 11` (values 0 to 10) after `srand(time(NULL))`;
//! [`generate`] draws the same from a seed, and [`generate_below`] any
//! other range (`rand() % modulus`; the original reads such matrices from
//! its files). The files are raw native
//! `int`s ([`crate::numeric::int_file`]), row-major, no header, named
//! [`FILE_A`] and [`FILE_B`] in the working directory. A file that is not
//! whole rows, or not as many rows as its side, is an error, not a guess.

use std::path::Path;

use crate::matrix_multiply::{MatrixError, MatrixPair, SquareMatrix};
use crate::numeric::{int_file, CRand};

/// The original's name for the left factor's file.
pub const FILE_A: &str = "matrix_file_A.txt";
/// The original's name for the right factor's file.
pub const FILE_B: &str = "matrix_file_B.txt";
/// Values are `rand() % VALUE_MODULUS`.
pub const VALUE_MODULUS: u32 = 11;

/// Two `side × side` matrices, `A` then `B`, from `seed`'s stream, every
/// value `rand() % 11` as the original's.
pub fn generate(side: usize, seed: u32) -> MatrixPair {
    pair_below(side, VALUE_MODULUS, seed)
}

/// Two `side × side` matrices, `A` then `B`, from `seed`'s stream, every
/// value `rand() % modulus` (`0..modulus`; with
/// [`crate::numeric::FULL_RANGE_MODULUS`] nearly every non-negative
/// `int`, whose products need the 32-bit kernel).
pub fn generate_below(side: usize, modulus: u32, seed: u32) -> Result<MatrixPair, MatrixError> {
    if modulus == 0 {
        return Err(MatrixError::ZeroModulus);
    }
    Ok(pair_below(side, modulus, seed))
}

fn pair_below(side: usize, modulus: u32, seed: u32) -> MatrixPair {
    let mut rand = CRand::new(seed);
    let mut draw = || -> Vec<i32> {
        (0..side * side)
            .map(|_| rand.below(modulus) as i32)
            .collect()
    };
    let a = SquareMatrix {
        side,
        values: draw(),
    };
    let b = SquareMatrix {
        side,
        values: draw(),
    };
    MatrixPair { a, b }
}

/// A matrix from a file's bytes: with `side` given, exactly that many
/// rows of that many values; without, the side is inferred from the
/// length.
pub fn matrix_from_le_bytes(
    bytes: &[u8],
    side: Option<usize>,
) -> Result<SquareMatrix, MatrixError> {
    match side {
        Some(0) => SquareMatrix::new(0, int_file::records_from_le_bytes(bytes, 1)?),
        Some(side) => SquareMatrix::new(
            side,
            int_file::exact_records_from_le_bytes(bytes, side, side)?,
        ),
        None => SquareMatrix::from_values(int_file::records_from_le_bytes(bytes, 1)?),
    }
}

/// Reads one matrix file (see [`matrix_from_le_bytes`] for `side`).
pub fn read_matrix(path: &Path, side: Option<usize>) -> Result<SquareMatrix, MatrixError> {
    let bytes = std::fs::read(path).map_err(|source| int_file::IntFileError::File {
        action: "read",
        path: path.to_owned(),
        source,
    })?;
    matrix_from_le_bytes(&bytes, side)
}

/// Reads [`FILE_A`] and [`FILE_B`] from `dir`.
pub fn read_pair(dir: &Path, side: Option<usize>) -> Result<MatrixPair, MatrixError> {
    let a = read_matrix(&dir.join(FILE_A), side)?;
    let b = read_matrix(&dir.join(FILE_B), Some(a.side()))?;
    MatrixPair::new(a, b)
}

/// Writes [`FILE_A`] and [`FILE_B`] into `dir` (each replaced only when
/// complete).
pub fn write_pair(dir: &Path, pair: &MatrixPair) -> Result<(), MatrixError> {
    int_file::write_ints(&dir.join(FILE_A), pair.a().values())?;
    int_file::write_ints(&dir.join(FILE_B), pair.b().values())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numeric::IntFileError;

    #[test]
    fn a_then_b_from_one_stream() {
        let pair = generate(2, 1);
        // rand() after srand(1): 1804289383 846930886 1681692777 1714636915
        // 1957747793 424238335 719885386 1649760492, each % 11.
        assert_eq!(
            pair.a().values(),
            [
                1804289383 % 11,
                846930886 % 11,
                1681692777 % 11,
                1714636915 % 11
            ]
        );
        assert_eq!(
            pair.b().values(),
            [
                1957747793 % 11,
                424238335 % 11,
                719885386 % 11,
                1649760492 % 11
            ]
        );
        assert!(generate(50, 3)
            .a()
            .values()
            .iter()
            .all(|v| (0..11).contains(v)));
    }

    #[test]
    fn other_ranges_draw_from_the_same_stream() {
        assert_eq!(generate_below(9, VALUE_MODULUS, 5).unwrap(), generate(9, 5));
        let wide = generate_below(2, crate::numeric::FULL_RANGE_MODULUS, 1).unwrap();
        assert_eq!(
            wide.a().values(),
            [1804289383, 846930886, 1681692777, 1714636915]
        );
        assert!(matches!(
            generate_below(2, 0, 1),
            Err(MatrixError::ZeroModulus)
        ));
    }

    #[test]
    fn files_round_trip() {
        let dir = std::env::temp_dir().join(format!("numakit-mm-gen-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pair = generate(7, 9);
        write_pair(&dir, &pair).unwrap();
        assert_eq!(read_pair(&dir, Some(7)).unwrap(), pair);
        assert_eq!(read_pair(&dir, None).unwrap(), pair);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn truncated_and_odd_files_are_refused() {
        let bytes = int_file::to_le_bytes(&[1; 9]);
        assert_eq!(matrix_from_le_bytes(&bytes, Some(3)).unwrap().side(), 3);
        let short = matrix_from_le_bytes(&bytes[..32], Some(3)).unwrap_err();
        assert!(
            matches!(short, MatrixError::File(IntFileError::PartialRecord { .. })),
            "{short}"
        );
        let rows_missing = matrix_from_le_bytes(&bytes[..24], Some(3)).unwrap_err();
        assert!(matches!(
            rows_missing,
            MatrixError::File(IntFileError::RecordCount {
                expected: 3,
                found: 2,
                ..
            })
        ));
        let odd = matrix_from_le_bytes(&bytes[..35], None).unwrap_err();
        assert!(odd.to_string().contains("truncated"), "{odd}");
        assert!(matches!(
            matrix_from_le_bytes(&bytes[..32], None),
            Err(MatrixError::NotSquare { values: 8 })
        ));
        let missing = read_pair(Path::new("/nonexistent-numakit"), None).unwrap_err();
        assert!(missing.to_string().contains(FILE_A));
    }
}
