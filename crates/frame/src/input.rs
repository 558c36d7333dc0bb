//! Where a request's tables come from: a file (read on the pool, only the
//! columns the request needs) or a table already in memory (a Python
//! caller's Arrow data). Requests name columns; [`Input::schema`] lets them
//! be checked before anything is read.

use std::path::PathBuf;

use arrow_schema::SchemaRef;
use numakit_io::{Source, SourceOptions};
use numakit_pool::Pool;

use crate::error::Result;
use crate::load::{load, LoadStats};
use crate::memory::MemoryLimit;
use crate::table::Table;

/// A table to read, or one in memory.
pub enum Input {
    File(Box<Source>),
    Table(Table),
}

impl Input {
    /// Opens the file at `path` (reads its schema, nothing else).
    pub fn file(path: impl Into<PathBuf>, options: &SourceOptions) -> Result<Self> {
        Ok(Input::File(Box::new(Source::open(path.into(), options)?)))
    }

    /// The input's full schema.
    pub fn schema(&self) -> SchemaRef {
        match self {
            Input::File(source) => source.schema(),
            Input::Table(table) => table.schema().clone(),
        }
    }

    /// What the input is called in messages.
    pub fn name(&self) -> String {
        match self {
            Input::File(source) => source.path().display().to_string(),
            Input::Table(table) => table.name().to_string(),
        }
    }

    /// The `columns` of the input as a table on `pool`: a file is decoded
    /// (with its load figures), a table in memory projected.
    pub fn columns(
        &self,
        pool: &Pool,
        columns: &[String],
        limit: &MemoryLimit,
    ) -> Result<(Table, Option<LoadStats>)> {
        let mut unique: Vec<String> = Vec::with_capacity(columns.len());
        for c in columns {
            if !unique.contains(c) {
                unique.push(c.clone());
            }
        }
        let columns = &unique[..];
        match self {
            Input::File(source) => {
                let projection = source.project(Some(columns))?;
                let (table, stats) = load(pool, source, &projection, limit)?;
                Ok((table, Some(stats)))
            }
            Input::Table(table) => {
                let indices = columns
                    .iter()
                    .map(|c| table.column_index(c))
                    .collect::<Result<Vec<_>>>()?;
                Ok((table.project(&indices)?, None))
            }
        }
    }
}
