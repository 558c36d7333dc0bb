//! # numakit-python
//!
//! The extension module `numakit._numakit` behind the Python package
//! `numakit` (`crates/python/python/numakit`): the table operators
//! ([`operators`]) with Arrow in and out without copies ([`tables`]), a
//! reusable worker pool ([`pool`]), the machine tools ([`machine`]), work
//! off the interpreter and interruptible ([`interrupt`]), and numakit's
//! errors as Python exceptions ([`errors`]).
//!
//! It is the thin layer the CLI is for the command line: arguments in,
//! one call into the library, the report out. The Python half gives the
//! functions their documented signatures, docstrings and defaults.

mod errors;
mod interrupt;
mod machine;
mod operators;
mod pool;
mod tables;

use pyo3::prelude::*;

/// numakit's extension module (use the `numakit` package).
#[pymodule]
fn _numakit(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<pool::Pool>()?;
    module.add_function(wrap_pyfunction!(operators::join, module)?)?;
    module.add_function(wrap_pyfunction!(operators::aggregate, module)?)?;
    module.add_function(wrap_pyfunction!(operators::sort, module)?)?;
    module.add_function(wrap_pyfunction!(machine::topology, module)?)?;
    module.add_function(wrap_pyfunction!(machine::doctor, module)?)?;
    module.add_function(wrap_pyfunction!(machine::probe, module)?)?;
    module.add_function(wrap_pyfunction!(machine::simulate, module)?)?;
    module.add_function(wrap_pyfunction!(machine::presets, module)?)?;
    module.add_function(wrap_pyfunction!(tables::buffer_addresses, module)?)?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
