//! SIGINT and SIGTERM end numakit without debris: the temporary files of
//! outputs being written are removed, then the process dies of the signal
//! as it would have without numakit's help (status 130 or 143 in a shell).
//!
//! A watcher thread receives the signals (through `signal-hook`, so no
//! code runs inside a signal handler) and does the cleaning in ordinary
//! code. Paths other than the io layer's temporary files can be added with
//! [`remove_on_interrupt`] and dropped from the list with [`keep`].
//!
//! It does not handle SIGKILL (nothing can); the io layer sweeps orphans
//! of dead processes the next time the same output is written.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// Extra paths (files or folders) to remove when interrupted.
static EXTRA: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Starts the watcher. Call it once, first thing in `main`; if the
/// signals cannot be watched, they keep their default action.
pub fn remove_temporary_files_on_interrupt() {
    let Ok(mut signals) = Signals::new([SIGINT, SIGTERM]) else {
        return;
    };
    let watcher = std::thread::Builder::new()
        .name("numakit-signals".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                clean_up();
                // Dies of the signal; should that fail, exits with the
                // status a shell would show for it.
                let _ = signal_hook::low_level::emulate_default_handler(signal);
                std::process::exit(128 + signal);
            }
        });
    if watcher.is_err() {
        log::debug!("no thread to watch SIGINT/SIGTERM; they keep their default action");
    }
}

/// Also removes `path` (a file, or a folder with its contents) if the
/// process is interrupted before [`keep`] is called for it.
pub fn remove_on_interrupt(path: &Path) {
    if let Ok(mut extra) = EXTRA.lock() {
        extra.push(path.to_path_buf());
    }
}

/// Takes `path` off the list of [`remove_on_interrupt`].
pub fn keep(path: &Path) {
    if let Ok(mut extra) = EXTRA.lock() {
        extra.retain(|p| p != path);
    }
}

fn clean_up() {
    numakit_io::remove_pending_temporaries();
    let extra = match EXTRA.lock() {
        Ok(mut extra) => std::mem::take(&mut *extra),
        Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
    };
    for path in extra {
        let _ = if path.is_dir() {
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
    }
}
