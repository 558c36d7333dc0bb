//! How coordinates reach the nearest-mean kernel: as they are (one `i32`
//! word per coordinate), or — when every coordinate of the points and
//! initial means lies within 32767 of the smallest in its dimension — as
//! 16-bit offsets from that smallest, two dimensions per word, which lets
//! AVX2's `vpmaddwd` square and add two differences in one instruction.
//!
//! The pair encoding changes no distance: differences of offsets are the
//! differences of the coordinates (at most 32767 apart, so no 16-bit
//! overflow), their squares are exact in 32 bits, and the sums wrap
//! modulo 2^32 exactly as the original's do. A mean computed from the
//! points lies within their range, unless its cluster's sums wrapped —
//! [`PairFrame::encode_means`] then declines and the caller uses the word
//! encoding for that iteration.
//!
//! It does not search; see [`crate::kmeans::nearest`].

use crate::kmeans::{KmeansInput, Points};

/// Largest span of a dimension the pair encoding takes.
const MAX_SPAN: i64 = i16::MAX as i64;

/// The per-dimension origin of the pair encoding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PairFrame {
    lowest: Vec<i32>,
}

impl PairFrame {
    /// The frame of an input, if every dimension of its points and initial
    /// means spans at most 32767.
    pub fn for_input(input: &KmeansInput) -> Option<Self> {
        let dim = input.points().dim();
        let mut lowest = vec![i32::MAX; dim];
        let mut highest = vec![i32::MIN; dim];
        for set in [input.points(), input.initial_means()] {
            for point in set.coords().chunks_exact(dim) {
                for d in 0..dim {
                    lowest[d] = lowest[d].min(point[d]);
                    highest[d] = highest[d].max(point[d]);
                }
            }
        }
        let fits = lowest
            .iter()
            .zip(&highest)
            .all(|(&l, &h)| i64::from(h) - i64::from(l) <= MAX_SPAN);
        fits.then_some(PairFrame { lowest })
    }

    /// Words per encoded point (two dimensions each).
    pub fn words(&self) -> usize {
        self.lowest.len().div_ceil(2)
    }

    /// Encodes points that lie in the frame (those of the input it was
    /// made for); `None` if one does not.
    pub fn encode_points(&self, points: &Points) -> Option<Vec<i32>> {
        let mut words = Vec::with_capacity(points.len() * self.words());
        for point in points.coords().chunks_exact(points.dim().max(1)) {
            self.encode_into(point, &mut words)?;
        }
        Some(words)
    }

    /// Encodes means, mean after mean; `None` if one lies outside the
    /// frame.
    pub fn encode_means(&self, means: &Points) -> Option<Vec<i32>> {
        self.encode_points(means)
    }

    fn encode_into(&self, point: &[i32], words: &mut Vec<i32>) -> Option<()> {
        let offset = |d: usize| -> Option<u16> {
            let off = i64::from(point[d]) - i64::from(self.lowest[d]);
            (0..=MAX_SPAN).contains(&off).then_some(off as u16)
        };
        for d in (0..point.len()).step_by(2) {
            let low = offset(d)?;
            let high = if d + 1 < point.len() {
                offset(d + 1)?
            } else {
                0
            };
            words.push((u32::from(low) | u32::from(high) << 16) as i32);
        }
        Some(())
    }
}

/// The squared distance of two encoded words: `(a0-b0)² + (a1-b1)²` over
/// their 16-bit halves (what `vpmaddwd` of the difference computes).
#[inline(always)]
pub fn pair_square(a: i32, b: i32) -> u32 {
    let d0 = i32::from(a as u16) - i32::from(b as u16);
    let d1 = i32::from((a >> 16) as u16) - i32::from((b >> 16) as u16);
    (d0 * d0 + d1 * d1) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(dim: usize, points: Vec<i32>, means: Vec<i32>) -> KmeansInput {
        KmeansInput::new(
            Points::new(dim, points).unwrap(),
            Points::new(dim, means).unwrap(),
        )
        .unwrap()
    }

    #[test]
    fn spans_up_to_32767_fit() {
        let fits = input(2, vec![-100, 5, 32_667, 5], vec![0, 0]);
        let frame = PairFrame::for_input(&fits).unwrap();
        assert_eq!(frame.lowest, [-100, 0]);
        assert!(PairFrame::for_input(&input(1, vec![-100, 32_668], vec![0])).is_none());
        assert!(PairFrame::for_input(&input(1, vec![i32::MIN, i32::MAX], vec![0])).is_none());
    }

    #[test]
    fn pairs_pack_two_dimensions_per_word() {
        let data = input(3, vec![10, 20, 30, 11, 25, 32_767 + 30], vec![10, 20, 30]);
        let frame = PairFrame::for_input(&data).unwrap();
        assert_eq!(frame.words(), 2);
        let words = frame.encode_points(data.points()).unwrap();
        assert_eq!(words, [0, 0, 1 | 5 << 16, 32_767]);
        assert_eq!(pair_square(words[2], words[0]), 1 + 25);
        let outside = Points::new(3, vec![9, 20, 30]).unwrap();
        assert!(frame.encode_means(&outside).is_none());
    }

    #[test]
    fn squares_are_exact_at_the_span_limit() {
        let a = 32_767 | 32_767 << 16;
        assert_eq!(pair_square(a, 0), 2 * 32_767 * 32_767);
        assert_eq!(pair_square(0, a), 2 * 32_767 * 32_767);
    }
}
