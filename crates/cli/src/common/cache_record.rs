//! The usable-cache measurement kept per machine, with its date.
//!
//! The operators size their tables by how much of the last-level cache
//! really stays cached ([`numakit_ops::cache_probe`]). Measuring that takes
//! a fraction of a second and, on a busy or virtual machine, varies between
//! runs, which would flip a group-by's plan from one run to the next. So
//! the CLI measures once ([`numakit_ops::cache_probe::REPEATS`] curves,
//! their median), keeps the result in the user's cache directory with the
//! machine it describes and the date (one record per machine key, so a
//! debug and a release build, or runs on different CPU sets, do not
//! measure again in turn), and hands it to every pool that needs it for
//! [`MAX_AGE_DAYS`] days. Delete the file (or set
//! `NUMAKIT_CACHE_DIR` elsewhere) to measure again.
//!
//! A missing, unreadable, foreign or stale record is measured afresh; a
//! record that cannot be written is not an error (the figure is still
//! used). This module keeps the figure; it does not measure or interpret
//! it.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use numakit_ops::cache_probe::{self, CacheProbe};
use numakit_pool::Pool;
use numakit_topology::Topology;
use serde::{Deserialize, Serialize};

/// Days a kept measurement is used before it is measured again.
pub const MAX_AGE_DAYS: u64 = 30;

/// The file's name in the cache directory (a list of records; the
/// single record an earlier version kept is not read, and is replaced).
const FILE_NAME: &str = "usable-caches.json";

/// What the file holds.
#[derive(Debug, Serialize, Deserialize)]
struct Record {
    /// The machine it was measured on ([`machine_key`]).
    machine: String,
    /// When, in seconds since the Unix epoch.
    measured_unix: u64,
    /// What the probe saw.
    probe: CacheProbe,
}

/// Puts the kept measurement for this machine into `pool` (measuring and
/// keeping it first when there is none, or it is stale), so that the
/// operators never measure inside a timed region. Returns the figure used.
pub fn prime(pool: &Pool) -> std::sync::Arc<CacheProbe> {
    let dir = cache_dir();
    let key = machine_key(pool.topology());
    let now = unix_now();
    if let Some(probe) = dir.as_deref().and_then(|d| load(d, &key, now)) {
        return pool.state_or_init(|| probe);
    }
    let probe = cache_probe::measured(pool);
    if let Some(dir) = dir {
        if let Err(e) = save(&dir, &key, now, &probe) {
            log::debug!("the cache measurement was not kept: {e:#}");
        }
    }
    probe
}

/// `NUMAKIT_CACHE_DIR`, else `$XDG_CACHE_HOME/numakit`, else
/// `$HOME/.cache/numakit`.
fn cache_dir() -> Option<PathBuf> {
    let var = |name| std::env::var_os(name).filter(|v| !v.is_empty());
    var("NUMAKIT_CACHE_DIR")
        .map(PathBuf::from)
        .or_else(|| var("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("numakit")))
        .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".cache").join("numakit")))
}

/// What makes a measurement this machine's: the processor, its caches, the
/// CPUs this process may use, and the probe's version and build (a debug
/// build's chase is slower and sees a different knee).
fn machine_key(topology: &Topology) -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown processor".into());
    let mut caches: Vec<String> = topology
        .caches
        .iter()
        .map(|c| format!("L{} {} KiB", c.level, c.size_bytes >> 10))
        .collect();
    caches.dedup();
    format!(
        "{model}; {}; {} CPUs; probe of numakit {}{}",
        caches.join(", "),
        topology.allowed.cpus.len(),
        env!("CARGO_PKG_VERSION"),
        if cfg!(debug_assertions) {
            " (debug build)"
        } else {
            ""
        }
    )
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Records kept at most (one per machine key: builds, CPU sets).
const MAX_RECORDS: usize = 16;

/// The records in `dir` (none when the file is missing or unreadable).
fn records(dir: &Path) -> Vec<Record> {
    std::fs::read(dir.join(FILE_NAME))
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

/// The kept probe, when one is this machine's and younger than
/// [`MAX_AGE_DAYS`] at `now`; its `source` says when it was measured.
fn load(dir: &Path, key: &str, now: u64) -> Option<CacheProbe> {
    let record = records(dir).into_iter().find(|r| r.machine == key)?;
    let age = now.checked_sub(record.measured_unix)?;
    if age > MAX_AGE_DAYS * 86_400 {
        return None;
    }
    let mut probe = record.probe;
    probe.source = format!(
        "measured {}, kept in {}",
        date_of(record.measured_unix),
        dir.join(FILE_NAME).display()
    );
    Some(probe)
}

/// Keeps `probe` as `key`'s record, beside the other keys' (a debug and a
/// release build, or runs on different CPU sets, each keep their own
/// instead of measuring again in turn).
fn save(dir: &Path, key: &str, now: u64, probe: &CacheProbe) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut kept = records(dir);
    kept.retain(|r| r.machine != key);
    kept.truncate(MAX_RECORDS - 1);
    kept.insert(
        0,
        Record {
            machine: key.to_string(),
            measured_unix: now,
            probe: probe.clone(),
        },
    );
    numakit_io::write_file_atomically(&dir.join(FILE_NAME), &serde_json::to_vec_pretty(&kept)?)?;
    Ok(())
}

/// `YYYY-MM-DD` of a Unix time (UTC), by the civil-from-days algorithm.
fn date_of(unix: u64) -> String {
    let days = (unix / 86_400) as i64 + 719_468;
    let era = days.div_euclid(146_097);
    let day_of_era = days.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(usable: u64) -> CacheProbe {
        CacheProbe {
            latencies: vec![(1 << 20, 40.0), (64 << 20, 150.0)],
            runs: vec![usable, usable / 2, usable],
            usable_bytes: usable,
            source: String::new(),
        }
    }

    #[test]
    fn a_kept_measurement_comes_back_for_its_machine_while_fresh() {
        let dir = tempfile::tempdir().expect("temp dir");
        let now = 1_795_000_000;
        save(dir.path(), "box", now, &probe(8 << 20)).expect("saved");
        let back = load(dir.path(), "box", now + 86_400).expect("kept");
        assert_eq!(back.usable_bytes, 8 << 20);
        assert_eq!(back.runs, probe(8 << 20).runs);
        assert!(
            back.source.starts_with("measured 2026-11-18"),
            "{}",
            back.source
        );
        assert!(
            load(dir.path(), "other box", now).is_none(),
            "another machine's"
        );
        let stale = now + (MAX_AGE_DAYS + 1) * 86_400;
        assert!(load(dir.path(), "box", stale).is_none(), "too old");
        assert!(
            load(dir.path(), "box", now - 1).is_none(),
            "from the future"
        );
        std::fs::write(dir.path().join(FILE_NAME), b"{ not json").expect("written");
        assert!(load(dir.path(), "box", now).is_none(), "unreadable");
    }

    #[test]
    fn each_machine_key_keeps_its_own_record() {
        let dir = tempfile::tempdir().expect("temp dir");
        let now = 1_795_000_000;
        save(dir.path(), "box", now, &probe(8 << 20)).expect("saved");
        save(dir.path(), "box (debug build)", now, &probe(4 << 20)).expect("saved");
        let usable = |key| load(dir.path(), key, now).map(|p| p.usable_bytes);
        assert_eq!(usable("box"), Some(8 << 20));
        assert_eq!(usable("box (debug build)"), Some(4 << 20));
        // Measuring again replaces that key's record only.
        save(dir.path(), "box", now, &probe(6 << 20)).expect("saved");
        assert_eq!(usable("box"), Some(6 << 20));
        assert_eq!(usable("box (debug build)"), Some(4 << 20));
        assert_eq!(records(dir.path()).len(), 2);
        for i in 0..2 * MAX_RECORDS {
            save(dir.path(), &format!("cpus {i}"), now, &probe(1 << 20)).expect("saved");
        }
        assert_eq!(records(dir.path()).len(), MAX_RECORDS, "the oldest go");
        assert!(usable(&format!("cpus {}", 2 * MAX_RECORDS - 1)).is_some());
    }

    #[test]
    fn dates_are_civil_utc_dates() {
        assert_eq!(date_of(0), "1970-01-01");
        assert_eq!(date_of(951_782_400), "2000-02-29");
        assert_eq!(date_of(1_795_000_000), "2026-11-18");
    }
}
