//! Renders a [`MachineReport`] as a plain-text table for the CLI. It only
//! formats; every figure comes from the report.

use std::fmt::Write;

use crate::calibration::Calibration;
use crate::predict::MachineReport;

/// The report as text: a header, one row per schedule, then the sweep.
pub fn render_report(report: &MachineReport) -> String {
    let mut out = String::new();
    let l = report.layout;
    let cal = &report.calibration;
    // Writing into a String cannot fail.
    let _ = writeln!(
        out,
        "{}: {} socket(s) x {} thread(s) = {} threads, {:.1} GB shuffled (predicted, not measured)",
        report.machine,
        l.sockets,
        l.threads_per_socket,
        l.threads(),
        report.options.total_bytes / 1e9
    );
    let thread_source = if cal.per_thread_gbs == Calibration::li_nehalem().per_thread_gbs {
        "Li Table 1, Sec. 2"
    } else {
        "per thread as measured on this machine, snoops Li's"
    };
    let _ = writeln!(
        out,
        "model: snoop request {:.3} / response {:.3} per GB read, {:.2} GB/s per thread ({thread_source})",
        cal.coherence_request, cal.coherence_response, cal.per_thread_gbs
    );
    if !report.fit.calibrated {
        let _ = writeln!(out, "{}", report.fit.note);
    }
    let _ = writeln!(
        out,
        "\n{:<16} {:<6} {:>7}  bottleneck",
        "schedule", "sync", "GB/s"
    );
    for r in &report.rows {
        let _ = writeln!(
            out,
            "{:<16} {:<6} {:>7.1}  {}",
            r.strategy.name(),
            r.sync.name(),
            r.gbs,
            r.bottleneck
        );
    }
    let _ = writeln!(
        out,
        "\nthread sweep (tight), GB/s\n{:>7} {:>7} {:>7} {:>9}",
        "threads", "naive", "ring", "migration"
    );
    for p in &report.sweep {
        let _ = writeln!(
            out,
            "{:>7} {:>7.1} {:>7.1} {:>9.1}",
            p.threads, p.naive_gbs, p.ring_gbs, p.migration_gbs
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibration::Calibration;
    use crate::predict::predict_machine;
    use numakit_topology::presets;

    #[test]
    fn the_table_names_every_schedule_and_thread_count() {
        let topo = presets::topology("opteron-istanbul-2s").unwrap();
        let report = predict_machine(&topo, Some(2), &Calibration::li_nehalem()).unwrap();
        let text = render_report(&report);
        assert!(
            text.starts_with("opteron-istanbul-2s: 2 socket(s) x 2 thread(s) = 4 threads"),
            "{text}"
        );
        for name in [
            "naive",
            "ring",
            "random",
            "migration",
            "migration-copy",
            "loose",
        ] {
            assert!(text.contains(name), "{name} missing:\n{text}");
        }
        assert_eq!(
            text.lines()
                .filter(|l| l.trim_start().starts_with('2') || l.trim_start().starts_with('4'))
                .count(),
            2,
            "{text}"
        );
    }
}
