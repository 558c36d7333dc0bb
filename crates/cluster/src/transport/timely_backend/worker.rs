//! The timely worker of a process: one dataflow that takes the join's
//! outgoing messages from a queue, exchanges them by destination process,
//! and hands every message that arrives to the join's queue. The worker
//! moves data; it does not compute the join (numakit's pool does).
//!
//! Each message goes out at its own timestamp (the input advances after
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

use crate::message::Message;

/// A message with its sender and receiver (process indices).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Envelope {
    pub from: u32,
    pub to: u32,
    pub message: Message,
}

/// From the join to the worker.
pub enum Outgoing {
    Send(Envelope),
    /// Nothing more will be sent.
    Close,
}

/// From the worker to the join.
pub enum Inbound {
    Arrived(Envelope),
    /// Every process closed its input and every message was delivered.
    AllDone,
}

/// Time the worker spends encoding outgoing and decoding arriving
/// messages: communication work done on the worker's thread.
#[derive(Debug, Default)]
pub struct Codec {
    pub encode_ns: AtomicU64,
    pub decode_ns: AtomicU64,
}

fn add(counter: &AtomicU64, since: Instant) {
    counter.fetch_add(since.elapsed().as_nanos() as u64, Ordering::Relaxed);
}

/// How long the worker sleeps when it has nothing to do (it wakes at once
/// for network traffic, and after this for the join's outgoing queue).
const PARK: Duration = Duration::from_millis(1);

type Batches = CapacityContainerBuilder<Vec<Envelope>>;

/// Runs the worker until the dataflow completes or `stop` is set.
pub fn run(
    worker: &mut Worker,
    outgoing: &Receiver<Outgoing>,
    inbound: Sender<Inbound>,
    stop: &Arc<AtomicBool>,
    codec: &Arc<Codec>,
) -> Result<(), String> {
    let mut input: InputHandle<u64, Batches> = InputHandle::new();
    let mut announced = false;
    let decode = Arc::clone(codec);
    worker.dataflow::<u64, _, _>(|scope| {
        scope.input_from(&mut input).sink(
            Exchange::new(|e: &Envelope| u64::from(e.to)),
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

/// Moves every queued message into the input; returns whether any was
/// moved and whether the join closed its side.
fn take_outgoing(
    outgoing: &Receiver<Outgoing>,
    handle: &mut InputHandle<u64, Batches>,
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
