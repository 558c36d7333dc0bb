//! The memory limit: how much resident memory a process may use, and the
//! checks every layer makes before it allocates (the operators' tables and
//! partitions, the probe's and the shuffle's buffers, generated inputs).
//!
//! A limit is a number of bytes or a percentage of the memory available to
//! the process (what the machine or its cgroup can still give it, plus what
//! it already holds, and no more than its address-space limit, `ulimit
//! -v`, allows). The default is [`DEFAULT_SHARE_PERCENT`] of that, so
//! that the kernel's own needs and other processes keep some room. A check
//! compares the process's resident size now plus what the next step will
//! allocate against the limit, so everything the process holds counts, not
//! only what this layer allocated; a step that would cross it fails with
//! [`LimitExceeded`] before allocating, never with an abort.
//!
//! It does not allocate or reserve memory itself, and it does not watch
//! allocations as they happen: steps whose size is not known in advance
//! (join results) are bounded by the operators with a row limit derived
//! from [`MemoryLimit::headroom`].

use std::fmt;

use serde::Serialize;

/// A step would need more memory than the limit allows.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", limit_message((what, need), (limit, in_use), "ask for less"))]
pub struct LimitExceeded {
    /// The step, naming the option that sized it where one did.
    pub what: String,
    /// What the step would allocate, as a human size (`1.5 GiB`).
    pub need: String,
    /// The limit, as a human size.
    pub limit: String,
    /// The process's resident size when the check was made, as a human size.
    pub in_use: String,
}

/// The one line a refused step gives: what it needs more than what is in
/// use, or, when it asks for nothing more (a check that the process is
/// still under the limit between pieces of work), that the process is
/// already over it; then `advice`.
pub fn limit_message(
    (what, need): (&str, &str),
    (limit, in_use): (&str, &str),
    advice: &str,
) -> String {
    if need == human_bytes(0) {
        format!(
            "{what}: {in_use} is in use, over the memory limit of {limit}; \
             raise --memory-limit, or {advice}"
        )
    } else {
        format!(
            "{what} needs about {need} more, but the memory limit is {limit} and {in_use} is in use; \
             raise --memory-limit, or {advice}"
        )
    }
}

/// A `--memory-limit` that is not a size or a percentage.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadLimit(pub String);

/// The default share of the available memory.
pub const DEFAULT_SHARE_PERCENT: u64 = 80;

/// How the limit was set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LimitOrigin {
    /// Given in bytes.
    Bytes,
    /// A percentage of the available memory.
    Percent(u64),
    /// The default share.
    Default,
    /// No limit.
    Unlimited,
}

/// A limit on the process's resident memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct MemoryLimit {
    /// The limit, in bytes of resident memory.
    pub bytes: u64,
    /// How the limit was set (bytes, a percentage, the default, none).
    pub origin: LimitOrigin,
}

impl Default for MemoryLimit {
    fn default() -> Self {
        let mut limit = Self::percent_of_available(DEFAULT_SHARE_PERCENT);
        limit.origin = LimitOrigin::Default;
        limit
    }
}

impl MemoryLimit {
    /// No limit at all (tests; callers that check memory themselves).
    pub fn unlimited() -> Self {
        MemoryLimit {
            bytes: u64::MAX,
            origin: LimitOrigin::Unlimited,
        }
    }

    /// A limit of `bytes`.
    pub fn bytes(bytes: u64) -> Self {
        MemoryLimit {
            bytes,
            origin: LimitOrigin::Bytes,
        }
    }

    /// `percent` of the memory available to the process.
    pub fn percent_of_available(percent: u64) -> Self {
        let available = available_to_process();
        MemoryLimit {
            bytes: (available as u128 * percent.min(100) as u128 / 100) as u64,
            origin: LimitOrigin::Percent(percent),
        }
    }

    /// Parses `4GiB`, `512M`, `1000000`, `75%`. K, M, G and T (with or
    /// without `iB`) are powers of 1024; KB, MB, GB and TB powers of 1000.
    pub fn parse(spec: &str) -> Result<Self, BadLimit> {
        let bad = || {
            BadLimit(format!(
                "--memory-limit `{spec}` is not a size (e.g. 8GiB, 512M, 2000000000) or a percentage (e.g. 75%)"
            ))
        };
        let text = spec.trim().replace('_', "");
        if let Some(percent) = text.strip_suffix('%') {
            let p: f64 = percent.trim().parse().map_err(|_| bad())?;
            if !(p > 0.0 && p <= 100.0) {
                return Err(BadLimit(format!(
                    "--memory-limit `{spec}`: a percentage must be above 0 and at most 100"
                )));
            }
            return Ok(MemoryLimit {
                bytes: (available_to_process() as f64 * p / 100.0) as u64,
                origin: LimitOrigin::Percent(p.round() as u64),
            });
        }
        let split = text
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(text.len());
        let (number, unit) = text.split_at(split);
        let number: f64 = number.parse().map_err(|_| bad())?;
        let multiplier: u64 = match unit.trim().to_ascii_lowercase().as_str() {
            "" | "b" => 1,
            "k" | "kib" => 1 << 10,
            "m" | "mib" => 1 << 20,
            "g" | "gib" => 1 << 30,
            "t" | "tib" => 1 << 40,
            "kb" => 1_000,
            "mb" => 1_000_000,
            "gb" => 1_000_000_000,
            "tb" => 1_000_000_000_000,
            _ => return Err(bad()),
        };
        let bytes = number * multiplier as f64;
        if !(bytes >= 1.0 && bytes < u64::MAX as f64) {
            return Err(bad());
        }
        Ok(Self::bytes(bytes as u64))
    }

    /// Fails unless `need` more bytes fit under the limit now.
    pub fn check(&self, what: &str, need: u64) -> Result<(), LimitExceeded> {
        if self.origin == LimitOrigin::Unlimited {
            return Ok(());
        }
        let in_use = resident_bytes();
        if in_use.saturating_add(need) > self.bytes {
            return Err(LimitExceeded {
                what: what.to_string(),
                need: human_bytes(need),
                limit: human_bytes(self.bytes),
                in_use: human_bytes(in_use),
            });
        }
        Ok(())
    }

    /// Bytes that may still be allocated under the limit.
    pub fn headroom(&self) -> u64 {
        self.bytes.saturating_sub(resident_bytes())
    }
}

impl fmt::Display for MemoryLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.origin {
            LimitOrigin::Unlimited => write!(f, "unlimited"),
            LimitOrigin::Bytes => write!(f, "{}", human_bytes(self.bytes)),
            LimitOrigin::Percent(p) => write!(f, "{} ({p}% of available)", human_bytes(self.bytes)),
            LimitOrigin::Default => write!(
                f,
                "{} ({DEFAULT_SHARE_PERCENT}% of available, the default)",
                human_bytes(self.bytes)
            ),
        }
    }
}

/// `1.5 GiB` style.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// The memory the process may use: what the machine (or its cgroup) can
/// still give plus what the process already holds, and at most what its
/// address-space limit leaves (that limit counts reserved but untouched
/// memory too, so the part reserved beyond the resident set is taken off).
pub fn available_to_process() -> u64 {
    let resident = resident_bytes();
    let machine = numakit_topology::sysfs::mem_available()
        .unwrap_or(u64::MAX / 2)
        .saturating_add(resident);
    match crate::sys::address_space_limit() {
        Some(limit) => {
            let reserved = status_field("VmSize:").unwrap_or(0);
            machine.min(limit.saturating_sub(reserved.saturating_sub(resident)))
        }
        None => machine,
    }
}

/// The process's resident memory now (VmRSS), in bytes; 0 if unknown.
pub fn resident_bytes() -> u64 {
    status_field("VmRSS:").unwrap_or(0)
}

/// The process's peak resident memory so far (VmHWM), in bytes.
pub fn peak_resident_bytes() -> u64 {
    status_field("VmHWM:").unwrap_or(0)
}

fn status_field(name: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(name))?;
    let kib: u64 = line[name.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_percentages_parse() {
        assert_eq!(MemoryLimit::parse("8GiB").unwrap().bytes, 8 << 30);
        assert_eq!(MemoryLimit::parse("512M").unwrap().bytes, 512 << 20);
        assert_eq!(MemoryLimit::parse("2GB").unwrap().bytes, 2_000_000_000);
        assert_eq!(MemoryLimit::parse("1_000").unwrap().bytes, 1000);
        assert_eq!(MemoryLimit::parse("1.5k").unwrap().bytes, 1536);
        let half = MemoryLimit::parse("50%").unwrap();
        assert_eq!(half.origin, LimitOrigin::Percent(50));
        assert!(half.bytes > 0);
        for bad in ["", "x", "0", "-1G", "12 parsecs", "0%", "150%", "%"] {
            assert!(MemoryLimit::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn checks_fail_past_the_limit_with_one_line() {
        let tiny = MemoryLimit::bytes(1 << 20);
        let message = tiny.check("the test", 1 << 30).unwrap_err().to_string();
        assert!(message.contains("raise --memory-limit"), "{message}");
        assert!(
            message.contains("the test needs about 1.0 GiB more"),
            "{message}"
        );
        assert!(!message.contains('\n'));
        // A step that asks for nothing more says the process is over.
        let message = tiny.check("the groups", 0).unwrap_err().to_string();
        assert!(
            message.starts_with("the groups: ")
                && message.contains("over the memory limit of 1.0 MiB"),
            "{message}"
        );
        assert!(!message.contains("needs about"), "{message}");
        MemoryLimit::unlimited()
            .check("anything", u64::MAX)
            .unwrap();
        let now = resident_bytes();
        assert!(
            now > 0 && peak_resident_bytes() >= now,
            "the peak is read after"
        );
        assert!(MemoryLimit::default().bytes > 0);
    }
}
