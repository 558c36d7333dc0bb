//! Usage errors and exit statuses: what `main` tells the shell.
//!
//! numakit exits 0 on success, 2 when the command line is wrong (an
//! unknown option, a value that cannot be parsed or is out of range,
//! options that contradict each other) and 1 when the work itself failed
//! (a file, the data, the memory limit, the system, a peer), or when
//! `numakit doctor` found a failed check. A command marks an error of its
//! arguments with [`usage_error!`](crate::usage_error); clap's own parse
//! errors are usage errors too, and [`clap_error_line`] makes them the
//! same one line as every other error.
//!
//! It does not print anything itself; `main` does.

use std::fmt;

/// The command line asked for something numakit cannot do as asked.
#[derive(Debug)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// An [`anyhow::Error`] that is a [`UsageError`], formatted like `format!`.
#[macro_export]
macro_rules! usage_error {
    ($($arg:tt)*) => {
        ::anyhow::Error::new($crate::common::usage::UsageError(format!($($arg)*)))
    };
}

/// Returns a [`UsageError`] from the function, formatted like `format!`.
#[macro_export]
macro_rules! usage_bail {
    ($($arg:tt)*) => {
        return Err($crate::usage_error!($($arg)*))
    };
}

/// Returns a [`UsageError`] from the function unless `cond` holds.
#[macro_export]
macro_rules! usage_ensure {
    ($cond:expr, $($arg:tt)*) => {
        if !$cond {
            return Err($crate::usage_error!($($arg)*));
        }
    };
}

/// A refused option value (a parse error) as a usage error.
pub fn invalid(error: impl fmt::Display) -> anyhow::Error {
    anyhow::Error::new(UsageError(error.to_string()))
}

/// `result`, with any error turned into a usage error of the same one
/// line: for functions that only interpret options.
pub fn arguments<T>(result: anyhow::Result<T>) -> anyhow::Result<T> {
    result.map_err(|e| {
        if e.chain().any(|c| c.is::<UsageError>()) {
            e
        } else {
            invalid(crate::common::error_line::one_line(
                e.chain().map(ToString::to_string),
            ))
        }
    })
}

/// Exit status of a successful run.
pub const SUCCESS: u8 = 0;
/// Exit status when the work failed (or the doctor found a failed check).
pub const FAILURE: u8 = 1;
/// Exit status when the command line is wrong.
pub const USAGE: u8 = 2;

/// The exit status for `error`: [`USAGE`] when any link of its chain is a
/// [`UsageError`] or a clap error, [`FAILURE`] otherwise.
pub fn exit_status(error: &anyhow::Error) -> u8 {
    let usage = error
        .chain()
        .any(|cause| cause.is::<UsageError>() || cause.is::<clap::Error>());
    if usage {
        USAGE
    } else {
        FAILURE
    }
}

/// A clap parse error as one line (without its `error: ` prefix): the
/// message and any tip, then where to read more, e.g. `unexpected argument
/// '--lft' found; tip: a similar argument exists: '--left' (see 'numakit
/// join --help')`. `called` names the command where the rendered error
/// does not (clap shows no usage line for a refused value).
pub fn clap_error_line(rendered: &str, called: &str) -> String {
    let mut message = String::new();
    let mut command = None;
    for line in rendered.lines() {
        let line = line.trim();
        if let Some(usage) = line.strip_prefix("Usage: ") {
            command = Some(command_path(usage));
        } else if line.starts_with("For more information") {
            continue;
        } else if command.is_none() && !line.is_empty() {
            let part = line.strip_prefix("error: ").unwrap_or(line);
            if !message.is_empty() {
                message.push_str(if message.ends_with(':') { " " } else { "; " });
            }
            message.push_str(part);
        }
    }
    let command = command.unwrap_or_else(|| called.to_string());
    format!("{message} (see '{command} --help')")
}

/// The (sub)command a command line calls, e.g. `numakit cluster join`:
/// every argument that names a subcommand of the one before it.
pub fn command_called(root: &clap::Command, args: impl IntoIterator<Item = String>) -> String {
    let mut path = vec![root.get_name().to_string()];
    let mut current = root;
    for arg in args {
        if let Some(sub) = current.find_subcommand(&arg) {
            path.push(sub.get_name().to_string());
            current = sub;
        }
    }
    path.join(" ")
}

/// `numakit join` from `numakit join --left <FILE>`.
fn command_path(usage: &str) -> String {
    usage
        .split_whitespace()
        .take_while(|word| !word.starts_with(['-', '<', '[']))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clap_errors_become_one_line_naming_the_command() {
        let rendered = "error: unexpected argument '--lft' found\n\n  tip: a similar argument exists: '--left'\n\nUsage: numakit join --left <FILE>\n\nFor more information, try '--help'.\n";
        assert_eq!(
            clap_error_line(rendered, "numakit"),
            "unexpected argument '--lft' found; tip: a similar argument exists: '--left' (see 'numakit join --help')"
        );
        let missing = "error: the following required arguments were not provided:\n  --right <FILE>\n\nUsage: numakit join --left <FILE> --right <FILE>\n";
        assert_eq!(
            clap_error_line(missing, "numakit"),
            "the following required arguments were not provided: --right <FILE> (see 'numakit join --help')"
        );
        let bare = "error: invalid value 'x' for '--threads <N>': invalid digit\n\nFor more information, try '--help'.\n";
        assert_eq!(
            clap_error_line(bare, "numakit join"),
            "invalid value 'x' for '--threads <N>': invalid digit (see 'numakit join --help')"
        );
        let cli = <crate::args::Cli as clap::CommandFactory>::command();
        let words = |line: &str| {
            line.split_whitespace()
                .map(String::from)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            command_called(&cli, words("--placement off cluster join --order x")),
            "numakit cluster join"
        );
        assert_eq!(command_called(&cli, words("--threads x")), "numakit");
    }

    #[test]
    fn usage_errors_exit_2_and_others_1() {
        let usage = usage_error!("--nulls `x`: say first or last").context("sorting");
        assert_eq!(exit_status(&usage), USAGE);
        let failure = anyhow::anyhow!("cannot open a.csv");
        assert_eq!(exit_status(&failure), FAILURE);
    }
}
