//! The timely worker of a process: one dataflow that takes the outgoing
//! payloads from a queue, exchanges them by destination process, and
//! hands every payload that arrives to the receiving queue. The worker
//! moves data of any [`Payload`] type; it does not know what the payloads
//! mean, nor compute the join (numakit's pool does).
//!
//! Each payload goes out at its own timestamp (the input advances after
//! each batch it takes), which makes timely flush it at once rather than
//! wait for a buffer to fill. When the input is closed and timely's
//! progress tracking says no process can send anything more, the worker
//! announces it and its dataflow ends.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::operators::Input;
use timely::dataflow::InputHandle;
use timely::worker::Worker;

use crate::transport::Payload;

/// A payload with its sender and receiver (process indices).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Envelope<M> {
    /// The sending process.
    pub from: u32,
    /// The receiving process (timely exchanges by it).
    pub to: u32,
    /// What is sent.
    pub payload: M,
}

/// From the transport's user to the worker.
pub enum Outgoing<M> {
    /// A payload to exchange.
    Send(Envelope<M>),
    /// Nothing more will be sent.
    Close,
}

/// From the worker to the transport's user.
pub enum Inbound<M> {
    /// A payload for this process from a peer.
    Arrived(Envelope<M>),
    /// Every process closed its input and every payload was delivered.
    AllDone,
}

/// Time the worker spends encoding outgoing and decoding arriving
/// payloads: communication work done on the worker's thread.
#[derive(Debug, Default)]
pub struct Codec {
    /// Nanoseconds spent pushing outgoing payloads into timely's input
    /// and advancing it (which serializes them), summed.
    pub encode_ns: AtomicU64,
    /// Nanoseconds spent taking arrived payloads out of timely (which
    /// deserializes them) and handing them to the receiving queue, summed.
    pub decode_ns: AtomicU64,
}

fn add(counter: &AtomicU64, since: Instant) {
    counter.fetch_add(since.elapsed().as_nanos() as u64, Ordering::Relaxed);
}

/// How long the worker sleeps when it has nothing to do (it wakes at once
/// for network traffic, and after this for the outgoing queue).
const PARK: Duration = Duration::from_millis(1);

type Batches<M> = CapacityContainerBuilder<Vec<Envelope<M>>>;

/// Runs the worker until the dataflow completes or `stop` is set.
pub fn run<M: Payload>(
    worker: &mut Worker,
    outgoing: &Receiver<Outgoing<M>>,
    inbound: Sender<Inbound<M>>,
    stop: &Arc<AtomicBool>,
    codec: &Arc<Codec>,
) -> Result<(), String> {
    let mut input: InputHandle<u64, Batches<M>> = InputHandle::new();
    let mut announced = false;
    let decode = Arc::clone(codec);
    worker.dataflow::<u64, _, _>(|scope| {
        scope.input_from(&mut input).sink(
            Exchange::new(|e: &Envelope<M>| u64::from(e.to)),
            "Receive",
            move |(handle, frontier)| {
                let start = Instant::now();
                handle.for_each(|_time, batch| {
                    for e in batch.drain(..) {
                        let _ = inbound.send(Inbound::Arrived(e));
                    }
                });
                add(&decode.decode_ns, start);
                if frontier.is_empty() && !announced {
                    announced = true;
                    let _ = inbound.send(Inbound::AllDone);
                }
            },
        );
    });
    let mut input = Some(input);
    let mut epoch = 0u64;
    while worker.has_dataflows() {
        if stop.load(Ordering::Relaxed) {
            return Err("stopped".into());
        }
        if let Some(handle) = input.as_mut() {
            let start = Instant::now();
            let (pushed, closed) = take_outgoing(outgoing, handle);
            if closed {
                input = None;
            } else if pushed {
                epoch += 1;
                handle.advance_to(epoch);
            }
            if pushed {
                add(&codec.encode_ns, start);
            }
        }
        worker.step_or_park(Some(PARK));
    }
    Ok(())
}

/// Moves every queued payload into the input; returns whether any was
/// moved and whether the sender closed its side.
fn take_outgoing<M: Payload>(
    outgoing: &Receiver<Outgoing<M>>,
    handle: &mut InputHandle<u64, Batches<M>>,
) -> (bool, bool) {
    let mut pushed = false;
    loop {
        match outgoing.try_recv() {
            Ok(Outgoing::Send(e)) => {
                handle.send(e);
                pushed = true;
            }
            Ok(Outgoing::Close) | Err(TryRecvError::Disconnected) => return (pushed, true),
            Err(TryRecvError::Empty) => return (pushed, false),
        }
    }
}
