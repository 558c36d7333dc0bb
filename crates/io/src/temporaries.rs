//! The temporary files of writes in progress: a register of the ones this
//! process has open, so that an interrupted process can remove them
//! ([`remove_pending_temporaries`], called on SIGINT and SIGTERM), and a
//! sweep of orphans that dead processes left beside an output
//! ([`remove_orphans_beside`]), which covers SIGKILL and power cuts.
//!
//! A temporary file is named `.NAME.PID-SERIAL.numakit-tmp` beside the
//! output NAME; an orphan is such a file whose PID no longer runs. The
//! sweep touches only temporaries of the same NAME, so it never removes
//! another output's file, and never one of a live process (a recycled PID
//! only makes it keep an orphan a little longer).
//!
//! It does not create or rename files itself; [`crate::atomic`] does.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// The ending of every temporary file name.
pub(crate) const SUFFIX: &str = ".numakit-tmp";

/// Temporary files this process is writing now.
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// The temporary name for output `file_name` of process `pid`.
pub(crate) fn temporary_name(file_name: &str, pid: u32, serial: u64) -> String {
    format!(".{file_name}.{pid}-{serial}{SUFFIX}")
}

/// Registers a temporary file being written.
pub(crate) fn register(path: &Path) {
    if let Ok(mut pending) = PENDING.lock() {
        pending.push(path.to_path_buf());
    }
}

/// Forgets a temporary file (renamed into place or removed).
pub(crate) fn forget(path: &Path) {
    if let Ok(mut pending) = PENDING.lock() {
        pending.retain(|p| p != path);
    }
}

/// Removes every temporary file this process is writing; returns how many
/// were removed. For an interrupted process: the writes never finish.
pub fn remove_pending_temporaries() -> usize {
    remove_pending_where(|_| true)
}

/// Removes the pending temporaries `chosen` picks (and stops tracking
/// them); the others stay registered. Tests use it to remove only their
/// own: writes of other tests run in the same process at the same time.
fn remove_pending_where(chosen: impl Fn(&Path) -> bool) -> usize {
    let paths: Vec<PathBuf> = {
        let mut pending = PENDING.lock().unwrap_or_else(PoisonError::into_inner);
        let (picked, kept) = std::mem::take(&mut *pending)
            .into_iter()
            .partition(|p: &PathBuf| chosen(p));
        *pending = kept;
        picked
    };
    paths
        .iter()
        .filter(|path| std::fs::remove_file(path).is_ok())
        .count()
}

/// Removes the temporaries of output `file_name` in `directory` that
/// processes no longer running left behind; returns how many. Best effort:
/// an unreadable directory or a file that cannot be removed is skipped
/// (the write that follows reports any real problem with the directory).
pub(crate) fn remove_orphans_beside(directory: &Path, file_name: &str) -> usize {
    let Ok(entries) = std::fs::read_dir(directory) else {
        return 0;
    };
    let prefix = format!(".{file_name}.");
    entries
        .filter_map(|entry| entry.ok())
        .filter(|entry| {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            orphan_pid(&name, &prefix).is_some_and(|pid| !process_runs(pid))
        })
        .filter(|entry| std::fs::remove_file(entry.path()).is_ok())
        .count()
}

/// The PID in `.NAME.PID-SERIAL.numakit-tmp`, if `name` is one.
fn orphan_pid(name: &str, prefix: &str) -> Option<u32> {
    let middle = name.strip_prefix(prefix)?.strip_suffix(SUFFIX)?;
    let (pid, serial) = middle.split_once('-')?;
    serial.parse::<u64>().ok()?;
    pid.parse().ok()
}

/// Whether a process `pid` exists (Linux: /proc/PID). Elsewhere every PID
/// counts as running, so nothing is removed.
fn process_runs(pid: u32) -> bool {
    if !Path::new("/proc/self").exists() {
        return true;
    }
    Path::new("/proc").join(pid.to_string()).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_other_files_are_not_orphans() {
        let name = temporary_name("out.parquet", 42, 7);
        assert_eq!(name, ".out.parquet.42-7.numakit-tmp");
        assert_eq!(orphan_pid(&name, ".out.parquet."), Some(42));
        assert_eq!(orphan_pid(&name, ".out.csv."), None);
        assert_eq!(
            orphan_pid(".out.parquet.x-7.numakit-tmp", ".out.parquet."),
            None
        );
        assert_eq!(orphan_pid("out.parquet", ".out.parquet."), None);
    }

    #[test]
    fn orphans_of_dead_processes_go_and_live_ones_stay() {
        let directory = tempfile::tempdir().unwrap();
        let dead = u32::MAX - 1; // above any pid_max
        let live = std::process::id();
        for (file, pid) in [("out.csv", dead), ("out.csv", live), ("other.csv", dead)] {
            let name = temporary_name(file, pid, 0);
            std::fs::write(directory.path().join(name), b"partial").unwrap();
        }
        std::fs::write(directory.path().join("out.csv"), b"old result").unwrap();
        assert_eq!(remove_orphans_beside(directory.path(), "out.csv"), 1);
        let mut left: Vec<String> = std::fs::read_dir(directory.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            vec![
                temporary_name("other.csv", dead, 0),
                temporary_name("out.csv", live, 0),
                "out.csv".to_string()
            ]
        );
    }

    #[test]
    fn pending_temporaries_are_removed_on_request() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory
            .path()
            .join(temporary_name("x.csv", std::process::id(), 999));
        std::fs::write(&path, b"partial").unwrap();
        register(&path);
        // Only this test's own: other tests' writes are pending meanwhile.
        let mine = |p: &Path| p.starts_with(directory.path());
        assert_eq!(remove_pending_where(mine), 1);
        assert!(!path.exists());
        assert_eq!(remove_pending_where(mine), 0, "no longer tracked");
    }
}
