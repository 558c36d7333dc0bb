//! Small text-formatting helpers shared by the commands.

use serde::Serialize;

/// Min, median and max of a sample.
#[derive(Clone, Debug, Serialize)]
pub struct Spread {
    /// The smallest value (+inf for an empty sample).
    pub min: f64,
    /// The middle value, or the mean of the middle two (NaN when empty).
    pub median: f64,
    /// The largest value (-inf for an empty sample).
    pub max: f64,
}

impl Spread {
    /// The spread of a sample (for an empty one: +inf min, NaN median, -inf
    /// max).
    pub fn of(values: &[f64]) -> Self {
        Self {
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            median: median(values),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        }
    }
}

/// Bytes as a human size: `512 B`, `48 KiB`, `23.4 GiB`.
pub use numakit_topology::units::human_bytes as bytes;

/// An optional value, or `-`.
pub fn opt<T: std::fmt::Display>(value: Option<T>) -> String {
    value.map_or_else(|| "-".to_string(), |v| v.to_string())
}

/// Left-aligned columns separated by two spaces.
pub fn table(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    rows.iter()
        .map(|r| {
            let cells: Vec<String> = r
                .iter()
                .enumerate()
                .map(|(i, cell)| format!("{cell:<w$}", w = widths[i]))
                .collect();
            cells.join("  ").trim_end().to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

pub use numakit_ops::timing::median;

/// The name a user types for an option value (`best-effort`, `left`,
/// `zipf:1.2`): the value's serde name, never its Rust debug name.
pub fn name_of<T: serde::Serialize + std::fmt::Debug>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => name.to_lowercase(),
        Ok(serde_json::Value::Object(fields)) if fields.len() == 1 => fields
            .iter()
            .map(|(k, v)| format!("{}:{v}", k.to_lowercase()))
            .collect(),
        _ => format!("{value:?}").to_lowercase(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_values_are_named_as_users_type_them() {
        assert_eq!(
            name_of(&numakit_placement::PlacementMode::BestEffort),
            "best-effort"
        );
        assert_eq!(
            name_of(&numakit_ops::join::JoinKind::LeftOuter),
            "left-outer"
        );
        assert_eq!(name_of(&numakit_shuffle::Skew::Zipf(1.5)), "zipf:1.5");
        assert_eq!(name_of(&numakit_shuffle::Skew::Uniform), "uniform");
    }

    #[test]
    fn formats() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(48 << 10), "48 KiB");
        assert_eq!(bytes(3 << 29), "1.5 GiB");
        assert_eq!(opt::<u32>(None), "-");
        assert_eq!(
            table(&[
                vec!["a".into(), "bb".into()],
                vec!["ccc".into(), "d".into()]
            ]),
            "a    bb\nccc  d"
        );
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
    }
}
