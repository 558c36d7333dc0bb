//! Event-driven run of per-step aggregation work: each consumer, at each
//! step of a schedule, runs on one socket and performs a short list of
//! transfers in order (copy its table, read its piece, fetch the table
//! lines its updates miss). Rates come from max-min fair sharing
//! ([`crate::fairshare`]) with the same resources, snoop coefficients,
//! per-thread caps and crowding rule as [`crate::simulate()`]; time
//! advances to the next completion. Tight: a consumer that finished step k
//! waits until every consumer has; loose: it starts step k+1 at once.
//!
//! It knows nothing of hash tables or caches ([`super::work`] turns those
//! into bytes); it does not model the barrier's cost or the cost of moving
//! a thread.

use numakit_shuffle::SyncMode;

use crate::calibration::Calibration;
use crate::error::SimError;
use crate::fairshare::{fair_share, Group, Use};
use crate::machine::Machine;

/// What a transfer is for: Li Figure 11's three categories.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Kind {
    /// The consumer's piece of a producer's partition, streamed.
    Read,
    /// Hash-table lines missed in the cache: each is read from the table's
    /// memory and, dirty, written back to it later.
    Update,
    /// The table copied to the socket the consumer moves to.
    Copy,
}

impl Kind {
    fn index(self) -> usize {
        match self {
            Kind::Read => 0,
            Kind::Update => 1,
            Kind::Copy => 2,
        }
    }
}

/// `bytes` from the memory of socket `from` into the consumer's socket.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Transfer {
    pub kind: Kind,
    pub from: usize,
    pub bytes: f64,
}

/// What one consumer does in one step.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Task {
    pub run_on: usize,
    pub transfers: Vec<Transfer>,
}

/// The outcome of a run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Outcome {
    pub seconds: f64,
    /// Consumer-seconds spent in each [`Kind`] (Read, Update, Copy).
    pub thread_seconds: [f64; 3],
    pub events: usize,
}

/// Resources and caps of every (kind, source socket, consumer socket).
struct Costs {
    /// `stream[src][dst]`: a streamed read (pieces and copies).
    stream: Vec<Vec<Vec<Use>>>,
    /// `update[src][dst]`: a missed line, read and written back.
    update: Vec<Vec<Vec<Use>>>,
    caps: Vec<Vec<f64>>,
    /// Per source socket: an update's cap over a streamed read's.
    update_scale: Vec<f64>,
    capacity: Vec<f64>,
    hw_threads: Vec<usize>,
}

impl Costs {
    fn new(machine: &Machine, cal: &Calibration, update_scale: &[f64]) -> Self {
        let s = machine.socket_count();
        let pairs = |f: &dyn Fn(usize, usize) -> Vec<Use>| -> Vec<Vec<Vec<Use>>> {
            (0..s).map(|a| (0..s).map(|b| f(a, b)).collect()).collect()
        };
        Self {
            stream: pairs(&|a, b| machine.read_uses(a, b, cal)),
            update: pairs(&|a, b| {
                merged(machine.read_uses(a, b, cal), machine.writeback_uses(a, b))
            }),
            caps: (0..s)
                .map(|a| (0..s).map(|b| machine.thread_cap(a, b, cal)).collect())
                .collect(),
            update_scale: (0..s)
                .map(|a| update_scale.get(a).copied().unwrap_or(1.0))
                .collect(),
            capacity: machine.capacities(cal),
            hw_threads: (0..s).map(|x| machine.socket(x).hw_threads).collect(),
        }
    }

    /// Most one consumer with a hardware thread of its own moves.
    fn cap(&self, kind: Kind, src: usize, dst: usize) -> f64 {
        match kind {
            Kind::Update => self.caps[src][dst] * self.update_scale[src],
            Kind::Read | Kind::Copy => self.caps[src][dst],
        }
    }

    fn uses(&self, kind: Kind, src: usize, dst: usize) -> &[Use] {
        match kind {
            Kind::Update => &self.update[src][dst],
            Kind::Read | Kind::Copy => &self.stream[src][dst],
        }
    }
}

/// Two lists of uses summed per resource.
fn merged(a: Vec<Use>, b: Vec<Use>) -> Vec<Use> {
    let mut out: Vec<Use> = Vec::with_capacity(a.len() + b.len());
    for u in a.into_iter().chain(b) {
        match out.iter_mut().find(|o| o.resource == u.resource) {
            Some(o) => {
                o.data += u.data;
                o.snoop += u.snoop;
            }
            None => out.push(u),
        }
    }
    out
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum State {
    /// Performing transfer `index` of its task; `left` bytes to go.
    Busy {
        index: usize,
        left: f64,
    },
    Waiting,
    Done,
}

struct Run<'a> {
    work: &'a [Vec<Task>],
    costs: Costs,
    sync: SyncMode,
    step: Vec<usize>,
    state: Vec<State>,
    out: Outcome,
}

/// Runs `work[k][c]` (step k of consumer c) on `machine`. A table
/// update's per-thread cap is a streamed read's times `update_scale[src]`
/// (1 where missing).
pub(crate) fn run(
    machine: &Machine,
    cal: &Calibration,
    sync: SyncMode,
    update_scale: &[f64],
    work: &[Vec<Task>],
) -> Result<Outcome, SimError> {
    let consumers = work.first().map_or(0, Vec::len);
    let mut run = Run {
        work,
        costs: Costs::new(machine, cal, update_scale),
        sync,
        step: vec![0; consumers],
        state: vec![State::Done; consumers],
        out: Outcome {
            seconds: 0.0,
            thread_seconds: [0.0; 3],
            events: 0,
        },
    };
    let transfers: usize = work.iter().flatten().map(|t| t.transfers.len()).sum();
    for c in 0..consumers {
        run.begin_at(c, 0, 0);
    }
    loop {
        if run.state.iter().all(|s| *s == State::Done) {
            return Ok(run.out);
        }
        if run.state.iter().any(|s| matches!(s, State::Busy { .. })) {
            run.out.events += 1;
            if run.out.events > transfers + 16 {
                return Err(run.stalled());
            }
            run.advance()?;
        } else {
            run.release_barrier();
        }
    }
}

impl Run<'_> {
    fn stalled(&self) -> SimError {
        SimError::Stalled {
            events: self.out.events,
            seconds: self.out.seconds,
        }
    }

    /// Consumer `c` goes to the first transfer with bytes at or after
    /// `index` of step `k`, to the next step when there is none (loose), or
    /// to the barrier (tight).
    fn begin_at(&mut self, c: usize, k: usize, index: usize) {
        let (mut k, mut index) = (k, index);
        loop {
            let Some(task) = self.work.get(k).and_then(|s| s.get(c)) else {
                self.state[c] = State::Done;
                return;
            };
            self.step[c] = k;
            let next = task.transfers[index.min(task.transfers.len())..]
                .iter()
                .position(|t| t.bytes > 0.0);
            if let Some(offset) = next {
                let index = index + offset;
                let left = task.transfers[index].bytes;
                self.state[c] = State::Busy { index, left };
                return;
            }
            if self.sync == SyncMode::Tight {
                self.state[c] = State::Waiting;
                return;
            }
            (k, index) = (k + 1, 0);
        }
    }

    /// The active transfer of `c`: (kind, from, run_on) and bytes left.
    fn flow(&self, c: usize) -> Option<((Kind, usize, usize), f64, usize)> {
        let State::Busy { index, left } = self.state[c] else {
            return None;
        };
        let task = &self.work[self.step[c]][c];
        let t = task.transfers[index];
        Some(((t.kind, t.from, task.run_on), left, index))
    }

    /// Shares the machine among the active transfers, advances to the next
    /// completion and moves every consumer whose transfer ends then.
    fn advance(&mut self) -> Result<(), SimError> {
        let mut keys: Vec<(Kind, usize, usize)> = Vec::new();
        let mut counts: Vec<usize> = Vec::new();
        let mut members: Vec<(usize, usize, f64, usize)> = Vec::new();
        for c in 0..self.state.len() {
            if let Some((key, left, index)) = self.flow(c) {
                let g = keys.iter().position(|k| *k == key).unwrap_or_else(|| {
                    keys.push(key);
                    counts.push(0);
                    keys.len() - 1
                });
                counts[g] += 1;
                members.push((c, g, left, index));
            }
        }
        let rates = self.share(&keys, &counts);
        let finish = |g: usize, left: f64| left / (rates[g] * 1e9);
        let dt = members
            .iter()
            .map(|&(_, g, left, _)| finish(g, left))
            .fold(f64::INFINITY, f64::min);
        if !(dt.is_finite() && dt >= 0.0) {
            return Err(self.stalled());
        }
        self.out.seconds += dt;
        for (key, &count) in keys.iter().zip(&counts) {
            self.out.thread_seconds[key.0.index()] += count as f64 * dt;
        }
        for (c, g, left, index) in members {
            if finish(g, left) <= dt * (1.0 + 1e-9) {
                let k = self.step[c];
                self.begin_at(c, k, index + 1);
            } else {
                let left = left - rates[g] * 1e9 * dt;
                self.state[c] = State::Busy { index, left };
            }
        }
        Ok(())
    }

    /// Rate of one consumer of each group. Consumers beyond a socket's
    /// hardware threads share them, as in [`crate::machine::ReadTable`].
    fn share(&self, keys: &[(Kind, usize, usize)], counts: &[usize]) -> Vec<f64> {
        let mut running = vec![0usize; self.costs.hw_threads.len()];
        for (&(_, _, dst), &count) in keys.iter().zip(counts) {
            running[dst] += count;
        }
        let groups: Vec<Group> = keys
            .iter()
            .zip(counts)
            .map(|(&(kind, src, dst), &count)| {
                let crowding = self.costs.hw_threads[dst] as f64 / running[dst].max(1) as f64;
                Group {
                    count: count as f64,
                    cap: self.costs.cap(kind, src, dst) * crowding.min(1.0),
                    uses: self.costs.uses(kind, src, dst),
                }
            })
            .collect();
        fair_share(&self.costs.capacity, &groups)
            .into_iter()
            .map(|a| a.rate)
            .collect()
    }

    /// Tight: once nobody is busy, everyone waiting starts the next step.
    fn release_barrier(&mut self) {
        for c in 0..self.state.len() {
            if self.state[c] == State::Waiting {
                let next = self.step[c] + 1;
                self.begin_at(c, next, 0);
            }
        }
    }
}
