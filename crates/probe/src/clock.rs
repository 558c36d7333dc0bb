//! The processor clock that turns nanoseconds into cycles.
//!
//! Latencies are reported in nanoseconds and in cycles, as Li et al.'s
//! Table 1 does. The clock is the one the kernel reports for the CPUs
//! (`cpu MHz` of `/proc/cpuinfo`, the median over CPUs; in a virtual
//! machine this is the host's nominal rate), or else the highest rate of
//! cpufreq. This module reads; it does not measure the clock, and turbo
//! or power saving can make the real rate differ: reports say which
//! clock they used.

use std::fs;

use serde::Serialize;

/// A clock rate and where it was read.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Clock {
    /// The rate in GHz (cycles per nanosecond), as the kernel reports it;
    /// not measured.
    pub ghz: f64,
    /// Where the rate was read (`/proc/cpuinfo cpu MHz` or `cpufreq
    /// cpuinfo_max_freq`), for reports to cite.
    pub source: &'static str,
}

impl Clock {
    /// Cycles in `ns` nanoseconds at this clock.
    pub fn cycles(&self, ns: f64) -> f64 {
        ns * self.ghz
    }
}

/// The clock of this machine, if the kernel reports one.
pub fn read() -> Option<Clock> {
    let from_cpuinfo = fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| median_mhz(&text));
    if let Some(mhz) = from_cpuinfo {
        return Some(Clock {
            ghz: mhz / 1000.0,
            source: "/proc/cpuinfo cpu MHz",
        });
    }
    fs::read_to_string("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
        .ok()
        .and_then(|t| t.trim().parse::<f64>().ok())
        .filter(|khz| *khz > 0.0)
        .map(|khz| Clock {
            ghz: khz / 1e6,
            source: "cpufreq cpuinfo_max_freq",
        })
}

/// The median of the `cpu MHz` lines of a `/proc/cpuinfo` text.
pub fn median_mhz(cpuinfo: &str) -> Option<f64> {
    let mut rates: Vec<f64> = cpuinfo
        .lines()
        .filter(|l| l.starts_with("cpu MHz"))
        .filter_map(|l| l.split(':').nth(1)?.trim().parse().ok())
        .filter(|mhz: &f64| mhz.is_finite() && *mhz > 0.0)
        .collect();
    if rates.is_empty() {
        return None;
    }
    rates.sort_by(f64::total_cmp);
    Some(rates[rates.len() / 2])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_rate_of_cpuinfo_is_taken() {
        let text = "processor\t: 0\ncpu MHz\t\t: 2600.000\nprocessor\t: 1\ncpu MHz\t\t: 1200.5\n\
                    processor\t: 2\ncpu MHz\t\t: 3000.0\n";
        assert_eq!(median_mhz(text), Some(2600.0));
        assert_eq!(median_mhz("model name: x\n"), None);
        assert_eq!(median_mhz("cpu MHz : 0\n"), None);
    }

    #[test]
    fn cycles_scale_with_the_rate() {
        let clock = Clock {
            ghz: 2.27,
            source: "test",
        };
        assert!((clock.cycles(150.0) - 340.5).abs() < 1e-9);
    }
}
