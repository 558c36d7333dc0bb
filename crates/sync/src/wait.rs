//! How a waiter waits: spin a little (the lock is usually handed over
//! within a few hundred cycles), then yield the CPU a few times, then
//! sleep briefly between checks. The sleep matters where a waiter shares
//! its CPU with the thread it waits for (more threads than CPUs, or an
//! emulated guest): a yield may return at once without running the other
//! thread, a sleep always lets it run. It does not park threads on a
//! queue: these locks are for short critical sections.
//!
//! The pause, yield and sleep are [`crate::primitives`]': under loom all
//! three are loom's yield, which loom needs to see in every spin-wait. Loom
//! cannot model two threads spinning on a third (its scheduler may switch
//! between the two spinners forever), so under loom a wait that has
//! yielded once ends the exploration of other interleavings for the rest
//! of that execution (`LOOM_STUTTERS`): the execution still runs to the
//! end and is checked. A failed check changes nothing, so most of what is
//! left out differs from an explored interleaving only by the repeated
//! checks; still, it is a bound on the search, like a preemption bound.

use std::time::Duration;

use crate::primitives::{sleep, spin_loop, yield_now};

/// Spins before the first yield.
const SPINS: u32 = 128;

/// Yields before the first sleep.
const YIELDS: u32 = 16;

/// One sleep between checks (the kernel's timer slack makes it longer).
const NAP: Duration = Duration::from_micros(20);

/// Under loom: yields in one wait after which loom explores no other
/// interleaving of the current execution (1 caught every bug planted in
/// the locks to try the models; more makes the three-thread models
/// several times slower).
#[cfg(loom)]
const LOOM_STUTTERS: u32 = 1;

/// Waits until `ready` says so.
pub(crate) fn until(mut ready: impl FnMut() -> bool) {
    let mut spins = 0u32;
    while !ready() {
        pause(&mut spins);
    }
}

/// One step of waiting: a CPU pause while `spins` is small, a yield
/// after, a short sleep after that.
pub(crate) fn pause(spins: &mut u32) {
    if *spins < SPINS {
        spin_loop();
    } else if *spins < SPINS + YIELDS {
        yield_now();
    } else {
        sleep(NAP);
        return;
    }
    *spins += 1;
    #[cfg(loom)]
    if *spins == LOOM_STUTTERS {
        loom::skip_branch();
    }
}
