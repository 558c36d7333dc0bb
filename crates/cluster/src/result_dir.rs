//! A join's result as a directory of files: one CSV part per process,
//! published as a whole or not at all.
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
//! ([`ResultDir::write_part`]; `RUN` is the join's run id, the same on
//! every process; each file is written whole or not at all, then synced)
//! and reports its rows, checksum and size to the sink. Only when every
//! process reported a complete part does the sink ([`ResultDir::publish`])
//! check the staging directory against the reports, write
//! `MANIFEST.json` there, and put the directory in DIR's place in one
//! step (`renameat2(RENAME_EXCHANGE)`, through numakit-placement's safe
//! [`rename_exchange`], or a plain rename when DIR does not exist yet);
//! the previous result is then removed. A failed run leaves DIR as it
//! was, and the sink removes its staging directory
//! ([`ResultDir::discard`]); parts of another run can never mix in, since
//! no run writes into DIR. The checksum is numakit's join checksum (a
//! wrapping sum over rows, so the parts' checksums add up to the
//! result's).
//!
//! The processes must see the same DIR (one machine, or a shared file
//! system): the sink refuses to publish parts it cannot see
//! ([`ClusterError::PartNotVisible`]). numakit replaces only its own
//! results: a DIR that holds anything its manifest does not list is
//! refused, never overwritten ([`check_replaceable`],
//! [`ClusterError::ResultDirRefused`]). A failed run can leave a hidden
//! `.NAME.staging-RUN` beside DIR (a process killed outright, or one that
//! wrote its part after the sink gave up); it is never published and may
//! be deleted.
//!
//! This module writes and publishes files; it does not join, talk to
//! other processes, or decide when to publish (the caller does, with
//! what [`crate::run_process_delivering`] returns).
//!
//! # Examples
//!
//! A run of two processes, both parts written here, published by the
//! sink:
//!
//! ```
//! use numakit_cluster::result_dir::{check_replaceable, ResultDir, MANIFEST};
//! use numakit_cluster::{PartialResult, ResultRow};
//!
//! let root = tempfile::tempdir()?;
//! let dir = root.path().join("out");
//! let run = ResultDir::new(&dir, 0x2a)?;
//! let rows = |p: u64| vec![vec![ResultRow { key: p, left: 1, right: 2 }]];
//! let parts = vec![run.write_part(0, &rows(0))?, run.write_part(1, &rows(1))?];
//! let total = PartialResult {
//!     rows: 2,
//!     checksum: parts[0].checksum.wrapping_add(parts[1].checksum),
//!     sample: Vec::new(),
//! };
//! run.publish(&parts, &total)?;
//! assert!(dir.join(MANIFEST).is_file() && dir.join("part-1.csv").is_file());
//! assert!(!run.staging().exists());
//! // An earlier result may be replaced by the next run.
//! check_replaceable(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs::{self, File};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use numakit_io::{Column, IntKind, Table};
use numakit_placement::sys::rename_exchange;
use serde::{Deserialize, Serialize};

use crate::error::{ClusterError, Result};
use crate::sink::{PartRecord, PartialResult, ResultRow};

/// The manifest's file name.
pub const MANIFEST: &str = "MANIFEST.json";
/// The manifest's `format`.
const FORMAT: &str = "numakit-cluster-result/1";

/// `MANIFEST.json`: what the published result holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// The layout's name and version: `numakit-cluster-result/1`.
    pub format: String,
    /// The run id, 16 hex digits.
    pub run: String,
    /// Number of processes (and of parts).
    pub processes: usize,
    /// Result rows in all parts.
    pub rows: u64,
    /// numakit's join checksum over all rows, in hex (`0x` and 16 digits).
    pub checksum: String,
    /// Every process's part, in process order.
    pub parts: Vec<ManifestPart>,
}

/// One part in the manifest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestPart {
    /// The part's file name, within the result directory.
    pub file: String,
    /// The process that wrote it.
    pub process: usize,
    /// Result rows in the part.
    pub rows: u64,
    /// numakit's join checksum over the part's rows, in hex.
    pub checksum: String,
    /// The file's size, in bytes.
    pub bytes: u64,
}

/// One run's view of a result directory: where its parts are staged and
/// where they are published.
#[derive(Debug)]
pub struct ResultDir {
    dir: PathBuf,
    staging: PathBuf,
    replaced: PathBuf,
    run_id: u64,
}

/// The file name of process `process`'s part: `part-{process}.csv`.
pub fn part_name(process: usize) -> String {
    format!("part-{process}.csv")
}

fn hex(v: u64) -> String {
    format!("{v:#018x}")
}

/// An I/O failure on `path`, as the crate's error.
fn io_error(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> ClusterError {
    let path = path.to_path_buf();
    move |source| ClusterError::ResultIo {
        action,
        path,
        source,
    }
}

fn signed_column(name: &str, values: Vec<u64>) -> Column {
    Column {
        name: name.to_string(),
        kind: IntKind::Signed,
        values,
    }
}

impl ResultDir {
    /// The result directory `dir` for run `run_id` (the transport's
    /// [`run_id`](crate::transport::Transport::run_id), the same on every
    /// process). Creates nothing. Fails when `dir` names no directory
    /// (`.`, `..` or `/`).
    pub fn new(dir: &Path, run_id: u64) -> Result<Self> {
        let name = dir.file_name().and_then(|n| n.to_str()).ok_or_else(|| {
            ClusterError::ResultDirRefused {
                dir: dir.to_path_buf(),
                why: "give a directory by its name (not `.`, `..` or `/`)".into(),
            }
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

    /// The result directory, as given.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where this run's parts are staged.
    pub fn staging(&self) -> &Path {
        &self.staging
    }

    /// Where process `process`'s part is once published.
    pub fn published_part(&self, process: usize) -> PathBuf {
        self.dir.join(part_name(process))
    }

    /// Writes process `process`'s rows into the staging directory (created
    /// if needed) as CSV (`key`, `left_payload`, `right_payload`), whole
    /// or not at all, and synced; returns the part's record for the sink.
    pub fn write_part(&self, process: usize, rows: &[Vec<ResultRow>]) -> Result<PartRecord> {
        fs::create_dir_all(&self.staging).map_err(io_error("create", &self.staging))?;
        let all = || rows.iter().flatten();
        let table = Table {
            columns: vec![
                signed_column("key", all().map(|r| r.key).collect()),
                signed_column("left_payload", all().map(|r| r.left).collect()),
                signed_column("right_payload", all().map(|r| r.right).collect()),
            ],
        };
        let file = part_name(process);
        let path = self.staging.join(&file);
        numakit_io::write(&path, &table, None).map_err(|source| ClusterError::PartWrite {
            path: path.clone(),
            source,
        })?;
        let written = File::open(&path).and_then(|f| {
            f.sync_all()?;
            f.metadata()
        });
        let bytes = written.map_err(io_error("sync", &path))?.len();
        Ok(PartRecord {
            process,
            file,
            rows: all().count() as u64,
            checksum: all().fold(0u64, |s, r| s.wrapping_add(r.checksum())),
            bytes,
        })
    }

    /// The sink's last step: checks the staged parts against `parts`
    /// (every process's record, in process order) and writes the
    /// manifest of `result`, then puts the staging directory in DIR's
    /// place and removes the previous result. On failure DIR is as it
    /// was.
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
        let path = self.staging.join(MANIFEST);
        let mut text =
            serde_json::to_vec_pretty(&manifest).map_err(|e| io_error("write", &path)(e.into()))?;
        text.push(b'\n');
        write_synced(&path, &text)?;
        sync_dir(&self.staging)?;
        check_replaceable(&self.dir)?;
        self.swap_into_place()?;
        sync_dir(self.staging.parent().unwrap_or(Path::new(".")))
    }

    /// Removes this run's staging directory (a failed run), best effort:
    /// what cannot be removed stays, hidden, and is never published.
    pub fn discard(&self) {
        let _ = fs::remove_dir_all(&self.staging);
    }

    /// The staging directory holds exactly the reported parts, whole.
    fn check_staged(&self, parts: &[PartRecord]) -> Result<()> {
        let mismatch = |why: String| ClusterError::StagedMismatch {
            staging: self.staging.clone(),
            why,
        };
        for p in parts {
            let path = self.staging.join(&p.file);
            match fs::metadata(&path) {
                Ok(m) if m.len() == p.bytes => {}
                Ok(m) => {
                    return Err(mismatch(format!(
                        "{} has {} bytes, but process {} wrote {}",
                        path.display(),
                        m.len(),
                        p.process,
                        p.bytes
                    )))
                }
                Err(e) if e.kind() == ErrorKind::NotFound => {
                    return Err(ClusterError::PartNotVisible {
                        process: p.process,
                        file: p.file.clone(),
                        staging: self.staging.clone(),
                    })
                }
                Err(e) => return Err(io_error("read", &path)(e)),
            }
        }
        for name in entries(&self.staging)? {
            if !parts.iter().any(|p| p.file == name) {
                return Err(mismatch(format!(
                    "{} holds {name}, which no process reported",
                    self.staging.display()
                )));
            }
        }
        Ok(())
    }

    /// Replaces DIR by the staging directory in one step where the file
    /// system can, and removes the previous result.
    fn swap_into_place(&self) -> Result<()> {
        let failed = |source| ClusterError::Publish {
            staging: self.staging.clone(),
            dir: self.dir.clone(),
            source,
        };
        if !self.dir.exists() || entries(&self.dir)?.is_empty() {
            // rename(2) replaces a missing or empty directory atomically.
            return fs::rename(&self.staging, &self.dir).map_err(failed);
        }
        match rename_exchange(&self.staging, &self.dir) {
            // The staging path now holds the previous result.
            Ok(()) => fs::remove_dir_all(&self.staging).map_err(io_error("remove", &self.staging)),
            Err(e) if e.kind() == ErrorKind::Unsupported => {
                fs::rename(&self.dir, &self.replaced).map_err(failed)?;
                if let Err(e) = fs::rename(&self.staging, &self.dir) {
                    let _ = fs::rename(&self.replaced, &self.dir);
                    return Err(failed(e));
                }
                fs::remove_dir_all(&self.replaced).map_err(io_error("remove", &self.replaced))
            }
            Err(e) => Err(failed(e)),
        }
    }
}

/// The names in directory `dir`.
fn entries(dir: &Path) -> Result<Vec<String>> {
    let mut names = Vec::new();
    for entry in fs::read_dir(dir).map_err(io_error("list", dir))? {
        let entry = entry.map_err(io_error("list", dir))?;
        names.push(entry.file_name().to_string_lossy().into_owned());
    }
    Ok(names)
}

/// Fails ([`ClusterError::ResultDirRefused`]) unless `dir` may be
/// replaced by a result: it does not exist, is an empty directory, or is
/// an earlier numakit result (a manifest, and only files that it lists).
pub fn check_replaceable(dir: &Path) -> Result<()> {
    let refuse = |why: String| ClusterError::ResultDirRefused {
        dir: dir.to_path_buf(),
        why,
    };
    let meta = match fs::symlink_metadata(dir) {
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(refuse(e.to_string())),
        Ok(m) => m,
    };
    if !meta.is_dir() {
        return Err(refuse("it exists and is not a directory".into()));
    }
    let names = entries(dir)?;
    if names.is_empty() {
        return Ok(());
    }
    let foreign = |why: String| {
        refuse(format!(
            "{why}; numakit replaces only its own results: give a new or empty directory"
        ))
    };
    let manifest: Manifest = fs::read(dir.join(MANIFEST))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .filter(|m: &Manifest| m.format == FORMAT)
        .ok_or_else(|| {
            foreign("the directory is not empty and has no numakit MANIFEST.json".into())
        })?;
    for name in names {
        let listed = name == MANIFEST || manifest.parts.iter().any(|p| p.file == name);
        if !listed || !dir.join(&name).is_file() {
            return Err(foreign(format!(
                "it holds `{name}`, which its MANIFEST.json does not list"
            )));
        }
    }
    Ok(())
}

fn write_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut f = File::create(path).map_err(io_error("create", path))?;
    f.write_all(bytes)
        .and_then(|()| f.sync_all())
        .map_err(io_error("write", path))
}

/// Makes the names in `dir` durable (its entries, not its files).
fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_error("sync", dir))
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
            .map(|i| r.write_part(i, &rows(i as u64 + 1)))
            .collect::<Result<_>>()?;
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
    fn a_part_is_csv_and_its_record_matches_it() {
        let root = tempfile::tempdir().unwrap();
        let r = ResultDir::new(&root.path().join("out"), 5).unwrap();
        let big = vec![vec![ResultRow {
            key: u64::MAX,
            left: 1,
            right: 2,
        }]];
        let part = r.write_part(3, &big).unwrap();
        let text = fs::read_to_string(r.staging().join("part-3.csv")).unwrap();
        assert_eq!(text, "key,left_payload,right_payload\n-1,1,2\n");
        assert_eq!(
            (part.process, part.rows, part.bytes),
            (3, 1, text.len() as u64)
        );
        assert_eq!(part.checksum, big[0][0].checksum());
        assert_eq!(r.published_part(3), root.path().join("out/part-3.csv"));
    }

    #[test]
    fn a_failed_run_publishes_nothing_and_discard_cleans_up() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("out");
        run(&dir, 2, 1).unwrap();
        let before = fs::read(dir.join("part-1.csv")).unwrap();
        let r = ResultDir::new(&dir, 9).unwrap();
        r.write_part(0, &rows(5)).unwrap();
        r.write_part(1, &rows(5)).unwrap();
        // Process 1 reported a failure after writing: the sink discards.
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
        let a = r.write_part(0, &rows(2)).unwrap();
        let mut b = a.clone();
        b.process = 1;
        b.file = part_name(1);
        let err = r
            .publish(&[a.clone(), b], &PartialResult::default())
            .unwrap_err();
        assert!(
            matches!(err, ClusterError::PartNotVisible { process: 1, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("every process sees"), "{err}");
        let mut grown = a.clone();
        grown.bytes += 1;
        let err = r.publish(&[grown], &PartialResult::default()).unwrap_err();
        assert!(matches!(err, ClusterError::StagedMismatch { .. }), "{err}");
        fs::write(r.staging().join("stray.csv"), "x").unwrap();
        let err = r.publish(&[a], &PartialResult::default()).unwrap_err();
        assert!(err.to_string().contains("stray.csv"), "{err}");
        assert!(!dir.exists());
    }

    #[test]
    fn only_numakit_results_are_replaced() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("mine");
        fs::create_dir(&dir).unwrap();
        fs::write(dir.join("notes.txt"), "keep me").unwrap();
        let err = run(&dir, 1, 1).unwrap_err();
        assert!(
            matches!(&err, ClusterError::ResultDirRefused { dir: d, .. } if *d == dir),
            "{err}"
        );
        assert!(err.to_string().contains("only its own results"), "{err}");
        assert_eq!(
            fs::read_to_string(dir.join("notes.txt")).unwrap(),
            "keep me"
        );
        run(&root.path().join("out"), 1, 2).unwrap();
        fs::write(root.path().join("out/extra.csv"), "x").unwrap();
        assert!(check_replaceable(&root.path().join("out")).is_err());
        let file = root.path().join("file");
        fs::write(&file, "x").unwrap();
        assert!(check_replaceable(&file).is_err());
        assert!(ResultDir::new(Path::new("/"), 1).is_err());
        assert!(ResultDir::new(Path::new("."), 1).is_err());
        let empty = root.path().join("empty");
        fs::create_dir(&empty).unwrap();
        run(&empty, 1, 3).unwrap();
        assert_eq!(manifest(&empty).parts.len(), 1);
    }

    #[test]
    fn rename_exchange_swaps_two_directories() {
        let root = tempfile::tempdir().unwrap();
        let (a, b) = (root.path().join("a"), root.path().join("b"));
        fs::create_dir(&a).unwrap();
        fs::create_dir(&b).unwrap();
        fs::write(a.join("from-a"), "1").unwrap();
        fs::write(b.join("from-b"), "2").unwrap();
        match rename_exchange(&a, &b) {
            Ok(()) => {
                assert!(a.join("from-b").exists() && b.join("from-a").exists());
            }
            Err(e) => assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}"),
        }
        let missing = root.path().join("missing");
        assert!(rename_exchange(&a, &missing).is_err());
    }
}
