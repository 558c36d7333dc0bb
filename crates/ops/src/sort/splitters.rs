//! Range partitioning of sorted runs: which piece of every run goes to
//! which worker, so that worker i's keys are all at most worker i+1's and
//! every worker gets exactly its share of the elements.
//!
//! Four steps. [`choose`] samples every run at evenly spaced positions
//! (each sample standing for the elements around it, so short and long
//! runs weigh what they hold) and picks the keys at the global quantiles
//! as first guesses. [`select`] refines a guess into the key at exactly
//! the target rank, bisecting the key range with exact counts (binary
//! searches in every run). Each run then locates every splitter by binary
//! search ([`locate`]: where keys below it end and where keys equal to it
//! end). [`cut`] turns those into piece boundaries: keys below splitter i
//! go left, keys above it go right, and the keys equal to it are divided
//! at the target rank, taken from run 0 first, then run 1, and so on. So
//! a heavily duplicated key is spread over as many workers as its count
//! needs, deterministically, the output stays globally sorted, and every
//! part has exactly the size asked for.
//!
//! This module computes boundaries; it moves no data.

use super::Keyed;

/// Samples per run and part: enough for quantiles within a fraction of a
/// percent, few enough to sort in microseconds.
const SAMPLES_PER_PART: usize = 256;

/// Guesses of the keys at global ranks `targets` (non-decreasing) in the
/// sorted `runs`, from an evenly spaced sample of every run.
pub fn choose<T: Keyed>(runs: &[&[T]], targets: &[usize]) -> Vec<u64> {
    let per_run = SAMPLES_PER_PART * (targets.len() + 1);
    let mut samples: Vec<(u64, usize)> = Vec::new();
    for run in runs {
        let count = run.len().min(per_run);
        for j in 0..count {
            let (start, end) = (j * run.len() / count, (j + 1) * run.len() / count);
            samples.push((run[(start + end) / 2].key(), end - start));
        }
    }
    samples.sort_unstable();
    let mut guesses = Vec::with_capacity(targets.len());
    let mut covered = 0usize;
    let mut next = samples.iter();
    let mut current = 0u64;
    for &target in targets {
        while covered <= target {
            match next.next() {
                Some(&(key, weight)) => {
                    current = key;
                    covered += weight;
                }
                None => break,
            }
        }
        guesses.push(current);
    }
    guesses
}

/// Where part i starts, for `parts` parts of `total` elements whose sizes
/// differ by at most one (larger parts first, as `par::even_ranges`).
pub fn even_targets(total: usize, parts: usize) -> Vec<usize> {
    crate::par::even_ranges(total, parts)
        .iter()
        .skip(1)
        .map(|r| r.start)
        .collect()
}

/// Elements of the sorted `runs` with keys at most `key`.
fn count_through<T: Keyed>(runs: &[&[T]], key: u64) -> usize {
    runs.iter()
        .map(|r| r.partition_point(|x| x.key() <= key))
        .sum()
}

/// The smallest key with at least `target` elements at or below it: the
/// key at rank `target - 1`, so that keys below it are fewer than
/// `target` and keys through it at least `target` (0 for target 0). The
/// bisection starts from `guess`.
pub fn select<T: Keyed>(runs: &[&[T]], target: usize, guess: u64) -> u64 {
    let (mut lo, mut hi) = (0u64, u64::MAX);
    if count_through(runs, guess) >= target {
        hi = guess;
    } else {
        lo = guess.saturating_add(1);
    }
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if count_through(runs, mid) >= target {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    hi
}

/// Where `key` sits in a sorted run: keys below it end at `below`, keys
/// equal to it end at `through`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Located {
    /// Number of elements with a key below the splitter (where its equal
    /// keys start).
    pub below: usize,
    /// Number of elements with a key at most the splitter (where its
    /// equal keys end); `through - below` elements equal it.
    pub through: usize,
}

/// Binary-searches every splitter in the sorted `run`.
pub fn locate<T: Keyed>(run: &[T], splitters: &[u64]) -> Vec<Located> {
    splitters
        .iter()
        .map(|&s| {
            let below = run.partition_point(|x| x.key() < s);
            let through = below + run[below..].partition_point(|x| x.key() <= s);
            Located { below, through }
        })
        .collect()
}

/// Piece boundaries: `cut(..)[r]` has `targets.len() + 2` positions in
/// run r, piece i being `bounds[i]..bounds[i + 1]`. `located[r]` is
/// [`locate`] of run r for the splitters of `targets` (the global ranks
/// where parts 1.. start), `lens[r]` its length. Part i gets exactly
/// `targets[i] - targets[i - 1]` elements when every splitter has its
/// target rank among the keys equal to it (as [`select`]'s do).
pub fn cut(located: &[Vec<Located>], lens: &[usize], targets: &[usize]) -> Vec<Vec<usize>> {
    let parts = targets.len() + 1;
    let mut bounds: Vec<Vec<usize>> = lens
        .iter()
        .map(|&len| {
            let mut b = vec![0; parts + 1];
            b[parts] = len;
            b
        })
        .collect();
    for (i, &target) in targets.iter().enumerate() {
        let at = |r: usize| located[r][i];
        let below: usize = (0..lens.len()).map(|r| at(r).below).sum();
        let equal: usize = (0..lens.len()).map(|r| at(r).through - at(r).below).sum();
        // How many of the keys equal to the splitter go left of the cut.
        let mut left = target.saturating_sub(below).min(equal);
        for (r, b) in bounds.iter_mut().enumerate() {
            let here = at(r);
            let take = left.min(here.through - here.below);
            b[i + 1] = here.below + take;
            left -= take;
        }
    }
    bounds
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datagen::splitmix64;

    /// Cuts `runs` into `parts` even parts; checks order and returns the
    /// part sizes.
    fn check(runs: &[Vec<u64>], parts: usize) -> Vec<usize> {
        let slices: Vec<&[u64]> = runs.iter().map(|r| &r[..]).collect();
        let lens: Vec<usize> = slices.iter().map(|r| r.len()).collect();
        let targets = even_targets(lens.iter().sum(), parts);
        let guesses = choose(&slices, &targets);
        assert!(guesses.windows(2).all(|w| w[0] <= w[1]));
        let splitters: Vec<u64> = targets
            .iter()
            .zip(&guesses)
            .map(|(&t, &g)| select(&slices, t, g))
            .collect();
        let located: Vec<_> = slices.iter().map(|r| locate(r, &splitters)).collect();
        let bounds = cut(&located, &lens, &targets);
        let mut sizes = vec![0; parts];
        let mut pieces: Vec<Vec<u64>> = vec![Vec::new(); parts];
        for (r, b) in bounds.iter().enumerate() {
            assert!(b.windows(2).all(|w| w[0] <= w[1]), "{b:?}");
            assert_eq!((b[0], b[parts]), (0, lens[r]));
            for i in 0..parts {
                sizes[i] += b[i + 1] - b[i];
                pieces[i].extend_from_slice(&runs[r][b[i]..b[i + 1]]);
            }
        }
        for w in pieces.windows(2) {
            if let (Some(hi), Some(lo)) = (w[0].iter().max(), w[1].iter().min()) {
                assert!(hi <= lo, "ranges overlap: {hi} > {lo}");
            }
        }
        let even: Vec<usize> = crate::par::even_ranges(lens.iter().sum(), parts)
            .iter()
            .map(|r| r.len())
            .collect();
        assert_eq!(sizes, even, "parts are not exactly even");
        sizes
    }

    fn sorted(mut v: Vec<u64>) -> Vec<u64> {
        v.sort_unstable();
        v
    }

    #[test]
    fn uniform_keys_split_exactly_evenly() {
        let runs: Vec<Vec<u64>> = (0..3)
            .map(|r| sorted((0..30_000u64).map(|i| splitmix64(i * 3 + r)).collect()))
            .collect();
        check(&runs, 4);
        check(&runs, 7);
    }

    #[test]
    fn duplicates_are_divided_at_the_target_ranks() {
        assert_eq!(check(&[vec![5u64; 1000], vec![5u64; 10]], 2), [505, 505]);
        let runs = vec![
            sorted((0..1000).map(|i| if i % 10 == 0 { i } else { 7 }).collect()),
            vec![],
        ];
        assert_eq!(check(&runs, 4), [250, 250, 250, 250]);
        check(
            &[sorted((0..5000).map(|i| i % 3).collect()), vec![0, 2, 2]],
            5,
        );
    }

    #[test]
    fn empty_extreme_and_lopsided_inputs() {
        assert_eq!(check(&[vec![], vec![]], 2), [0, 0]);
        assert_eq!(check(&[vec![u64::MAX], vec![]], 2), [1, 0]);
        check(&[vec![0, 0, u64::MAX, u64::MAX], vec![u64::MAX; 3]], 3);
        check(&[sorted((0..10_000).collect()), vec![0, u64::MAX]], 2);
        assert_eq!(check(&[vec![1, 2, 3]], 1), [3]);
    }

    #[test]
    fn select_finds_the_key_at_a_rank() {
        let a = [1u64, 3, 3, 9];
        let b = [2u64, 3, 10];
        let runs: [&[u64]; 2] = [&a, &b];
        for (target, key) in [(0, 0), (1, 1), (2, 2), (3, 3), (5, 3), (6, 9), (7, 10)] {
            for guess in [0, 3, 100, u64::MAX] {
                assert_eq!(
                    select(&runs, target, guess),
                    key,
                    "target {target} guess {guess}"
                );
            }
        }
    }
}
