//! # numakit-paper
//!
//! The figures and tables of the four papers numakit implements (Li et
//! al., Kiefer et al., Chakraborty, Phoenix Rebirth), each rerun as far as
//! this machine allows, beside the published values.
//!
//! - [`mod@catalog`]: what an item is: its paper and number, how it is
//!   reproduced here (measured on this machine, measured in multi-node
//!   guests, simulated on the paper's machine, described from what numakit
//!   runs, or not at all and why), the numakit commands that produce it
//!   and what differs between the setups. One module per paper lists its
//!   items and holds their runners.
//! - [`context`]: what a runner is given (the scale, this machine).
//! - [`outcome`]: what a rerun gives: rows of our figure beside the
//!   published one, and the paper's claim (its *shape*: ring beats naive,
//!   migration wins below the crossover) checked on our figures.
//! - [`mod@run`]: [`catalog()`] (a paper's items) and [`run()`], which
//!   reruns a [`PaperRequest`] (one item, or every item of a paper).
//!
//! Each item reruns numakit's own library calls, the ones behind the CLI's
//! `shuffle`, `simulate`, `join`, `aggregate`, `probe`, `mapreduce` and
//! `cluster` commands: this crate is one entry point to them, not a second
//! implementation. It does not draw tables or charts (the CLI's), and it
//! does not try to reproduce diagrams, which it lists with the reason.

pub mod catalog;
pub mod context;
pub mod error;
pub mod outcome;
pub mod run;

mod chakraborty;
mod kiefer;
mod li;
mod phoenix;

pub use catalog::{Item, ItemId, Paper, Reproduction};
pub use context::{Context, Scale};
pub use error::{PaperError, Result};
pub use outcome::{Outcome, Row, Shape, Verdict};
pub use run::{catalog, run, ItemReport, PaperRequest, Selection};
