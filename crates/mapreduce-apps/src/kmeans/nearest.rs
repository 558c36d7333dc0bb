//! The assignment step's kernel: the nearest mean of every point of a
//! chunk, with the original's wrapping 32-bit distance and lowest-index
//! tie-break (see [`crate::kmeans::reference::nearest_mean`]).
//!
//! The means are kept word by word ([`MeansTable`]: every mean's first
//! word, then every mean's second ...), a word being one coordinate or,
//! in the pair encoding of [`crate::kmeans::encoding`], two 16-bit
//! offsets. With AVX2 ([`crate::numeric::wide::available`]) one point is
//! compared with eight means at a time, keeping per lane the smallest
//! distance and the first mean that had it; elsewhere a plain loop does
//! the same.
//!
//! It neither records assignments nor sums clusters: that is the
//! caller's business ([`crate::kmeans::search`] puts the pieces together).

use crate::kmeans::encoding::{pair_square, PairFrame};
use crate::kmeans::Points;
use crate::numeric::wide;

#[cfg(target_arch = "x86_64")]
#[path = "nearest_avx2.rs"]
mod avx2;

/// Means per group the kernel compares at once (one AVX2 register of
/// `u32` distances).
pub const LANES: usize = 8;

/// What a word of a point or mean holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// One coordinate.
    Words,
    /// Two 16-bit offsets (see [`crate::kmeans::encoding`]).
    Pairs,
}

/// The means, word `w` of mean `j` at `w * padded + j`, where `padded`
/// rounds the number of means up to whole groups of [`LANES`]. The
/// padding repeats mean 0: a copy is never nearer than mean 0 itself, and
/// ties go to the lower index, so a padding slot never wins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MeansTable {
    encoding: Encoding,
    words: usize,
    clusters: usize,
    padded: usize,
    by_word: Vec<i32>,
}

impl MeansTable {
    /// The table of `means`, one coordinate per word.
    pub fn words(means: &Points) -> Self {
        Self::from_encoded(Encoding::Words, means.dim(), means.len(), means.coords())
    }

    /// The table of `means` in `frame`'s pair encoding; `None` if a mean
    /// lies outside the frame.
    pub fn pairs(means: &Points, frame: &PairFrame) -> Option<Self> {
        let encoded = frame.encode_means(means)?;
        Some(Self::from_encoded(
            Encoding::Pairs,
            frame.words(),
            means.len(),
            &encoded,
        ))
    }

    fn from_encoded(encoding: Encoding, words: usize, clusters: usize, encoded: &[i32]) -> Self {
        let padded = clusters.div_ceil(LANES) * LANES;
        let mut by_word = vec![0; words * padded];
        for j in 0..padded {
            let source = if j < clusters { j } else { 0 };
            for w in 0..words {
                by_word[w * padded + j] = encoded[source * words + w];
            }
        }
        MeansTable {
            encoding,
            words,
            clusters,
            padded,
            by_word,
        }
    }

    /// What the words hold.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// Words per mean (and per point).
    pub fn words_per_mean(&self) -> usize {
        self.words
    }

    /// Number of means.
    pub fn clusters(&self) -> usize {
        self.clusters
    }

    fn word(&self, w: usize, j: usize) -> i32 {
        self.by_word[w * self.padded + j]
    }
}

/// Sets `nearest[i]` to the nearest mean of point `i` of `points`
/// (encoded as the table is, [`MeansTable::words_per_mean`] words each)
/// and returns how many slots changed value.
///
/// # Panics
/// If `nearest` does not have one slot per point.
pub fn nearest_means(table: &MeansTable, points: &[i32], nearest: &mut [u32]) -> usize {
    assert_eq!(
        points.len(),
        nearest.len() * table.words,
        "one slot per point"
    );
    if table.clusters == 0 || table.words == 0 {
        let changed = nearest.iter().filter(|&&n| n != 0).count();
        nearest.fill(0);
        return changed;
    }
    #[cfg(target_arch = "x86_64")]
    if wide::available() {
        let pairs = table.encoding == Encoding::Pairs;
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe {
            avx2::nearest_means(
                &table.by_word,
                table.words,
                table.padded,
                pairs,
                points,
                nearest,
            )
        };
    }
    let mut changed = 0;
    for (point, slot) in points.chunks_exact(table.words).zip(nearest.iter_mut()) {
        let winner = nearest_portable(table, point);
        changed += usize::from(*slot != winner);
        *slot = winner;
    }
    changed
}

/// One point's nearest mean, a mean at a time.
fn nearest_portable(table: &MeansTable, point: &[i32]) -> u32 {
    let mut best = (u32::MAX, 0);
    for j in 0..table.clusters {
        let mut dist = 0u32;
        for (w, &x) in point.iter().enumerate() {
            let m = table.word(w, j);
            dist = dist.wrapping_add(match table.encoding {
                Encoding::Words => {
                    let diff = x.wrapping_sub(m);
                    diff.wrapping_mul(diff) as u32
                }
                Encoding::Pairs => pair_square(x, m),
            });
        }
        if dist < best.0 {
            best = (dist, j as u32);
        }
    }
    best.1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kmeans::reference::nearest_mean;
    use crate::kmeans::KmeansInput;
    use crate::numeric::CRand;

    fn random_points(rand: &mut CRand, count: usize, dim: usize, grid: u32, offset: i32) -> Points {
        let coords = (0..count * dim)
            .map(|_| (rand.below(grid) as i32).wrapping_add(offset))
            .collect();
        Points::new(dim, coords).unwrap()
    }

    /// Both encodings (where the pairs apply) and the portable loop agree
    /// with the reference.
    fn check(points: &Points, means: &Points) {
        let expected: Vec<u32> = (0..points.len())
            .map(|i| nearest_mean(points.point(i), means))
            .collect();
        let mut nearest = vec![u32::MAX; points.len()];
        let words = MeansTable::words(means);
        assert_eq!(
            nearest_means(&words, points.coords(), &mut nearest),
            points.len()
        );
        assert_eq!(nearest, expected, "words");
        assert_eq!(nearest_means(&words, points.coords(), &mut nearest), 0);
        let portable: Vec<u32> = points
            .coords()
            .chunks_exact(points.dim())
            .map(|p| nearest_portable(&words, p))
            .collect();
        assert_eq!(portable, expected, "portable words");
        let input = KmeansInput::new(points.clone(), means.clone()).unwrap();
        if let Some(frame) = crate::kmeans::encoding::PairFrame::for_input(&input) {
            let pairs = MeansTable::pairs(means, &frame).unwrap();
            let encoded = frame.encode_points(points).unwrap();
            nearest.fill(u32::MAX);
            assert_eq!(nearest_means(&pairs, &encoded, &mut nearest), points.len());
            assert_eq!(nearest, expected, "pairs");
            let portable: Vec<u32> = encoded
                .chunks_exact(frame.words())
                .map(|p| nearest_portable(&pairs, p))
                .collect();
            assert_eq!(portable, expected, "portable pairs");
        }
    }

    #[test]
    fn agrees_with_the_reference_on_many_shapes() {
        let mut rand = CRand::new(3);
        for dim in [1, 2, 3, 4, 5, 8] {
            for clusters in [1, 2, 7, 8, 9, 33, 100] {
                let points = random_points(&mut rand, 300, dim, 50, 0);
                let means = random_points(&mut rand, clusters, dim, 50, 0);
                check(&points, &means);
            }
        }
    }

    #[test]
    fn agrees_at_the_widest_pair_span() {
        let mut rand = CRand::new(5);
        for dim in [1, 2, 3, 4, 7] {
            let points = random_points(&mut rand, 400, dim, 32_768, -16_000);
            let means = random_points(&mut rand, 21, dim, 32_768, -16_000);
            check(&points, &means);
        }
    }

    #[test]
    fn agrees_where_distances_wrap() {
        let mut rand = CRand::new(4);
        for offset in [0, i32::MAX - 1_000_000, i32::MIN] {
            let points = random_points(&mut rand, 500, 3, 1 << 31, offset);
            let means = random_points(&mut rand, 17, 3, 1 << 31, offset);
            check(&points, &means);
        }
    }

    #[test]
    fn ties_and_equal_means_pick_the_first() {
        let points = Points::new(2, vec![5, 5, 0, 0]).unwrap();
        let means = Points::new(2, vec![9, 9, 4, 4, 6, 6, 4, 4]).unwrap();
        check(&points, &means);
        let mut nearest = [9, 9];
        nearest_means(&MeansTable::words(&means), points.coords(), &mut nearest);
        assert_eq!(nearest, [1, 1]);
    }
}
