//! The result of `--sink files:DIR`: one CSV part per process, published
//! as a whole or not at all.
//!
//! Layout, for `DIR` = `PARENT/NAME`:
//!
//! ```text
//! PARENT/NAME/                        the published result
//!     MANIFEST.json                   format, run id, processes, rows,
//!                                     checksum; per part: file, process,
//!                                     rows, checksum, bytes
//!     part-0.csv ... part-{P-1}.csv   key, left_payload, right_payload
//! PARENT/.NAME.staging-RUN/           one run's parts while it runs
//! PARENT/.NAME.replaced-RUN/          the previous result, for a moment,
//!                                     where directories cannot be swapped
//! ```
//!
//! Every process writes its part into the run's fresh staging directory
//! (`RUN` is the join's run id, the same on every process; each file is
//! written whole or not at all, then synced) and reports its rows,
//! checksum and size to the sink. Only when every process reported a
//! complete part does the sink check the staging directory against the
//! reports, write `MANIFEST.json` there, and put the directory in DIR's
//! place in one step (`renameat2(RENAME_EXCHANGE)`, or a plain rename
//! when DIR does not exist yet); the previous result is then removed.
//! A failed run leaves DIR as it was, and the sink removes its staging
//! directory; parts of another run can never mix in, since no run writes
//! into DIR.
//! The checksum is numakit's join checksum (a wrapping sum over rows, so
//! the parts' checksums add up to the result's).
//!
//! The processes must see the same DIR (one machine, or a shared file
//! system): the sink refuses to publish parts it cannot see. numakit
//! replaces only its own results: a DIR that holds anything its manifest
//! does not list is refused, never overwritten. A failed run can leave a
//! hidden `.NAME.staging-RUN` beside DIR (a process killed outright, or
//! one that wrote its part after the sink gave up); it is never published
//! and may be deleted.
//!
//! This module writes and publishes files; it does not join or talk to
//! other processes.

use std::fs::{self, File};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use numakit_cluster::{PartOutcome, PartRecord, PartialResult, ResultRow};
use serde::{Deserialize, Serialize};

use crate::commands::cluster::sys;
use crate::commands::ops::common::{signed_column, write_table};

/// The manifest's file name.
pub const MANIFEST: &str = "MANIFEST.json";
/// The manifest's `format`.
const FORMAT: &str = "numakit-cluster-result/1";

/// `MANIFEST.json`: what the published result holds.
#[derive(Debug, Serialize, Deserialize)]
pub struct Manifest {
    pub format: String,
    /// The run id, in hex.
    pub run: String,
    pub processes: usize,
    pub rows: u64,
    /// numakit's join checksum over all rows, in hex.
    pub checksum: String,
    pub parts: Vec<ManifestPart>,
}

/// One part in the manifest.
#[derive(Debug, Serialize, Deserialize)]
pub struct ManifestPart {
    pub file: String,
    pub process: usize,
    pub rows: u64,
    pub checksum: String,
    pub bytes: u64,
}

/// One run's view of a result directory.
#[derive(Debug)]
pub struct ResultDir {
    dir: PathBuf,
    staging: PathBuf,
    replaced: PathBuf,
    run_id: u64,
}

/// The file name of process `me`'s part.
pub fn part_name(me: usize) -> String {
    format!("part-{me}.csv")
}

fn hex(v: u64) -> String {
    format!("{v:#018x}")
}

impl ResultDir {
    /// The result directory `dir` for run `run_id`.
    pub fn new(dir: &Path, run_id: u64) -> Result<Self> {
        let name = dir.file_name().and_then(|n| n.to_str()).ok_or_else(|| {
            anyhow!(
                "--sink files:{}: give a directory by its name (not `.`, `..` or `/`)",
                dir.display()
            )
        })?;
        let parent = match dir.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        Ok(Self {
            dir: dir.to_path_buf(),
            staging: parent.join(format!(".{name}.staging-{run_id:016x}")),
            replaced: parent.join(format!(".{name}.replaced-{run_id:016x}")),
            run_id,
        })
    }

    /// Where this run's parts are staged.
    pub fn staging(&self) -> &Path {
        &self.staging
    }

    /// Where process `me`'s part is once published.
    pub fn published_part(&self, me: usize) -> String {
        self.dir.join(part_name(me)).display().to_string()
    }

    /// Writes process `me`'s rows into the staging directory, synced;
    /// `fail` (testing) fails after writing them.
    pub fn write_part(&self, me: usize, rows: &[Vec<ResultRow>], fail: bool) -> PartOutcome {
        let record = self
            .try_write_part(me, rows)
            .map_err(|e| format!("{e:#}"))?;
        if fail {
            return Err(format!(
                "injected failure after writing {} (--fail-part-write)",
                record.file
            ));
        }
        Ok(record)
    }

    fn try_write_part(&self, me: usize, rows: &[Vec<ResultRow>]) -> Result<PartRecord> {
        fs::create_dir_all(&self.staging)
            .with_context(|| format!("cannot create {}", self.staging.display()))?;
        let all = || rows.iter().flatten();
        let table = numakit_io::Table {
            columns: vec![
                signed_column("key", all().map(|r| r.key).collect()),
                signed_column("left_payload", all().map(|r| r.left).collect()),
                signed_column("right_payload", all().map(|r| r.right).collect()),
            ],
        };
        let file = part_name(me);
        let path = self.staging.join(&file);
        write_table(&path, &table, None)?;
        let written = File::open(&path).and_then(|f| {
            f.sync_all()?;
            f.metadata()
        });
        let bytes = written
            .with_context(|| format!("cannot sync {}", path.display()))?
            .len();
        Ok(PartRecord {
            process: me,
            file,
            rows: all().count() as u64,
            checksum: all().fold(0u64, |s, r| s.wrapping_add(r.checksum())),
            bytes,
        })
    }

    /// The sink's last step: checks the staged parts against `parts`,
    /// writes the manifest, and puts the staging directory in DIR's place.
    pub fn publish(&self, parts: &[PartRecord], result: &PartialResult) -> Result<()> {
        self.check_staged(parts)?;
        let manifest = Manifest {
            format: FORMAT.into(),
            run: format!("{:016x}", self.run_id),
            processes: parts.len(),
            rows: result.rows,
            checksum: hex(result.checksum),
            parts: parts
                .iter()
                .map(|p| ManifestPart {
                    file: p.file.clone(),
                    process: p.process,
                    rows: p.rows,
                    checksum: hex(p.checksum),
                    bytes: p.bytes,
                })
                .collect(),
        };
        let mut text = serde_json::to_vec_pretty(&manifest)?;
        text.push(b'\n');
        write_synced(&self.staging.join(MANIFEST), &text)?;
        sync_dir(&self.staging)?;
        check_replaceable(&self.dir)?;
        self.swap_into_place()?;
        sync_dir(self.staging.parent().unwrap_or(Path::new(".")))
    }

    /// Removes this run's staging directory (a failed run), best effort.
    pub fn discard(&self) {
        let _ = fs::remove_dir_all(&self.staging);
    }

    /// The staging directory holds exactly the reported parts, whole.
    fn check_staged(&self, parts: &[PartRecord]) -> Result<()> {
        for p in parts {
            let path = self.staging.join(&p.file);
            match fs::metadata(&path) {
                Ok(m) if m.len() == p.bytes => {}
                Ok(m) => bail!(
                    "{} has {} bytes, but process {} wrote {}",
                    path.display(),
                    m.len(),
                    p.process,
                    p.bytes
                ),
                Err(e) if e.kind() == ErrorKind::NotFound => bail!(
                    "process {}'s {} is not in {} here: --sink files:DIR needs a directory that every process sees (one machine, or a shared file system)",
                    p.process,
                    p.file,
                    self.staging.display()
                ),
                Err(e) => bail!("cannot read {}: {e}", path.display()),
            }
        }
        for name in entries(&self.staging)? {
            if !parts.iter().any(|p| p.file == name) {
                bail!(
                    "{} holds {name}, which no process reported",
                    self.staging.display()
                );
            }
        }
        Ok(())
    }

    /// Replaces DIR by the staging directory in one step where the file
    /// system can, and removes the previous result.
    fn swap_into_place(&self) -> Result<()> {
        let what = || {
            format!(
                "cannot publish {} as {}",
                self.staging.display(),
                self.dir.display()
            )
        };
        if !self.dir.exists() || entries(&self.dir)?.is_empty() {
            // rename(2) replaces a missing or empty directory atomically.
            return fs::rename(&self.staging, &self.dir).with_context(what);
        }
        match sys::exchange(&self.staging, &self.dir) {
            Ok(()) => {
                // The staging path now holds the previous result.
                fs::remove_dir_all(&self.staging)
                    .with_context(|| format!("cannot remove {}", self.staging.display()))
            }
            Err(e) if e.kind() == ErrorKind::Unsupported => {
                fs::rename(&self.dir, &self.replaced).with_context(what)?;
                if let Err(e) = fs::rename(&self.staging, &self.dir) {
                    let _ = fs::rename(&self.replaced, &self.dir);
                    return Err(e).with_context(what);
                }
                fs::remove_dir_all(&self.replaced)
                    .with_context(|| format!("cannot remove {}", self.replaced.display()))
            }
            Err(e) => Err(e).with_context(what),
        }
    }
}

/// The names in directory `dir`.
fn entries(dir: &Path) -> Result<Vec<String>> {
    let mut names = Vec::new();
    for entry in fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let entry = entry.with_context(|| format!("cannot list {}", dir.display()))?;
        names.push(entry.file_name().to_string_lossy().into_owned());
    }
    Ok(names)
}

/// Fails unless `dir` may be replaced by a result: it does not exist, is
/// an empty directory, or is an earlier numakit result (a manifest, and
/// only files that it lists).
pub fn check_replaceable(dir: &Path) -> Result<()> {
    let shown = dir.display();
    let meta = match fs::symlink_metadata(dir) {
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
        Err(e) => bail!("--sink files:{shown}: {e}"),
        Ok(m) => m,
    };
    if !meta.is_dir() {
        bail!("--sink files:{shown}: it exists and is not a directory");
    }
    let names = entries(dir)?;
    if names.is_empty() {
        return Ok(());
    }
    let refuse = |why: String| {
        anyhow!("--sink files:{shown}: {why}; numakit replaces only its own results: give a new or empty directory")
    };
    let manifest: Manifest = fs::read(dir.join(MANIFEST))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .filter(|m: &Manifest| m.format == FORMAT)
        .ok_or_else(|| {
            refuse("the directory is not empty and has no numakit MANIFEST.json".into())
        })?;
    for name in names {
        let listed = name == MANIFEST || manifest.parts.iter().any(|p| p.file == name);
        if !listed || !dir.join(&name).is_file() {
            return Err(refuse(format!(
                "it holds `{name}`, which its MANIFEST.json does not list"
            )));
        }
    }
    Ok(())
}

fn write_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut f = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    f.write_all(bytes)
        .and_then(|()| f.sync_all())
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Makes the names in `dir` durable (its entries, not its files).
fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .with_context(|| format!("cannot sync {}", dir.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(n: u64) -> Vec<Vec<ResultRow>> {
        vec![(0..n)
            .map(|k| ResultRow {
                key: k,
                left: k + 1,
                right: k + 2,
            })
            .collect()]
    }

    /// A whole run of `p` processes into `dir`, the rows of process i
    /// being `i + 1`.
    fn run(dir: &Path, p: usize, run_id: u64) -> Result<()> {
        let r = ResultDir::new(dir, run_id)?;
        let parts: Vec<PartRecord> = (0..p)
            .map(|i| r.write_part(i, &rows(i as u64 + 1), false))
            .collect::<std::result::Result<_, _>>()
            .map_err(anyhow::Error::msg)?;
        let total = PartialResult {
            rows: parts.iter().map(|p| p.rows).sum(),
            checksum: parts.iter().fold(0, |s, p| s.wrapping_add(p.checksum)),
            sample: Vec::new(),
        };
        r.publish(&parts, &total)
    }

    fn manifest(dir: &Path) -> Manifest {
        serde_json::from_slice(&fs::read(dir.join(MANIFEST)).unwrap()).unwrap()
    }

    #[test]
    fn a_second_run_replaces_the_first_whole() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("out");
        run(&dir, 3, 1).unwrap();
        assert_eq!(manifest(&dir).rows, 1 + 2 + 3);
        run(&dir, 2, 2).unwrap();
        let m = manifest(&dir);
        assert_eq!((m.rows, m.parts.len(), m.processes), (3, 2, 2));
        let mut names = entries(&dir).unwrap();
        names.sort();
        assert_eq!(names, [MANIFEST, "part-0.csv", "part-1.csv"]);
        // Nothing is left beside the result.
        assert_eq!(entries(root.path()).unwrap(), ["out"]);
    }

    #[test]
    fn a_failed_part_publishes_nothing_and_discard_cleans_up() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("out");
        run(&dir, 2, 1).unwrap();
        let before = fs::read(dir.join("part-1.csv")).unwrap();
        let r = ResultDir::new(&dir, 9).unwrap();
        r.write_part(0, &rows(5), false).unwrap();
        let why = r.write_part(1, &rows(5), true).unwrap_err();
        assert!(why.contains("injected"), "{why}");
        r.discard();
        assert_eq!(fs::read(dir.join("part-1.csv")).unwrap(), before);
        assert_eq!(manifest(&dir).rows, 3);
        assert_eq!(entries(root.path()).unwrap(), ["out"]);
    }

    #[test]
    fn parts_that_are_missing_or_altered_are_not_published() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("out");
        let r = ResultDir::new(&dir, 4).unwrap();
        let a = r.write_part(0, &rows(2), false).unwrap();
        let mut b = a.clone();
        b.process = 1;
        b.file = part_name(1);
        let err = r
            .publish(&[a.clone(), b], &PartialResult::default())
            .unwrap_err();
        assert!(err.to_string().contains("every process sees"), "{err}");
        let mut grown = a;
        grown.bytes += 1;
        assert!(r.publish(&[grown], &PartialResult::default()).is_err());
        assert!(!dir.exists());
    }

    #[test]
    fn only_numakit_results_are_replaced() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("mine");
        fs::create_dir(&dir).unwrap();
        fs::write(dir.join("notes.txt"), "keep me").unwrap();
        let err = run(&dir, 1, 1).unwrap_err().to_string();
        assert!(err.contains("only its own results"), "{err}");
        assert_eq!(
            fs::read_to_string(dir.join("notes.txt")).unwrap(),
            "keep me"
        );
        run(&root.path().join("out"), 1, 2).unwrap();
        fs::write(root.path().join("out/extra.csv"), "x").unwrap();
        assert!(check_replaceable(&root.path().join("out")).is_err());
        assert!(ResultDir::new(Path::new("/"), 1).is_err());
        assert!(ResultDir::new(Path::new("."), 1).is_err());
        let empty = root.path().join("empty");
        fs::create_dir(&empty).unwrap();
        run(&empty, 1, 3).unwrap();
        assert_eq!(manifest(&empty).parts.len(), 1);
    }
}
