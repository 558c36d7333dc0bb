//! [`Counts`]: what a counter group read, scaled for multiplexing, with
//! the ratios derived from it (IPC, LLC miss rate, per unit of the
//! caller's work). It computes no figure the counts do not give: a missing
//! count or a zero denominator is `None`.

use serde::{Serialize, Serializer};

use super::Event;

/// `value` scaled to the whole time enabled when the group ran only part
/// of it; `None` when it never ran.
pub(super) fn scaled(value: u64, enabled: u64, running: u64) -> Option<u64> {
    if running == 0 {
        return None;
    }
    if running >= enabled {
        return Some(value);
    }
    let full = u128::from(value) * u128::from(enabled) / u128::from(running);
    Some(u64::try_from(full).unwrap_or(u64::MAX))
}

fn ratio(over: Option<u64>, under: Option<u64>) -> Option<f64> {
    let (over, under) = (over?, under?);
    (under > 0).then(|| over as f64 / under as f64)
}

fn add(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    Some(a?.saturating_add(b?))
}

/// The work the counts were spent on, in the caller's units.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Work {
    /// How many units.
    pub units: f64,
    /// What a unit is (`load`, `line`, `lookup`, ...).
    pub unit: &'static str,
}

/// What a group counted: each event's count (scaled for multiplexing;
/// `None` when it did not open or never ran), the times, and the work
/// they were spent on. Serialized with the derived ratios too (`ipc`,
/// `llc_miss_rate`, `llc_misses_per_unit`, `instructions_per_unit`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Counts {
    /// Core cycles.
    pub cycles: Option<u64>,
    /// Retired instructions.
    pub instructions: Option<u64>,
    /// Cache references (usually the last level's; see the module).
    pub llc_references: Option<u64>,
    /// Cache misses (usually the last level's; see the module).
    pub llc_misses: Option<u64>,
    /// Nanoseconds the thread ran.
    pub task_clock_ns: Option<u64>,
    /// Page faults.
    pub page_faults: Option<u64>,
    /// Minor page faults (served without I/O).
    pub minor_faults: Option<u64>,
    /// Nanoseconds the group was enabled.
    pub enabled_ns: u64,
    /// Of those, nanoseconds it was on the PMU (less: multiplexed).
    pub running_ns: u64,
    /// The work counted, when the caller said ([`Counts::with_work`]).
    pub work: Option<Work>,
}

impl Counts {
    pub(super) fn from_group(events: &[Event], values: &[u64], enabled: u64, running: u64) -> Self {
        let mut counts = Counts {
            enabled_ns: enabled,
            running_ns: running,
            ..Counts::default()
        };
        for (&event, &value) in events.iter().zip(values) {
            *counts.slot(event) = scaled(value, enabled, running);
        }
        counts
    }

    fn slot(&mut self, event: Event) -> &mut Option<u64> {
        match event {
            Event::Cycles => &mut self.cycles,
            Event::Instructions => &mut self.instructions,
            Event::LlcReferences => &mut self.llc_references,
            Event::LlcMisses => &mut self.llc_misses,
            Event::TaskClock => &mut self.task_clock_ns,
            Event::PageFaults => &mut self.page_faults,
            Event::MinorFaults => &mut self.minor_faults,
        }
    }

    /// One event's count.
    pub fn get(&self, event: Event) -> Option<u64> {
        let mut copy = *self;
        *copy.slot(event)
    }

    /// These counts, spent on `units` units of `unit`.
    pub fn with_work(mut self, units: f64, unit: &'static str) -> Self {
        self.work = Some(Work { units, unit });
        self
    }

    /// Whether the kernel multiplexed the group (the counts are scaled).
    pub fn multiplexed(&self) -> bool {
        self.running_ns < self.enabled_ns
    }

    /// Instructions per cycle.
    pub fn ipc(&self) -> Option<f64> {
        ratio(self.instructions, self.cycles)
    }

    /// LLC misses per LLC reference.
    pub fn llc_miss_rate(&self) -> Option<f64> {
        ratio(self.llc_misses, self.llc_references)
    }

    fn per_unit(&self, count: Option<u64>) -> Option<f64> {
        let units = self.work?.units;
        (units > 0.0).then_some(count? as f64 / units)
    }

    /// LLC misses per unit of work.
    pub fn llc_misses_per_unit(&self) -> Option<f64> {
        self.per_unit(self.llc_misses)
    }

    /// Instructions per unit of work.
    pub fn instructions_per_unit(&self) -> Option<f64> {
        self.per_unit(self.instructions)
    }

    /// Cycles per unit of work.
    pub fn cycles_per_unit(&self) -> Option<f64> {
        self.per_unit(self.cycles)
    }

    /// Both counts together (two threads, or two runs): a count is summed
    /// where both have it and `None` otherwise; the work is summed where
    /// both name the same unit.
    pub fn merge(self, other: Self) -> Self {
        let work = match (self.work, other.work) {
            (Some(a), Some(b)) if a.unit == b.unit => Some(Work {
                units: a.units + b.units,
                unit: a.unit,
            }),
            _ => None,
        };
        Counts {
            cycles: add(self.cycles, other.cycles),
            instructions: add(self.instructions, other.instructions),
            llc_references: add(self.llc_references, other.llc_references),
            llc_misses: add(self.llc_misses, other.llc_misses),
            task_clock_ns: add(self.task_clock_ns, other.task_clock_ns),
            page_faults: add(self.page_faults, other.page_faults),
            minor_faults: add(self.minor_faults, other.minor_faults),
            enabled_ns: self.enabled_ns.saturating_add(other.enabled_ns),
            running_ns: self.running_ns.saturating_add(other.running_ns),
            work,
        }
    }

    /// All of `counts` merged; `None` when there are none or one is `None`
    /// (a sum that leaves a thread out would understate).
    pub fn sum(counts: impl IntoIterator<Item = Option<Counts>>) -> Option<Counts> {
        let mut total: Option<Counts> = None;
        for c in counts {
            let c = c?;
            total = Some(total.map_or(c, |t| t.merge(c)));
        }
        total
    }
}

/// The serialized form: the counts and the ratios derived from them.
#[derive(Serialize)]
struct Shown {
    cycles: Option<u64>,
    instructions: Option<u64>,
    llc_references: Option<u64>,
    llc_misses: Option<u64>,
    task_clock_ns: Option<u64>,
    page_faults: Option<u64>,
    minor_faults: Option<u64>,
    enabled_ns: u64,
    running_ns: u64,
    multiplexed: bool,
    work: Option<Work>,
    ipc: Option<f64>,
    llc_miss_rate: Option<f64>,
    llc_misses_per_unit: Option<f64>,
    instructions_per_unit: Option<f64>,
}

impl Serialize for Counts {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Shown {
            cycles: self.cycles,
            instructions: self.instructions,
            llc_references: self.llc_references,
            llc_misses: self.llc_misses,
            task_clock_ns: self.task_clock_ns,
            page_faults: self.page_faults,
            minor_faults: self.minor_faults,
            enabled_ns: self.enabled_ns,
            running_ns: self.running_ns,
            multiplexed: self.multiplexed(),
            work: self.work,
            ipc: self.ipc(),
            llc_miss_rate: self.llc_miss_rate(),
            llc_misses_per_unit: self.llc_misses_per_unit(),
            instructions_per_unit: self.instructions_per_unit(),
        }
        .serialize(serializer)
    }
}
