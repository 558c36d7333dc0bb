//! The building blocks the locks are made of, in one place so that the
//! model checker loom can stand in for them: under `cfg(loom)` these are
//! loom's atomics, mutex, cell, thread-locals and yields (so that loom sees
//! every access and can run every interleaving of them), otherwise std's,
//! re-exported as they are (only the cell is wrapped, in a transparent
//! wrapper that inlines away: no cost).
//!
//! Two things differ in form, not in behaviour:
//! - [`UnsafeCell`] is reached through `with`/`with_mut` (a raw pointer
//!   for the time of a closure), as loom's is: loom then checks each access
//!   against the others. The std version is a transparent wrapper whose
//!   methods inline to `std::cell::UnsafeCell::get`.
//! - Under loom every way of waiting ([`spin_loop`], [`yield_now`],
//!   [`sleep`]) is loom's `yield_now`: loom needs a spinning thread to
//!   yield, or it takes the spin for an endless loop, and it has no clock.
//!
//! The node of a thread under loom is only the one set explicitly (see
//! [`crate::node`]); this module does not know about nodes.

#[cfg(not(loom))]
pub(crate) use std::{
    hint::spin_loop,
    sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, AtomicUsize},
    sync::{Mutex, MutexGuard},
    thread::{sleep, yield_now},
    thread_local,
};

#[cfg(loom)]
pub(crate) use loom::{
    hint::spin_loop,
    sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, AtomicUsize},
    sync::{Mutex, MutexGuard},
    thread::yield_now,
    thread_local,
};

/// Loom has no clock: a sleep between checks is a yield to the other
/// threads, which is all a sleeping waiter gives them.
#[cfg(loom)]
pub(crate) fn sleep(_: std::time::Duration) {
    loom::thread::yield_now();
}

/// Interior mutability for data behind a lock, reached only through raw
/// pointers handed to a closure (the form loom's cell has).
#[cfg(not(loom))]
#[derive(Debug)]
#[repr(transparent)]
pub(crate) struct UnsafeCell<T: ?Sized>(std::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    /// `value` in a cell.
    #[inline(always)]
    pub(crate) const fn new(value: T) -> Self {
        UnsafeCell(std::cell::UnsafeCell::new(value))
    }

    /// The value, taking the cell apart.
    #[inline(always)]
    pub(crate) fn into_inner(self) -> T {
        self.0.into_inner()
    }
}

#[cfg(not(loom))]
impl<T: ?Sized> UnsafeCell<T> {
    /// Calls `f` with a pointer for reading the value.
    #[inline(always)]
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    /// Calls `f` with a pointer for writing the value.
    #[inline(always)]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }

    /// The value: `&mut self` proves nobody else has it.
    #[inline(always)]
    pub(crate) fn get_mut(&mut self) -> &mut T {
        self.0.get_mut()
    }
}

/// Interior mutability for data behind a lock, checked by loom: each
/// `with`/`with_mut` is an access that loom orders against the others.
#[cfg(loom)]
#[derive(Debug)]
pub(crate) struct UnsafeCell<T: ?Sized>(loom::cell::UnsafeCell<T>);

#[cfg(loom)]
impl<T> UnsafeCell<T> {
    /// `value` in a cell.
    pub(crate) fn new(value: T) -> Self {
        UnsafeCell(loom::cell::UnsafeCell::new(value))
    }

    /// The value, taking the cell apart.
    pub(crate) fn into_inner(self) -> T {
        self.0.into_inner()
    }
}

#[cfg(loom)]
impl<T: ?Sized> UnsafeCell<T> {
    /// Calls `f` with a pointer for reading the value (a read for loom).
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        self.0.with(f)
    }

    /// Calls `f` with a pointer for writing the value (a write for loom).
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        self.0.with_mut(f)
    }

    /// The value: `&mut self` proves nobody else has it.
    pub(crate) fn get_mut(&mut self) -> &mut T {
        // SAFETY: `&mut self` is the only reference to the cell, so nothing
        // else reads or writes the value while the returned borrow (tied to
        // it) lives; loom still sees the access as a write.
        self.0.with_mut(|value| unsafe { &mut *value })
    }
}
