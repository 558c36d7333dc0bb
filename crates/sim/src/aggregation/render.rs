//! Renders an [`AggReport`] as a plain-text table for the CLI. It only
//! formats; every figure comes from the report.

use std::fmt::Write;

use super::{AggReport, Method};

/// `1K`, `256K`, `16M`: keys in binary units, as Li labels Figure 10.
pub(super) fn keys_label(keys: f64) -> String {
    let units = [(1u64 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")];
    for (size, unit) in units {
        let x = keys / size as f64;
        if x >= 1.0 {
            return if (x - x.round()).abs() < 0.05 {
                format!("{:.0}{unit}", x.round())
            } else {
                format!("{x:.1}{unit}")
            };
        }
    }
    format!("{keys:.0}")
}

/// The report as text: a header, one row per number of keys (GB/s of each
/// method and the share of time each spends on table updates), then the
/// crossovers.
pub fn render_aggregation(report: &AggReport) -> String {
    let mut out = String::new();
    let l = report.layout;
    // Writing into a String cannot fail.
    let _ = writeln!(
        out,
        "{}: group-by aggregation (Li Sec. 4.3, Figure 10), {} partitions = {} socket(s) x {} thread(s), {:.2e} rows of 16 B (predicted, not measured)",
        report.machine,
        report.partitions,
        l.sockets,
        l.threads_per_socket,
        report.options.rows
    );
    if !report.fit.calibrated {
        let _ = writeln!(out, "{}", report.fit.note);
    }
    let _ = writeln!(
        out,
        "cache room per thread {:.0} KiB; {} sync; updates that hit cost nothing (GB/s are upper bounds)",
        report.cache_bytes_per_thread / 1024.0,
        report.options.sync
    );
    out.push('\n');
    write_points(&mut out, report);
    out.push('\n');
    write_crossovers(&mut out, report);
    out
}

/// One row per number of keys: GB/s of each method and its update share.
fn write_points(out: &mut String, report: &AggReport) {
    let _ = write!(out, "{:>8} {:>10}", "keys/part", "table");
    for m in Method::ALL {
        let _ = write!(out, " {:>16}", m.name());
    }
    let _ = writeln!(out, "   (GB/s; update share of time)");
    for p in &report.points {
        let _ = write!(
            out,
            "{:>8} {:>10}",
            keys_label(p.keys_per_partition),
            format!("{} B", keys_label(p.table_bytes))
        );
        for m in Method::ALL {
            match p.get(m) {
                Some(r) => {
                    let cell = format!("{:.1} ({:.0}%)", r.gbs, 100.0 * r.update_share);
                    let _ = write!(out, " {cell:>16}");
                }
                None => {
                    let _ = write!(out, " {:>16}", "-");
                }
            }
        }
        let _ = writeln!(out);
    }
}

/// Where the ring shuffle overtakes each migrating method, if it does.
fn write_crossovers(out: &mut String, report: &AggReport) {
    for c in &report.crossovers {
        let _ = match (c.keys_per_partition, c.total_groups) {
            (Some(k), Some(total)) => writeln!(
                out,
                "crossover, ring shuffle vs {}: {} keys per partition ({} groups in all){}",
                c.against.name(),
                keys_label(k),
                keys_label(total),
                match c.lowest_ratio_after {
                    Some(r) if r < 1.0 => format!(
                        "; {} ahead again further up, by up to {:.0}%",
                        c.against.name(),
                        100.0 * (1.0 / r - 1.0)
                    ),
                    _ => String::new(),
                }
            ),
            _ => writeln!(
                out,
                "crossover, ring shuffle vs {}: none in the sweep ({})",
                c.against.name(),
                c.note
            ),
        };
    }
}
