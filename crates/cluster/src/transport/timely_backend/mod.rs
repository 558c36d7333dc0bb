//! The transport on timely dataflow (timely 0.32, pinned exactly in the
//! workspace). This directory is the only place in numakit that uses
//! timely.
//!
//! Connections are made by [`mod@crate::transport::connect`] (with a
//! deadline and a greeting that checks the peers belong to this join),
//! wrapped in [`stream::MeteredStream`] and handed to timely's TCP layer,
//! which starts one send and one receive thread per peer. One timely
//! worker per process runs [`worker::run`]: it exchanges the payloads
//! (any [`Payload`], timely's `ExchangeData` once in an envelope) by
//! destination and passes what arrives back through a queue. Compute
//! threads are numakit's pool, not timely's.
//!
//! Each pair's control connection is watched by
//! [`crate::transport::heartbeat`], apart from timely: heartbeats reveal a
//! peer that went silent, and last words tell a peer that finished from
//! one that gave up (and whom it lost).
//!
//! timely is fail-stop: when a connection breaks its threads panic. Those
//! panics are kept off the terminal (a panic hook quiets threads named
//! `timely:`), the metered stream records which data connection broke,
//! and [`TimelyTransport::recv`] turns the evidence into
//! [`ClusterError::PeerLost`] naming the peer that
//! [`crate::transport::verdict`] blames; the first such error is also
//! said to every peer. After a failure the timely threads are abandoned,
//! never joined (joining could wait on a dead peer); the process is meant
//! to exit with the error.

pub mod stream;
pub mod worker;

use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, Once, PoisonError};
use std::time::{Duration, Instant};

use timely::communication::allocator::zero_copy::initialize::initialize_networking_from_sockets;
use timely::communication::allocator::{AllocatorBuilder, ProcessBuilder};
use timely::communication::{Hooks, WorkerGuards};
use timely::WorkerConfig;

use crate::error::{ClusterError, Result};
use crate::metrics::LinkTraffic;
use crate::transport::connect::{establish, Endpoints, PeerSockets};
use crate::transport::heartbeat::{self, Frame, PeerWatch};
use crate::transport::verdict::{self, Evidence};
use crate::transport::{Finished, Payload, Transport};
use stream::{LinkMeter, LinkState, MeteredStream};
use worker::{Codec, Envelope, Inbound, Outgoing};

/// Panic messages of timely's threads, kept for the error report.
static TIMELY_PANICS: Mutex<Vec<String>> = Mutex::new(Vec::new());
static QUIET_HOOK: Once = Once::new();
/// The thread that joins timely's threads at the end (their failures
/// surface there as panics too).
const JOIN_THREAD: &str = "numakit:join-timely";
/// How long a broken data connection waits for the control connection to
/// say why before its peer is blamed (see [`verdict`]).
const SETTLE: Duration = Duration::from_millis(500);

/// Keeps panics of timely's own threads (`timely:work-N`, `timely:send-N`,
/// `timely:recv-N`) off stderr: they are how timely stops when a peer is
/// lost, and the join reports that itself. Other panics print as before.
fn quiet_timely_panics() {
    QUIET_HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let timely = std::thread::current()
                .name()
                .is_some_and(|n| n.starts_with("timely:") || n == JOIN_THREAD);
            if timely {
                let mut log = TIMELY_PANICS.lock().unwrap_or_else(PoisonError::into_inner);
                log.push(info.to_string());
            } else {
                previous(info);
            }
        }));
    });
}

fn last_timely_panic() -> Option<String> {
    TIMELY_PANICS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .last()
        .cloned()
}

/// Every peer's data connection (for timely) and its control connection,
/// now watched (see [`heartbeat`]).
type Watched = (Vec<Option<TcpStream>>, Vec<Option<Arc<PeerWatch>>>);

fn watch_peers(peers: Vec<Option<PeerSockets>>, peer_timeout: Duration) -> Result<Watched> {
    let mut sockets = Vec::with_capacity(peers.len());
    let mut watches = Vec::with_capacity(peers.len());
    for (peer, link) in peers.into_iter().enumerate() {
        let Some(link) = link else {
            sockets.push(None);
            watches.push(None);
            continue;
        };
        let w = heartbeat::watch(peer, link.control, link.beat_every, peer_timeout)?;
        watches.push(Some(w));
        sockets.push(Some(link.data));
    }
    Ok((sockets, watches))
}

/// One process's end of an exchange's connections, on timely, carrying
/// payloads of type `M`.
pub struct TimelyTransport<M> {
    process: usize,
    addresses: Vec<String>,
    run_id: u64,
    meters: Vec<Arc<LinkMeter>>,
    /// Every peer's control connection (`None` at this process's index).
    watches: Vec<Option<Arc<PeerWatch>>>,
    /// This process said its last word (gave up or goodbye).
    spoke: AtomicBool,
    /// `finish` completed: the last word is goodbye.
    finished: bool,
    codec: Arc<Codec>,
    outgoing: Sender<Outgoing<M>>,
    inbound: Receiver<Inbound<M>>,
    all_done: bool,
    stop: Arc<AtomicBool>,
    guards: Option<WorkerGuards<std::result::Result<(), String>>>,
}

impl<M: Payload> TimelyTransport<M> {
    /// Connects to every peer (waiting at most `endpoints.timeout`) and
    /// starts timely's threads.
    pub fn connect(endpoints: &Endpoints) -> Result<Self> {
        quiet_timely_panics();
        let process = endpoints.process;
        let established = establish(endpoints)?;
        let run_id = established.run_id;
        let (sockets, watches) = watch_peers(established.peers, endpoints.peer_timeout)?;
        let meters: Vec<Arc<LinkMeter>> = (0..sockets.len())
            .map(|peer| Arc::new(LinkMeter::new(peer)))
            .collect();
        let streams: Vec<Option<MeteredStream>> = sockets
            .into_iter()
            .zip(&meters)
            .map(|(s, m)| s.map(|s| MeteredStream::new(s, Arc::clone(m))))
            .collect();
        let hooks = Hooks::default();
        let local = ProcessBuilder::new_typed_vector(1, hooks.refill.clone(), None);
        let (builders, comms) =
            initialize_networking_from_sockets(local, streams, process, 1, hooks)?;
        let builders = builders.into_iter().map(AllocatorBuilder::Tcp).collect();
        let (out_tx, out_rx) = mpsc::channel();
        let (in_tx, in_rx) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let ends = Mutex::new(Some((out_rx, in_tx)));
        let worker_stop = Arc::clone(&stop);
        let codec = Arc::new(Codec::default());
        let worker_codec = Arc::clone(&codec);
        let guards = timely::execute::execute_from(
            builders,
            Box::new(comms),
            WorkerConfig::default(),
            move |w| {
                let taken = ends.lock().unwrap_or_else(PoisonError::into_inner).take();
                match taken {
                    Some((out_rx, in_tx)) => {
                        worker::run(w, &out_rx, in_tx, &worker_stop, &worker_codec)
                    }
                    None => Err("a second worker in one process".into()),
                }
            },
        )
        .map_err(ClusterError::Transport)?;
        Ok(Self {
            process,
            addresses: endpoints.addresses.clone(),
            run_id,
            meters,
            watches,
            spoke: AtomicBool::new(false),
            finished: false,
            codec,
            outgoing: out_tx,
            inbound: in_rx,
            all_done: false,
            stop,
            guards: Some(guards),
        })
    }
}

impl<M> TimelyTransport<M> {
    /// What this process knows about each peer.
    fn evidence(&self) -> Vec<Evidence> {
        self.meters
            .iter()
            .zip(&self.watches)
            .filter_map(|(m, w)| {
                let w = w.as_ref()?;
                Some(Evidence {
                    peer: m.peer,
                    data_lost: m.lost(),
                    news: w.news(),
                })
            })
            .collect()
    }

    /// The lost peer, as an error, once the evidence names one (a broken
    /// data connection waits up to `settle` for its explanation). The
    /// first such verdict is said to every peer.
    fn verdict(&self, settle: Duration) -> Option<ClusterError> {
        // The common case, checked cheaply: nothing happened to anyone.
        let quiet = self
            .meters
            .iter()
            .all(|m| !matches!(m.state(), LinkState::Lost(_)))
            && self.watches.iter().flatten().all(|w| !w.has_news());
        if quiet {
            return None;
        }
        let blame = verdict::blame(self.process, &self.evidence(), Instant::now(), settle)?;
        self.last_word(&Frame::GaveUp {
            blamed: Some(blame.peer),
            why: blame.why.clone(),
        });
        Some(ClusterError::PeerLost {
            peer: blame.peer,
            address: self.addresses[blame.peer].clone(),
            why: blame.why,
        })
    }

    fn lost_peer(&self) -> Option<ClusterError> {
        self.verdict(SETTLE)
    }

    /// Why the worker stopped, when it stopped early: the lost peer (given
    /// a moment to be explained), else what timely said.
    fn stopped(&self) -> ClusterError {
        let deadline = Instant::now() + SETTLE;
        while Instant::now() < deadline {
            if let Some(err) = self.lost_peer() {
                return err;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        self.verdict(Duration::ZERO).unwrap_or_else(|| {
            ClusterError::Transport(
                last_timely_panic().unwrap_or_else(|| "the timely worker stopped".into()),
            )
        })
    }

    /// Says `frame` on every control connection, once per process.
    fn last_word(&self, frame: &Frame) {
        if self.spoke.swap(true, Ordering::SeqCst) {
            return;
        }
        for w in self.watches.iter().flatten() {
            w.last_word(frame);
        }
    }

    /// Gives up on timely's threads without waiting for them.
    fn abandon(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(guards) = self.guards.take() {
            std::mem::forget(guards);
        }
    }
}

impl<M> Drop for TimelyTransport<M> {
    fn drop(&mut self) {
        let last = if self.finished {
            Frame::Goodbye
        } else {
            Frame::GaveUp {
                blamed: None,
                why: "it left the join before finishing it".into(),
            }
        };
        self.last_word(&last);
        self.abandon();
    }
}

impl<M: Payload> Transport<M> for TimelyTransport<M> {
    fn process(&self) -> usize {
        self.process
    }

    fn processes(&self) -> usize {
        self.addresses.len()
    }

    fn address(&self, peer: usize) -> String {
        self.addresses.get(peer).cloned().unwrap_or_default()
    }

    fn run_id(&self) -> u64 {
        self.run_id
    }

    fn give_up(&mut self, why: &str) {
        self.last_word(&Frame::GaveUp {
            blamed: None,
            why: why.to_string(),
        });
    }

    fn send(&mut self, to: usize, payload: M) -> Result<()> {
        if to == self.process || to >= self.addresses.len() {
            return Err(ClusterError::InvalidArgument(format!(
                "process {} cannot send to process {to}",
                self.process
            )));
        }
        if let Some(err) = self.lost_peer() {
            return Err(err);
        }
        let envelope = Envelope {
            from: self.process as u32,
            to: to as u32,
            payload,
        };
        self.outgoing
            .send(Outgoing::Send(envelope))
            .map_err(|_| self.stopped())
    }

    fn recv(&mut self, timeout: Duration) -> Result<Option<(usize, M)>> {
        if let Some(err) = self.lost_peer() {
            return Err(err);
        }
        match self.inbound.recv_timeout(timeout) {
            Ok(Inbound::Arrived(e)) => Ok(Some((e.from as usize, e.payload))),
            Ok(Inbound::AllDone) => {
                self.all_done = true;
                Ok(None)
            }
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => Err(self.stopped()),
        }
    }

    fn bytes_sent_to(&self, peer: usize) -> u64 {
        self.meters.get(peer).map_or(0, |m| m.bytes_sent())
    }

    fn codec_seconds(&self) -> (f64, f64) {
        let s = |c: &std::sync::atomic::AtomicU64| c.load(Ordering::Relaxed) as f64 / 1e9;
        (s(&self.codec.encode_ns), s(&self.codec.decode_ns))
    }

    fn traffic(&self) -> Vec<LinkTraffic> {
        self.meters
            .iter()
            .filter(|m| m.peer != self.process)
            .map(|m| m.traffic())
            .collect()
    }

    fn finish(mut self: Box<Self>, timeout: Duration) -> Result<Finished<M>> {
        let deadline = Instant::now() + timeout;
        let _ = self.outgoing.send(Outgoing::Close);
        let mut late = Vec::new();
        while !self.all_done {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(self.not_closed());
            }
            if let Some(m) = self.recv(left.min(Duration::from_millis(50)))? {
                late.push(m);
            }
        }
        let guards = self.guards.take();
        let (done_tx, done_rx) = mpsc::channel();
        std::thread::Builder::new()
            .name(JOIN_THREAD.into())
            .spawn(move || {
                let results = guards.map(|g| g.join()).unwrap_or_default();
                let _ = done_tx.send(results);
            })?;
        let left = deadline.saturating_duration_since(Instant::now());
        match done_rx.recv_timeout(left.max(Duration::from_millis(100))) {
            Ok(results) => {
                for r in results {
                    r.map_err(ClusterError::Transport)?
                        .map_err(ClusterError::Transport)?;
                }
            }
            Err(_) => return Err(self.not_closed()),
        }
        self.finished = true;
        Ok((self.traffic(), late))
    }
}

impl<M> TimelyTransport<M> {
    fn not_closed(&self) -> ClusterError {
        if let Some(err) = self.lost_peer() {
            return err;
        }
        let open: Vec<String> = self
            .meters
            .iter()
            .filter(|m| m.peer != self.process && m.state() == LinkState::Open)
            .map(|m| format!("peer {} ({})", m.peer, self.addresses[m.peer]))
            .collect();
        ClusterError::Transport(format!(
            "the join's connections did not close in time (still open: {})",
            if open.is_empty() {
                "none".into()
            } else {
                open.join(", ")
            }
        ))
    }
}
