//! The parsers of option values that several commands share, each giving
//! clap a message it prints as a usage error: counts (`16M`, powers of
//! 1000), repetitions, positive sizes, memory limits, id lists and table
//! formats. Byte sizes are in KiB/MiB (powers of 1024) and say so in the
//! option's name; counts of rows take K, M and G as powers of 1000.

use numakit_placement::MemoryLimit;
use numakit_topology::IdSet;

/// The most repetitions a command runs (each keeps its timings).
pub const MAX_REPS: usize = 10_000;

/// Repetitions a sweep takes when `--reps` is not given: the median of
/// three, so that one slow run does not make a speedup.
pub const SWEEP_REPS: usize = 3;

/// A row count: digits with optional `_` separators and a K/M/G suffix
/// (powers of 1000).
pub fn count(text: &str) -> Result<u64, String> {
    let t = text.replace('_', "");
    let (digits, mult) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1_000),
        Some('m' | 'M') => (&t[..t.len() - 1], 1_000_000),
        Some('g' | 'G') => (&t[..t.len() - 1], 1_000_000_000),
        _ => (&t[..], 1),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(|| format!("`{text}` is not a count (e.g. 1000, 16M, 2_000_000)"))
}

/// `--reps`, in every command: from 1 to [`MAX_REPS`].
pub fn reps(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if (1..=MAX_REPS).contains(&n) => Ok(n),
        Ok(_) => Err(format!("must be from 1 to {MAX_REPS}")),
        Err(e) => Err(e.to_string()),
    }
}

/// A number of at least 1.
pub fn positive(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// `--memory-limit`: bytes (`8GiB`, `512M`, `2GB`) or a percentage.
pub fn memory_limit(text: &str) -> Result<MemoryLimit, String> {
    MemoryLimit::parse(text).map_err(|e| e.to_string())
}

/// A list of node or CPU ids such as `0,2-3`.
pub fn ids(text: &str) -> Result<IdSet, String> {
    IdSet::parse_list(text).map_err(|e| e.to_string())
}

/// `--format`: csv, parquet or arrow.
pub fn table_format(text: &str) -> Result<numakit_io::Format, String> {
    text.parse()
        .map_err(|_| format!("`{text}` is not a table format (csv, parquet, arrow)"))
}

/// A Parquet compression: zstd, snappy or none.
pub fn parquet_compression(text: &str) -> Result<numakit_io::ParquetCompression, String> {
    text.parse().map_err(|e: numakit_io::IoError| e.to_string())
}

/// One aggregate of an `--agg` list: `count` or FUNC:COLUMN (clap splits
/// the list at commas).
pub fn aggregate(text: &str) -> Result<numakit_frame::aggregate::Aggregate, String> {
    match numakit_frame::aggregate::Aggregate::parse_list(text).map_err(|e| e.to_string())?[..] {
        [ref one] => Ok(one.clone()),
        _ => Err(format!("`{text}` is not one aggregate")),
    }
}

/// One exchange of a `--merge-exchange` list: SCHEDULE\[:SYNC\], such as
/// `ring`, `naive:loose` (tight when the synchronization is not given).
pub fn exchange(text: &str) -> Result<numakit_shuffle::Exchange, String> {
    let (schedule, sync) = text.split_once(':').unwrap_or((text, "tight"));
    Ok(numakit_shuffle::Exchange::new(
        schedule.parse()?,
        sync.parse()?,
    ))
}

/// Parses a key distribution for `rows` rows.
/// Counts in it take K/M/G as elsewhere (`uniform:1M`, `zipf:1.2:64K`).
pub fn key_dist(spec: &str, rows: u64) -> anyhow::Result<numakit_ops::datagen::KeyDist> {
    let expanded = spec
        .split(':')
        .map(|part| match count(part) {
            Ok(n) if part.ends_with(['k', 'K', 'm', 'M', 'g', 'G']) => n.to_string(),
            _ => part.to_string(),
        })
        .collect::<Vec<_>>()
        .join(":");
    numakit_ops::datagen::KeyDist::parse(&expanded, rows).map_err(crate::common::usage::invalid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_parse_with_suffixes() {
        assert_eq!(count("16M"), Ok(16_000_000));
        assert_eq!(count("2_000"), Ok(2000));
        assert_eq!(count("1k"), Ok(1000));
        assert!(count("x").is_err());
        assert!(count("99999999999G").is_err());
    }

    #[test]
    fn repetitions_and_sizes_are_bounded() {
        assert_eq!(reps("3"), Ok(3));
        assert!(reps("0").is_err() && reps("10001").is_err() && reps("x").is_err());
        assert!(positive("0").is_err());
        assert_eq!(table_format("parquet"), Ok(numakit_io::Format::Parquet));
        assert!(table_format("xlsx").is_err());
    }

    #[test]
    fn key_distributions_take_counts_with_suffixes() {
        use numakit_ops::datagen::KeyDist;
        assert!(matches!(
            key_dist("uniform:1M", 10),
            Ok(KeyDist::Uniform { max: 1_000_000 })
        ));
        assert!(matches!(
            key_dist("zipf:1.2:64K", 10),
            Ok(KeyDist::Zipf {
                distinct: 64_000,
                ..
            })
        ));
        assert!(matches!(
            key_dist("zipf:1.5", 7),
            Ok(KeyDist::Zipf { distinct: 7, .. })
        ));
        assert!(key_dist("uniform:xM", 10).is_err());
        assert!(key_dist("bogus", 10).is_err());
    }
}
