//! The transport: how a process of the distributed join reaches its
//! peers. It is generic over what it carries (any [`Payload`]: a type that
//! serializes and may cross threads), as timely's allocators are over
//! their data; the join instantiates it with its
//! [`Message`](crate::message::Message). The join talks only to the
//! [`Transport`] trait: queue a payload for a peer, take the next payload
//! from any peer (tagged with its sender), see how much each link has
//! carried, and finish. A lost peer is an error that names it: one that
//! closed its connections, and one that went silent (stopped, hung, cut
//! off), which heartbeats on a control connection beside each data
//! connection reveal ([`heartbeat`]); [`verdict`] tells the lost peer from
//! bystanders that gave up because of it.
//!
//! Backends: [`timely_backend`] (timely dataflow's TCP layer: one send
//! and one receive thread per peer, queues between them and the worker,
//! asynchronous progress tracking instead of barriers) and [`solo`] (one
//! process, nothing to send). Another backend (MPI, say) implements the
//! same trait without touching the join. This module does not know what
//! the payloads mean; what each link carried is reported in the metrics'
//! own type ([`LinkTraffic`]).

pub mod connect;
pub mod greeting;
pub mod heartbeat;
pub mod solo;
pub mod timely_backend;
pub mod verdict;

use std::hash::{BuildHasher, Hasher};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::Result;
use crate::metrics::LinkTraffic;

/// A read that blocks longer than this found the link idle: its wait is
/// not counted in [`LinkTraffic::receive_seconds`].
pub const RECEIVE_IDLE: Duration = Duration::from_millis(5);

/// What a transport can carry: any owned value that serializes (a
/// backend encodes it for the wire and decodes it at the other end),
/// clones (timely's containers require it) and may move between threads
/// (backends send and receive on threads of their own): timely's
/// `ExchangeData`, plus `Clone`. Implemented for every such type; the
/// join's is [`Message`](crate::message::Message).
pub trait Payload: Serialize + DeserializeOwned + Clone + Send + 'static {}

impl<T: Serialize + DeserializeOwned + Clone + Send + 'static> Payload for T {}

/// What [`Transport::finish`] returns: the final traffic of every link,
/// and the payloads (with their senders) that arrived while finishing.
pub type Finished<M> = (Vec<LinkTraffic>, Vec<(usize, M)>);

/// An endpoint of an all-to-all exchange of payloads of type `M` between
/// processes. The transport moves payloads and measures its links; it does
/// not know what the payloads mean.
pub trait Transport<M: Payload> {
    /// This process's index, `0..processes()`.
    fn process(&self) -> usize;

    /// Number of processes in the exchange.
    fn processes(&self) -> usize;

    /// The address of process `peer`, for messages.
    fn address(&self, peer: usize) -> String;

    /// An id of this run, the same on every process (process 0 draws it
    /// when the processes connect): names what belongs to one run, such
    /// as the staging directory of its result files.
    fn run_id(&self) -> u64;

    /// Queues `payload` for process `to` (another process). Returns at
    /// once; the backend sends in the background.
    fn send(&mut self, to: usize, payload: M) -> Result<()>;

    /// The next payload from any peer and its sender, waiting at most
    /// `timeout` (`None` when nothing came). Fails when a peer is lost.
    fn recv(&mut self, timeout: Duration) -> Result<Option<(usize, M)>>;

    /// Bytes written to the link to `peer` so far (the ring schedule waits
    /// for a phase's bytes to leave before starting the next phase).
    fn bytes_sent_to(&self, peer: usize) -> u64;

    /// Traffic of every link so far.
    fn traffic(&self) -> Vec<LinkTraffic>;

    /// Seconds spent so far encoding outgoing and decoding arriving
    /// payloads (communication work outside the links' threads).
    fn codec_seconds(&self) -> (f64, f64) {
        (0.0, 0.0)
    }

    /// Tells the peers that this process leaves with an error, and why
    /// (so they name it rather than a bystander). The transport is not
    /// used afterwards.
    fn give_up(&mut self, _why: &str) {}

    /// Declares that this process sends nothing more, waits (at most
    /// `timeout`) until every peer has done the same and every payload is
    /// delivered, and returns the final traffic. Payloads that arrive
    /// meanwhile are returned too, in order.
    fn finish(self: Box<Self>, timeout: Duration) -> Result<Finished<M>>;
}

/// Connects this process to its peers: on timely for several processes,
/// [`solo::Solo`] for one.
pub fn connect<M: Payload>(endpoints: &connect::Endpoints) -> Result<Box<dyn Transport<M>>> {
    if endpoints.addresses.len() == 1 && endpoints.process == 0 {
        return Ok(Box::new(solo::Solo::new()));
    }
    Ok(Box::new(timely_backend::TimelyTransport::connect(
        endpoints,
    )?))
}

/// A fresh run id: unlikely to repeat across processes, machines and time.
pub fn new_run_id() -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    let now = SystemTime::now().duration_since(UNIX_EPOCH);
    h.write_u128(now.map_or(0, |d| d.as_nanos()));
    h.finish()
}
