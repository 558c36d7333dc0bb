//! Multi-way merge of sorted runs into one sorted output: the last step
//! of the NUMA-aware sort, where each worker merges the pieces of every
//! worker's run that fall into its key range.
//!
//! One run is a copy; two runs take a branch-free two-way merge; more
//! runs go through a loser tree (a tournament tree that keeps each
//! match's loser, so replacing the winner replays one root path: log2(k)
//! comparisons per element). Ties go to the earlier run, so the merge is
//! stable. This module merges slices; it does not allocate the output or
//! know where runs live.

use super::Keyed;

/// Writes the merge of the sorted `runs` into `out`.
///
/// # Panics
/// If `out` is not exactly as long as all runs together.
pub fn merge_into<T: Keyed>(runs: &[&[T]], out: &mut [T]) {
    let total: usize = runs.iter().map(|r| r.len()).sum();
    assert_eq!(total, out.len(), "the output must hold every run");
    let runs: Vec<&[T]> = runs.iter().copied().filter(|r| !r.is_empty()).collect();
    match runs.as_slice() {
        [] => {}
        [only] => out.copy_from_slice(only),
        [a, b] => merge_two(a, b, out),
        _ => LoserTree::new(&runs).drain_into(out),
    }
}

/// Merges two sorted runs; `out` is exactly as long as both.
fn merge_two<T: Keyed>(a: &[T], b: &[T], out: &mut [T]) {
    let (mut i, mut j, mut o) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        let take_b = y.key() < x.key();
        out[o] = if take_b { y } else { x };
        j += usize::from(take_b);
        i += usize::from(!take_b);
        o += 1;
    }
    let rest = if i < a.len() { &a[i..] } else { &b[j..] };
    out[o..].copy_from_slice(rest);
}

/// A loser tree over the heads of k runs.
struct LoserTree<'a, T> {
    runs: &'a [&'a [T]],
    /// Next position in each run.
    next: Vec<usize>,
    /// Each leaf's current head as a comparable rank: exhausted runs
    /// (bit 64 set) lose to everything.
    heads: Vec<u128>,
    /// `losers[node]` for internal nodes 1..leaves; `losers[0]` is the
    /// overall winner.
    losers: Vec<usize>,
    leaves: usize,
}

const EXHAUSTED: u128 = 1 << 64;

impl<'a, T: Keyed> LoserTree<'a, T> {
    fn new(runs: &'a [&'a [T]]) -> Self {
        let leaves = runs.len().next_power_of_two();
        let heads = (0..leaves)
            .map(|r| {
                runs.get(r)
                    .and_then(|run| run.first())
                    .map_or(EXHAUSTED, |x| u128::from(x.key()))
            })
            .collect();
        let mut tree = Self {
            runs,
            next: vec![0; runs.len()],
            heads,
            losers: vec![0; leaves],
            leaves,
        };
        let winner = tree.play(1);
        tree.losers[0] = winner;
        tree
    }

    /// Whether run `a`'s head goes before run `b`'s (ties: lower run).
    fn beats(&self, a: usize, b: usize) -> bool {
        (self.heads[a], a) < (self.heads[b], b)
    }

    /// Plays the subtree under `node`, records its losers, returns the
    /// winner.
    fn play(&mut self, node: usize) -> usize {
        if node >= self.leaves {
            return node - self.leaves;
        }
        let (left, right) = (self.play(2 * node), self.play(2 * node + 1));
        let (winner, loser) = if self.beats(right, left) {
            (right, left)
        } else {
            (left, right)
        };
        self.losers[node] = loser;
        winner
    }

    /// Writes every element of every run to `out` in order.
    fn drain_into(mut self, out: &mut [T]) {
        for slot in out.iter_mut() {
            let winner = self.losers[0];
            let run = self.runs[winner];
            let at = self.next[winner];
            *slot = run[at];
            self.next[winner] = at + 1;
            self.heads[winner] = run.get(at + 1).map_or(EXHAUSTED, |x| u128::from(x.key()));
            self.replay(winner);
        }
    }

    /// Replays the path from leaf `run` to the root after its head changed.
    fn replay(&mut self, run: usize) {
        let mut winner = run;
        let mut node = (run + self.leaves) / 2;
        while node >= 1 {
            let challenger = self.losers[node];
            if self.beats(challenger, winner) {
                self.losers[node] = winner;
                winner = challenger;
            }
            node /= 2;
        }
        self.losers[0] = winner;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datagen::splitmix64;
    use crate::tuple::Tuple;

    fn runs_of(lens: &[usize], modulo: u64) -> Vec<Vec<Tuple>> {
        lens.iter()
            .enumerate()
            .map(|(r, &len)| {
                let mut run: Vec<Tuple> = (0..len)
                    .map(|i| {
                        Tuple::new(
                            splitmix64((r * 1000 + i) as u64) % modulo,
                            (r * 1000 + i) as u64,
                        )
                    })
                    .collect();
                run.sort_by_key(|t| t.key);
                run
            })
            .collect()
    }

    #[test]
    fn merges_any_number_of_runs_stably() {
        let shapes: [&[usize]; 8] = [
            &[],
            &[0, 0],
            &[5],
            &[7, 0, 3],
            &[100, 1],
            &[10, 20, 30, 40, 50],
            &[0, 64, 0, 1, 9, 33, 2],
            &[300; 9],
        ];
        for lens in shapes {
            for modulo in [3, 1 << 40] {
                let runs = runs_of(lens, modulo);
                let slices: Vec<&[Tuple]> = runs.iter().map(|r| &r[..]).collect();
                let mut out = vec![Tuple::default(); lens.iter().sum()];
                merge_into(&slices, &mut out);
                // A stable sort of the concatenation is the stable merge.
                let mut expect: Vec<Tuple> = runs.concat();
                expect.sort_by_key(|t| t.key);
                assert_eq!(out, expect, "{lens:?} mod {modulo}");
            }
        }
    }

    #[test]
    fn extreme_keys_merge_in_order() {
        let a = [0u64, u64::MAX, u64::MAX];
        let b = [0u64, 1, u64::MAX];
        let c = [u64::MAX];
        let mut out = vec![0u64; 7];
        merge_into(&[&a, &b, &c], &mut out);
        assert_eq!(out, [0, 0, 1, u64::MAX, u64::MAX, u64::MAX, u64::MAX]);
    }
}
