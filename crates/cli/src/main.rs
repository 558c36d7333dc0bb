//! The `numakit` binary: parse, run, and turn any error into one line on
//! stderr and a non-zero exit.

use std::process::ExitCode;

use clap::Parser;
use numakit_cli::{allocator, args::Cli, closed_pipe, commands, error_line, logger};

fn main() -> ExitCode {
    closed_pipe::end_quietly_when_stdout_closes();
    allocator::keep_freed_memory();
    let cli = Cli::parse();
    logger::init(cli.verbose, cli.quiet);
    match commands::dispatch(&cli) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            let line = error_line::one_line(e.chain().map(ToString::to_string));
            eprintln!("numakit: error: {line}");
            ExitCode::from(2)
        }
    }
}
