//! Reruns a paper's items: one figure or table, or every item of a paper
//! that a program can produce.
//!
//! [`catalog`] lists a paper's items from its module. The caller says
//! which items and at what [`Scale`]; each item's runner
//! builds what it needs (a pool of the threads it sweeps, the simulator's
//! machine) from the [`Context`]. Items run one after the other, so that
//! none disturbs another's measurement.

use std::sync::Arc;
use std::time::Instant;

use numakit_ops::Progress;
use numakit_topology::Topology;
use serde::Serialize;

use crate::catalog::{Item, ItemId, Paper, Reproduction};
use crate::error::{PaperError, Result};
use crate::outcome::Outcome;

pub use crate::context::{Context, Scale};

/// Every item of `paper`, in the paper's order (figures, then tables).
pub fn catalog(paper: Paper) -> Vec<Item> {
    let mut items = match paper {
        Paper::Li => crate::li::items(),
        Paper::Kiefer => crate::kiefer::items(),
        Paper::Chakraborty => crate::chakraborty::items(),
        Paper::Phoenix => crate::phoenix::items(),
    };
    items.sort_by_key(|i| i.id);
    items
}

/// Which items of the paper.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Selection {
    /// Every item a program can produce.
    All,
    /// One figure or table.
    One(ItemId),
}

/// A rerun of a paper's items.
#[derive(Clone, Copy, Debug)]
pub struct PaperRequest {
    /// The paper.
    pub paper: Paper,
    /// Which of its items.
    pub selection: Selection,
    /// How big.
    pub scale: Scale,
}

/// The items `request` asks for. One item asked for by number must exist
/// and be reproducible (otherwise the error says why not).
pub fn selected(request: &PaperRequest) -> Result<Vec<Item>> {
    let items = catalog(request.paper);
    match request.selection {
        Selection::All => Ok(items.into_iter().filter(Item::runnable).collect()),
        Selection::One(id) => {
            let item =
                items
                    .into_iter()
                    .find(|i| i.id == id)
                    .ok_or_else(|| PaperError::UnknownItem {
                        paper: request.paper.to_string(),
                        item: id.to_string(),
                    })?;
            if item.how == Reproduction::NotReproducible {
                return Err(PaperError::NotReproducible {
                    item: item.name(),
                    why: item.differs.to_string(),
                });
            }
            Ok(vec![item])
        }
    }
}

/// Reruns the items `request` asks for, on this machine.
pub fn run(
    request: &PaperRequest,
    topology: Arc<Topology>,
    progress: &dyn Progress,
) -> Result<Vec<ItemReport>> {
    let context = Context {
        scale: request.scale,
        topology,
        progress,
    };
    selected(request)?
        .iter()
        .map(|item| run_item(item, &context))
        .collect()
}

/// Reruns one item.
pub fn run_item(item: &Item, context: &Context<'_>) -> Result<ItemReport> {
    let runner = item.runner.ok_or_else(|| PaperError::NotReproducible {
        item: item.name(),
        why: item.differs.to_string(),
    })?;
    context.progress.phase(&item.name());
    let started = Instant::now();
    let outcome = runner(context).map_err(|source| PaperError::Run {
        item: item.name(),
        source,
    })?;
    Ok(ItemReport::new(
        item,
        outcome,
        started.elapsed().as_secs_f64(),
    ))
}

/// One item rerun.
#[derive(Clone, Debug, Serialize)]
pub struct ItemReport {
    /// Its paper.
    pub paper: Paper,
    /// Its number.
    pub id: ItemId,
    /// What it shows.
    pub title: String,
    /// How it was reproduced.
    pub how: Reproduction,
    /// The commands that give the same figures by hand.
    pub commands: String,
    /// What differs from the paper's setup.
    pub differs: String,
    /// The figures, the claims and notes.
    #[serde(flatten)]
    pub outcome: Outcome,
    /// How long the rerun took, in seconds.
    pub seconds: f64,
}

impl ItemReport {
    /// The report of `item`'s rerun.
    pub fn new(item: &Item, outcome: Outcome, seconds: f64) -> Self {
        Self {
            paper: item.paper,
            id: item.id,
            title: item.title.to_string(),
            how: item.how,
            commands: item.commands.to_string(),
            differs: item.differs.to_string(),
            outcome,
            seconds,
        }
    }

    /// "Li Figure 6".
    pub fn name(&self) -> String {
        format!("{} {}", self.paper, self.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_item_is_listed_once_and_explained() {
        for paper in Paper::ALL {
            let items = catalog(paper);
            for pair in items.windows(2) {
                assert_ne!(pair[0].id, pair[1].id, "{} listed twice", pair[0].name());
            }
            for item in &items {
                assert_eq!(item.paper, paper);
                assert!(!item.differs.is_empty(), "{} says nothing", item.name());
                let reproducible = item.how != Reproduction::NotReproducible;
                assert_eq!(reproducible, item.runnable(), "{}", item.name());
                assert_eq!(reproducible, !item.commands.is_empty(), "{}", item.name());
            }
        }
    }
}
