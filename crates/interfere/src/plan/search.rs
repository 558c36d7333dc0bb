//! The search for the grouping of jobs with the least predicted
//! interference. A grouping puts the jobs in **waves** that run one after
//! another, and the jobs of a wave in **groups**, one group per node,
//! no larger than the node's CPUs. A job's predicted slowdown is its
//! slowdown beside the rest of its group; a wave lasts as long as its
//! slowest job (every job's work takes one unit alone). The best grouping
//! has the shortest predicted time in all, then the smallest sum of
//! slowdowns.
//!
//! Up to [`EXHAUSTIVE`] jobs every grouping is tried (branch and bound:
//! slowdowns only grow as jobs are added, so a partial grouping already
//! slower than the best is dropped); past that, jobs are placed one at a
//! time, the most harmful first, where they add least. It works on
//! capacities and workloads only: which node and CPU a group gets is
//! [`crate::plan::layout`]'s business.

use std::cmp::Ordering;

use crate::plan::predict::Predictor;
use crate::workload::Workload;

/// Up to this many jobs the search is exhaustive.
pub const EXHAUSTIVE: usize = 8;

/// Ties within this are ties.
const EPSILON: f64 = 1e-9;

/// Waves of groups of job indices.
pub type Grouping = Vec<Vec<Vec<usize>>>;

/// A grouping's predicted cost.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Score {
    /// Sum over waves of the slowest job's slowdown: the predicted time,
    /// in units of one job's time alone.
    pub time: f64,
    /// Sum of every job's slowdown.
    pub total: f64,
    /// Sum of the squares of the group sizes: among otherwise equal
    /// groupings, the one that spreads jobs over more nodes wins (the
    /// predictions cannot see every shared resource).
    pub crowding: usize,
}

impl Score {
    fn better_than(&self, other: &Score) -> bool {
        match cmp(self.time, other.time) {
            Ordering::Less => true,
            Ordering::Greater => false,
            Ordering::Equal => match cmp(self.total, other.total) {
                Ordering::Equal => self.crowding < other.crowding,
                order => order == Ordering::Less,
            },
        }
    }
}

fn cmp(a: f64, b: f64) -> Ordering {
    if (a - b).abs() <= EPSILON {
        Ordering::Equal
    } else {
        a.total_cmp(&b)
    }
}

/// The best grouping of `jobs` on nodes of `capacities` CPUs (largest
/// first), and its score. `capacities` must hold at least one CPU.
pub fn best(jobs: &[Workload], capacities: &[usize], predictor: &Predictor) -> (Grouping, Score) {
    let mut capacities = capacities.to_vec();
    capacities.sort_unstable_by(|a, b| b.cmp(a));
    let search = Search {
        jobs,
        capacities: &capacities,
        predictor,
    };
    if jobs.len() <= EXHAUSTIVE {
        let mut state = Vec::new();
        let mut found = None;
        search.exhaustive(0, &mut state, &mut found);
        if let Some(found) = found {
            return found;
        }
    }
    search.greedy()
}

/// Each job's slowdown in `grouping`, by job index.
pub fn slowdowns(jobs: &[Workload], grouping: &Grouping, predictor: &Predictor) -> Vec<f64> {
    let mut out = vec![1.0; jobs.len()];
    for group in grouping.iter().flatten() {
        for &j in group {
            let others = group.iter().filter(|&&k| k != j).map(|&k| jobs[k]);
            out[j] = predictor.beside_all(jobs[j], others);
        }
    }
    out
}

struct Search<'a> {
    jobs: &'a [Workload],
    capacities: &'a [usize],
    predictor: &'a Predictor,
}

impl Search<'_> {
    fn score(&self, grouping: &Grouping) -> Score {
        let each = slowdowns(self.jobs, grouping, self.predictor);
        let time = grouping
            .iter()
            .map(|wave| wave.iter().flatten().map(|&j| each[j]).fold(0.0, f64::max))
            .sum();
        let total = grouping.iter().flatten().flatten().map(|&j| each[j]).sum();
        let crowding = grouping.iter().flatten().map(|g| g.len() * g.len()).sum();
        Score {
            time,
            total,
            crowding,
        }
    }

    /// Whether a wave's groups fit the nodes: the k-th largest group on
    /// the k-th largest node.
    fn fits(&self, wave: &[Vec<usize>]) -> bool {
        if wave.len() > self.capacities.len() {
            return false;
        }
        let mut sizes: Vec<usize> = wave.iter().map(Vec::len).collect();
        sizes.sort_unstable_by(|a, b| b.cmp(a));
        sizes.iter().zip(self.capacities).all(|(s, c)| s <= c)
    }

    fn exhaustive(&self, job: usize, state: &mut Grouping, best: &mut Option<(Grouping, Score)>) {
        let score = self.score(state);
        if let Some((_, b)) = best {
            if cmp(score.time, b.time) == Ordering::Greater {
                return;
            }
        }
        if job == self.jobs.len() {
            if best.as_ref().is_none_or(|(_, b)| score.better_than(b)) {
                *best = Some((state.clone(), score));
            }
            return;
        }
        for w in 0..state.len() {
            for g in 0..state[w].len() {
                state[w][g].push(job);
                if self.fits(&state[w]) {
                    self.exhaustive(job + 1, state, best);
                }
                state[w][g].pop();
            }
            state[w].push(vec![job]);
            if self.fits(&state[w]) {
                self.exhaustive(job + 1, state, best);
            }
            state[w].pop();
        }
        state.push(vec![vec![job]]);
        self.exhaustive(job + 1, state, best);
        state.pop();
    }

    /// Jobs placed one at a time into as few waves as the CPUs allow.
    fn greedy(&self) -> (Grouping, Score) {
        let cpus: usize = self.capacities.iter().sum::<usize>().max(1);
        let waves = self.jobs.len().div_ceil(cpus).max(1);
        let mut state: Grouping = vec![Vec::new(); waves];
        let harm = |w: Workload| -> f64 {
            Workload::ALL
                .iter()
                .map(|&v| self.predictor.slowdown(v, w).0)
                .sum()
        };
        let mut order: Vec<usize> = (0..self.jobs.len()).collect();
        order.sort_by(|&a, &b| harm(self.jobs[b]).total_cmp(&harm(self.jobs[a])));
        for job in order {
            let mut choice: Option<(usize, Option<usize>, Score)> = None;
            for w in 0..waves {
                let groups = state[w].len();
                for g in (0..groups).map(Some).chain([None]) {
                    match g {
                        Some(g) => state[w][g].push(job),
                        None => state[w].push(vec![job]),
                    }
                    if self.fits(&state[w]) {
                        let score = self.score(&state);
                        if choice.as_ref().is_none_or(|(_, _, c)| score.better_than(c)) {
                            choice = Some((w, g, score));
                        }
                    }
                    match g {
                        Some(g) => {
                            state[w][g].pop();
                        }
                        None => {
                            state[w].pop();
                        }
                    }
                }
            }
            match choice {
                Some((w, Some(g), _)) => state[w][g].push(job),
                Some((w, None, _)) => state[w].push(vec![job]),
                // Every wave full cannot happen (waves hold every CPU),
                // but a new wave is always a place.
                None => state.push(vec![vec![job]]),
            }
        }
        let score = self.score(&state);
        (state, score)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Workload::*;

    fn names(jobs: &[Workload], grouping: &Grouping) -> Vec<Vec<Vec<Workload>>> {
        let mut out: Vec<Vec<Vec<Workload>>> = grouping
            .iter()
            .map(|wave| {
                let mut wave: Vec<Vec<Workload>> = wave
                    .iter()
                    .map(|g| {
                        let mut g: Vec<Workload> = g.iter().map(|&j| jobs[j]).collect();
                        g.sort();
                        g
                    })
                    .collect();
                wave.sort();
                wave
            })
            .collect();
        out.sort();
        out
    }

    #[test]
    fn enough_nodes_give_each_job_a_node_of_its_own() {
        let jobs = [Scan, Scan, Probe, Compute];
        let (g, score) = best(&jobs, &[2, 2, 2, 2], &Predictor::declared());
        assert_eq!(g.len(), 1, "{g:?}");
        assert!(g[0].iter().all(|group| group.len() == 1), "{g:?}");
        assert_eq!(score.time, 1.0);
    }

    #[test]
    fn two_bandwidth_hungry_jobs_are_kept_apart_and_the_compute_job_joins_a_scan() {
        let jobs = [Scan, Scan, Probe, Compute];
        let (g, _) = best(&jobs, &[2, 2], &Predictor::declared());
        assert_eq!(
            names(&jobs, &g),
            vec![vec![vec![Scan, Probe], vec![Scan, Compute]]]
        );
    }

    #[test]
    fn a_cache_sensitive_job_is_paired_with_the_compute_bound_one() {
        let jobs = [Probe, Join, Compute, Join];
        let (g, _) = best(&jobs, &[2, 2], &Predictor::declared());
        let groups = &names(&jobs, &g)[0];
        assert!(groups.contains(&vec![Probe, Compute]), "{groups:?}");
    }

    #[test]
    fn more_jobs_than_cpus_run_in_waves_of_compatible_pairs() {
        let jobs = [Scan, Scan, Compute, Compute];
        let (g, score) = best(&jobs, &[2], &Predictor::declared());
        assert_eq!(
            names(&jobs, &g),
            vec![vec![vec![Scan, Compute]], vec![vec![Scan, Compute]]]
        );
        assert_eq!(score.time, 2.0);
    }

    #[test]
    fn greedy_agrees_with_the_exhaustive_search_on_a_small_case_and_fits_a_large_one() {
        let jobs = [Scan, Scan, Probe, Compute];
        let p = Predictor::declared();
        let capacities = [2, 2];
        let search = Search {
            jobs: &jobs,
            capacities: &capacities,
            predictor: &p,
        };
        let (_, exhaustive) = best(&jobs, &capacities, &p);
        let (_, greedy) = search.greedy();
        assert!((greedy.time - exhaustive.time).abs() < 1e-9);
        let many: Vec<Workload> = (0..20).map(|i| Workload::ALL[i % 6]).collect();
        let (g, _) = best(&many, &[4, 4], &p);
        let mut seen: Vec<usize> = g.iter().flatten().flatten().copied().collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..20).collect::<Vec<_>>());
        assert!(g
            .iter()
            .all(|wave| wave.len() <= 2 && wave.iter().all(|group| group.len() <= 4)));
    }

    #[test]
    fn a_slowdown_past_two_splits_a_pair_into_waves() {
        let cell = |victim, aggressor, slowdown| crate::cell::Cell {
            victim,
            aggressor,
            slowdown,
            min: slowdown,
            max: slowdown,
        };
        let p = Predictor::measured(&[cell(Scan, Scan, 2.5)]);
        let (g, score) = best(&[Scan, Scan], &[2], &p);
        assert_eq!(g.len(), 2, "{g:?}");
        assert_eq!(score.time, 2.0);
    }
}
