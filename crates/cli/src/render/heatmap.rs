//! Heat maps as plain SVG: one panel per matrix (rows are CPU nodes,
//! columns memory nodes), each cell shaded by its value and labelled
//! with it while the matrix is small enough to read. It draws; it does
//! not compute anything from the values but their range.

use std::fmt::Write;

use crate::render::chart::escape;

/// One matrix to draw.
pub struct Heatmap {
    /// The panel's title.
    pub title: String,
    /// Printed after each value (`ns`, `GB/s`).
    pub unit: String,
    /// Row labels, top to bottom (the CPU nodes).
    pub rows: Vec<String>,
    /// Column labels, left to right (the memory nodes).
    pub columns: Vec<String>,
    /// `values[row][column]`; `None` cells are left blank.
    pub values: Vec<Vec<Option<f64>>>,
    /// Dark means high (bandwidth) in blue, or high (latency) in red.
    pub high_is_good: bool,
}

const PANEL: f64 = 360.0;
const MARGIN: f64 = 70.0;
const PANELS_PER_ROW: usize = 2;
/// Largest cell (pixels), so that a small matrix stays a matrix.
const MAX_CELL: f64 = 90.0;
/// Cells smaller than this (pixels) carry no value label.
const LABELLED_CELL: f64 = 34.0;

/// Every map in a grid of panels, under one title.
pub fn heatmaps(title: &str, maps: &[Heatmap]) -> String {
    let grid_rows = maps.len().div_ceil(PANELS_PER_ROW).max(1);
    let width = PANELS_PER_ROW as f64 * (PANEL + MARGIN) + MARGIN;
    let height = grid_rows as f64 * (PANEL + MARGIN) + 50.0;
    let mut svg = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">
<rect width="100%" height="100%" fill="white"/>
<text x="{}" y="24" text-anchor="middle" font-size="15">{}</text>
"#,
        width / 2.0,
        escape(title)
    );
    for (i, map) in maps.iter().enumerate() {
        let x = MARGIN + (i % PANELS_PER_ROW) as f64 * (PANEL + MARGIN);
        let y = 50.0 + (i / PANELS_PER_ROW) as f64 * (PANEL + MARGIN) + 20.0;
        panel(&mut svg, map, x, y);
    }
    svg.push_str("</svg>\n");
    svg
}

fn panel(svg: &mut String, map: &Heatmap, x: f64, y: f64) {
    let (rows, cols) = (map.rows.len().max(1), map.columns.len().max(1));
    let cell = ((PANEL - 30.0) / rows.max(cols) as f64).min(MAX_CELL);
    let values = map.values.iter().flatten().flatten().copied();
    let (low, high) = values.fold((f64::MAX, f64::MIN), |(l, h), v| (l.min(v), h.max(v)));
    let _ = writeln!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" font-size="13">{}</text>"#,
        x,
        y - 8.0,
        escape(&map.title)
    );
    for (r, name) in map.rows.iter().enumerate() {
        let cy = y + 30.0 + (r as f64 + 0.5) * cell;
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            x + 26.0,
            cy + 4.0,
            escape(name)
        );
    }
    for (c, name) in map.columns.iter().enumerate() {
        let cx = x + 30.0 + (c as f64 + 0.5) * cell;
        let _ = writeln!(
            svg,
            r#"<text x="{cx:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            y + 24.0,
            escape(name)
        );
    }
    for (r, row) in map.values.iter().enumerate() {
        for (c, value) in row.iter().enumerate() {
            let Some(v) = *value else { continue };
            let share = if high > low {
                (v - low) / (high - low)
            } else {
                0.5
            };
            let (cx, cy) = (x + 30.0 + c as f64 * cell, y + 30.0 + r as f64 * cell);
            let _ = writeln!(
                svg,
                r##"<rect x="{cx:.1}" y="{cy:.1}" width="{cell:.1}" height="{cell:.1}" fill="{}" stroke="#fff"/>"##,
                shade(share, map.high_is_good)
            );
            if cell >= LABELLED_CELL {
                let ink = if share > 0.6 { "white" } else { "black" };
                let _ = writeln!(
                    svg,
                    r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" fill="{ink}">{}</text>"#,
                    cx + cell / 2.0,
                    cy + cell / 2.0 + 4.0,
                    escape(&format!("{} {}", figure(v), map.unit))
                );
            }
        }
    }
}

/// From near white (share 0) to the full colour (share 1).
fn shade(share: f64, blue: bool) -> String {
    let (r, g, b) = if blue {
        (0x2b, 0x57, 0x8c)
    } else {
        (0xb2, 0x22, 0x2e)
    };
    let mix =
        |full: u8| (255.0 - (255.0 - f64::from(full)) * (0.1 + 0.9 * share.clamp(0.0, 1.0))) as u8;
    format!("#{:02x}{:02x}{:02x}", mix(r), mix(g), mix(b))
}

/// Three significant digits, no more.
fn figure(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cell_is_drawn_and_labelled_while_small() {
        let map = Heatmap {
            title: "latency <base pages>".into(),
            unit: "ns".into(),
            rows: vec!["node 0".into(), "node 1".into()],
            columns: vec!["node 0".into(), "node 1".into()],
            values: vec![vec![Some(90.0), Some(140.0)], vec![Some(141.0), None]],
            high_is_good: false,
        };
        let svg = heatmaps("probe", &[map]);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
        assert_eq!(
            svg.matches("<rect x=").count(),
            3,
            "three values, one blank"
        );
        assert!(svg.contains(">90.0 ns<") && svg.contains(">141 ns<"));
        assert!(svg.contains("&lt;base pages&gt;"));
    }

    #[test]
    fn shades_run_from_light_to_full() {
        assert_eq!(shade(1.0, true), "#2b578c");
        assert!(shade(0.0, false) > shade(1.0, false));
    }
}
