//! Measures numakit-io on big two-column tables: writes a (u64 key, i64
//! payload) table in a format and reads it back, reporting times, file size
//! and the process's peak memory.
//!
//! ```text
//! cargo run --release -p numakit-io --example io_roundtrip -- write ROWS PATH [zstd|snappy|none]
//! cargo run --release -p numakit-io --example io_roundtrip -- read PATH
//! ```
//!
//! `read` runs in a fresh process so that its peak memory is that of reading
//! alone. It is a measuring tool, not a test: it checks only row counts.

use std::time::Instant;

use numakit_io::{Column, ParquetCompression, Table, WriteOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["write", rows, path, rest @ ..] => write(rows.parse()?, path, rest.first().copied()),
        ["read", path] => read(path),
        _ => Err("usage: io_roundtrip write ROWS PATH [zstd|snappy|none] | read PATH".into()),
    }
}

fn write(
    rows: u64,
    path: &str,
    compression: Option<&str>,
) -> Result<(), Box<dyn std::error::Error>> {
    let started = Instant::now();
    let keys = (0..rows)
        .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .collect();
    let payloads = (0..rows as i64).collect();
    let table = Table::new(vec![
        Column::unsigned("key", keys),
        Column::signed("payload", payloads),
    ]);
    let generated = started.elapsed();
    let parquet_compression = match compression {
        Some("snappy") => ParquetCompression::Snappy,
        Some("none") => ParquetCompression::None,
        _ => ParquetCompression::Zstd,
    };
    let options = WriteOptions {
        parquet_compression,
        ..Default::default()
    };
    let started = Instant::now();
    numakit_io::write_with(path, &table, &options)?;
    let written = started.elapsed();
    let size = std::fs::metadata(path)?.len();
    println!(
        "write {path}: {rows} rows, generate {generated:.2?}, write {written:.2?}, {:.1} MiB, {:.0} MB/s of values",
        size as f64 / (1 << 20) as f64,
        (rows * 16) as f64 / written.as_secs_f64() / 1e6
    );
    Ok(())
}

fn read(path: &str) -> Result<(), Box<dyn std::error::Error>> {
    let started = Instant::now();
    let table = numakit_io::read(path, None, None)?;
    let elapsed = started.elapsed();
    let rows = table.rows();
    println!(
        "read {path}: {rows} rows in {elapsed:.2?} ({:.0} MB/s of values), values {:.2} GiB, peak RSS {:.2} GiB",
        (rows * 16) as f64 / elapsed.as_secs_f64() / 1e6,
        (rows * 16) as f64 / (1u64 << 30) as f64,
        peak_rss_kib() as f64 / (1u64 << 20) as f64
    );
    Ok(())
}

/// The process's peak resident memory (VmHWM) in KiB; 0 where unknown.
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}
