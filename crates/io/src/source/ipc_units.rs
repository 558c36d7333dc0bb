//! Arrow IPC files in units of record batches.
//!
//! The file format (with its `ARROW1` footer) lets any batch be read on its
//! own, so each batch is a unit, decoded by a reader of its own. The stream
//! format can only be read from the start: it is one unit. It does not
//! memory-map the file (batches are decoded into fresh buffers).

use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use arrow_array::RecordBatch;
use arrow_ipc::reader::{FileReader, StreamReader};
use arrow_schema::{ArrowError, SchemaRef};

use crate::error::{IoError, Result};
use crate::ipc::{check_stream_opening, read_opening, FILE_MAGIC};
use crate::source::Projection;

pub(crate) struct IpcUnits {
    schema: SchemaRef,
    /// Batches of the file format; `None` for a stream.
    batches: Option<usize>,
}

fn ipc_error(path: &Path) -> impl Fn(ArrowError) -> IoError + '_ {
    move |source| IoError::Arrow {
        path: path.to_path_buf(),
        source,
    }
}

fn open_file(path: &Path) -> Result<File> {
    File::open(path).map_err(|source| IoError::file("open", path, source))
}

impl IpcUnits {
    pub(crate) fn open(path: &Path) -> Result<Self> {
        let mut file = open_file(path)?;
        let opening =
            read_opening(&mut file).map_err(|source| IoError::file("read", path, source))?;
        if opening.starts_with(FILE_MAGIC) {
            let reader = FileReader::try_new(file, None).map_err(ipc_error(path))?;
            return Ok(IpcUnits {
                schema: reader.schema(),
                batches: Some(reader.num_batches()),
            });
        }
        let size = file
            .metadata()
            .map_err(|source| IoError::file("read", path, source))?
            .len();
        check_stream_opening(&opening, size).map_err(ipc_error(path))?;
        let reader = StreamReader::try_new(BufReader::new(file), None).map_err(ipc_error(path))?;
        Ok(IpcUnits {
            schema: reader.schema(),
            batches: None,
        })
    }

    pub(crate) fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    pub(crate) fn len(&self) -> usize {
        self.batches.unwrap_or(1)
    }

    pub(crate) fn rows(&self) -> Option<u64> {
        None
    }

    pub(crate) fn read(
        &self,
        path: &Path,
        unit: usize,
        projection: &Projection,
    ) -> Result<Vec<RecordBatch>> {
        let indices = Some(projection.indices().to_vec());
        match self.batches {
            Some(_) => {
                let mut reader =
                    FileReader::try_new(open_file(path)?, indices).map_err(ipc_error(path))?;
                reader.set_index(unit).map_err(ipc_error(path))?;
                match reader.next() {
                    Some(batch) => Ok(vec![batch.map_err(ipc_error(path))?]),
                    None => Ok(Vec::new()),
                }
            }
            None => {
                let reader = StreamReader::try_new(BufReader::new(open_file(path)?), indices)
                    .map_err(ipc_error(path))?;
                reader.map(|batch| batch.map_err(ipc_error(path))).collect()
            }
        }
    }
}
