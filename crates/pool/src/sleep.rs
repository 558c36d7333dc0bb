//! Parking idle workers without losing wake-ups.
//!
//! An epoch counter is bumped after every submission; a worker reads it
//! before looking for work and sleeps only while it is unchanged, so a job
//! pushed between "found nothing" and "went to sleep" always wakes it. The
//! mutex is touched only when someone actually sleeps.
//!
//! This note describes the protocol as the code implements it: [`Sleep`]
//! here, the worker loop ([`crate::pool::worker_main`]) and the push paths
//! in `pool.rs`. Keep it in step with them.
//!
//! # The pieces
//!
//! One [`Sleep`] per pool, shared by all its workers:
//!
//! * `epoch` (`AtomicU64`): bumped once by every [`Sleep::notify`]. It counts
//!   notifications, not jobs; only its changes matter.
//! * `sleepers` (`AtomicUsize`): how many workers are inside [`Sleep::wait`].
//!   It lets `notify` skip the mutex when nobody sleeps.
//! * `lock` and `wake` (a `Mutex<()>` and one `Condvar`): where sleepers
//!   block. The mutex guards no data; it closes the window between a
//!   sleeper's last look at `epoch` and its blocking on the condvar.
//!
//! Every access to `epoch`, `sleepers` and the pool's `shutdown` flag is
//! `SeqCst`; the argument below relies on that.
//!
//! # Worker states
//!
//! Each pass of a worker's loop goes through these states in order, and
//! leaves for *searching* again as soon as it sees the epoch move:
//!
//! 1. **Searching.** Read the epoch (`e`), *then* look for a job: the
//!    worker's private queue, its node's queue, the other nodes' queues
//!    nearest first. A job found is run (*running*), and the pass starts
//!    over with a fresh read of the epoch.
//! 2. **Exiting?** Nothing found: if `shutdown` is set, the thread ends.
//!    Shutdown is checked only after a failed search, so a worker leaves
//!    only when every queue it can take from was empty.
//! 3. **Spinning.** Up to 64 `spin_loop` hints, then up to 32
//!    `yield_now` calls (which let a submitting thread that shares the CPU
//!    run), each followed by a read of the epoch. Spinning watches the
//!    epoch only, not the queues: one shared word instead of every queue.
//!    Waking a sleeper costs a futex call, far more than a small task; the
//!    spin is there to bridge short gaps between bursts of tasks.
//! 4. **Sleeping.** [`Sleep::wait`]: take the mutex, increment `sleepers`,
//!    and while `epoch == e` and `shutdown` is unset, wait on the condvar
//!    (at most 100 ms at a time, then re-check). On leaving, decrement
//!    `sleepers`, drop the mutex, and search again.
//!
//! # Who notifies, and when
//!
//! Every path that makes a job visible calls [`Sleep::notify`] right after
//! the push, on the pushing thread:
//!
//! * `Shared::push_node`: [`crate::Scope::spawn_on`] and
//!   [`crate::Scope::spawn`], and through them
//!   [`crate::Pool::for_each_morsel`] and [`crate::Pool::fold_morsels`].
//! * `Shared::push_worker`: `Scope::spawn_on_worker`, that is
//!   [`crate::Pool::broadcast`] and the lock-step and loose phases built
//!   on it.
//! * `Pool::drop`, after storing `shutdown = true`.
//!
//! `notify` bumps the epoch, then reads `sleepers`; only if it is non-zero
//! does it take the mutex and `notify_all`. A pool that is busy therefore
//! pays one atomic add and one load per push and never touches the mutex.
//!
//! Nothing else notifies. Finishing a task does not: the thread waiting in
//! [`crate::Pool::scope`] from outside the pool sleeps on the scope's own
//! condvar (`ScopeState::all_done`), and a *worker* waiting for a nested
//! scope never sleeps here at all: it runs queued jobs while it waits and
//! yields when there are none. The lock-step barrier has its own condvar
//! too.
//!
//! # Why no wake-up is lost
//!
//! Take a job `J` pushed by a submitter (push `P`, then the epoch
//! increment `I`, from `v` to `v + 1`), and a worker `W` that may run it
//! and has just failed a search that began with the epoch read `R`, which
//! returned `e`. Claim: `W` does not block on the condvar with `J` unseen.
//!
//! 1. **`R` saw `I` (`e > v`).** `I` is a release (a `SeqCst` read-modify-
//!    write) and `R` an acquire (a `SeqCst` load), and all later changes
//!    of the epoch are read-modify-writes, so `P` happens before `W`'s
//!    search: the search saw `J`, unless another worker took it first,
//!    and then `J` runs anyway.
//! 2. **`R` came before `I` (`e <= v`).** Then the epoch is no longer `e`
//!    once `I` has happened. If `W` reads the epoch while spinning after
//!    `I`, it searches again (back to step 1 with a new `R`). Otherwise it
//!    enters `wait`, which does, in program order: (a) lock the mutex,
//!    (b) `sleepers += 1`, (c) load the epoch and compare it with `e`. The
//!    submitter does (I) `epoch += 1`, then (L) load `sleepers`. All four
//!    are `SeqCst`, so they fall in one total order that respects each
//!    thread's program order, and either:
//!    * (c) comes after (I): it reads a value other than `e`, and `W`
//!      does not block; or
//!    * (c) comes before (I): then (b) < (c) < (I) < (L), so (L) sees
//!      `W`'s increment (or `W` has already left `wait` and decremented,
//!      in which case it is awake anyway). The submitter takes the mutex.
//!      `W` has held it since (a) and gives it up only inside the condvar
//!      wait, atomically with becoming a waiter; so the submitter's
//!      `notify_all` comes after `W` is waiting and wakes it. `W`
//!      re-checks under the mutex, which the submitter released after
//!      (I), so it sees the new epoch, leaves `wait` and searches again.
//!
//! This is the classic store-buffer (Dekker) pattern: each side writes
//! its own variable and then reads the other's, and `SeqCst` forbids both
//! reads from missing the other side's write. With `Acquire`/`Release`
//! alone, `W` could miss the increment while the submitter misses
//! `sleepers`, and `W` would sleep on a job.
//!
//! Shutdown follows the same path: `Pool::drop` stores `shutdown` before
//! its `notify`, so a worker either sees the flag after its failed search
//! or sees the epoch move (or the flag, which `wait` also checks) and
//! searches once more, finds nothing and exits.
//!
//! The 100 ms timeout is a backstop, not part of the argument. Note what it
//! covers: a woken-by-timeout sleeper re-checks the epoch and the flag, not
//! the queues, so it rescues a lost condvar signal but not a push that
//! forgot to call `notify` (that job waits for the next notification).
//! Lock poisoning is ignored: the mutex guards no data.
//!
//! # What it deliberately does not do
//!
//! * **No targeted wake-ups.** `notify_all` wakes every sleeper of every
//!   node, whatever was pushed: a task for node 2, or a broadcast job that
//!   only one worker may run. Pushes come in bursts (a scope spawns many
//!   tasks, a broadcast one per worker); workers woken beyond the burst's
//!   jobs find nothing and go back through spinning to sleep. Rayon's
//!   scheme (a jobs event counter with a *sleepy* state and counts of idle
//!   and sleeping threads, waking about as many threads as there are new
//!   jobs) avoids the herd at the price of a subtler protocol; this pool
//!   keeps the simpler one.
//! * **No per-worker or per-node sleep state.** There is one condvar per
//!   pool, and `sleepers` is a count, not a set: `notify` cannot wake "a
//!   worker of node k". Placement is the queues' business (home queue
//!   first, then steal nearest first), not the wake-up's.
//! * **No job counting.** The epoch says "something happened since you
//!   looked", never how much; a woken worker learns what there is by
//!   searching.
//! * **No adaptive spinning.** The spin and yield counts are constants
//!   (`SPINS_BEFORE_YIELD`, `YIELDS_BEFORE_SLEEP` in `pool.rs`).
//! * **No NUMA-local state.** The epoch is one word that every push, from
//!   any node, writes, and `Sleep` is not cache-padded: every submission
//!   touches this one line in addition to its queue's.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::Duration;

#[derive(Default)]
pub(crate) struct Sleep {
    epoch: AtomicU64,
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    wake: Condvar,
}

impl Sleep {
    /// The epoch to pass to [`Sleep::wait`] after searching for work.
    pub(crate) fn epoch(&self) -> u64 {
        self.epoch.load(SeqCst)
    }

    /// Announces new work (or shutdown).
    pub(crate) fn notify(&self) {
        self.epoch.fetch_add(1, SeqCst);
        if self.sleepers.load(SeqCst) > 0 {
            let _guard = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
            self.wake.notify_all();
        }
    }

    /// Sleeps until the epoch moves past `seen` or `stop` is set. A timeout
    /// bounds the damage of any missed notification to a short delay.
    pub(crate) fn wait(&self, seen: u64, stop: &AtomicBool) {
        let mut guard = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        self.sleepers.fetch_add(1, SeqCst);
        while self.epoch.load(SeqCst) == seen && !stop.load(SeqCst) {
            let (g, _) = self
                .wake
                .wait_timeout(guard, Duration::from_millis(100))
                .unwrap_or_else(PoisonError::into_inner);
            guard = g;
        }
        self.sleepers.fetch_sub(1, SeqCst);
    }
}
