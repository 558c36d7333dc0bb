//! Li et al.'s six hardware measurements (Table 1 and §2) replayed as
//! steady-state flows on the described machines (`nehalem-ex-4s-4link` for
//! Table 1, `nehalem-ex-4s` for the 61 vs 99 GB/s benchmark of §2), so that
//! a [`Calibration`] can be checked against them and [`fit_li_nehalem`]
//! can re-derive the constants by least squares on the log ratio
//! predicted/measured. It replays; it does not simulate schedules.

use numakit_topology::{presets, NodeId};
use serde::Serialize;

use crate::calibration::Calibration;
use crate::error::SimError;
use crate::machine::{Machine, ReadTable};

/// `threads` threads on node `on` read the memory of node `from`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Reads {
    /// The node whose memory is read.
    pub from: NodeId,
    /// The node the reading threads run on.
    pub on: NodeId,
    /// How many threads read (each one flow).
    pub threads: usize,
    /// Whether this flow's bandwidth is part of the measured figure.
    pub measured: bool,
}

/// One measurement of Li et al. and the flows that produced it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Scenario {
    /// Which measurement of the paper (`Table 1 flow 2: 1 hop, 12 threads`).
    pub name: &'static str,
    /// The machine preset the flows run on.
    pub preset: &'static str,
    /// The concurrent flows, measured or background.
    pub reads: Vec<Reads>,
    /// Aggregate GB/s of the measured flows.
    pub measured_gbs: f64,
}

/// A scenario's prediction next to its measurement.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScenarioCheck {
    /// The scenario's name.
    pub name: &'static str,
    /// What Li et al. measured, GB/s.
    pub measured_gbs: f64,
    /// What the model predicts for the measured flows, GB/s.
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
    fn the_constants_reproduce_every_measurement_within_three_percent() {
        // The crate docs promise 3%: the worst is Table 1's 5.45 vs 5.3.
        for c in check_scenarios(&Calibration::li_nehalem()).unwrap() {
            assert!(
                c.relative_error.abs() <= 0.03,
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
}
