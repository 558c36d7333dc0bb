//! The driver of a process's join: the paper's scheduler thread. It keeps
//! the outbox moving, turns every arriving piece into a task on numakit's
//! pool at once (pipelining computation with communication), starts the
//! probes a finished table releases, and stops when the frames say
//! everything is in, every task has ended and the links have taken all
//! this process sent. It waits on nothing global:
//! each process finishes as soon as its own part is joined.
//!
//! It also keeps the receive ledger ([`crate::credit`]): what it holds of
//! its peers' pieces, released when a table absorbed them or the last
//! task dropped them, and (under a receive budget) the credit it gives
//! back to their senders.

use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::Duration;

use numakit_pool::Pool;

use crate::credit::{row_bytes, ReceiveLedger};
use crate::error::{ClusterError, Result};
use crate::frames::{Frames, Work};
use crate::join::send::Outbox;
use crate::join::work::{self, Event, TaskEnv};
use crate::message::{Message, ProcessReport, Side};
use crate::transport::Transport;

/// How long the driver waits for a message before looking at its tasks.
const POLL: Duration = Duration::from_millis(1);

/// What the driver saw.
#[derive(Default)]
pub(super) struct Driven {
    pub compute_seconds: f64,
    pub pieces_received: u64,
    /// Reports of other processes that arrived early (at the sink).
    pub reports: Vec<ProcessReport>,
    /// Times this process's pieces waited for a peer's credit.
    pub sender_waits: u64,
    /// Seconds they waited, summed over peers.
    pub sender_wait_seconds: f64,
    /// The most bytes of peers' pieces held at once.
    pub peak_held_bytes: u64,
}

struct State<'a> {
    transport: &'a mut dyn Transport<Message>,
    frames: Frames,
    outbox: Outbox,
    ledger: ReceiveLedger,
    outstanding: usize,
    driven: Driven,
}

/// Runs the exchange and the join to completion.
pub(super) fn drive(
    pool: &Pool,
    transport: &mut dyn Transport<Message>,
    frames: Frames,
    outbox: Outbox,
    local: Vec<Work>,
    env: &TaskEnv<'_>,
) -> Result<Driven> {
    let processes = transport.processes();
    let (events_tx, events) = mpsc::channel::<Event>();
    let mut st = State {
        transport,
        frames,
        outbox,
        ledger: ReceiveLedger::new(processes),
        outstanding: 0,
        driven: Driven::default(),
    };
    let outcome = pool.scope(|scope| -> Result<()> {
        let spawn = |st: &mut State<'_>, w: Work| {
            st.outstanding += 1;
            let tx = events_tx.clone();
            scope.spawn(move |_ctx| work::run(w, env, &tx));
        };
        for w in local {
            spawn(&mut st, w);
        }
        let result: Result<()> = (|| loop {
            st.outbox.pump(st.transport)?;
            while let Ok(event) = events.try_recv() {
                for w in handle_event(&mut st, event)? {
                    spawn(&mut st, w);
                }
            }
            return_credit(&mut st)?;
            let finished = st.frames.complete() && st.outstanding == 0 && st.outbox.done();
            if finished && st.outbox.flushed(st.transport) {
                return Ok(());
            }
            if let Some((from, message)) = st.transport.recv(POLL)? {
                if let Some(w) = handle_message(&mut st, from, message)? {
                    spawn(&mut st, w);
                }
            }
        })();
        if result.is_err() {
            // Queued tasks end at once; the error goes back without
            // waiting for work that no longer matters.
            env.cancelled.store(true, Ordering::Relaxed);
        }
        result
    });
    outcome??;
    let credits = st.outbox.credits();
    st.driven.sender_waits = credits.waits();
    st.driven.sender_wait_seconds = credits.wait_seconds();
    st.driven.peak_held_bytes = st.ledger.peak();
    Ok(st.driven)
}

/// Releases what nobody uses any more and, under a budget, gives the
/// senders their credit back.
fn return_credit(st: &mut State<'_>) -> Result<()> {
    st.ledger.poll();
    let owed = st.ledger.take_owed();
    if st.outbox.credits().is_bounded() {
        for (peer, bytes) in owed {
            st.outbox.return_credit(st.transport, peer, bytes)?;
        }
    }
    Ok(())
}

fn handle_event(st: &mut State<'_>, event: Event) -> Result<Vec<Work>> {
    match event {
        Event::Built {
            bucket,
            sender,
            table,
        } => {
            st.ledger.built(bucket, sender);
            st.frames.built(bucket, sender, table)
        }
        Event::Done { seconds, panicked } => {
            st.outstanding -= 1;
            st.driven.compute_seconds += seconds;
            if panicked {
                return Err(ClusterError::Transport(
                    "a join task panicked (see the message above)".into(),
                ));
            }
            Ok(Vec::new())
        }
    }
}

fn handle_message(st: &mut State<'_>, from: usize, message: Message) -> Result<Option<Work>> {
    match message {
        Message::Piece(piece) => {
            st.driven.pieces_received += 1;
            let (side, bucket) = (piece.side, piece.bucket);
            let bytes = row_bytes(piece.rows.len());
            let arrived = st.frames.arrive_held(from, piece)?;
            match (&arrived.rows, side) {
                (Some(rows), _) => st.ledger.shared(from, bytes, rows.clone()),
                (None, Side::Left) => st.ledger.building(bucket, from, bytes),
                (None, Side::Right) => {}
            }
            Ok(arrived.work)
        }
        Message::Credit { bytes } => {
            st.outbox.credit_returned(from, bytes)?;
            Ok(None)
        }
        Message::EndOfSide { side, pieces } => {
            st.frames.end(from, side, pieces)?;
            Ok(None)
        }
        Message::Report(report) => {
            st.driven.reports.push(*report);
            Ok(None)
        }
    }
}
