//! Splitters: how a job's input is cut into map tasks.
//!
//! A split is a range of record indices into the input slice. The default
//! cuts even ranges; byte inputs are cut on word or line boundaries so that
//! no word or line is torn between two tasks (a word longer than a chunk
//! makes its chunk longer, never two halves); fixed-width records (points,
//! matrix rows of a width known only at run time) are cut on multiples of
//! the width. Splitters only compute ranges: they never copy the input.

use std::ops::Range;

/// Ranges of about `target` records covering `0..len` (at least one
/// record each; none for an empty input).
pub fn even(len: usize, target: usize) -> Vec<Range<usize>> {
    let target = target.max(1);
    (0..len.div_ceil(target))
        .map(|i| i * target..((i + 1) * target).min(len))
        .collect()
}

/// Ranges of whole records of `width` elements, about `target_records`
/// records each. A tail shorter than a record forms the last range's end,
/// so nothing is lost; jobs that need whole records check the length first.
pub fn records(len: usize, width: usize, target_records: usize) -> Vec<Range<usize>> {
    let width = width.max(1);
    let mut ranges = even(len / width, target_records);
    for r in &mut ranges {
        *r = r.start * width..r.end * width;
    }
    match ranges.last_mut() {
        Some(last) => last.end = len,
        None if len > 0 => ranges.push(0..len),
        None => {}
    }
    ranges
}

/// Ranges of about `target` bytes that end between words: each cut moves
/// forward to the first byte for which `in_word` is false.
pub fn words(bytes: &[u8], target: usize, in_word: impl Fn(u8) -> bool) -> Vec<Range<usize>> {
    cut_after(bytes, target, |i| !in_word(bytes[i]))
}

/// Ranges of about `target` bytes that end just after a newline (or at the
/// end of the input).
pub fn lines(bytes: &[u8], target: usize) -> Vec<Range<usize>> {
    cut_after(bytes, target, |i| i > 0 && bytes[i - 1] == b'\n')
}

/// Cuts `bytes` about every `target` bytes, each cut moved forward to the
/// first position `i` where `boundary(i)` holds.
fn cut_after(bytes: &[u8], target: usize, boundary: impl Fn(usize) -> bool) -> Vec<Range<usize>> {
    let target = target.max(1);
    let mut ranges = Vec::with_capacity(bytes.len() / target + 1);
    let mut start = 0;
    while start < bytes.len() {
        let mut end = (start + target).min(bytes.len());
        while end < bytes.len() && !boundary(end) {
            end += 1;
        }
        ranges.push(start..end);
        start = end;
    }
    ranges
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn covers(ranges: &[Range<usize>], len: usize) -> bool {
        let mut at = 0;
        ranges.iter().all(|r| {
            let ok = r.start == at && r.end > r.start;
            at = r.end;
            ok
        }) && at == len
    }

    #[test]
    fn empty_inputs_have_no_splits() {
        assert!(even(0, 4).is_empty());
        assert!(records(0, 3, 4).is_empty());
        assert!(words(b"", 4, |b| b.is_ascii_alphabetic()).is_empty());
    }

    #[test]
    fn a_word_longer_than_a_chunk_stays_whole() {
        let text = b"ab cdefghijklmnop qr";
        let r = words(text, 4, |b| b.is_ascii_alphabetic());
        assert!(covers(&r, text.len()));
        assert_eq!(&text[r[0].clone()], b"ab cdefghijklmnop");
        assert_eq!(&text[r[1].clone()], b" qr");
    }

    #[test]
    fn records_keep_their_width_and_the_tail() {
        let r = records(10, 3, 2);
        assert_eq!(r, vec![0..6, 6..10]);
        assert_eq!(records(2, 3, 2), vec![0..2]);
    }

    proptest! {
        #[test]
        fn word_splits_cover_the_input_and_tear_no_word(
            text in proptest::collection::vec(prop_oneof![Just(b' '), Just(b'\n'), b'a'..=b'e'], 0..400),
            target in 1usize..50,
        ) {
            let in_word = |b: u8| b.is_ascii_alphabetic();
            let r = words(&text, target, in_word);
            prop_assert!(covers(&r, text.len()));
            for w in r.windows(2) {
                let cut = w[0].end;
                prop_assert!(!(in_word(text[cut - 1]) && in_word(text[cut])));
            }
        }

        #[test]
        fn line_and_record_splits_cover_the_input(
            text in proptest::collection::vec(prop_oneof![Just(b'\n'), b'a'..=b'c'], 0..300),
            target in 1usize..40,
            width in 1usize..7,
        ) {
            let r = lines(&text, target);
            prop_assert!(covers(&r, text.len()));
            for w in r.windows(2) {
                prop_assert_eq!(text[w[0].end - 1], b'\n');
            }
            let r = records(text.len(), width, target);
            prop_assert!(covers(&r, text.len()));
            for w in r.windows(2) {
                prop_assert_eq!(w[0].end % width, 0);
            }
        }
    }
}
