//! Plain SVG charts: grouped bars with min/max whiskers (the style of Li
//! Figure 6) and lines over a thread sweep (Figure 7). Hand-written SVG
//! keeps the CLI free of plotting dependencies; it draws, it does not
//! compute statistics.

use std::fmt::Write;

/// One bar: label, palette colour, min, median (bar height) and max.
pub struct Bar {
    /// Text under the bar (drawn slanted).
    pub label: String,
    /// Index into the palette (bars of one kind share a colour).
    pub colour: usize,
    /// Bottom of the whisker, in the y axis's unit.
    pub min: f64,
    /// Height of the bar, printed above it.
    pub median: f64,
    /// Top of the whisker; the tallest one sets the y axis's range.
    pub max: f64,
}

/// One line of a line chart: name and (x, y) points.
pub struct Series {
    /// The line's name in the legend.
    pub name: String,
    /// (x, y) points in the axes' units, joined in the order given.
    pub points: Vec<(f64, f64)>,
}

const WIDTH: f64 = 760.0;
const HEIGHT: f64 = 420.0;
const LEFT: f64 = 70.0;
const BOTTOM: f64 = 90.0;
const TOP: f64 = 50.0;
const COLOURS: [&str; 6] = [
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#b07aa1",
];

fn header(title: &str, y_label: &str) -> String {
    let mut svg = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" font-family="sans-serif" font-size="12">
<rect width="100%" height="100%" fill="white"/>
<text x="{}" y="25" text-anchor="middle" font-size="15">{}</text>
<text x="18" y="{}" transform="rotate(-90 18 {})" text-anchor="middle">{}</text>
"#,
        WIDTH / 2.0,
        escape(title),
        (TOP + HEIGHT - BOTTOM) / 2.0,
        (TOP + HEIGHT - BOTTOM) / 2.0,
        escape(y_label)
    );
    let _ = writeln!(
        svg,
        r#"<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{}" stroke="black"/><line x1="{LEFT}" y1="{}" x2="{}" y2="{}" stroke="black"/>"#,
        HEIGHT - BOTTOM,
        HEIGHT - BOTTOM,
        WIDTH - 20.0,
        HEIGHT - BOTTOM
    );
    svg
}

fn y_axis(svg: &mut String, top: f64) {
    for i in 0..=5 {
        let v = top * i as f64 / 5.0;
        let y = y_of(v, top);
        let _ = writeln!(
            svg,
            r##"<line x1="{}" y1="{y:.1}" x2="{}" y2="{y:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{v:.0}</text>"##,
            LEFT,
            WIDTH - 20.0,
            LEFT - 6.0,
            y + 4.0
        );
    }
}

fn y_of(v: f64, top: f64) -> f64 {
    HEIGHT - BOTTOM - (v / top) * (HEIGHT - BOTTOM - TOP)
}

/// The smallest of 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10 x 10^k above `max`.
fn nice_top(max: f64) -> f64 {
    if max.is_nan() || max <= 0.0 {
        return 1.0;
    }
    let step = 10f64.powf(max.log10().floor());
    [1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0]
        .iter()
        .map(|m| m * step)
        .find(|&top| top >= max)
        .unwrap_or(10.0 * step)
}

pub(crate) fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Bars with whiskers, and an optional dashed reference line.
pub fn bars(title: &str, y_label: &str, bars: &[Bar], reference: Option<(&str, f64)>) -> String {
    let max = bars
        .iter()
        .map(|b| b.max)
        .chain(reference.map(|r| r.1))
        .fold(0.0, f64::max);
    let top = nice_top(max * 1.05);
    let mut svg = header(title, y_label);
    y_axis(&mut svg, top);
    let slot = (WIDTH - 20.0 - LEFT) / bars.len().max(1) as f64;
    for (i, b) in bars.iter().enumerate() {
        let x = LEFT + slot * i as f64 + slot * 0.15;
        let w = slot * 0.7;
        let colour = COLOURS[b.colour % COLOURS.len()];
        let _ = writeln!(
            svg,
            r#"<rect x="{x:.1}" y="{:.1}" width="{w:.1}" height="{:.1}" fill="{colour}"/>"#,
            y_of(b.median, top),
            y_of(0.0, top) - y_of(b.median, top)
        );
        let cx = x + w / 2.0;
        let _ = writeln!(
            svg,
            r#"<line x1="{cx:.1}" y1="{:.1}" x2="{cx:.1}" y2="{:.1}" stroke="black"/><text x="{cx:.1}" y="{:.1}" text-anchor="middle">{:.1}</text>"#,
            y_of(b.min, top),
            y_of(b.max, top),
            y_of(b.max, top) - 5.0,
            b.median
        );
        let ly = HEIGHT - BOTTOM + 14.0;
        let _ = writeln!(
            svg,
            r#"<text x="{cx:.1}" y="{ly:.1}" text-anchor="end" transform="rotate(-30 {cx:.1} {ly:.1})">{}</text>"#,
            escape(&b.label)
        );
    }
    if let Some((label, v)) = reference {
        let y = y_of(v, top);
        let _ = writeln!(
            svg,
            r#"<line x1="{LEFT}" y1="{y:.1}" x2="{}" y2="{y:.1}" stroke="black" stroke-dasharray="6 4"/><text x="{}" y="{:.1}" text-anchor="end">- - - {} {v:.1}</text>"#,
            WIDTH - 20.0,
            WIDTH - 20.0,
            TOP - 8.0,
            escape(label)
        );
    }
    svg.push_str("</svg>\n");
    svg
}

/// Lines over a numeric x axis, with a legend.
pub fn lines(title: &str, x_label: &str, y_label: &str, series: &[Series]) -> String {
    let all = series.iter().flat_map(|s| s.points.iter());
    let (x_max, y_max) = all.fold((1.0f64, 0.0f64), |(x, y), p| (x.max(p.0), y.max(p.1)));
    let top = nice_top(y_max * 1.05);
    let mut svg = header(title, y_label);
    y_axis(&mut svg, top);
    let x_of = |x: f64| LEFT + (x / x_max) * (WIDTH - 40.0 - LEFT);
    for (i, s) in series.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let path: Vec<String> = s
            .points
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", x_of(x), y_of(y, top)))
            .collect();
        let _ = writeln!(
            svg,
            r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2"/>"#,
            path.join(" ")
        );
        for &(x, y) in &s.points {
            let _ = writeln!(
                svg,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{colour}"/>"#,
                x_of(x),
                y_of(y, top)
            );
        }
        let ly = TOP + 16.0 * i as f64;
        let _ = writeln!(
            svg,
            r#"<rect x="{}" y="{:.1}" width="12" height="12" fill="{colour}"/><text x="{}" y="{:.1}">{}</text>"#,
            LEFT + 10.0,
            ly,
            LEFT + 28.0,
            ly + 10.0,
            escape(&s.name)
        );
    }
    for (x, _) in series.first().map(|s| s.points.clone()).unwrap_or_default() {
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{x}</text>"#,
            x_of(x),
            HEIGHT - BOTTOM + 16.0
        );
    }
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        WIDTH / 2.0,
        HEIGHT - BOTTOM + 40.0,
        escape(x_label)
    );
    svg.push_str("</svg>\n");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charts_are_well_formed() {
        let b = bars(
            "t <1>",
            "GB/s",
            &[Bar {
                label: "ring (tight)".into(),
                colour: 0,
                min: 1.0,
                median: 2.0,
                max: 3.0,
            }],
            Some(("plain read", 2.5)),
        );
        assert!(b.starts_with("<svg") && b.trim_end().ends_with("</svg>"));
        assert!(
            b.contains("t &lt;1&gt;") && b.contains("ring (tight)") && b.contains("plain read 2.5")
        );
        let l = lines(
            "t",
            "threads",
            "GB/s",
            &[Series {
                name: "naive".into(),
                points: vec![(1.0, 2.0), (2.0, 3.0)],
            }],
        );
        assert!(l.contains("<polyline") && l.contains("naive"));
        assert!(bars("empty", "y", &[], None).contains("</svg>"));
        assert_eq!(nice_top(0.0), 1.0);
        assert_eq!(nice_top(73.0), 80.0);
        assert_eq!(nice_top(103.0), 120.0);
        assert_eq!(nice_top(34.5), 40.0);
    }
}
