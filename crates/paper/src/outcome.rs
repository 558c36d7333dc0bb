//! What a rerun gives: our figures beside the published ones, and the
//! paper's claim checked on ours.
//!
//! A [`Row`] is one figure (a bandwidth, a time, a speed-up) with the
//! paper's value where the paper gives one (read off its text or tables;
//! values read off a plot say so in the label). A [`Shape`] is the
//! direction the paper found (ring beats naive; migration wins below the
//! crossover), checked on our figures: it holds, fails, or cannot be shown
//! on this machine (one node shows no remote effect), with the reason.
//! Shapes, not timings, are what the tests check.

use serde::Serialize;

/// One figure, ours beside the paper's.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// What it is ("ring (tight), 32 threads").
    pub label: String,
    /// Its unit ("GB/s", "s", "x").
    pub unit: String,
    /// Our figure; `None` where this machine cannot give it.
    pub ours: Option<f64>,
    /// The paper's figure; `None` where the paper gives none.
    pub published: Option<f64>,
}

impl Row {
    /// A row with both figures.
    pub fn new(
        label: impl Into<String>,
        unit: &str,
        ours: Option<f64>,
        published: Option<f64>,
    ) -> Self {
        Self {
            label: label.into(),
            unit: unit.to_string(),
            ours,
            published,
        }
    }

    /// Ours over the paper's, where both are there and the paper's is not 0.
    pub fn ratio(&self) -> Option<f64> {
        match (self.ours, self.published) {
            (Some(ours), Some(paper)) if paper != 0.0 => Some(ours / paper),
            _ => None,
        }
    }
}

/// Whether the paper's claim holds on our figures.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "verdict", content = "detail", rename_all = "kebab-case")]
pub enum Verdict {
    /// It holds; the detail says by how much.
    Holds(String),
    /// It does not hold; the detail says what we saw.
    Fails(String),
    /// This machine cannot show it (one NUMA node, no hardware counters);
    /// the detail says why and where it is shown instead.
    NotShownHere(String),
}

impl Verdict {
    /// A claim that holds when `holds`, with the same detail either way.
    pub fn check(holds: bool, detail: impl Into<String>) -> Self {
        if holds {
            Verdict::Holds(detail.into())
        } else {
            Verdict::Fails(detail.into())
        }
    }

    /// Whether it failed.
    pub fn failed(&self) -> bool {
        matches!(self, Verdict::Fails(_))
    }
}

/// The paper's claim and its verdict on our figures.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Shape {
    /// The claim, in one line ("ring beats naive on every machine").
    pub claim: String,
    /// Whether it holds here.
    #[serde(flatten)]
    pub verdict: Verdict,
}

impl Shape {
    /// A claim and its verdict.
    pub fn new(claim: impl Into<String>, verdict: Verdict) -> Self {
        Self {
            claim: claim.into(),
            verdict,
        }
    }
}

/// What an item's runner gives.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Outcome {
    /// Our figures beside the paper's.
    pub rows: Vec<Row>,
    /// The paper's claims, checked.
    pub shapes: Vec<Shape>,
    /// Anything else worth a line (sizes run, which path ran).
    pub notes: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_needs_both_figures() {
        assert_eq!(
            Row::new("a", "GB/s", Some(35.0), Some(70.0)).ratio(),
            Some(0.5)
        );
        assert_eq!(Row::new("a", "GB/s", None, Some(70.0)).ratio(), None);
        assert_eq!(Row::new("a", "GB/s", Some(1.0), Some(0.0)).ratio(), None);
    }

    #[test]
    fn verdicts_fail_only_when_the_claim_does_not_hold() {
        assert!(Verdict::check(false, "x").failed());
        assert!(!Verdict::check(true, "x").failed());
        assert!(!Verdict::NotShownHere("one node".into()).failed());
    }
}
