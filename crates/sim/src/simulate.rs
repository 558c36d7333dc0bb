//! Event-driven simulation of one shuffle schedule on a machine.
//!
//! The total data is split into N² equal pieces. At every moment each
//! consumer has at most one active flow: moving its state (migration with
//! copy, when the socket it runs on changes) or reading its current piece
//! from the producer's socket into the socket it runs on
//! ([`numakit_shuffle::Access::run_on`]). Rates come from max-min fair
//! sharing ([`crate::fairshare`]); time advances to the next completion, and
//! rates are recomputed. Tight: a consumer that finished step k waits until
//! every consumer has; loose: it starts step k+1 at once. The bandwidth is
//! the total bytes (state copies excluded) over the simulated time.
//!
//! Two costs tell tight from loose, both assumed, not fitted (Li reports
//! only that the ring was "slightly faster" tight and migration loose
//! "lower ... with significantly higher variability" from convoys, with
//! no figures to fit):
//!
//! * **Jitter.** A real machine does not finish equal pieces in equal
//!   times (interrupts, clock changes, misses): each consumer's piece at
//!   each step is `1 ± jitter` of the nominal, drawn from the seed
//!   ([`SimOptions::jitter`], 5% by default). Tight, every step then lasts
//!   as long as its slowest consumer; loose, consumers drift into
//!   different steps, and when migrating more of them than a socket has
//!   hardware threads can land on one socket and share it (a convoy).
//! * **The barrier itself** (tight): a combining tree, one cache-line
//!   transfer up and one down per level, `2 ceil(log2 N)` remote latencies
//!   ([`SimOptions::barrier_ns`]).
//!
//! It does not model the scheduler's cost of moving a thread, caches, or
//! the computation on the data: Li's consumers only sum their pieces, so
//! the read is the work.

use numakit_shuffle::{Layout, Schedule, Strategy, SyncMode};
use numakit_topology::Topology;
use serde::Serialize;

use crate::calibration::Calibration;
use crate::error::SimError;
use crate::fairshare::{Allocation, Limit};
use crate::machine::{Machine, ReadTable};
use crate::routes::Routes;

/// What to shuffle.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SimOptions {
    /// Bytes shuffled in all (Li §4.1: 1.6 billion 64-bit integers).
    pub total_bytes: f64,
    /// Bytes of consumer state copied at each move of migration with copy
    /// (Li §4.3: small aggregation states favour migration).
    pub state_bytes: f64,
    /// Seed of the random schedule (and of the jitter).
    pub seed: u64,
    /// How far a consumer's piece may stray from the nominal size, as a
    /// share (uniform in `1 ± jitter`); 0 makes every step alike.
    pub jitter: f64,
    /// Cost of one tight barrier in ns; `None`: `2 ceil(log2 N)` times the
    /// machine's largest remote latency (local plus one hop), or
    /// [`DEFAULT_TRANSFER_NS`] per transfer when the machine gives none.
    pub barrier_ns: Option<f64>,
}

/// Jitter when none is given: 5% (assumed, see the module docs).
pub const DEFAULT_JITTER: f64 = 0.05;

/// One cache-line transfer between sockets when the machine describes no
/// latency, in ns.
pub const DEFAULT_TRANSFER_NS: f64 = 200.0;

impl Default for SimOptions {
    fn default() -> Self {
        Self {
            total_bytes: 1.6e9 * 8.0,
            state_bytes: (1u64 << 20) as f64,
            seed: 1,
            jitter: DEFAULT_JITTER,
            barrier_ns: None,
        }
    }
}

/// How busy one resource was over the whole shuffle.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResourceUsage {
    /// `memory of node 0` or `link 1->2`.
    pub name: String,
    /// The resource's raw capacity in GB/s (a link's includes room for snoop responses).
    pub capacity_gbs: f64,
    /// Mean load / capacity.
    pub utilization: f64,
    /// Share of the load that was snoop traffic.
    pub coherence_share: f64,
}

/// The outcome of one simulated shuffle.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SimResult {
    /// The machine's name ([`Machine::name`]).
    pub machine: String,
    /// The schedule's strategy.
    pub strategy: Strategy,
    /// Tight or loose.
    pub sync: SyncMode,
    /// The schedule's layout (sockets, threads per socket).
    pub layout: Layout,
    /// Bytes shuffled ([`SimOptions::total_bytes`]; state copies not counted).
    pub total_bytes: f64,
    /// Shuffle bandwidth, 1e9 bytes per second.
    pub gbs: f64,
    /// Simulated time until the last consumer finished, in seconds.
    pub seconds: f64,
    /// What limited most of the bytes: `memory of node 0`, `link 1->2`,
    /// `memory of 4 nodes`, `memory of one node at a time (4 nodes in turn)`,
    /// `12 links (coherence 40% of their traffic)`,
    /// `per-thread limit`.
    pub bottleneck: String,
    /// Share of the bytes whose rate that bottleneck set.
    pub bottleneck_share: f64,
    /// Rate recomputations.
    pub events: usize,
    /// Seconds spent in barriers themselves (tight; 0 loose).
    pub barrier_seconds: f64,
    /// Resources that carried anything.
    pub resources: Vec<ResourceUsage>,
}

/// Simulates `schedule` on `topo`.
pub fn simulate(
    topo: &Topology,
    schedule: &Schedule,
    sync: SyncMode,
    opts: &SimOptions,
    cal: &Calibration,
) -> Result<SimResult, SimError> {
    simulate_on(&Machine::new(topo)?, schedule, sync, opts, cal)
}

/// Simulates `schedule` on an already modelled machine.
pub fn simulate_on(
    machine: &Machine,
    schedule: &Schedule,
    sync: SyncMode,
    opts: &SimOptions,
    cal: &Calibration,
) -> Result<SimResult, SimError> {
    check_inputs(machine, schedule, opts, cal)?;
    let n = schedule.layout.threads();
    let copies = schedule.strategy == Strategy::MigrationCopy;
    let mut run = Run {
        schedule,
        table: ReadTable::new(machine, cal),
        sync,
        piece: opts.total_bytes / (n * n) as f64,
        jitter: opts.jitter,
        seed: opts.seed,
        barrier: barrier_seconds(machine, n, opts),
        barrier_total: 0.0,
        state: if copies { opts.state_bytes } else { 0.0 },
        consumers: (0..n)
            .map(|c| Consumer {
                step: 0,
                at: schedule.layout.socket_of(c),
                phase: Phase::Done,
            })
            .collect(),
        routes: Routes::new(schedule.layout.sockets),
        done: 0,
        now: 0.0,
        events: 0,
        stats: Stats::new(machine),
    };
    run.run()?;
    Ok(run.result(machine, opts))
}

fn check_inputs(
    machine: &Machine,
    schedule: &Schedule,
    opts: &SimOptions,
    cal: &Calibration,
) -> Result<(), SimError> {
    cal.validate()?;
    if !(opts.total_bytes.is_finite() && opts.total_bytes > 0.0) {
        return Err(SimError::BadOption(format!(
            "total bytes must be positive, got {}",
            opts.total_bytes
        )));
    }
    if !(opts.state_bytes.is_finite() && opts.state_bytes >= 0.0) {
        return Err(SimError::BadOption(format!(
            "state bytes must be >= 0, got {}",
            opts.state_bytes
        )));
    }
    if !(opts.jitter.is_finite() && (0.0..1.0).contains(&opts.jitter)) {
        return Err(SimError::BadOption(format!(
            "jitter must be in [0, 1), got {}",
            opts.jitter
        )));
    }
    if opts
        .barrier_ns
        .is_some_and(|b| !(b.is_finite() && b >= 0.0))
    {
        return Err(SimError::BadOption(format!(
            "barrier cost must be >= 0 ns, got {:?}",
            opts.barrier_ns
        )));
    }
    if schedule.layout.threads_per_socket == 0 {
        return Err(SimError::BadOption(
            "at least one thread per socket".to_string(),
        ));
    }
    if schedule.layout.sockets != machine.socket_count() {
        return Err(SimError::LayoutMismatch {
            schedule: schedule.layout.sockets,
            machine: machine.socket_count(),
        });
    }
    schedule.validate().map_err(SimError::InvalidSchedule)
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    /// Copying state to the socket it runs on (migration with copy).
    Moving,
    /// Reading its piece of the current step.
    Reading,
    /// Finished its step; waiting at the barrier (tight).
    Waiting,
    Done,
}

#[derive(Clone, Copy, Debug)]
struct Consumer {
    step: usize,
    /// The socket it runs on.
    at: usize,
    phase: Phase,
}

/// Integrals over the run, in GB (GB/s × s).
struct Stats {
    /// Bytes whose rate each resource set; the last slot is the thread cap.
    bound: Vec<f64>,
    data: Vec<f64>,
    snoop: Vec<f64>,
    /// Memory controllers (the first resources).
    memories: usize,
    /// Most memory controllers that limited flows at the same moment.
    memories_at_once: usize,
}

impl Stats {
    fn new(machine: &Machine) -> Self {
        let resources = machine.resource_count();
        Self {
            bound: vec![0.0; resources + 1],
            data: vec![0.0; resources],
            snoop: vec![0.0; resources],
            memories: machine.nodes.len(),
            memories_at_once: 0,
        }
    }
}

struct Run<'a> {
    schedule: &'a Schedule,
    table: ReadTable,
    sync: SyncMode,
    piece: f64,
    jitter: f64,
    seed: u64,
    /// Seconds one tight barrier costs.
    barrier: f64,
    barrier_total: f64,
    state: f64,
    consumers: Vec<Consumer>,
    /// The active flows (moving or reading consumers).
    routes: Routes,
    /// Consumers past their last step.
    done: usize,
    now: f64,
    events: usize,
    stats: Stats,
}

/// A completion within this relative slack of the earliest one happens at
/// the same event (equal pieces at equal rates finish together).
const SAME_TIME: f64 = 1e-9;

impl Run<'_> {
    fn run(&mut self) -> Result<(), SimError> {
        for c in 0..self.consumers.len() {
            self.start_step(c, 0);
        }
        let limit = 4 * self.consumers.len().pow(2) + 16;
        while self.done < self.consumers.len() {
            self.events += 1;
            if self.events > limit {
                return Err(SimError::Stalled {
                    events: self.events,
                    seconds: self.now,
                });
            }
            self.advance()?;
            self.release_barrier();
        }
        Ok(())
    }

    /// Shares the machine among the active flows, advances to the next
    /// completion and completes every phase that ends then.
    fn advance(&mut self) -> Result<(), SimError> {
        let flows = self.routes.flows();
        let alloc = self.table.share(&flows);
        let rates: Vec<f64> = alloc.iter().map(|a| a.rate).collect();
        let dt = self.routes.next_finish(&rates);
        if !(dt.is_finite() && dt >= 0.0) {
            return Err(SimError::Stalled {
                events: self.events,
                seconds: self.now,
            });
        }
        self.record(&flows, &alloc, dt);
        self.now += dt;
        for c in self.routes.advance(&rates, dt, SAME_TIME) {
            self.finish_phase(c);
        }
        Ok(())
    }

    fn record(&mut self, flows: &[((usize, usize), usize)], alloc: &[Allocation], dt: f64) {
        let cap_slot = self.stats.bound.len() - 1;
        let mut memories: Vec<usize> = alloc
            .iter()
            .filter_map(|a| match a.limit {
                Limit::Resource(r) if r < self.stats.memories => Some(r),
                _ => None,
            })
            .collect();
        memories.sort_unstable();
        memories.dedup();
        self.stats.memories_at_once = self.stats.memories_at_once.max(memories.len());
        for (&((src, dst), count), a) in flows.iter().zip(alloc) {
            let gb = count as f64 * a.rate * dt;
            let slot = match a.limit {
                Limit::Cap => cap_slot,
                Limit::Resource(r) => r,
            };
            self.stats.bound[slot] += gb;
            for u in self.table.uses(src, dst) {
                self.stats.data[u.resource] += gb * u.data;
                self.stats.snoop[u.resource] += gb * u.snoop;
            }
        }
    }

    fn finish_phase(&mut self, c: usize) {
        let con = self.consumers[c];
        match con.phase {
            Phase::Moving => self.read(c),
            Phase::Reading if self.sync == SyncMode::Tight => {
                self.consumers[c].phase = Phase::Waiting;
            }
            Phase::Reading => self.start_step(c, con.step + 1),
            Phase::Waiting | Phase::Done => {}
        }
    }

    /// Consumer `c` begins step `k`: moves (with its state, when copying)
    /// to the socket it runs on, then reads.
    fn start_step(&mut self, c: usize, k: usize) {
        let Some(access) = self.schedule.steps.get(k).and_then(|s| s.get(c)) else {
            self.consumers[c].phase = Phase::Done;
            self.done += 1;
            return;
        };
        let con = &mut self.consumers[c];
        let from = std::mem::replace(&mut con.at, access.run_on);
        con.step = k;
        if self.state > 0.0 && from != access.run_on {
            con.phase = Phase::Moving;
            self.routes.join(c, (from, access.run_on), self.state);
        } else {
            self.read(c);
        }
    }

    /// Consumer `c` reads its piece of its current step from the producer's
    /// socket.
    fn read(&mut self, c: usize) {
        let con = self.consumers[c];
        let producer = self.schedule.steps[con.step][c].producer;
        let source = self.schedule.layout.socket_of(producer);
        self.consumers[c].phase = Phase::Reading;
        let piece = self.piece_of(c, con.step);
        self.routes.join(c, (source, con.at), piece);
    }

    /// Consumer `c`'s piece at step `k`: the nominal size, `1 ± jitter`.
    fn piece_of(&self, c: usize, k: usize) -> f64 {
        let h = splitmix64(self.seed ^ splitmix64(((c as u64) << 32) ^ k as u64));
        let u = (h >> 11) as f64 / (1u64 << 53) as f64;
        self.piece * (1.0 + self.jitter * (2.0 * u - 1.0))
    }

    /// Tight: once nobody is moving or reading, everyone waiting moves on.
    fn release_barrier(&mut self) {
        if self.sync != SyncMode::Tight || self.routes.any() {
            return;
        }
        if self.consumers.iter().any(|c| c.phase == Phase::Waiting) {
            self.now += self.barrier;
            self.barrier_total += self.barrier;
        }
        for c in 0..self.consumers.len() {
            if self.consumers[c].phase == Phase::Waiting {
                let next = self.consumers[c].step + 1;
                self.start_step(c, next);
            }
        }
    }

    fn result(&self, machine: &Machine, opts: &SimOptions) -> SimResult {
        let capacity = &self.table.capacity;
        let resources = (0..capacity.len())
            .filter(|&r| self.stats.data[r] + self.stats.snoop[r] > 0.0)
            .map(|r| {
                let load = self.stats.data[r] + self.stats.snoop[r];
                ResourceUsage {
                    name: machine.resource_name(r),
                    capacity_gbs: capacity[r],
                    utilization: load / (capacity[r] * self.now),
                    coherence_share: self.stats.snoop[r] / load,
                }
            })
            .collect();
        let (bottleneck, bottleneck_share) = name_bottleneck(machine, &self.stats);
        SimResult {
            machine: machine.name.clone(),
            strategy: self.schedule.strategy,
            sync: self.sync,
            layout: self.schedule.layout,
            total_bytes: opts.total_bytes,
            gbs: opts.total_bytes / self.now / 1e9,
            seconds: self.now,
            bottleneck,
            bottleneck_share,
            events: self.events,
            barrier_seconds: self.barrier_total,
            resources,
        }
    }
}

/// One tight barrier on `machine` with `threads` consumers, in seconds.
fn barrier_seconds(machine: &Machine, threads: usize, opts: &SimOptions) -> f64 {
    let levels = (threads.max(2) as f64).log2().ceil();
    let ns = opts.barrier_ns.unwrap_or_else(|| {
        let local = (0..machine.socket_count())
            .filter_map(|s| machine.socket(s).memory_latency_ns)
            .fold(0.0, f64::max);
        let hop = machine
            .links
            .iter()
            .filter_map(|l| l.latency_ns)
            .fold(0.0, f64::max);
        let transfer = if local > 0.0 {
            local + hop
        } else {
            DEFAULT_TRANSFER_NS
        };
        2.0 * levels * transfer
    });
    ns * 1e-9
}

/// A 64-bit mix (SplitMix64's finalizer), for the jitter.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The kind of resource (memory, links, thread cap) that set the rate of
/// most bytes, named by its dominant member when one holds half of them.
fn name_bottleneck(machine: &Machine, stats: &Stats) -> (String, f64) {
    let total: f64 = stats.bound.iter().sum();
    let cap = stats.bound[stats.bound.len() - 1];
    let resources = stats.bound.len() - 1;
    let kind = |memory: bool| (0..resources).filter(move |&r| machine.is_memory(r) == memory);
    let memory: f64 = kind(true).map(|r| stats.bound[r]).sum();
    let links: f64 = kind(false).map(|r| stats.bound[r]).sum();
    if total <= 0.0 {
        return ("nothing".to_string(), 0.0);
    }
    if cap >= memory && cap >= links {
        return ("per-thread limit".to_string(), cap / total);
    }
    let is_memory = memory >= links;
    let group: Vec<usize> = kind(is_memory).filter(|&r| stats.bound[r] > 0.0).collect();
    let sum = if is_memory { memory } else { links };
    let top = group
        .iter()
        .copied()
        .max_by(|&a, &b| stats.bound[a].total_cmp(&stats.bound[b]));
    let mut name = match top {
        Some(r) if stats.bound[r] >= 0.5 * sum => machine.resource_name(r),
        _ if is_memory && stats.memories_at_once == 1 => {
            format!(
                "memory of one node at a time ({} nodes in turn)",
                group.len()
            )
        }
        _ if is_memory => format!("memory of {} nodes", group.len()),
        _ => format!("{} links", group.len()),
    };
    if !is_memory {
        let snoop: f64 = group.iter().map(|&r| stats.snoop[r]).sum();
        let data: f64 = group.iter().map(|&r| stats.data[r]).sum();
        let share = snoop / (snoop + data).max(f64::MIN_POSITIVE);
        let whose = if group.len() == 1 { "its" } else { "their" };
        name.push_str(&format!(
            " (coherence {:.0}% of {whose} traffic)",
            100.0 * share
        ));
    }
    (name, sum / total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use numakit_topology::presets;

    /// Every step alike: no jitter, free barriers (the flow model alone).
    fn ideal() -> SimOptions {
        SimOptions {
            jitter: 0.0,
            barrier_ns: Some(0.0),
            ..SimOptions::default()
        }
    }

    fn run_with(
        preset: &str,
        per: usize,
        (strategy, sync): (Strategy, SyncMode),
        opts: &SimOptions,
    ) -> SimResult {
        let topo = presets::topology(preset).unwrap();
        let sockets = topo.compute_nodes().len();
        let schedule = Schedule::build(Layout::new(sockets, per), strategy, 1);
        simulate(&topo, &schedule, sync, opts, &Calibration::li_nehalem()).unwrap()
    }

    fn run(preset: &str, per: usize, strategy: Strategy, sync: SyncMode) -> SimResult {
        run_with(preset, per, (strategy, sync), &ideal())
    }

    #[test]
    fn jitter_makes_tight_steps_wait_for_the_slowest() {
        let ring = (Strategy::Ring, SyncMode::Tight);
        let smooth = run_with("nehalem-ex-4s", 8, ring, &ideal());
        let jittered = SimOptions {
            barrier_ns: Some(0.0),
            ..SimOptions::default()
        };
        let rough = run_with("nehalem-ex-4s", 8, ring, &jittered);
        assert!(rough.gbs < smooth.gbs, "{} !< {}", rough.gbs, smooth.gbs);
        // Each step lasts as long as its largest piece: at most 5% more.
        assert!(rough.gbs > smooth.gbs / (1.0 + DEFAULT_JITTER) - 1e-9);
        // Li: the ring is slightly faster tight than loose.
        let loose = run_with(
            "nehalem-ex-4s",
            8,
            (Strategy::Ring, SyncMode::Loose),
            &SimOptions::default(),
        );
        let tight = run_with("nehalem-ex-4s", 8, ring, &SimOptions::default());
        assert!(tight.gbs > loose.gbs, "{} !> {}", tight.gbs, loose.gbs);
    }

    #[test]
    fn tight_barriers_cost_their_time_and_loose_none() {
        let costly = SimOptions {
            jitter: 0.0,
            barrier_ns: Some(1e6),
            ..SimOptions::default()
        };
        let ring = |sync| run_with("nehalem-ex-4s", 2, (Strategy::Ring, sync), &costly);
        let (tight, loose) = (ring(SyncMode::Tight), ring(SyncMode::Loose));
        // 8 consumers, 8 steps: one barrier after each, 1 ms apiece.
        assert!(
            (tight.barrier_seconds - 8e-3).abs() < 1e-12,
            "{}",
            tight.barrier_seconds
        );
        assert_eq!(loose.barrier_seconds, 0.0);
        assert!((tight.seconds - loose.seconds - 8e-3).abs() < 1e-6 * tight.seconds);
        // By default a barrier is a few remote latencies: negligible here.
        let default = run_with(
            "nehalem-ex-4s",
            8,
            (Strategy::Ring, SyncMode::Tight),
            &SimOptions::default(),
        );
        assert!(default.barrier_seconds > 0.0 && default.barrier_seconds < 1e-3 * default.seconds);
    }

    #[test]
    fn loose_migration_forms_convoys_when_threads_drift() {
        // One consumer per hardware thread: drifting consumers that land
        // on one socket share its threads.
        let opts = SimOptions {
            jitter: 0.3,
            ..SimOptions::default()
        };
        let loose = run_with(
            "nehalem-ex-4s",
            16,
            (Strategy::Migration, SyncMode::Loose),
            &opts,
        );
        let smooth = run_with(
            "nehalem-ex-4s",
            16,
            (Strategy::Migration, SyncMode::Loose),
            &ideal(),
        );
        assert!(loose.gbs < smooth.gbs, "{} !< {}", loose.gbs, smooth.gbs);
    }

    #[test]
    fn bad_jitter_and_barrier_costs_are_refused() {
        let topo = presets::topology("nehalem-ex-4s").unwrap();
        let schedule = Schedule::build(Layout::new(4, 1), Strategy::Ring, 1);
        let cal = Calibration::li_nehalem();
        for opts in [
            SimOptions {
                jitter: 1.0,
                ..SimOptions::default()
            },
            SimOptions {
                jitter: f64::NAN,
                ..SimOptions::default()
            },
            SimOptions {
                barrier_ns: Some(-1.0),
                ..SimOptions::default()
            },
        ] {
            let got = simulate(&topo, &schedule, SyncMode::Tight, &opts, &cal);
            assert!(matches!(got, Err(SimError::BadOption(_))), "{opts:?}");
        }
    }

    #[test]
    fn one_thread_per_socket_reads_at_the_thread_cap_locally() {
        let r = run("nehalem-ex-4s", 1, Strategy::Migration, SyncMode::Tight);
        let cap = Calibration::li_nehalem().per_thread_gbs;
        assert!((r.gbs - 4.0 * cap).abs() < 1e-6, "{}", r.gbs);
        assert_eq!(r.bottleneck, "per-thread limit");
        assert!((r.seconds * r.gbs * 1e9 - r.total_bytes).abs() < 1.0);
    }

    #[test]
    fn naive_is_held_by_one_memory_at_a_time() {
        let r = run("nehalem-ex-4s", 8, Strategy::Naive, SyncMode::Tight);
        assert!((r.gbs - 24.7).abs() < 0.1, "{}", r.gbs);
        assert_eq!(
            r.bottleneck,
            "memory of one node at a time (4 nodes in turn)"
        );
        let m = run("nehalem-ex-4s", 2, Strategy::Migration, SyncMode::Tight);
        assert_eq!(m.bottleneck, "per-thread limit");
    }

    #[test]
    fn copying_state_costs_time_and_migration_without_state_does_not() {
        let plain = run("nehalem-ex-4s", 4, Strategy::Migration, SyncMode::Tight);
        let copy = run("nehalem-ex-4s", 4, Strategy::MigrationCopy, SyncMode::Tight);
        assert!(copy.gbs < plain.gbs, "{} !< {}", copy.gbs, plain.gbs);
        let topo = presets::topology("nehalem-ex-4s").unwrap();
        let schedule = Schedule::build(Layout::new(4, 4), Strategy::MigrationCopy, 1);
        let none = SimOptions {
            state_bytes: 0.0,
            ..ideal()
        };
        let cal = Calibration::li_nehalem();
        let free = simulate(&topo, &schedule, SyncMode::Tight, &none, &cal).unwrap();
        assert!((free.gbs - plain.gbs).abs() < 1e-6 * plain.gbs);
    }

    #[test]
    fn loose_and_tight_agree_when_every_step_looks_alike() {
        let tight = run("nehalem-ex-4s", 8, Strategy::Ring, SyncMode::Tight);
        let loose = run("nehalem-ex-4s", 8, Strategy::Ring, SyncMode::Loose);
        assert!((tight.gbs - loose.gbs).abs() < 0.01 * tight.gbs);
    }

    #[test]
    fn refuses_schedules_that_do_not_fit() {
        let topo = presets::topology("nehalem-ex-4s").unwrap();
        let cal = Calibration::li_nehalem();
        let opts = SimOptions::default();
        let wrong = Schedule::build(Layout::new(2, 4), Strategy::Ring, 1);
        let err = simulate(&topo, &wrong, SyncMode::Tight, &opts, &cal).unwrap_err();
        assert_eq!(
            err,
            SimError::LayoutMismatch {
                schedule: 2,
                machine: 4
            }
        );
        let mut broken = Schedule::build(Layout::new(4, 1), Strategy::Ring, 1);
        broken.steps[1][0] = broken.steps[0][0];
        let err = simulate(&topo, &broken, SyncMode::Tight, &opts, &cal).unwrap_err();
        assert!(matches!(err, SimError::InvalidSchedule(_)));
        let zero = SimOptions {
            total_bytes: 0.0,
            ..opts
        };
        let ok = Schedule::build(Layout::new(4, 1), Strategy::Ring, 1);
        assert!(matches!(
            simulate(&topo, &ok, SyncMode::Tight, &zero, &cal),
            Err(SimError::BadOption(_))
        ));
    }
}
