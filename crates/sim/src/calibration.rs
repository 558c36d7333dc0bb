//! The model's constants and where they come from: Li et al.'s hardware
//! measurements on Nehalem-EX (Table 1 and §2), and nothing else.
//!
//! Six measured scenarios are replayed as steady-state flows on the
//! described machines (`nehalem-ex-4s-4link` for Table 1, `nehalem-ex-4s`
//! for the 61 vs 99 GB/s benchmark of §2). [`fit_li_nehalem`] re-derives the
//! constants by least squares on the log ratio predicted/measured;
//! [`Calibration::li_nehalem`] holds the rounded result.
//!
//! The derivation, worked by hand (a = snoop coefficient, requests and
//! responses alike; a snoop crosses each link of its broadcast tree once):
//!
//! * One thread reads at most 24.7 / 12 = 2.06 GB/s: §2 says 12 threads are
//!   needed to reach a socket's 24.7 GB/s.
//! * A 1-hop flow alone loads its data link with `r (1 + a)` (its data and
//!   the home's snoop responses), so a link's raw capacity is
//!   `10.9 (1 + a)` and the flow gets the described 10.9 GB/s. A 2-hop flow
//!   on the ring gets the same (Table 1), since node 3's answers cross
//!   3->1->0 once, like its data.
//! * 61 GB/s, 12 threads per socket spread over the 3 remote sockets: each
//!   directed link A->B carries B's data x from A, A's requests for all of
//!   A's reads (3x) and B's responses for all of B's reads (3x):
//!   `x (1 + 6a) = 10.9 (1 + a)` with x = 61/12 = 5.08 gives a = 0.297.
//! * 99 GB/s all local: each link carries `2a × 24.7` against `10.9 (1 + a)`;
//!   at a = 0.297 the links bind just below the memory (95.2 GB/s), so the
//!   least-squares fit over all six settles at a = 0.285 (62.0 and 98.3).
//! * Flow 1 on the ring (local, 24.7 GB/s) is why snoops cross a link once
//!   per read: one request per destination would load the link towards the
//!   2-hop socket twice. Flows 3+4 share link 3->1: 5.45 GB/s each (5.3).
//!
//! What the constants do NOT reproduce (Figure 6/7; see the crate docs): a
//! per-thread cap of 2.06 GB/s limits 32 threads to 65.9 GB/s, while Li's
//! Figure 7 shows 8 threads per socket nearly saturating memory (94 GB/s
//! with migration). Table 1 and §2's numbers fit either cap (all their
//! scenarios use 12 threads); only §2's sentence "we need at least 12 reader
//! threads" sets 2.06. The constants follow §2 as briefed, and are not tuned
//! to Figure 6.

use numakit_topology::{presets, NodeId};
use serde::{Deserialize, Serialize};

use crate::error::SimError;
use crate::machine::{Machine, ReadTable};

/// The constants of the model.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// Snoop request traffic, per GB/s read, on the route from the reader's
    /// socket to each other socket (source snooping broadcasts).
    pub coherence_request: f64,
    /// Snoop response traffic, per GB/s read, on the route from each other
    /// socket back to the reader's socket.
    pub coherence_response: f64,
    /// Most one thread reads, in GB/s, when it has a hardware thread of its own.
    pub per_thread_gbs: f64,
    /// Scale a remote read's per-thread cap by local latency / route latency
    /// (a thread keeps a fixed number of lines in flight). Off in
    /// [`Calibration::li_nehalem`]: it lowers ring (tight) on nehalem-ex-4s
    /// from 65.9 to 53 GB/s (paper: 70) and does not change Figure 7's shape.
    pub latency_scaled_remote_cap: bool,
}

impl Calibration {
    /// The constants fitted on Li et al.'s Nehalem-EX measurements.
    pub fn li_nehalem() -> Self {
        Self {
            // §2: 61 GB/s when 12 threads per socket read the 3 remote
            // sockets (4 per link), against 99 GB/s all local; with requests
            // = responses = a, x (1 + 6a) = 10.9 (1 + a) at x = 61/12 gives
            // 0.297, and the least-squares fit over Table 1 and §2 gives 0.285.
            coherence_request: 0.285,
            // Not separable from the requests by these measurements; taken
            // equal (one answer per snoop, of about the same size).
            coherence_response: 0.285,
            // §2 / Table 1: 12 threads needed for 24.7 GB/s.
            per_thread_gbs: 24.7 / 12.0,
            latency_scaled_remote_cap: false,
        }
    }

    /// Refuses negative or non-finite constants.
    pub fn validate(&self) -> Result<(), SimError> {
        let ok = |x: f64| x.is_finite() && x >= 0.0;
        if !ok(self.coherence_request) || !ok(self.coherence_response) {
            return Err(SimError::BadOption(format!(
                "coherence coefficients must be finite and >= 0, got {} and {}",
                self.coherence_request, self.coherence_response
            )));
        }
        if !(ok(self.per_thread_gbs) && self.per_thread_gbs > 0.0) {
            let why = format!(
                "per_thread_gbs must be positive, got {}",
                self.per_thread_gbs
            );
            return Err(SimError::BadOption(why));
        }
        Ok(())
    }
}

impl Default for Calibration {
    fn default() -> Self {
        Self::li_nehalem()
    }
}

/// `threads` threads on node `on` read the memory of node `from`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Reads {
    pub from: NodeId,
    pub on: NodeId,
    pub threads: usize,
    /// Whether this flow's bandwidth is part of the measured figure.
    pub measured: bool,
}

/// One measurement of Li et al. and the flows that produced it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Scenario {
    pub name: &'static str,
    pub preset: &'static str,
    pub reads: Vec<Reads>,
    /// Aggregate GB/s of the measured flows.
    pub measured_gbs: f64,
}

/// A scenario's prediction next to its measurement.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScenarioCheck {
    pub name: &'static str,
    pub measured_gbs: f64,
    pub predicted_gbs: f64,
    /// predicted / measured - 1.
    pub relative_error: f64,
}

fn reads(from: NodeId, on: NodeId, threads: usize) -> Reads {
    Reads {
        from,
        on,
        threads,
        measured: true,
    }
}

/// Li Table 1 (ring machine; flow 2 = node 0 reads node 1, flow 3 = node 0
/// reads node 3 over 3->1->0, flow 4 = node 1 reads node 3, sharing 3->1;
/// the paper's figure does not name the sockets) and the §2 benchmark.
pub fn li_scenarios() -> Vec<Scenario> {
    let ring = "nehalem-ex-4s-4link";
    let full = "nehalem-ex-4s";
    let pairs = |remote: bool, threads| -> Vec<Reads> {
        (0..4)
            .flat_map(|b| (0..4).map(move |a| (a, b)))
            .filter(|&(a, b)| (a != b) == remote)
            .map(|(a, b)| reads(a, b, threads))
            .collect()
    };
    let cross = Reads {
        measured: false,
        ..reads(3, 1, 12)
    };
    let scenario = |name, preset, reads, measured_gbs| Scenario {
        name,
        preset,
        reads,
        measured_gbs,
    };
    vec![
        scenario(
            "Table 1 flow 1: local read, 12 threads",
            ring,
            vec![reads(0, 0, 12)],
            24.7,
        ),
        scenario(
            "Table 1 flow 2: 1 hop, 12 threads",
            ring,
            vec![reads(1, 0, 12)],
            10.9,
        ),
        scenario(
            "Table 1 flow 3: 2 hops, 12 threads",
            ring,
            vec![reads(3, 0, 12)],
            10.9,
        ),
        scenario(
            "Table 1 flow 3 with cross traffic 4",
            ring,
            vec![reads(3, 0, 12), cross],
            5.3,
        ),
        scenario(
            "Sec. 2: 12 threads/socket read 3 remote sockets",
            full,
            pairs(true, 4),
            61.0,
        ),
        scenario(
            "Sec. 2: 12 threads/socket read locally",
            full,
            pairs(false, 12),
            99.0,
        ),
    ]
}

/// Steady-state aggregate GB/s of a scenario's measured flows.
pub fn predict_scenario(s: &Scenario, cal: &Calibration) -> Result<f64, SimError> {
    let topo = presets::topology(s.preset).map_err(|e| SimError::BadOption(e.to_string()))?;
    let machine = Machine::new(&topo)?;
    predict_on(&machine, s, cal)
}

fn predict_on(machine: &Machine, s: &Scenario, cal: &Calibration) -> Result<f64, SimError> {
    let socket = |id: NodeId| {
        machine
            .socket_of_node(id)
            .ok_or_else(|| SimError::BadOption(format!("{}: node {id} has no CPUs", s.name)))
    };
    let mut flows = Vec::with_capacity(s.reads.len());
    for r in &s.reads {
        flows.push(((socket(r.from)?, socket(r.on)?), r.threads));
    }
    let alloc = ReadTable::new(machine, cal).share(&flows);
    Ok(s.reads
        .iter()
        .zip(&alloc)
        .filter(|(r, _)| r.measured)
        .map(|(r, a)| r.threads as f64 * a.rate)
        .sum())
}

/// Every scenario's prediction under `cal`.
pub fn check_scenarios(cal: &Calibration) -> Result<Vec<ScenarioCheck>, SimError> {
    cal.validate()?;
    li_scenarios()
        .into_iter()
        .map(|s| {
            let predicted_gbs = predict_scenario(&s, cal)?;
            Ok(ScenarioCheck {
                name: s.name,
                measured_gbs: s.measured_gbs,
                predicted_gbs,
                relative_error: predicted_gbs / s.measured_gbs - 1.0,
            })
        })
        .collect()
}

/// Re-derives the constants: the per-thread cap from Table 1's 12 threads,
/// then one coherence coefficient `a` (requests = responses = `a`) by a
/// search over [0, 1] in steps of 0.001 minimising Σ ln²(predicted /
/// measured) over [`li_scenarios`].
///
/// The six measurements do not separate requests from responses: any split
/// with `R + 0.3·A ≈ 0.38` reproduces them (see the tests), so the split is
/// fixed by assumption (every snoop gets one answer of about its size).
pub fn fit_li_nehalem() -> Result<Calibration, SimError> {
    let scenarios = li_scenarios();
    let mut machines = Vec::with_capacity(scenarios.len());
    for s in &scenarios {
        let topo = presets::topology(s.preset).map_err(|e| SimError::BadOption(e.to_string()))?;
        machines.push(Machine::new(&topo)?);
    }
    let base = Calibration {
        per_thread_gbs: 24.7 / 12.0,
        ..Calibration::li_nehalem()
    };
    let with = |a: f64| Calibration {
        coherence_request: a,
        coherence_response: a,
        ..base
    };
    let (mut best, mut best_cost) = (0.0, f64::INFINITY);
    for step in 0..=1000 {
        let a = f64::from(step) / 1000.0;
        let mut cost = 0.0;
        for (s, m) in scenarios.iter().zip(&machines) {
            cost += (predict_on(m, s, &with(a))? / s.measured_gbs).ln().powi(2);
        }
        if cost < best_cost {
            (best, best_cost) = (a, cost);
        }
    }
    Ok(with(best))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_constants_reproduce_every_measurement_within_ten_percent() {
        for c in check_scenarios(&Calibration::li_nehalem()).unwrap() {
            assert!(
                c.relative_error.abs() <= 0.10,
                "{}: predicted {:.2} GB/s, measured {:.2}",
                c.name,
                c.predicted_gbs,
                c.measured_gbs
            );
        }
    }

    #[test]
    fn the_fit_re_derives_the_constants() {
        let fit = fit_li_nehalem().unwrap();
        let cal = Calibration::li_nehalem();
        assert!(
            (fit.coherence_request - cal.coherence_request).abs() < 0.01,
            "{fit:?}"
        );
        assert!(
            (fit.coherence_response - cal.coherence_response).abs() < 0.01,
            "{fit:?}"
        );
        assert!((fit.per_thread_gbs - cal.per_thread_gbs).abs() < 1e-12);
    }

    #[test]
    fn without_coherence_the_remote_benchmark_is_far_off() {
        let none = Calibration {
            coherence_request: 0.0,
            coherence_response: 0.0,
            ..Calibration::li_nehalem()
        };
        let checks = check_scenarios(&none).unwrap();
        let remote = checks.iter().find(|c| c.name.contains("remote")).unwrap();
        assert!(remote.relative_error > 0.5, "{remote:?}");
    }

    #[test]
    fn the_split_between_requests_and_responses_is_not_identified() {
        let requests_only = Calibration {
            coherence_request: 0.38,
            coherence_response: 0.0,
            ..Calibration::li_nehalem()
        };
        for c in check_scenarios(&requests_only).unwrap() {
            assert!(c.relative_error.abs() <= 0.03, "{c:?}");
        }
    }

    #[test]
    fn bad_constants_are_refused() {
        let bad = Calibration {
            per_thread_gbs: 0.0,
            ..Calibration::li_nehalem()
        };
        assert!(matches!(bad.validate(), Err(SimError::BadOption(_))));
        let bad = Calibration {
            coherence_request: f64::NAN,
            ..Calibration::li_nehalem()
        };
        assert!(bad.validate().is_err());
    }
}
