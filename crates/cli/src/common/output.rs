//! The one path by which numakit writes to stdout and stderr.
//!
//! Rust's `println!` panics when stdout fails (a full disk, `> /dev/full`).
//! Every command prints through [`text`], [`json`] or [`report`] instead:
//! they return a write failure as an error, which `main` turns into one
//! line and exit status 1. A reader that goes away (`numakit topo | head
//! -1`) ends the process quietly by SIGPIPE, as it ends `ls` (see
//! [`crate::process::closed_pipe`]); should a write still see `EPIPE` (SIGPIPE
//! ignored by a parent), [`is_closed_pipe`] tells `main` to exit quietly
//! with the same status a SIGPIPE death would give.
//!
//! Notes on stderr ([`note`]) never fail: when stderr itself is gone there
//! is nowhere left to say anything, so the note is dropped.
//!
//! It does not format tables or choose between text and JSON for a command
//! beyond [`report`]'s one switch; rendering lives with each command.

use std::fmt::Display;
use std::io::{self, Write};

use anyhow::{Context, Result};
use serde::Serialize;

/// The exit status of a process ended by SIGPIPE in a shell (128 + 13).
pub const CLOSED_PIPE_STATUS: u8 = 141;

/// Writes `text` and a newline to stdout.
pub fn text(text: impl Display) -> Result<()> {
    write_stdout(|out| writeln!(out, "{text}"))
}

/// Writes `text` to stdout as it is (no newline added).
pub fn raw(text: &str) -> Result<()> {
    write_stdout(|out| out.write_all(text.as_bytes()))
}

/// Writes `value` as pretty JSON and a newline to stdout.
pub fn json<T: Serialize + ?Sized>(value: &T) -> Result<()> {
    let rendered = serde_json::to_string_pretty(value).context("rendering the JSON report")?;
    text(rendered)
}

/// Writes `value` as JSON when `json`, else the text `render` gives,
/// ended by exactly one newline. Every command's result goes out through
/// here.
pub fn report<T: Serialize + ?Sized>(
    json_wanted: bool,
    value: &T,
    render: impl FnOnce() -> String,
) -> Result<()> {
    if json_wanted {
        json(value)
    } else {
        text(render().trim_end_matches('\n'))
    }
}

/// [`report`] with a text rendering that can fail (it reads the result
/// to show its first rows, say); in JSON mode it is never called.
pub fn report_with<T: Serialize + ?Sized>(
    json_wanted: bool,
    value: &T,
    render: impl FnOnce() -> Result<String>,
) -> Result<()> {
    if json_wanted {
        json(value)
    } else {
        text(render()?.trim_end_matches('\n'))
    }
}

/// Writes one line to stderr, dropping it if stderr cannot take it.
pub fn note(line: impl Display) {
    let mut err = io::stderr().lock();
    let _ = writeln!(err, "{line}");
}

/// Whether `error` comes from writing to a reader that went away.
pub fn is_closed_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}

fn write_stdout(write: impl FnOnce(&mut io::StdoutLock<'static>) -> io::Result<()>) -> Result<()> {
    let mut out = io::stdout().lock();
    write(&mut out)
        .and_then(|()| out.flush())
        .context("cannot write to stdout")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_pipe_is_recognised_through_context() {
        let error = anyhow::Error::new(io::Error::from(io::ErrorKind::BrokenPipe))
            .context("cannot write to stdout");
        assert!(is_closed_pipe(&error));
        let full = anyhow::Error::new(io::Error::from_raw_os_error(libc::ENOSPC))
            .context("cannot write to stdout");
        assert!(!is_closed_pipe(&full));
    }
}
