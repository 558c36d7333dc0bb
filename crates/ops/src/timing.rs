//! Phase timing and progress: every operator reports how long each of its
//! phases took (Li Figures 9 and 11 break joins and aggregations down this
//! way), and tells an optional observer when a phase starts, which is how
//! the CLI draws progress.

use std::time::Instant;

use serde::Serialize;

/// Told when each phase of an operator starts.
pub trait Progress: Sync {
    /// Phase `name` (such as "build" or "probe") starts; called from the
    /// thread that runs the operator, before the phase's work.
    fn phase(&self, name: &str);
}

/// No progress reporting.
pub struct Silent;

impl Progress for Silent {
    fn phase(&self, _name: &str) {}
}

/// The duration of one phase.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PhaseTime {
    /// The phase's name, as given to [`Progress::phase`].
    pub name: String,
    /// Wall-clock time from the phase's start to the next one's (or the
    /// end), in seconds.
    pub seconds: f64,
}

/// Times consecutive phases.
pub struct PhaseTimer<'a> {
    progress: &'a dyn Progress,
    current: Option<(String, Instant)>,
    done: Vec<PhaseTime>,
}

impl<'a> PhaseTimer<'a> {
    /// A timer with no phase running that tells `progress` of each start.
    pub fn new(progress: &'a dyn Progress) -> Self {
        Self {
            progress,
            current: None,
            done: Vec::new(),
        }
    }

    /// Ends the running phase (if any) and starts `name`.
    pub fn start(&mut self, name: &str) {
        self.stop();
        self.progress.phase(name);
        self.current = Some((name.to_string(), Instant::now()));
    }

    /// Ends the running phase.
    pub fn stop(&mut self) {
        if let Some((name, t)) = self.current.take() {
            self.done.push(PhaseTime {
                name,
                seconds: t.elapsed().as_secs_f64(),
            });
        }
    }

    /// Ends the running phase and returns all phases in order.
    pub fn finish(mut self) -> Vec<PhaseTime> {
        self.stop();
        self.done
    }
}

/// The median of `values` (the mean of the middle two for an even count;
/// NaN for none): the one median numakit reports everywhere, the
/// benchmarks' included.
pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// Total seconds of `phases`.
pub fn total_seconds(phases: &[PhaseTime]) -> f64 {
    phases.iter().map(|p| p.seconds).sum()
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    struct Record(Mutex<Vec<String>>);
    impl Progress for Record {
        fn phase(&self, name: &str) {
            self.0.lock().unwrap().push(name.to_string());
        }
    }

    #[test]
    fn the_median_is_the_middle_or_the_mean_of_the_middle_two() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn phases_are_timed_in_order_and_announced() {
        let seen = Record(Mutex::new(Vec::new()));
        let mut t = PhaseTimer::new(&seen);
        t.start("build");
        std::thread::sleep(std::time::Duration::from_millis(2));
        t.start("probe");
        let phases = t.finish();
        let names: Vec<_> = phases.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["build", "probe"]);
        assert_eq!(*seen.0.lock().unwrap(), ["build", "probe"]);
        assert!(phases[0].seconds >= 0.002, "{:?}", phases[0]);
        assert_eq!(
            total_seconds(&phases),
            phases[0].seconds + phases[1].seconds
        );
    }
}
