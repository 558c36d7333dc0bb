//! Every figure and table of the four papers, and how each is reproduced.
//!
//! The catalog is data: an [`Item`] names its paper, its number and title,
//! how numakit reproduces it ([`Reproduction`]), the commands that produce
//! the same figures by hand, and one line on what differs from the paper's
//! setup (or, for an item that cannot be reproduced, why not). The items'
//! runners live in one module per paper; this module only lists them.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::context::Context;
use crate::error::{PaperError, RunResult};
use crate::outcome::Outcome;

/// One of the four papers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Paper {
    /// Li, Pandis, Mueller, Raman, Lohman: "NUMA-aware algorithms: the
    /// case of data shuffling" (CIDR 2013).
    Li,
    /// Kiefer, Schlegel, Lehner: "Experimental Evaluation of NUMA Effects
    /// on Database Management Systems".
    Kiefer,
    /// Chakraborty: "Processing Database Joins over a Shared-Nothing
    /// System of Multicore Machines".
    Chakraborty,
    /// Yoo, Romano, Kozyrakis: "Phoenix Rebirth: Scalable MapReduce on a
    /// Large-Scale Shared-Memory System" (IISWC 2009).
    Phoenix,
}

impl Paper {
    /// Every paper, in the order the README presents them.
    pub const ALL: [Paper; 4] = [Paper::Li, Paper::Kiefer, Paper::Chakraborty, Paper::Phoenix];

    /// The paper's full citation.
    pub fn citation(self) -> &'static str {
        match self {
            Paper::Li => "Li, Pandis, Mueller, Raman, Lohman: NUMA-aware algorithms: the case of data shuffling (CIDR 2013)",
            Paper::Kiefer => "Kiefer, Schlegel, Lehner: Experimental Evaluation of NUMA Effects on Database Management Systems",
            Paper::Chakraborty => "Chakraborty: Processing Database Joins over a Shared-Nothing System of Multicore Machines",
            Paper::Phoenix => "Yoo, Romano, Kozyrakis: Phoenix Rebirth: Scalable MapReduce on a Large-Scale Shared-Memory System (IISWC 2009)",
        }
    }
}

impl fmt::Display for Paper {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Paper::Li => "LI",
            Paper::Kiefer => "KIEFER",
            Paper::Chakraborty => "CHAKRABORTY",
            Paper::Phoenix => "PHOENIX",
        })
    }
}

impl FromStr for Paper {
    type Err = PaperError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Paper::ALL
            .into_iter()
            .find(|p| p.to_string().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| PaperError::UnknownPaper(s.to_string()))
    }
}

/// A figure or a table, by its number in the paper (tables numbered in
/// roman by a paper are numbered in arabic here: TABLE IV is `Table(4)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum ItemId {
    /// Figure N.
    Figure(u32),
    /// Table N.
    Table(u32),
}

impl ItemId {
    /// Parses a number given as `6` or as a roman numeral (`IV`).
    pub fn parse_number(text: &str) -> Result<u32, PaperError> {
        let text = text.trim();
        if let Ok(n) = text.parse::<u32>() {
            return Ok(n);
        }
        roman(text).ok_or_else(|| PaperError::BadNumber(text.to_string()))
    }
}

/// I..XX, the range papers number tables in.
fn roman(text: &str) -> Option<u32> {
    let upper = text.to_ascii_uppercase();
    (1..=20).find(|&n| to_roman(n) == upper)
}

fn to_roman(mut n: u32) -> String {
    let mut out = String::new();
    for (value, digits) in [(10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")] {
        while n >= value {
            out.push_str(digits);
            n -= value;
        }
    }
    out
}

impl fmt::Display for ItemId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ItemId::Figure(n) => write!(f, "Figure {n}"),
            ItemId::Table(n) => write!(f, "Table {n}"),
        }
    }
}

/// How numakit reproduces an item.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reproduction {
    /// Measured on the machine `numakit paper` runs on.
    MeasuredHere,
    /// Measured on this machine, and in multi-node guests by the test
    /// suite (the effect needs several NUMA nodes; one node shows none).
    MeasuredInGuests,
    /// Predicted by the interconnect simulator on the paper's machine.
    Simulated,
    /// Printed from what numakit holds or runs (a described machine, a
    /// schedule's steps, a placement, its defaults); nothing is timed.
    Described,
    /// A diagram or a setting no program can produce; the item says why.
    NotReproducible,
}

impl fmt::Display for Reproduction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Reproduction::MeasuredHere => "measured here",
            Reproduction::MeasuredInGuests => "measured in guests",
            Reproduction::Simulated => "simulated",
            Reproduction::Described => "described",
            Reproduction::NotReproducible => "not reproducible",
        })
    }
}

/// An item's runner: reruns it at the context's scale.
pub(crate) type Runner = fn(&Context) -> RunResult<Outcome>;

/// One figure or table of a paper.
#[derive(Clone, Copy, Serialize)]
pub struct Item {
    /// Its paper.
    pub paper: Paper,
    /// Its number.
    pub id: ItemId,
    /// What it shows, in the paper's words where short.
    pub title: &'static str,
    /// How it is reproduced.
    pub how: Reproduction,
    /// The numakit commands that produce the same figures by hand (empty
    /// for an item that cannot be reproduced).
    pub commands: &'static str,
    /// What differs from the paper's setup; for an item that cannot be
    /// reproduced, why not.
    pub differs: &'static str,
    #[serde(skip)]
    pub(crate) runner: Option<Runner>,
}

impl Item {
    /// An item of `paper`; `runner` is `None` exactly when it cannot be
    /// reproduced.
    pub(crate) fn new(
        paper: Paper,
        id: ItemId,
        title: &'static str,
        how: Reproduction,
        commands: &'static str,
        differs: &'static str,
        runner: Option<Runner>,
    ) -> Self {
        Self {
            paper,
            id,
            title,
            how,
            commands,
            differs,
            runner,
        }
    }

    /// "Li Figure 6".
    pub fn name(&self) -> String {
        format!("{} {}", self.paper, self.id)
    }

    /// Whether `numakit paper` can rerun it.
    pub fn runnable(&self) -> bool {
        self.runner.is_some()
    }
}

impl fmt::Debug for Item {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Item")
            .field("paper", &self.paper)
            .field("id", &self.id)
            .field("how", &self.how)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn papers_parse_in_any_case() {
        assert_eq!("li".parse::<Paper>().unwrap(), Paper::Li);
        assert_eq!("PHOENIX".parse::<Paper>().unwrap(), Paper::Phoenix);
        assert!("knuth".parse::<Paper>().is_err());
    }

    #[test]
    fn numbers_parse_arabic_and_roman() {
        assert_eq!(ItemId::parse_number("6").unwrap(), 6);
        assert_eq!(ItemId::parse_number("IV").unwrap(), 4);
        assert_eq!(ItemId::parse_number("ix").unwrap(), 9);
        assert!(ItemId::parse_number("IIII").is_err());
    }
}
