//! The `numakit` binary: parse, run, and turn any error into one line on
//! stderr and the exit status of [`usage`]: 0 done, 1 failed, 2 a wrong
//! command line.

use std::process::ExitCode;

use clap::{CommandFactory, Parser};
use numakit_cli::args::Cli;
use numakit_cli::common::{error_line, output, usage};
use numakit_cli::dispatch;
use numakit_cli::process::{allocator, closed_pipe, logger, signals};

fn main() -> ExitCode {
    allocator::restart_with_huge_pages();
    closed_pipe::end_quietly_when_stdout_closes();
    signals::remove_temporary_files_on_interrupt();
    allocator::keep_freed_memory();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return parse_failure(e),
    };
    logger::init(cli.verbose, cli.quiet);
    match dispatch::dispatch(&cli) {
        Ok(true) => ExitCode::from(usage::SUCCESS),
        Ok(false) => ExitCode::from(usage::FAILURE),
        Err(e) if output::is_closed_pipe(&e) => ExitCode::from(output::CLOSED_PIPE_STATUS),
        Err(e) => {
            let line = error_line::one_line(e.chain().map(ToString::to_string));
            output::note(format_args!("numakit: error: {line}"));
            ExitCode::from(usage::exit_status(&e))
        }
    }
}

/// Help and version go to stdout (exit 0); a wrong command line is one
/// error line (exit 2).
fn parse_failure(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let shown = output::raw(&e.render().to_string());
            match shown {
                Err(e) if output::is_closed_pipe(&e) => ExitCode::from(output::CLOSED_PIPE_STATUS),
                Err(e) => {
                    let line = error_line::one_line(e.chain().map(ToString::to_string));
                    output::note(format_args!("numakit: error: {line}"));
                    ExitCode::from(usage::FAILURE)
                }
                Ok(()) => ExitCode::from(usage::SUCCESS),
            }
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            output::note(e.render().to_string().trim_end());
            ExitCode::from(usage::USAGE)
        }
        _ => {
            let called = usage::command_called(&Cli::command(), std::env::args().skip(1));
            let line = usage::clap_error_line(&e.render().to_string(), &called);
            output::note(format_args!("numakit: error: {line}"));
            ExitCode::from(usage::USAGE)
        }
    }
}
