//! Performance counters of the calling thread, through the kernel's
//! `perf_event_open`, so that a figure (a latency, a bandwidth, a
//! slowdown) can be shown beside what the processor did meanwhile.
//!
//! [`CounterGroup::hardware`] opens four events as one group (a leader and
//! its members, read together with `PERF_FORMAT_GROUP`, so that they count
//! over the same instants): cycles, retired instructions, and the kernel's
//! generic cache events `PERF_COUNT_HW_CACHE_REFERENCES` and
//! `PERF_COUNT_HW_CACHE_MISSES` (type `PERF_TYPE_HARDWARE`, not the
//! `PERF_TYPE_HW_CACHE` LL read events, which many PMUs lack). Intel maps
//! those two to its architectural last-level-cache reference and miss
//! events; other processors map them to the cache level their driver
//! chooses (on some AMD parts an L2 event), so compare the `llc_*` figures
//! on one machine, not across vendors. Each event may be missing on its
//! own: those that open are kept, the others are `None`. When the kernel
//! multiplexes the group, counts are scaled by time enabled over time
//! running; a group it never scheduled gives `None`, never 0.
//! [`CounterGroup::software`] opens the kernel's page-fault and
//! minor-fault counts the same way, and [`Event::TaskClock`] can be opened
//! alone: they work where the hardware PMU is hidden (in most virtual
//! machines), so the same plumbing can be checked there. A group keeps to
//! the events of one PMU (the processor's, the kernel's software events,
//! the task clock): a mixed group loses its members' counts.
//!
//! Every event counts the calling thread on whichever CPU it runs (pid 0,
//! cpu -1), user space only (`exclude_kernel`, `exclude_hv`), which
//! `perf_event_paranoid` 2 allows. When nothing opens,
//! [`CounterError::Unavailable`] says why in one line (no PMU in a virtual
//! machine, the paranoid setting, a seccomp filter).
//!
//! Deliberately not done:
//! - other threads: work a pool's workers do for this thread is not in its
//!   counts, and a [`CounterGroup`] cannot leave the thread that opened it;
//! - kernel time, sampling, or raw model-specific encodings;
//! - uncore and remote-DRAM events. The memory controllers' and the
//!   interconnect's PMUs (`uncore_imc_*`, `amd_df`, ... under
//!   `/sys/bus/event_source/devices`, where the host shows them at all;
//!   [`event_sources`] lists what is there) count for a whole socket, not
//!   a thread, so they can only be opened CPU-wide (pid -1), which
//!   `perf_event_paranoid` 1 and above refuse without `CAP_PERFMON`; the
//!   per-core events that tell remote DRAM from local (offcore responses)
//!   have model-specific encodings. Neither is read, and no figure stands
//!   in for them.
//!
//! The raw calls are [`crate::sys::perf_event_open`] and
//! [`crate::sys::perf_event_ioctl`]; this module is safe code.

use std::fs::File;
use std::io::{self, Read};
use std::marker::PhantomData;
use std::os::fd::{AsFd, OwnedFd};

use serde::Serialize;

use crate::sys::{self, PerfEvent, PerfRequest};

mod counts;
#[cfg(test)]
mod tests;

pub use counts::{Counts, Work};

const PERF_TYPE_HARDWARE: u32 = 0;
const PERF_TYPE_SOFTWARE: u32 = 1;
const FORMAT_TOTAL_TIME_ENABLED: u64 = 1;
const FORMAT_TOTAL_TIME_RUNNING: u64 = 1 << 1;
const FORMAT_GROUP: u64 = 1 << 3;
const READ_FORMAT: u64 = FORMAT_GROUP | FORMAT_TOTAL_TIME_ENABLED | FORMAT_TOTAL_TIME_RUNNING;
const FLAG_DISABLED: u64 = 1;
const FLAG_EXCLUDE_KERNEL: u64 = 1 << 5;
const FLAG_EXCLUDE_HV: u64 = 1 << 6;
const PARANOID: &str = "/proc/sys/kernel/perf_event_paranoid";
const EVENT_SOURCES: &str = "/sys/bus/event_source/devices";
/// Why an event of another PMU than the leader's is left out of a group.
const OTHER_PMU: &str = "counted by another PMU than the group's leader (a group that mixes PMUs loses counts: Linux 6.18 accepted a task-clock leader with a page-fault member and dropped most of the member's faults)";

/// The kernel PMUs the events belong to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pmu {
    Cpu,
    Software,
    TaskClock,
}

/// One event a group can count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Event {
    /// Core cycles (`PERF_COUNT_HW_CPU_CYCLES`).
    Cycles,
    /// Retired instructions (`PERF_COUNT_HW_INSTRUCTIONS`).
    Instructions,
    /// Cache references, usually the last level's
    /// (`PERF_COUNT_HW_CACHE_REFERENCES`).
    LlcReferences,
    /// Cache misses, usually the last level's (`PERF_COUNT_HW_CACHE_MISSES`).
    LlcMisses,
    /// Nanoseconds the thread ran (`PERF_COUNT_SW_TASK_CLOCK`).
    TaskClock,
    /// Page faults (`PERF_COUNT_SW_PAGE_FAULTS`).
    PageFaults,
    /// Minor page faults: served without I/O (`PERF_COUNT_SW_PAGE_FAULTS_MIN`).
    MinorFaults,
}

impl Event {
    /// The hardware events, in the order a group opens them.
    pub const HARDWARE: [Event; 4] = [
        Event::Cycles,
        Event::Instructions,
        Event::LlcReferences,
        Event::LlcMisses,
    ];
    /// The kernel's fault counts, one group ([`CounterGroup::software`]).
    pub const SOFTWARE: [Event; 2] = [Event::PageFaults, Event::MinorFaults];

    /// The name reports use (`cycles`, `llc_misses`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Event::Cycles => "cycles",
            Event::Instructions => "instructions",
            Event::LlcReferences => "llc_references",
            Event::LlcMisses => "llc_misses",
            Event::TaskClock => "task_clock_ns",
            Event::PageFaults => "page_faults",
            Event::MinorFaults => "minor_faults",
        }
    }

    /// Whether the processor's PMU counts it (not the kernel).
    pub fn is_hardware(self) -> bool {
        self.pmu() == Pmu::Cpu
    }

    /// The kernel PMU that counts it: a group keeps to one.
    fn pmu(self) -> Pmu {
        match self {
            Event::TaskClock => Pmu::TaskClock,
            Event::PageFaults | Event::MinorFaults => Pmu::Software,
            _ => Pmu::Cpu,
        }
    }

    /// The kernel's type and config numbers.
    fn encoding(self) -> (u32, u64) {
        match self {
            Event::Cycles => (PERF_TYPE_HARDWARE, 0),
            Event::Instructions => (PERF_TYPE_HARDWARE, 1),
            Event::LlcReferences => (PERF_TYPE_HARDWARE, 2),
            Event::LlcMisses => (PERF_TYPE_HARDWARE, 3),
            Event::TaskClock => (PERF_TYPE_SOFTWARE, 1),
            Event::PageFaults => (PERF_TYPE_SOFTWARE, 2),
            Event::MinorFaults => (PERF_TYPE_SOFTWARE, 5),
        }
    }

    /// The description to open: a leader starts disabled, members follow it.
    fn perf_event(self, leader: bool) -> PerfEvent {
        let (kind, config) = self.encoding();
        let disabled = if leader { FLAG_DISABLED } else { 0 };
        PerfEvent {
            kind,
            config,
            read_format: READ_FORMAT,
            flags: disabled | FLAG_EXCLUDE_KERNEL | FLAG_EXCLUDE_HV,
        }
    }
}

/// Why counters could not be had.
#[derive(Debug, thiserror::Error)]
pub enum CounterError {
    /// No event of the group opened here; `reason` is one line.
    #[error("{what} counters unavailable: {reason}")]
    Unavailable {
        /// `hardware` or `software`: the kind of events asked for.
        what: &'static str,
        /// Why, in one line (the errno and what it means here).
        reason: String,
    },
    /// An opened group could not be enabled, disabled, reset or read.
    #[error("counters: {call} failed: {source}")]
    Failed {
        /// The operation (`enable`, `read`, ...).
        call: &'static str,
        /// The kernel's error.
        #[source]
        source: io::Error,
    },
}

impl CounterError {
    /// The one-line reason: for [`CounterError::Unavailable`] without its
    /// `... counters unavailable: ` prefix, otherwise the whole message.
    pub fn reason(&self) -> String {
        match self {
            CounterError::Unavailable { reason, .. } => reason.clone(),
            other => other.to_string(),
        }
    }
}

fn failed(call: &'static str) -> impl FnOnce(io::Error) -> CounterError {
    move |source| CounterError::Failed { call, source }
}

fn errno_name(code: i32) -> String {
    let name = match code {
        libc::ENOENT => "ENOENT",
        libc::ENODEV => "ENODEV",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::EACCES => "EACCES",
        libc::EPERM => "EPERM",
        libc::ENOSYS => "ENOSYS",
        libc::EINVAL => "EINVAL",
        libc::EMFILE => "EMFILE",
        other => return format!("errno {other}"),
    };
    name.to_string()
}

/// The one-line reason an event of this kind did not open.
fn unavailable_reason(hardware: bool, error: &io::Error) -> String {
    let Some(code) = error.raw_os_error() else {
        return format!("perf_event_open failed: {error}");
    };
    let name = errno_name(code);
    match code {
        libc::ENOENT | libc::ENODEV | libc::EOPNOTSUPP if hardware => format!(
            "the kernel offers no hardware PMU events here ({name} from perf_event_open; virtual machines often hide them)"
        ),
        libc::ENOENT | libc::ENODEV | libc::EOPNOTSUPP => {
            format!("the kernel does not offer this event ({name} from perf_event_open)")
        }
        libc::EACCES | libc::EPERM => {
            let paranoid = std::fs::read_to_string(PARANOID)
                .map(|s| s.trim().to_string())
                .unwrap_or_else(|_| "unreadable".into());
            format!(
                "not permitted ({name} from perf_event_open; kernel.perf_event_paranoid is {paranoid}, and this thread's user-space counts need 2 or less, or CAP_PERFMON; a seccomp filter can refuse the call too)"
            )
        }
        libc::ENOSYS => "this kernel has no perf_event_open (ENOSYS)".into(),
        _ => format!("perf_event_open failed ({name}: {error})"),
    }
}

/// The event sources the kernel lists under
/// `/sys/bus/event_source/devices` (`cpu`, `software`, `uncore_imc_0`,
/// ...), sorted; empty where that directory cannot be read.
pub fn event_sources() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(EVENT_SOURCES)
        .map(|dir| {
            dir.filter_map(|entry| entry.ok())
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// Events counting the calling thread together, as one group. It counts
/// the thread that opened it, so it stays there (it is not `Send`).
#[derive(Debug)]
pub struct CounterGroup {
    leader: File,
    members: Vec<OwnedFd>,
    events: Vec<Event>,
    missing: Vec<(Event, String)>,
    _this_thread: PhantomData<*const ()>,
}

impl CounterGroup {
    /// Cycles, instructions, LLC references and misses of this thread.
    pub fn hardware() -> Result<Self, CounterError> {
        Self::open(&Event::HARDWARE)
    }

    /// Page faults and minor faults of this thread (kernel-counted:
    /// available where the hardware PMU is not).
    pub fn software() -> Result<Self, CounterError> {
        Self::open(&Event::SOFTWARE)
    }

    /// `events` as one group for the calling thread, disabled and zeroed:
    /// the first that opens leads, the others of its PMU that open follow
    /// it, and the rest are listed by [`CounterGroup::missing`]. Fails
    /// with [`CounterError::Unavailable`] when none opens.
    pub fn open(events: &[Event]) -> Result<Self, CounterError> {
        let what = if events.iter().any(|e| e.is_hardware()) {
            "hardware"
        } else {
            "software"
        };
        let mut leader: Option<File> = None;
        let mut members = Vec::new();
        let mut opened = Vec::new();
        let mut missing: Vec<(Event, String)> = Vec::new();
        for &event in events {
            if opened.contains(&event) || missing.iter().any(|(e, _)| *e == event) {
                continue;
            }
            if opened
                .first()
                .is_some_and(|l: &Event| l.pmu() != event.pmu())
            {
                missing.push((event, OTHER_PMU.into()));
                continue;
            }
            let group = leader.as_ref().map(|f| f.as_fd());
            match sys::perf_event_open(event.perf_event(group.is_none()), group) {
                Ok(fd) => {
                    match leader {
                        None => leader = Some(File::from(fd)),
                        Some(_) => members.push(fd),
                    }
                    opened.push(event);
                }
                Err(e) => missing.push((event, unavailable_reason(event.is_hardware(), &e))),
            }
        }
        let Some(leader) = leader else {
            let reason = missing
                .first()
                .map_or_else(|| "no event was asked for".to_string(), |(_, r)| r.clone());
            return Err(CounterError::Unavailable { what, reason });
        };
        Ok(Self {
            leader,
            members,
            events: opened,
            missing,
            _this_thread: PhantomData,
        })
    }

    /// The events that opened, leader first.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// The events that did not open, each with its one-line reason.
    pub fn missing(&self) -> &[(Event, String)] {
        &self.missing
    }

    fn ioctl(&self, request: PerfRequest, call: &'static str) -> Result<(), CounterError> {
        sys::perf_event_ioctl(self.leader.as_fd(), request).map_err(failed(call))
    }

    /// Starts counting (every event of the group).
    pub fn enable(&self) -> Result<(), CounterError> {
        self.ioctl(PerfRequest::Enable, "enable")
    }

    /// Stops counting; the counts stay until [`CounterGroup::reset`].
    pub fn disable(&self) -> Result<(), CounterError> {
        self.ioctl(PerfRequest::Disable, "disable")
    }

    /// Sets every count to zero.
    pub fn reset(&self) -> Result<(), CounterError> {
        self.ioctl(PerfRequest::Reset, "reset")
    }

    /// The counts so far, scaled for multiplexing.
    pub fn read(&self) -> Result<Counts, CounterError> {
        // nr, time enabled, time running, then the leader's and each
        // member's value.
        let words = 3 + 1 + self.members.len();
        let mut bytes = vec![0u8; words * 8];
        let got = (&self.leader).read(&mut bytes).map_err(failed("read"))?;
        let values: Vec<u64> = bytes[..got]
            .chunks_exact(8)
            .map(|c| {
                let mut word = [0u8; 8];
                word.copy_from_slice(c);
                u64::from_ne_bytes(word)
            })
            .collect();
        match values.as_slice() {
            [nr, enabled, running, counts @ ..]
                if *nr as usize == self.events.len() && counts.len() == self.events.len() =>
            {
                Ok(Counts::from_group(&self.events, counts, *enabled, *running))
            }
            _ => Err(CounterError::Failed {
                call: "read",
                source: io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "a group read of {got} bytes for {} events",
                        self.events.len()
                    ),
                ),
            }),
        }
    }

    /// Runs `work` with the group zeroed and counting, and reads it after;
    /// `work` runs even when the group cannot be started.
    pub fn around<R>(&self, work: impl FnOnce() -> R) -> (R, Result<Counts, CounterError>) {
        let started = self.reset().and_then(|()| self.enable());
        let result = work();
        let counts = started
            .and_then(|()| self.disable())
            .and_then(|()| self.read());
        (result, counts)
    }
}
