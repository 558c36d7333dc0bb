//! Files the CLI writes (charts, described machines, generated inputs):
//! whole or not at all, through the library's atomic writer, and output
//! paths checked before long work starts, so that a path in a missing or
//! read-only folder fails at once rather than after the measurement.

use std::path::Path;

use anyhow::{Context, Result};

/// Writes `data` to `path` whole or not at all.
pub fn write_whole(path: &Path, data: &[u8]) -> Result<()> {
    numakit_io::write_file_atomically(path, data)
        .with_context(|| format!("writing {}", path.display()))
}

/// Fails now unless every given path can be written (each with the
/// option that gave it, for the message).
pub fn check_writable<'a>(paths: impl IntoIterator<Item = (&'a str, &'a Path)>) -> Result<()> {
    for (option, path) in paths {
        numakit_io::check_writable(path)
            .with_context(|| format!("{option} {} cannot be written", path.display()))?;
    }
    Ok(())
}
