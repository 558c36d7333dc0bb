//! Chart pieces shared by `numakit shuffle` (measured) and `numakit
//! simulate` (predicted): one bar per schedule, tight and loose in two
//! colours, and where the thread-sweep chart goes.

use numakit_shuffle::{Strategy, SyncMode};

use crate::render::chart::Bar;
use crate::render::format::Spread;

/// A chart bar for one schedule: tight and loose in two colours.
pub fn schedule_bar(strategy: Strategy, sync: SyncMode, gbs: &Spread) -> Bar {
    Bar {
        label: format!("{strategy} ({sync})"),
        colour: usize::from(sync == SyncMode::Loose),
        min: gbs.min,
        median: gbs.median,
        max: gbs.max,
    }
}

/// `fig.svg` -> `fig-sweep.svg`.
pub fn sweep_path(path: &std::path::Path) -> std::path::PathBuf {
    path.with_file_name(format!(
        "{}-sweep.{}",
        path.file_stem().and_then(|s| s.to_str()).unwrap_or("chart"),
        path.extension().and_then(|s| s.to_str()).unwrap_or("svg")
    ))
}
