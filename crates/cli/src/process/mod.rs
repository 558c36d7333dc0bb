//! The process's set-up, done once in `main` before any command runs:
//! SIGPIPE's default action ([`closed_pipe`]), the SIGINT/SIGTERM watcher
//! ([`signals`]), the allocator's tuning ([`allocator`]) and the stderr
//! logger ([`logger`]).

pub mod allocator;
pub mod closed_pipe;
pub mod logger;
pub mod signals;
