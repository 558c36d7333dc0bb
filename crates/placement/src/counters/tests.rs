//! The counters on this machine: the hardware group's counts or its
//! one-line reason, and the software groups' counts of real page faults.

use std::hint::black_box;
use std::sync::Arc;

use super::counts::scaled;
use super::*;
use crate::buffer::{BufferOptions, NodeBuffer};
use crate::placer::{PlacementMode, Placer};
use crate::policy::Placement;

/// `rounds` rounds of integer mixing the compiler cannot drop.
fn spin(rounds: u64) -> u64 {
    let mut x = black_box(0x9e37_79b9_7f4a_7c15u64);
    for i in 0..rounds {
        x = black_box(x.rotate_left(7) ^ i).wrapping_mul(0x2545_f491_4f6c_dd1d);
    }
    x
}

/// Either the hardware group opens and its instructions (or cycles)
/// grow with the work, or it is unavailable for a reason the kernel
/// gave, in one line. Anything else fails.
#[test]
fn hardware_counts_move_with_work_or_say_why_not_in_one_line() {
    match CounterGroup::hardware() {
        Ok(group) => {
            let (_, small) = group.around(|| spin(1_000_000));
            let (_, large) = group.around(|| spin(4_000_000));
            let (small, large) = (small.unwrap(), large.unwrap());
            let event = [Event::Instructions, Event::Cycles]
                .into_iter()
                .find(|e| group.events().contains(e))
                .expect("instructions or cycles open with the other hardware events");
            let (a, b) = (small.get(event).unwrap(), large.get(event).unwrap());
            assert!(a > 0, "{event:?} counted nothing: {small:?}");
            assert!(b > 2 * a, "{event:?}: {a} then {b} for 4x the work");
            eprintln!("hardware counters opened {:?}: {large:?}", group.events());
        }
        Err(CounterError::Unavailable { what, reason }) => {
            assert_eq!(what, "hardware");
            assert!(!reason.contains('\n'), "{reason}");
            let known = [
                "ENOENT",
                "ENODEV",
                "EOPNOTSUPP",
                "EACCES",
                "EPERM",
                "ENOSYS",
            ];
            assert!(
                reason.contains("from perf_event_open") && known.iter().any(|e| reason.contains(e))
                    || reason.contains("ENOSYS"),
                "{reason}"
            );
            eprintln!("hardware counters unavailable: {reason}");
        }
        Err(other) => panic!("neither counts nor a reason: {other}"),
    }
}

/// Page faults counted while `pages` fresh base pages are touched.
fn faults_touching(group: &CounterGroup, pages: usize) -> Counts {
    let placer = Placer::new(
        Arc::new(numakit_topology::discover().unwrap()),
        PlacementMode::BestEffort,
    );
    let page = sys::page_size();
    let mut options = BufferOptions::new(Placement::Anywhere);
    options.prefault = false;
    let mut buffer = NodeBuffer::<u8>::with_options(&placer, pages * page, options).unwrap();
    let (_, counts) = group.around(|| {
        for p in 0..pages {
            buffer[p * page] = 1;
        }
        black_box(&buffer);
    });
    counts.unwrap()
}

/// The software group goes through the same plumbing as the hardware
/// one (leader and member read together, enable, disable, reset), and
/// works in virtual machines.
#[test]
fn software_counts_see_page_faults_and_stop_when_disabled() {
    let group = CounterGroup::software().unwrap();
    assert_eq!(group.events(), &Event::SOFTWARE[..]);
    assert!(group.missing().is_empty(), "{:?}", group.missing());
    let pages = 2048;
    let counts = faults_touching(&group, pages);
    let faults = counts.page_faults.unwrap();
    assert!(
        faults >= pages as u64 / 2,
        "{faults} faults for {pages} fresh pages"
    );
    let minor = counts.minor_faults.unwrap();
    assert!(
        minor >= pages as u64 / 2,
        "the member counted {minor} of {faults}"
    );
    assert!(counts.enabled_ns > 0 && counts.running_ns > 0, "{counts:?}");
    assert_eq!(counts.cycles, None, "not asked for");

    // Disabled: more faults are not counted; reset: back to zero.
    let before = group.read().unwrap().page_faults.unwrap();
    faults_touching_uncounted(256);
    assert_eq!(group.read().unwrap().page_faults, Some(before));
    group.reset().unwrap();
    assert_eq!(group.read().unwrap().page_faults, Some(0));

    // Twice the pages, about twice the faults.
    let twice = faults_touching(&group, 2 * pages).page_faults.unwrap();
    assert!(twice > faults + pages as u64 / 2, "{faults} then {twice}");
    let per_page = counts.with_work(pages as f64, "page");
    assert_eq!(per_page.work.map(|w| w.unit), Some("page"));
}

fn faults_touching_uncounted(pages: usize) {
    let placer = Placer::new(
        Arc::new(numakit_topology::discover().unwrap()),
        PlacementMode::BestEffort,
    );
    let page = sys::page_size();
    let mut options = BufferOptions::new(Placement::Anywhere);
    options.prefault = false;
    let mut more = NodeBuffer::<u8>::with_options(&placer, pages * page, options).unwrap();
    for p in 0..pages {
        more[p * page] = 1;
    }
    black_box(&more);
}

/// The task clock alone grows with the work; a group never mixes PMUs.
#[test]
fn the_task_clock_grows_with_work_and_groups_keep_to_one_pmu() {
    let clock = CounterGroup::open(&[Event::TaskClock]).unwrap();
    let (_, small) = clock.around(|| spin(1_000_000));
    let (_, large) = clock.around(|| spin(8_000_000));
    let (small, large) = (small.unwrap().task_clock_ns, large.unwrap().task_clock_ns);
    let (small, large) = (small.unwrap(), large.unwrap());
    assert!(small > 0 && large > 2 * small, "{small} ns then {large} ns");

    let mixed = CounterGroup::open(&[Event::TaskClock, Event::PageFaults]).unwrap();
    assert_eq!(mixed.events(), &[Event::TaskClock]);
    assert_eq!(mixed.missing().len(), 1);
    assert!(mixed.missing()[0].1.contains("another PMU"));
}

#[test]
fn counts_are_scaled_merged_and_divided_without_inventing_figures() {
    assert_eq!(scaled(100, 10, 10), Some(100));
    assert_eq!(scaled(100, 10, 5), Some(200));
    assert_eq!(scaled(100, 10, 0), None, "never ran: unknown, not 0");
    let events = [Event::Cycles, Event::Instructions, Event::LlcMisses];
    let c = Counts::from_group(&events, &[200, 300, 10], 4, 2).with_work(5.0, "load");
    assert_eq!(c.cycles, Some(400));
    assert_eq!(c.instructions, Some(600));
    assert_eq!(c.llc_references, None);
    assert!(c.multiplexed());
    assert_eq!(c.ipc(), Some(1.5));
    assert_eq!(c.llc_miss_rate(), None, "no references counted");
    assert_eq!(c.llc_misses_per_unit(), Some(4.0));
    let both = c.merge(c);
    assert_eq!(both.llc_misses, Some(40));
    assert_eq!(both.work.map(|w| w.units), Some(10.0));
    assert_eq!(both.llc_misses_per_unit(), Some(4.0));
    assert_eq!(Counts::sum([Some(c), None]), None);
    assert_eq!(Counts::sum([Some(c), Some(c)]), Some(both));
    assert_eq!(Counts::default().ipc(), None);
}

#[test]
fn reasons_are_one_line_and_name_the_errno() {
    let enoent = io::Error::from_raw_os_error(libc::ENOENT);
    assert_eq!(
        unavailable_reason(true, &enoent),
        "the kernel offers no hardware PMU events here (ENOENT from perf_event_open; virtual machines often hide them)"
    );
    let eacces = unavailable_reason(true, &io::Error::from_raw_os_error(libc::EACCES));
    assert!(eacces.contains("EACCES") && eacces.contains("perf_event_paranoid is"));
    for code in [
        libc::EOPNOTSUPP,
        libc::EPERM,
        libc::ENOSYS,
        libc::EINVAL,
        9999,
    ] {
        let reason = unavailable_reason(false, &io::Error::from_raw_os_error(code));
        assert!(!reason.is_empty() && !reason.contains('\n'), "{reason}");
    }
    let e = CounterError::Unavailable {
        what: "hardware",
        reason: "r".into(),
    };
    assert_eq!(e.to_string(), "hardware counters unavailable: r");
    assert_eq!(e.reason(), "r");
}
