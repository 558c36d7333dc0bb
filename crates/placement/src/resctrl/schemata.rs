//! Schemata: the per-group text in which resctrl states cache masks and
//! bandwidth limits.
//!
//! A schemata file has one line per resource, `L3:0=fffff;1=fffff` or
//! `MB:0=100;1=100`: the resource, then `domain=value` pairs separated by
//! `;`. Domains are cache ids for caches and, for memory bandwidth, the id
//! of the L3 domain (or node) the controller sits behind. Cache values are
//! capacity bitmasks (CBMs) in hex; bandwidth values are decimal. The kernel
//! right-aligns resource names and pads values when it prints a file
//! (`    MB:0=  100;1=  100`), so parsing trims both.
//!
//! This module parses and formats that text and checks masks for shape. It
//! does not read or write files and does not know which resources a machine
//! has: [`super::info`] does that.

use std::collections::BTreeMap;
use std::fmt;

use super::error::ParseError;

/// A resource named in a schemata line.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Resource {
    /// L3 cache allocation (CAT) without code/data prioritisation.
    L3,
    /// The code half of L3 with CDP on.
    L3Code,
    /// The data half of L3 with CDP on.
    L3Data,
    /// L2 cache allocation.
    L2,
    /// The code half of L2 with CDP on.
    L2Code,
    /// The data half of L2 with CDP on.
    L2Data,
    /// Memory bandwidth allocation (MBA).
    Mb,
    /// A resource this crate does not act on (`SMBA`, ...); kept as read.
    Other(String),
}

impl Resource {
    /// The resource of a schemata line's name (`L3`, `L3CODE`, `MB`, ...).
    pub fn from_name(name: &str) -> Self {
        match name {
            "L3" => Self::L3,
            "L3CODE" => Self::L3Code,
            "L3DATA" => Self::L3Data,
            "L2" => Self::L2,
            "L2CODE" => Self::L2Code,
            "L2DATA" => Self::L2Data,
            "MB" => Self::Mb,
            other => Self::Other(other.to_string()),
        }
    }

    /// The name as resctrl spells it.
    pub fn name(&self) -> &str {
        match self {
            Self::L3 => "L3",
            Self::L3Code => "L3CODE",
            Self::L3Data => "L3DATA",
            Self::L2 => "L2",
            Self::L2Code => "L2CODE",
            Self::L2Data => "L2DATA",
            Self::Mb => "MB",
            Self::Other(name) => name,
        }
    }

    /// The cache level a cache resource partitions (3 for `L3CODE`), or
    /// `None` for bandwidth and unknown resources.
    pub fn cache_level(&self) -> Option<u8> {
        match self {
            Self::L3 | Self::L3Code | Self::L3Data => Some(3),
            Self::L2 | Self::L2Code | Self::L2Data => Some(2),
            Self::Mb | Self::Other(_) => None,
        }
    }

    /// Whether values are hex bitmasks (caches) rather than decimal numbers.
    fn hex_values(&self) -> bool {
        match self {
            Self::Other(name) => {
                let mut chars = name.chars();
                chars.next() == Some('L') && chars.next().is_some_and(|c| c.is_ascii_digit())
            }
            other => other.cache_level().is_some(),
        }
    }
}

impl fmt::Display for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One line: a resource's value in each domain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemataLine {
    /// The resource.
    pub resource: Resource,
    /// Domain id to value (a CBM for caches, a bandwidth for `MB`).
    pub domains: BTreeMap<u32, u64>,
}

impl SchemataLine {
    /// A line giving every domain in `domains` the same `value`.
    pub fn uniform(resource: Resource, domains: &[u32], value: u64) -> Self {
        Self {
            resource,
            domains: domains.iter().map(|&d| (d, value)).collect(),
        }
    }

    /// Parses one line (`L3:0=ff;1=ff`, leading blanks allowed).
    pub fn parse(line: &str) -> Result<Self, ParseError> {
        let (name, list) = line
            .trim()
            .split_once(':')
            .ok_or_else(|| ParseError::new(line, "no `:` after the resource name"))?;
        let name = name.trim();
        if name.is_empty() {
            return Err(ParseError::new(line, "no resource name"));
        }
        let resource = Resource::from_name(name);
        let radix = if resource.hex_values() { 16 } else { 10 };
        let mut domains = BTreeMap::new();
        for pair in list.split(';').filter(|p| !p.trim().is_empty()) {
            let (id, value) = pair
                .split_once('=')
                .ok_or_else(|| ParseError::new(line, format!("`{pair}` is not domain=value")))?;
            let id: u32 = id
                .trim()
                .parse()
                .map_err(|_| ParseError::new(line, format!("`{id}` is not a domain id")))?;
            let value = u64::from_str_radix(value.trim(), radix).map_err(|_| {
                ParseError::new(line, format!("`{value}` is not a base-{radix} value"))
            })?;
            if domains.insert(id, value).is_some() {
                return Err(ParseError::new(line, format!("domain {id} given twice")));
            }
        }
        if domains.is_empty() {
            return Err(ParseError::new(line, "no domains"));
        }
        Ok(Self { resource, domains })
    }
}

impl fmt::Display for SchemataLine {
    /// The line as the kernel takes it: `L3:0=f0;1=f0`, `MB:0=50;1=50`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:", self.resource)?;
        for (i, (id, value)) in self.domains.iter().enumerate() {
            let sep = if i == 0 { "" } else { ";" };
            if self.resource.hex_values() {
                write!(f, "{sep}{id}={value:x}")?;
            } else {
                write!(f, "{sep}{id}={value}")?;
            }
        }
        Ok(())
    }
}

/// A whole schemata file: one line per resource.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Schemata {
    /// The lines, in file order.
    pub lines: Vec<SchemataLine>,
}

impl Schemata {
    /// Parses a schemata file; blank lines are skipped, a resource given
    /// twice is an error.
    pub fn parse(text: &str) -> Result<Self, ParseError> {
        let mut schemata = Self::default();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let parsed = SchemataLine::parse(line)?;
            if schemata.line(&parsed.resource).is_some() {
                return Err(ParseError::new(line, "resource given twice"));
            }
            schemata.lines.push(parsed);
        }
        Ok(schemata)
    }

    /// The line of `resource`, if any.
    pub fn line(&self, resource: &Resource) -> Option<&SchemataLine> {
        self.lines.iter().find(|l| &l.resource == resource)
    }

    /// Replaces the line of the same resource, or appends `line`.
    pub fn set(&mut self, line: SchemataLine) {
        match self.lines.iter_mut().find(|l| l.resource == line.resource) {
            Some(old) => *old = line,
            None => self.lines.push(line),
        }
    }

    /// Whether there are no lines.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }
}

impl fmt::Display for Schemata {
    /// Every line followed by a newline, as the kernel expects a write.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for line in &self.lines {
            writeln!(f, "{line}")?;
        }
        Ok(())
    }
}

/// Whether the set bits of `mask` form one run (an empty mask does not).
pub fn is_contiguous(mask: u64) -> bool {
    if mask == 0 {
        return false;
    }
    let run = mask >> mask.trailing_zeros();
    run & run.wrapping_add(1) == 0
}

/// The mask of `ways` contiguous bits starting at bit `low`, or `None`
/// when it does not fit in 64 bits.
pub(crate) fn run_mask(ways: u32, low: u32) -> Option<u64> {
    if ways == 0 || ways.checked_add(low)? > 64 {
        return None;
    }
    let bits = if ways == 64 {
        u64::MAX
    } else {
        (1u64 << ways) - 1
    };
    Some(bits << low)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cat_cdp_and_mba_lines() {
        let text = "L3CODE:0=ff;1=ff\nL3DATA:0=ff;1=ff\nMB:0=100;1=100\n";
        let s = Schemata::parse(text).unwrap();
        assert_eq!(s.lines.len(), 3);
        assert_eq!(s.lines[0].resource, Resource::L3Code);
        assert_eq!(s.lines[1].domains[&1], 0xff);
        assert_eq!(s.line(&Resource::Mb).unwrap().domains[&0], 100);
        assert_eq!(s.to_string(), text);
    }

    #[test]
    fn parses_the_kernels_padded_output() {
        let text = "    L3:0=fffff;1=fffff\n    MB:0=  100;1=  100\n";
        let s = Schemata::parse(text).unwrap();
        assert_eq!(s.line(&Resource::L3).unwrap().domains[&1], 0xfffff);
        assert_eq!(s.line(&Resource::Mb).unwrap().domains[&1], 100);
        assert_eq!(s.to_string(), "L3:0=fffff;1=fffff\nMB:0=100;1=100\n");
    }

    #[test]
    fn keeps_unknown_resources() {
        let s = Schemata::parse("SMBA:0=2048\nL4:0=3\n").unwrap();
        assert_eq!(s.lines[0].resource, Resource::Other("SMBA".into()));
        assert_eq!(s.lines[0].domains[&0], 2048);
        assert_eq!(s.lines[1].domains[&0], 3);
    }

    #[test]
    fn malformed_lines_are_errors_not_panics() {
        for bad in [
            "L3 0=ff",
            ":0=ff",
            "L3:",
            "L3:0ff",
            "L3:x=ff",
            "L3:0=fg",
            "MB:0=1a",
            "L3:0=ff;0=f",
            "L3:0=ffffffffffffffffff",
            "L3:0=ff\nL3:0=ff",
        ] {
            let e = Schemata::parse(bad).unwrap_err();
            assert!(!e.reason.is_empty(), "{bad}");
        }
    }

    #[test]
    fn set_replaces_or_appends() {
        let mut s = Schemata::parse("L3:0=ff\n").unwrap();
        s.set(SchemataLine::uniform(Resource::L3, &[0, 1], 0xf));
        s.set(SchemataLine::uniform(Resource::Mb, &[0, 1], 50));
        assert_eq!(s.to_string(), "L3:0=f;1=f\nMB:0=50;1=50\n");
    }

    #[test]
    fn contiguity() {
        assert!(is_contiguous(0xf0));
        assert!(is_contiguous(1));
        assert!(is_contiguous(u64::MAX));
        assert!(is_contiguous(0x7ff));
        assert!(!is_contiguous(0));
        assert!(!is_contiguous(0xf0f));
        assert!(!is_contiguous(0b101));
    }

    #[test]
    fn runs() {
        assert_eq!(run_mask(4, 4), Some(0xf0));
        assert_eq!(run_mask(64, 0), Some(u64::MAX));
        assert_eq!(run_mask(2, 63), None);
        assert_eq!(run_mask(0, 0), None);
    }
}
