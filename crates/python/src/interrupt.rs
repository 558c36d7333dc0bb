//! Long calls without holding the interpreter: the work runs on its own
//! thread while the caller's thread, the GIL released, waits for it and
//! looks for signals every [`POLL`]. On Ctrl-C (any pending signal whose
//! handler raises) the work is asked to stop at its next phase boundary;
//! the call then raises the signal's exception (`KeyboardInterrupt`), with
//! nothing left running. Progress, when asked, is one line per phase on
//! stderr.
//!
//! A phase runs to its end before the work stops: interruption waits for
//! the longest phase, not for the whole call.

use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use numakit_ops::Progress;
use pyo3::prelude::*;

use crate::errors::{raise, ErrorKind};

/// How often the waiting thread looks for signals.
const POLL: Duration = Duration::from_millis(20);

/// The unwind payload that stops the work at a phase boundary (thrown
/// with `resume_unwind`, so no panic message is printed).
struct Cancelled;

/// The work's progress sink: stops it when asked, prints phases when
/// asked.
struct Watch<'a> {
    what: &'a str,
    cancel: &'a AtomicBool,
    print: bool,
    started: Instant,
}

impl Progress for Watch<'_> {
    fn phase(&self, name: &str) {
        if self.cancel.load(Ordering::Relaxed) {
            panic::resume_unwind(Box::new(Cancelled));
        }
        if self.print {
            eprintln!(
                "numakit {}: {name} ({:.2} s)",
                self.what,
                self.started.elapsed().as_secs_f64()
            );
        }
    }
}

/// How the work ended.
enum Ended<T> {
    Done(T),
    Cancelled,
    Panicked(String),
}

fn panic_text(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// Runs `work` (named `what` in progress lines) off the interpreter,
/// interruptible by Ctrl-C at phase boundaries.
pub(crate) fn run<T: Send>(
    py: Python<'_>,
    what: &str,
    print: bool,
    work: impl FnOnce(&dyn Progress) -> T + Send,
) -> PyResult<T> {
    let cancel = AtomicBool::new(false);
    let watch = Watch {
        what,
        cancel: &cancel,
        print,
        started: Instant::now(),
    };
    let mut interrupted: Option<PyErr> = None;
    let ended = std::thread::scope(|scope| {
        let worker = scope.spawn(
            || match panic::catch_unwind(AssertUnwindSafe(|| work(&watch))) {
                Ok(value) => Ended::Done(value),
                Err(payload) if payload.is::<Cancelled>() => Ended::Cancelled,
                Err(payload) => Ended::Panicked(panic_text(payload.as_ref())),
            },
        );
        while !worker.is_finished() {
            py.detach(|| std::thread::sleep(POLL));
            if interrupted.is_none() {
                if let Err(signal) = py.check_signals() {
                    cancel.store(true, Ordering::Relaxed);
                    interrupted = Some(signal);
                }
            }
        }
        worker
            .join()
            .unwrap_or_else(|payload| Ended::Panicked(panic_text(payload.as_ref())))
    });
    if let Some(signal) = interrupted {
        return Err(signal);
    }
    match ended {
        Ended::Done(value) => Ok(value),
        Ended::Cancelled => Err(raise(
            py,
            ErrorKind::Other,
            &format!("{what} was cancelled"),
        )),
        Ended::Panicked(message) => Err(raise(
            py,
            ErrorKind::Other,
            &format!("{what} failed inside numakit (a bug; please report it): {message}"),
        )),
    }
}
