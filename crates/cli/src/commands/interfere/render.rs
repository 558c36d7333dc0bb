//! `numakit interfere`'s report as text: the matrices, the hardware
//! counters beside them (or the one line saying why there are none), and
//! each workload's class. It formats; it measures nothing.

use numakit_interfere::{Cell, InterferenceReport, Workload};

use crate::render::format::table;

/// A matrix as text: a row per victim, a column per aggressor.
pub fn matrix_text(cells: &[Cell], workloads: &[Workload]) -> String {
    let mut rows = vec![std::iter::once("victim \\ beside".to_string())
        .chain(workloads.iter().map(|w| w.to_string()))
        .collect::<Vec<_>>()];
    for v in workloads {
        let mut row = vec![v.to_string()];
        for a in workloads {
            let cell = cells.iter().find(|c| c.victim == *v && c.aggressor == *a);
            row.push(cell.map_or("-".into(), |c| format!("{:.2}x", c.slowdown)));
        }
        rows.push(row);
    }
    table(&rows)
}

/// The report as text.
pub fn render(r: &InterferenceReport) -> String {
    let workloads: Vec<Workload> = r.alone.iter().map(|a| a.workload).collect();
    let alone: Vec<String> = r
        .alone
        .iter()
        .map(|a| format!("{} {:.3e} {}/s", a.workload, a.per_second, a.unit))
        .collect();
    let mut out = vec![
        format!(
            "interference: {} ms per run, medians of {}; probe table {} MiB (the usable last-level cache)",
            r.run_ms,
            r.reps,
            r.sizes.cache_bytes >> 20
        ),
        format!("alone (CPU {}): {}", r.colocated_seats.victim.cpu, alone.join(", ")),
        format!(
            "slowdown co-located (CPUs {} and {}, node {}: shared last-level cache and memory):",
            r.colocated_seats.victim.cpu, r.colocated_seats.aggressor.cpu, r.colocated_seats.victim.node
        ),
        matrix_text(&r.colocated, &workloads),
    ];
    match (&r.isolated, &r.isolated_seats) {
        (Some(cells), Some(seats)) => {
            out.push(format!(
                "slowdown isolated (CPU {} on node {}, CPU {} on node {}):",
                seats.victim.cpu, seats.victim.node, seats.aggressor.cpu, seats.aggressor.node
            ));
            out.push(matrix_text(cells, &workloads));
        }
        _ => out.push(format!(
            "isolated: unavailable ({})",
            r.isolated_unavailable.as_deref().unwrap_or("?")
        )),
    }
    out.extend(counters_text(r));
    out.extend(classes_text(r));
    if !r.placement_verified {
        out.push("warning: some measuring threads were not seen on their node".into());
    }
    out.join("\n")
}

/// The co-located victims' hardware counts alone and beside each
/// aggressor, as a table; or one line saying why there are none.
fn counters_text(r: &InterferenceReport) -> Vec<String> {
    if let Some(reason) = &r.counters_unavailable {
        return vec![format!("hardware counters: unavailable ({reason})")];
    }
    if r.colocated_counters.is_empty() {
        return vec!["hardware counters: none of these victims works on its measuring thread (join and aggregate work on a pool's worker)".into()];
    }
    let two = |a: Option<f64>, b: Option<f64>| {
        let f = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2}"));
        format!("{} -> {}", f(a), f(b))
    };
    let mut rows = vec![
        ["victim", "beside", "slowdown", "LLC misses per unit", "IPC"]
            .map(String::from)
            .to_vec(),
    ];
    for c in &r.colocated_counters {
        let cell = r
            .colocated
            .iter()
            .find(|x| x.victim == c.victim && x.aggressor == c.aggressor);
        let unit = c.beside.work.map_or("unit", |w| w.unit);
        rows.push(vec![
            c.victim.to_string(),
            c.aggressor.to_string(),
            cell.map_or("-".into(), |x| format!("{:.2}x", x.slowdown)),
            format!(
                "{} per {unit}",
                two(
                    c.alone.llc_misses_per_unit(),
                    c.beside.llc_misses_per_unit()
                )
            ),
            two(c.alone.ipc(), c.beside.ipc()),
        ]);
    }
    vec![
        "hardware counters of the co-located victim, alone -> beside (LLC: the kernel's generic cache events):".into(),
        table(&rows),
    ]
}

/// Each workload's class, a line each under a heading.
fn classes_text(r: &InterferenceReport) -> Vec<String> {
    let figure = |x: Option<f64>| x.map_or("-".into(), |v| format!("{v:.2}x"));
    let mut out = vec![
        "classes (sensitivity: its slowdown beside scan; appetite: scan's slowdown beside it):"
            .to_string(),
    ];
    out.extend(r.classes.iter().map(|c| {
        format!(
            "  {}: sensitivity {}, appetite {}: {} (declared: {})",
            c.workload,
            figure(c.cache_sensitivity),
            figure(c.bandwidth_appetite),
            c.measured,
            c.declared
        )
    }));
    out
}
