//! Files the CLI writes (charts, results, described machines): whole or
//! not at all, through a temporary file beside the target that is renamed
//! into place, so that a failure never leaves half a file behind.

use std::path::Path;

use anyhow::{Context, Result};

/// Writes `data` to `path` whole or not at all.
pub fn write_whole(path: &Path, data: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot write into {}", dir.display()))?;
    std::io::Write::write_all(&mut tmp, data)
        .with_context(|| format!("writing {}", path.display()))?;
    // Readable by other users and tools, like any file we write.
    let mut mode = perms(&tmp)?;
    std::os::unix::fs::PermissionsExt::set_mode(&mut mode, 0o644);
    tmp.as_file().set_permissions(mode)?;
    tmp.persist(path)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

fn perms(tmp: &tempfile::NamedTempFile) -> Result<std::fs::Permissions> {
    Ok(tmp.as_file().metadata()?.permissions())
}
