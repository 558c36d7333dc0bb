//! # numakit-sim
//!
//! A flow-level interconnect simulator that predicts the bandwidth of each
//! shuffle schedule ([`numakit_shuffle::Schedule`]) on a described machine,
//! and the cost model that recommends a schedule ([`plan`]). The machines
//! we run on have one node; this is how schedules are judged on the papers'
//! machines.
//!
//! ## The model
//!
//! * **Resources.** One memory controller per node (capacity
//!   `memory_bandwidth_gbs`) and two directed links per described link.
//!   Routes are shortest in hops, ties broken towards low node ids.
//! * **Flows.** A consumer on socket B reading memory of socket A loads A's
//!   memory controller and every directed link of the route A->B. One thread
//!   reads at most `per_thread_gbs`; threads beyond a socket's hardware
//!   threads share them.
//! * **Coherence (source snooping, Li §2, §4.1.1).** Reading r GB/s on B
//!   also puts `a·r` on the routes from B to every other socket (snoop
//!   requests) and `a·r` on the routes back (responses); a link shared by
//!   several of those routes carries a read's snoops once (a broadcast
//!   tree), which Table 1's local read on the 4-link ring requires.
//! * **Sharing.** Max-min fair, by progressive filling with coefficients
//!   ([`fairshare`]). A link's raw capacity is `described × (1 + a)`, so a
//!   single remote flow gets the described bandwidth (its own responses
//!   ride its data link).
//! * **Time.** Event-driven over the schedule's steps, tight or loose
//!   ([`simulate()`]).
//!
//! ## Calibration: what was fitted and what was chosen ([`calibration`])
//!
//! *Fitted*, on Li's Table 1 and §2 only: `a = 0.285` for requests and
//! responses, `per_thread_gbs = 24.7 / 12`. The six measurements are
//! reproduced within 3% (24.7, 10.9, 10.9, 5.45 vs 5.3, 62.0 vs 61, 98.3
//! vs 99; the test `the_constants_reproduce_every_measurement_within_three_percent`
//! holds that bound).
//!
//! *Chosen*, with a figure in view (not fitted, but not blind either):
//! * the default layout of every hardware thread, because Figure 6
//!   reports each method's maximum on 2-way SMT machines;
//! * [`Calibration::latency_scaled_remote_cap`]: off for the shuffle's
//!   predictions (Figures 6 and 7), on for the aggregation's (Figure 10),
//!   where a migrating thread's table misses are remote.
//!
//! *Where it applies*: the snoop coefficients describe source snooping, so
//! machines described with `"coherence": "directory"` (or without the
//! field) get predictions marked uncalibrated in every report
//! ([`ModelFit`]).
//!
//! ## Predictions against Li et al. (CIDR 2013), Figure 6 and 7
//!
//! The default layout is every hardware thread (Figure 6 reports the
//! *maximum* bandwidth of each method; the X7560 has 2-way SMT):
//!
//! | machine, threads | schedule | predicted | paper |
//! | --- | --- | --- | --- |
//! | nehalem-ex-4s, 64 | naive | 24.6 (memory of one node at a time) | 22 |
//! | nehalem-ex-4s, 64 | random (tight) | 57.2 | between naive and ring |
//! | nehalem-ex-4s, 64 | ring (tight) | 67.0 (links, 70% coherence) | 70 |
//! | nehalem-ex-4s, 64 | ring (loose) | 64.0 | slightly below tight |
//! | nehalem-ex-4s, 64 | migration (tight) | 95.5 (links, all coherence) | 94 |
//! | nehalem-ex-4s, 64 | migration (loose) | 96.8 | lower, more variable |
//! | nehalem-ex-8s, 128 | ring (tight) | 41.4 (links, mostly coherence) | below 4s |
//! | nehalem-ex-8s, 128 | migration (tight) | 55.9 (links, all coherence) | about 94 |
//!
//! Tight and loose differ by the assumed jitter of each piece's work and
//! the barrier's own cost ([`mod@simulate`]'s docs); without them (jitter 0,
//! free barriers) they predict the same, and the figures above were 24.7,
//! 57.9, 68.3, 98.3, 41.7 and 56.3. With one thread per core (32 on four
//! sockets, the Figure 7 sweep) the per-thread cap of §2 binds: ring and
//! migration both at most 65.9 (62.9 tight with the jitter).
//!
//! **Goals missed, deliberately not tuned away:**
//!
//! * Migration on eight sockets (56 vs about 94). With the coherence
//!   coefficient of four sockets, broadcast snoops to 7 sockets, 4 of them 2
//!   hops away on the assumed wiring, saturate the slower cross-chassis
//!   links. Li names this effect but reports a smaller one. The figure is
//!   the bound of the chassis cut, `8 × 7.8 (1 + a) / 5a`: every cross link
//!   carries one socket's snoop requests and four sockets' responses. It is
//!   not an artefact of the assumed wiring: the plain cube gives no more,
//!   nor does any tie-break of the shortest routes on either (all 2^16 on
//!   the twisted cube: at most 56.3), and cross links as fast as the others
//!   move the bottleneck into the chassis at about 65. The paper's 94 needs
//!   a snoop coefficient of about 0.153, half the 4-socket fit; the seeds
//!   give nothing to calibrate that on (test
//!   `eight_socket_migration_is_bound_by_the_cut`).
//! * The Figure 7 knee of the ring (about 20 threads in the paper) comes
//!   at 32 threads here, and ring and migration rise together up to it:
//!   §2's "12 threads to reach 24.7 GB/s" gives 2.06 GB/s per thread, while
//!   Figure 7 implies ~2.9 GB/s per thread at 8 threads per socket. The
//!   paper's two statements disagree under any per-thread cap; see the test
//!   `what_if_the_thread_cap_came_from_figure_7`.
//!
//! It does not model caches, prefetchers, core pipelines, DRAM banks, the
//! cost of moving a thread, nor home snooping or directories; barriers and
//! the drift of loose consumers are modelled with assumed, unfitted costs.
//!
//! A discovered machine has no bandwidths or links; [`assume`] fills them
//! from Li's Nehalem-EX figures and the SLIT distances, and lists what it
//! assumed, so that the operators can weigh schedules on any machine (the
//! group-by's automatic choice does) and say how little the figures mean.
//!
//! ## Aggregation: shuffling vs thread migration (Li §4.3, Figure 10)
//!
//! [`aggregation`] runs the same schedules with a group-by's hash tables
//! added: table misses beyond a thread's share of the cache (from the
//! preset), local when shuffling, remote when migrating without a copy,
//! and the table copied at every move with a copy. One thread per core,
//! 1.6 billion 16-byte rows, per-thread caps scaled by latency:
//!
//! | machine | ring overtakes migration at | ring overtakes migration & copy at | Li |
//! | --- | --- | --- | --- |
//! | nehalem-ex-4s, 32 partitions | 203K keys per partition | 193K | about 512K |
//! | nehalem-ex-8s, 64 partitions | 79K | 80K | about 512K |
//!
//! Below them migration wins by Figure 6's margin (1.23x and 1.34x at 1K
//! keys). The crossovers sit where tables outgrow a thread's 3 MiB of L3:
//! beyond it migration's misses are remote. Missed, not tuned away: on four
//! fully connected sockets large tables leave the ring and migration tied
//! (within 2%; Li measured the ring ahead), because both are held by the
//! same memory controllers, which serve the same misses and write-backs,
//! and the links keep room; the eight-socket crossover comes early because
//! each step's cold first touches of the table weigh more against a piece
//! of 1.6e9 / 64² rows (about 200K with 4x the data).

// No unsafe code here: what needs it (syscalls, raw buffers) lives in the
// placement and pool crates behind safe wrappers.
#![forbid(unsafe_code)]

pub mod aggregation;
pub mod assume;
pub mod calibration;
pub mod error;
pub mod fairshare;
pub mod machine;
pub mod predict;
pub mod report;
mod routes;
pub mod scenarios;
pub mod simulate;

pub use aggregation::{AggOptions, AggPoint, AggReport};
pub use calibration::{Calibration, ModelFit};
pub use error::SimError;
pub use machine::Machine;
pub use predict::{
    plan, plan_from_report, predict_machine, predict_machine_with, predict_schedules,
    MachineReport, Recommendation,
};
pub use report::render_report;
pub use scenarios::{check_scenarios, fit_li_nehalem, ScenarioCheck};
pub use simulate::{simulate, simulate_on, ResourceUsage, SimOptions, SimResult};
