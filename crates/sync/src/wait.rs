//! How a waiter waits: spin a little (the lock is usually handed over
//! within a few hundred cycles), then yield the CPU a few times, then
//! sleep briefly between checks. The sleep matters where a waiter shares
//! its CPU with the thread it waits for (more threads than CPUs, or an
//! emulated guest): a yield may return at once without running the other
//! thread, a sleep always lets it run. It does not park threads on a
//! queue: these locks are for short critical sections.

use std::time::Duration;

/// Spins before the first yield.
const SPINS: u32 = 128;

/// Yields before the first sleep.
const YIELDS: u32 = 16;

/// One sleep between checks (the kernel's timer slack makes it longer).
const NAP: Duration = Duration::from_micros(20);

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
        std::hint::spin_loop();
    } else if *spins < SPINS + YIELDS {
        std::thread::yield_now();
    } else {
        std::thread::sleep(NAP);
        return;
    }
    *spins += 1;
}
