//! The driver of a process's join: the paper's scheduler thread. It keeps
//! the outbox moving, turns every arriving piece into a task on numakit's
//! pool at once (pipelining computation with communication), starts the
//! probes a finished table releases, and stops when the frames say
//! everything is in, every task has ended and the links have taken all
//! this process sent. It waits on nothing global:
//! each process finishes as soon as its own part is joined.

use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::Duration;

use numakit_pool::Pool;

use crate::error::{ClusterError, Result};
use crate::frames::{Frames, Work};
use crate::join::send::Outbox;
use crate::join::work::{self, Event, TaskEnv};
use crate::message::{Message, ProcessReport};
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
}

struct State<'a> {
    transport: &'a mut dyn Transport<Message>,
    frames: Frames,
    outbox: Outbox,
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
    let (events_tx, events) = mpsc::channel::<Event>();
    let mut st = State {
        transport,
        frames,
        outbox,
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
    Ok(st.driven)
}

fn handle_event(st: &mut State<'_>, event: Event) -> Result<Vec<Work>> {
    match event {
        Event::Built {
            bucket,
            sender,
            table,
        } => st.frames.built(bucket, sender, table),
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
            st.frames.arrive(from, piece)
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
