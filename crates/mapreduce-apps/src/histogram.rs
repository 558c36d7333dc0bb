//! Histogram, as Phoenix++ computes it: how many pixels of a 24-bit BMP
//! have each value of blue, green and red (3 x 256 bins, keys b, 256 + g,
//! 512 + r, reported in key order).
//!
//! Unlike the original, the header is read properly: the pixel data's
//! offset (32 bits), width, height (negative: top-down rows), 24 bits per
//! pixel, no compression, and rows padded to 4 bytes (padding is not
//! counted). A file that is not such a BMP or is shorter than its header
//! says is refused with a clear error. For widths whose rows need no
//! padding (a multiple of 4 pixels, as the generator writes), the counts
//! equal the original's. Map counts a split of rows into a local array
//! and emits each non-zero bin once (a combiner inside the task), so that
//! the array container sees 768 emits per task, not three per pixel.

use numakit_mapreduce::{
    split, ContainerKind, Emitter, Job, JobError, JobOptions, JobStats, MapReduceError,
    OutputOrder, Runtime, Split, Sum,
};
use rand::RngExt;

use crate::text::rng;

/// Bins: blue, green and red values.
pub const BINS: usize = 768;

/// The container histogram runs with unless told otherwise: an array of
/// [`BINS`] slots.
pub const CONTAINER: ContainerKind = ContainerKind::Array { keys: BINS };
const HEADER: usize = 54;

/// Why a file is not a BMP this app reads.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BmpError {
    /// The file does not start with the signature "BM".
    #[error("not a BMP file (it does not start with \"BM\")")]
    NotBmp,
    /// The file is shorter than the 54-byte header; the file's length.
    #[error("BMP header cut short: {0} bytes, the header needs 54")]
    ShortHeader(usize),
    /// Not an uncompressed 24-bit BMP.
    #[error("only uncompressed 24-bit BMPs are supported; this one has {bits} bits per pixel, compression {compression}")]
    Unsupported {
        /// Bits per pixel the header declares (only 24 is read).
        bits: u16,
        /// The header's compression method (only 0, none, is read).
        compression: u32,
    },
    /// The pixel data would start inside the header, or the width is
    /// negative.
    #[error("bad BMP header: pixel data offset {offset} overlaps the 54-byte header, or the width {width} is negative (height {height})")]
    BadHeader {
        /// Byte offset of the pixel data, as the header gives it.
        offset: usize,
        /// Width in pixels, as the header gives it (signed).
        width: i32,
        /// Height in pixels, as the header gives it (negative: top-down).
        height: i32,
    },
    /// The file ends before the pixel rows the header announces.
    #[error("truncated BMP: {width} x {height} pixels need {needed} bytes of pixel data from offset {offset}, the file has {available}")]
    Truncated {
        /// Width in pixels.
        width: u32,
        /// Height in pixels (top-down or not).
        height: u32,
        /// Byte offset of the pixel data.
        offset: usize,
        /// Bytes of pixel data the rows take, padding included.
        needed: usize,
        /// Bytes the file has from `offset` on.
        available: usize,
    },
}

/// Where a BMP's pixels are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BmpLayout {
    /// Byte offset of the first pixel row in the file (at least 54).
    pub offset: usize,
    /// Pixels per row.
    pub width: u32,
    /// Rows (whether stored top-down or bottom-up; the histogram does not
    /// care).
    pub height: u32,
    /// Bytes per row, padding included.
    pub row_bytes: usize,
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Reads the header of `file`.
pub fn layout(file: &[u8]) -> Result<BmpLayout, BmpError> {
    if file.len() < 2 || &file[..2] != b"BM" {
        return Err(BmpError::NotBmp);
    }
    if file.len() < HEADER {
        return Err(BmpError::ShortHeader(file.len()));
    }
    let bits = u16::from_le_bytes([file[28], file[29]]);
    let compression = u32_at(file, 30);
    if bits != 24 || compression != 0 {
        return Err(BmpError::Unsupported { bits, compression });
    }
    let (offset, width) = (u32_at(file, 10) as usize, u32_at(file, 18) as i32);
    let signed_height = u32_at(file, 22) as i32;
    // A negative height means top-down rows; a negative width means nothing.
    if offset < HEADER || width < 0 {
        return Err(BmpError::BadHeader {
            offset,
            width,
            height: signed_height,
        });
    }
    let height = signed_height.unsigned_abs();
    let width = width.unsigned_abs();
    // Checked: a forged header must not wrap around to a small size (it
    // cannot on 64 bits, where 2^31 rows of 2^31 pixels still fit, but it
    // can where usize is narrower). Past usize, no file holds it.
    let row_bytes = (width as usize)
        .checked_mul(3)
        .and_then(|b| b.checked_next_multiple_of(4))
        .unwrap_or(usize::MAX);
    let needed = row_bytes.saturating_mul(height as usize);
    let available = file.len().saturating_sub(offset);
    if available < needed {
        return Err(BmpError::Truncated {
            width,
            height,
            offset,
            needed,
            available,
        });
    }
    Ok(BmpLayout {
        offset,
        width,
        height,
        row_bytes,
    })
}

/// The job over the pixel rows.
pub struct Histogram {
    /// Where the pixels are: the job reads `height` rows of `row_bytes`
    /// bytes, the first `3 * width` of each.
    pub layout: BmpLayout,
}

impl<'a> Job<'a> for Histogram {
    type Record = u8;
    type Key = u16;
    type Value = u64;
    type Combiner = Sum<u64>;
    type Output = u64;

    fn split(&self, pixels: &'a [u8], target: usize) -> Vec<std::ops::Range<usize>> {
        let rows = (target / self.layout.row_bytes.max(1)).max(1);
        split::records(pixels.len(), self.layout.row_bytes.max(1), rows)
    }

    fn map(&self, split: Split<'a, u8>, out: &mut Emitter<'_, 'a, Self>) -> Result<(), JobError> {
        let mut bins = [0u64; BINS];
        let used = self.layout.width as usize * 3;
        for row in split.records.chunks(self.layout.row_bytes.max(1)) {
            for px in row[..used.min(row.len())].chunks_exact(3) {
                bins[px[0] as usize] += 1;
                bins[256 + px[1] as usize] += 1;
                bins[512 + px[2] as usize] += 1;
            }
        }
        for (bin, &n) in bins.iter().enumerate().filter(|(_, &n)| n > 0) {
            out.emit(bin as u16, n);
        }
        Ok(())
    }

    fn reduce(&self, _: &u16, n: Sum<u64>) -> Result<u64, JobError> {
        Ok(n.0)
    }

    fn key_index(&self, key: &u16) -> Option<usize> {
        Some(*key as usize)
    }
}

/// The 768 bins (blue, green, red) and what the run measured.
#[derive(Debug)]
pub struct Histograms {
    /// [`BINS`] pixel counts: bin `v` for blue value v, `256 + v` for
    /// green, `512 + v` for red.
    pub bins: Vec<u64>,
    /// Phase times and task counts of the run.
    pub stats: JobStats,
}

/// Histograms of the BMP `file`.
pub fn run(rt: &Runtime, file: &[u8], opts: &JobOptions) -> Result<Histograms, MapReduceError> {
    let layout = layout(file).map_err(|e| MapReduceError::InvalidInput(e.to_string()))?;
    let pixels = &file[layout.offset..layout.offset + layout.row_bytes * layout.height as usize];
    let opts = JobOptions {
        container: opts.container.or(Some(CONTAINER)),
        order: OutputOrder::ByKey,
        ..opts.clone()
    };
    let out = rt.run(&Histogram { layout }, pixels, &opts)?;
    let mut bins = vec![0u64; BINS];
    out.pairs
        .into_iter()
        .for_each(|(k, n)| bins[k as usize] = n);
    Ok(Histograms {
        bins,
        stats: out.stats,
    })
}

/// The sequential reference.
pub fn reference(file: &[u8]) -> Result<Vec<u64>, BmpError> {
    let l = layout(file)?;
    let mut bins = vec![0u64; BINS];
    for r in 0..l.height as usize {
        let row = &file[l.offset + r * l.row_bytes..][..l.width as usize * 3];
        for px in row.chunks_exact(3) {
            bins[px[0] as usize] += 1;
            bins[256 + px[1] as usize] += 1;
            bins[512 + px[2] as usize] += 1;
        }
    }
    Ok(bins)
}

/// A BMP of about `bytes` of random pixels, 4096 pixels wide (rows
/// without padding, so the original counts the same bytes).
pub fn generate(bytes: usize, seed: u64) -> Vec<u8> {
    let width = 4096u32;
    let height = (bytes / (width as usize * 3)).max(1) as u32;
    bmp(width, height, seed)
}

/// A `width` x `height` BMP of random pixels.
pub fn bmp(width: u32, height: u32, seed: u64) -> Vec<u8> {
    let row_bytes = (width as usize * 3).div_ceil(4) * 4;
    let data = row_bytes * height as usize;
    let mut file = Vec::with_capacity(HEADER + data);
    file.extend_from_slice(b"BM");
    file.extend_from_slice(&((HEADER + data) as u32).to_le_bytes());
    file.extend_from_slice(&[0; 4]);
    file.extend_from_slice(&(HEADER as u32).to_le_bytes());
    file.extend_from_slice(&40u32.to_le_bytes());
    file.extend_from_slice(&width.to_le_bytes());
    file.extend_from_slice(&height.to_le_bytes());
    file.extend_from_slice(&1u16.to_le_bytes());
    file.extend_from_slice(&24u16.to_le_bytes());
    file.extend_from_slice(&[0; 4]);
    file.extend_from_slice(&(data as u32).to_le_bytes());
    file.extend_from_slice(&[0; 16]);
    let mut rng = rng(seed);
    file.extend((0..data).map(|_| rng.random::<u8>()));
    file
}
