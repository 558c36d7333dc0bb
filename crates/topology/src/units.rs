//! Sizes as people read them. Every layer reports memory sizes (buffers
//! that do not fit, node memory, cache budgets); this is the one way they
//! are written.

/// Bytes as a human size: `512 B`, `48 KiB`, `23.4 GiB` (binary units,
/// one decimal unless the size is whole).
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 || value.fract() == 0.0 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(48 << 10), "48 KiB");
        assert_eq!(human_bytes(256 << 20), "256 MiB");
        assert_eq!(human_bytes(3 << 29), "1.5 GiB");
    }
}
