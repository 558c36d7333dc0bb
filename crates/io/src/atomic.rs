//! All-or-nothing output files: the data is written to a temporary file in
//! the destination's directory and renamed over the destination only once
//! writing has succeeded, so that a failed (or panicking) write never leaves
//! a partial table behind, and an existing file is replaced in one step.
//!
//! While it is written, the temporary file is registered with
//! [`crate::temporaries`], so that SIGINT and SIGTERM can remove it, and
//! creating one first sweeps away orphans of the same output that dead
//! processes left.
//!
//! It deliberately does not fsync: it protects against failures of the
//! program, not against a power cut. The temporary file is created with the
//! ordinary permissions (0666 less the umask), as the output itself would be.

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{IoError, Result};
use crate::temporaries;

/// Distinguishes temporary files of concurrent writes within one process.
static NEXT_TEMPORARY: AtomicU64 = AtomicU64::new(0);

/// Writes `path` through `write_contents`, which gets a fresh temporary
/// file; renames it into place on success and removes it on failure.
pub(crate) fn write_atomically(
    path: &Path,
    write_contents: impl FnOnce(File) -> Result<()>,
) -> Result<()> {
    let (pending, file) = AtomicFile::create(path)?;
    write_contents(file)?;
    pending.commit()
}

/// Writes `bytes` to `path` whole or not at all (charts, reports, any
/// file that is not a table).
pub fn write_file_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomically(path, |mut file| {
        file.write_all(bytes)
            .map_err(|source| IoError::file("write", path, source))
    })
}

/// Fails unless a file can be written at `path` now: its directory exists
/// and is writable, and `path` is not a directory. For checking output
/// paths before long work starts; nothing is left behind.
pub fn check_writable(path: &Path) -> Result<()> {
    if path.is_dir() {
        return Err(IoError::file(
            "write to",
            path,
            std::io::Error::new(ErrorKind::IsADirectory, "it is a directory"),
        ));
    }
    let (pending, _file) = AtomicFile::create(path)?;
    drop(pending);
    Ok(())
}

/// A file being written beside its final path: [`AtomicFile::commit`]
/// moves it there; dropped uncommitted (an error, a panic), it is removed.
pub(crate) struct AtomicFile {
    path: PathBuf,
    temporary: RemoveOnDrop,
}

impl AtomicFile {
    /// Creates the temporary file for `path`; returns it to write to.
    pub(crate) fn create(path: &Path) -> Result<(AtomicFile, File)> {
        let (temporary, file) = create_temporary_beside(path)?;
        let pending = AtomicFile {
            path: path.to_path_buf(),
            temporary: RemoveOnDrop(Some(temporary)),
        };
        Ok((pending, file))
    }

    /// Moves the finished file to its path (replacing any file there).
    pub(crate) fn commit(self) -> Result<()> {
        if let Some(temporary) = &self.temporary.0 {
            std::fs::rename(temporary, &self.path)
                .map_err(|source| IoError::file("move the finished file to", &self.path, source))?;
            temporaries::forget(temporary);
        }
        self.temporary.disarm();
        Ok(())
    }
}

fn create_temporary_beside(path: &Path) -> Result<(PathBuf, File)> {
    let directory = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let file_name = path
        .file_name()
        .ok_or_else(|| IoError::InvalidOption(format!("{path:?} does not name a file")))?
        .to_string_lossy();
    temporaries::remove_orphans_beside(directory, &file_name);
    let mut attempts = 0;
    loop {
        let serial = NEXT_TEMPORARY.fetch_add(1, Ordering::Relaxed);
        let temporary = directory.join(temporaries::temporary_name(
            &file_name,
            std::process::id(),
            serial,
        ));
        // Registered before it exists, so that a signal between the two
        // never leaves it behind (removing a name not yet there is harmless).
        temporaries::register(&temporary);
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary)
        {
            Ok(file) => return Ok((temporary, file)),
            Err(error) if error.kind() == ErrorKind::AlreadyExists && attempts < 100 => {
                temporaries::forget(&temporary);
                attempts += 1;
            }
            Err(source) => {
                temporaries::forget(&temporary);
                return Err(IoError::file("create a temporary file for", path, source));
            }
        }
    }
}

/// Removes the temporary file when dropped, unless disarmed.
struct RemoveOnDrop(Option<PathBuf>);

impl RemoveOnDrop {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        if let Some(path) = self.0.take() {
            // Best effort: the write has already failed and reports why.
            let _ = std::fs::remove_file(&path);
            temporaries::forget(&path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(directory: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(directory)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn success_leaves_only_the_output() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("out.csv");
        write_atomically(&path, |mut file| {
            file.write_all(b"a\n1\n").unwrap();
            Ok(())
        })
        .unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"a\n1\n");
        assert_eq!(entries(directory.path()), vec!["out.csv"]);
    }

    #[test]
    fn failure_midway_leaves_nothing_and_keeps_an_old_file() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("out.csv");
        let failed = write_atomically(&path, |mut file| {
            file.write_all(b"partial").unwrap();
            Err(IoError::InvalidTable("injected failure".into()))
        });
        assert!(failed.is_err());
        assert!(entries(directory.path()).is_empty());

        std::fs::write(&path, b"old").unwrap();
        let _ = write_atomically(&path, |_| Err(IoError::InvalidTable("again".into())));
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert_eq!(entries(directory.path()), vec!["out.csv"]);
    }

    #[test]
    fn panic_midway_leaves_nothing() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("out.parquet");
        let outcome = std::panic::catch_unwind(|| {
            let _ = write_atomically(&path, |mut file| {
                file.write_all(b"partial").unwrap();
                panic!("writer crashed");
            });
        });
        assert!(outcome.is_err());
        assert!(entries(directory.path()).is_empty());
    }

    #[test]
    fn writability_is_checked_without_leaving_anything() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("out.svg");
        check_writable(&path).unwrap();
        assert!(entries(directory.path()).is_empty());
        assert!(check_writable(&directory.path().join("no/out.svg")).is_err());
        let message = check_writable(directory.path()).unwrap_err().to_string();
        assert!(message.contains("directory"), "{message}");
        write_file_atomically(&path, b"<svg/>").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"<svg/>");
    }

    #[test]
    fn missing_directory_is_reported() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("no/such/dir/out.csv");
        let message = write_atomically(&path, |_| Ok(())).unwrap_err().to_string();
        assert!(
            message.contains("temporary file") && message.contains("out.csv"),
            "{message}"
        );
    }
}
