//! The transport of a join with one process: there is no peer, so
//! nothing is sent or received. It lets the join's code run unchanged on
//! one machine (the P = 1 point of the speedup).

use std::time::Duration;

use crate::error::{ClusterError, Result};
use crate::metrics::LinkTraffic;
use crate::transport::{Finished, Payload, Transport};

/// The only process.
#[derive(Debug)]
pub struct Solo {
    run_id: u64,
}

impl Solo {
    /// A one-process join with a fresh run id.
    pub fn new() -> Self {
        Self {
            run_id: super::new_run_id(),
        }
    }
}

impl Default for Solo {
    fn default() -> Self {
        Self::new()
    }
}

impl<M: Payload> Transport<M> for Solo {
    fn process(&self) -> usize {
        0
    }

    fn processes(&self) -> usize {
        1
    }

    fn address(&self, _peer: usize) -> String {
        "this process".into()
    }

    fn run_id(&self) -> u64 {
        self.run_id
    }

    fn send(&mut self, to: usize, _payload: M) -> Result<()> {
        Err(ClusterError::InvalidArgument(format!(
            "a join of one process has no peer {to}"
        )))
    }

    fn recv(&mut self, timeout: Duration) -> Result<Option<(usize, M)>> {
        std::thread::sleep(timeout.min(Duration::from_millis(1)));
        Ok(None)
    }

    fn bytes_sent_to(&self, _peer: usize) -> u64 {
        0
    }

    fn traffic(&self) -> Vec<LinkTraffic> {
        Vec::new()
    }

    fn finish(self: Box<Self>, _timeout: Duration) -> Result<Finished<M>> {
        Ok((Vec::new(), Vec::new()))
    }
}
