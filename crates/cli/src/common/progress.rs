//! Progress on stderr for long operator runs: a spinner that names the
//! running phase and the time spent, drawn only on a terminal and never
//! with `--quiet` or `--json`.

use std::sync::Mutex;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use numakit_ops::Progress;

/// A phase spinner (invisible when stderr is not a terminal).
pub struct Spinner {
    bar: Option<ProgressBar>,
    prefix: Mutex<String>,
}

impl Spinner {
    /// A spinner, or a silent one when `quiet`.
    pub fn new(quiet: bool) -> Self {
        let bar = (!quiet).then(|| {
            let bar = ProgressBar::new_spinner();
            if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
                bar.set_style(style);
            }
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        });
        Self {
            bar,
            prefix: Mutex::new(String::new()),
        }
    }

    /// What the next phases belong to (`join pro, rep 2`).
    pub fn set_prefix(&self, prefix: impl Into<String>) {
        let prefix = prefix.into();
        if let Some(bar) = &self.bar {
            bar.set_message(prefix.clone());
        }
        if let Ok(mut p) = self.prefix.lock() {
            *p = prefix;
        }
    }

    /// Removes the spinner.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl Progress for Spinner {
    fn phase(&self, name: &str) {
        if let (Some(bar), Ok(prefix)) = (&self.bar, self.prefix.lock()) {
            bar.set_message(format!("{prefix}: {name}"));
        }
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.finish();
    }
}
