//! What an item's runner is given: how big to run, this machine, and
//! where to say which phase is running. It holds no results and runs
//! nothing.

use std::sync::Arc;

use numakit_ops::Progress;
use numakit_topology::Topology;

/// How big each rerun is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Scale {
    /// A second or two per item: enough to check each claim's direction
    /// (what the tests run).
    Small,
    /// The sizes that give stable figures on this machine (tens of
    /// seconds per item at most).
    #[default]
    Standard,
}

impl Scale {
    /// `small` at [`Scale::Small`], `standard` otherwise.
    pub fn pick<T>(self, small: T, standard: T) -> T {
        match self {
            Scale::Small => small,
            Scale::Standard => standard,
        }
    }
}

/// What a runner may use.
pub struct Context<'a> {
    /// How big to run.
    pub scale: Scale,
    /// This machine.
    pub topology: Arc<Topology>,
    /// Told when each phase of the commands underneath starts.
    pub progress: &'a dyn Progress,
}
