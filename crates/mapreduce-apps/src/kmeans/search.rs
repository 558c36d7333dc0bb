//! The nearest-mean search of one k-means input, in the fastest encoding
//! its values allow: [`NearestSearch::new`] encodes the points once in
//! 16-bit pairs when every dimension of the input spans at most 32767
//! ([`crate::kmeans::encoding`]); each iteration's
//! [`NearestSearch::table`] then encodes the means the same way when they
//! still fit, and in plain words otherwise; [`NearestSearch::nearest`]
//! runs the kernel ([`crate::kmeans::nearest`]) on any run of points.
//!
//! The baseline and the MapReduce job both assign through it; it keeps no
//! assignment and sums nothing.

use crate::kmeans::encoding::PairFrame;
use crate::kmeans::nearest::{nearest_means, Encoding, MeansTable};
use crate::kmeans::{KmeansInput, Points};

/// The points of an input, with their pair encoding where it applies.
#[derive(Clone, Debug)]
pub struct NearestSearch<'a> {
    points: &'a Points,
    pairs: Option<(PairFrame, Vec<i32>)>,
}

impl<'a> NearestSearch<'a> {
    /// Prepares the search over `input`'s points.
    pub fn new(input: &'a KmeansInput) -> Self {
        let pairs = PairFrame::for_input(input).and_then(|frame| {
            frame
                .encode_points(input.points())
                .map(|encoded| (frame, encoded))
        });
        NearestSearch {
            points: input.points(),
            pairs,
        }
    }

    /// Whether the points are pair-encoded.
    pub fn uses_pairs(&self) -> bool {
        self.pairs.is_some()
    }

    /// Number of points.
    pub fn points(&self) -> usize {
        self.points.len()
    }

    /// Coordinates per point.
    pub fn dim(&self) -> usize {
        self.points.dim()
    }

    /// The coordinates of `count` points from `first` on, flat.
    pub fn coords(&self, first: usize, count: usize) -> &'a [i32] {
        let dim = self.points.dim();
        &self.points.coords()[first * dim..(first + count) * dim]
    }

    /// The table of this iteration's means, pair-encoded when they fit.
    pub fn table(&self, means: &Points) -> MeansTable {
        self.pairs
            .as_ref()
            .and_then(|(frame, _)| MeansTable::pairs(means, frame))
            .unwrap_or_else(|| MeansTable::words(means))
    }

    /// The nearest mean of points `first..first + nearest.len()`, into
    /// `nearest`; how many slots changed value.
    ///
    /// # Panics
    /// If the points run past the end, or `table` is not one of this
    /// search's.
    pub fn nearest(&self, table: &MeansTable, first: usize, nearest: &mut [u32]) -> usize {
        let end = first + nearest.len();
        let (encoded, words) = match (table.encoding(), &self.pairs) {
            (Encoding::Pairs, Some((frame, encoded))) => (&encoded[..], frame.words()),
            (Encoding::Words, _) => (self.points.coords(), self.points.dim()),
            (Encoding::Pairs, None) => panic!("a pair table from another search"),
        };
        nearest_means(table, &encoded[first * words..end * words], nearest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kmeans::reference::nearest_mean;

    fn check(input: &KmeansInput, means: &Points, expect_pairs: bool) {
        let search = NearestSearch::new(input);
        let table = search.table(means);
        assert_eq!(table.encoding() == Encoding::Pairs, expect_pairs);
        let n = input.points().len();
        let mut nearest = vec![0; n];
        let (head, tail) = nearest.split_at_mut(n / 3);
        search.nearest(&table, 0, head);
        search.nearest(&table, n / 3, tail);
        let expected: Vec<u32> = (0..n)
            .map(|i| nearest_mean(input.points().point(i), means))
            .collect();
        assert_eq!(nearest, expected);
    }

    fn input(dim: usize, points: Vec<i32>, means: Vec<i32>) -> KmeansInput {
        KmeansInput::new(
            Points::new(dim, points).unwrap(),
            Points::new(dim, means).unwrap(),
        )
        .unwrap()
    }

    #[test]
    fn pairs_while_the_means_fit_and_words_after() {
        let data = input(
            3,
            (0..300).map(|i| (i * 37) % 1000).collect(),
            vec![0, 0, 0, 999, 999, 999],
        );
        assert!(NearestSearch::new(&data).uses_pairs());
        check(&data, data.initial_means(), true);
        let outside = Points::new(3, vec![5, 5, 5, 40_000, 0, 0]).unwrap();
        check(&data, &outside, false);
    }

    #[test]
    fn wide_inputs_use_words() {
        let data = input(2, vec![0, 0, 40_000, 1, 3, 3, 7, 7], vec![1, 1]);
        assert!(!NearestSearch::new(&data).uses_pairs());
        check(&data, data.initial_means(), false);
    }
}
