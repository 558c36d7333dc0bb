//! The metrics of Chakraborty §V, per process: computation load (time the
//! pool's workers spent on the join's tasks: cutting, sorting, building,
//! probing), communication load (time the links' send and receive threads
//! spent moving this process's data), join span (from the start of the
//! join to the moment this process has joined everything it owns), and
//! intra-node gain = total load / join span: how much of the work ran
//! side by side. Speedup = join span with one process / join span with P.
//!
//! Under a receive budget ([`crate::credit`]) a process also reports how
//! often and how long its pieces waited for credit, and the peak bytes
//! of received pieces it held.
//!
//! This module defines and combines the numbers; the join and the
//! transport measure them (a transport reports each link's traffic as a
//! [`LinkTraffic`]).

use serde::{Deserialize, Serialize};

/// What one link carried, as seen from this process: the transport's
/// report of a link, which the join adds to its process's metrics.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LinkTraffic {
    /// The peer at the other end.
    pub peer: usize,
    /// Bytes written to the data connection (the backend's framing
    /// included).
    pub bytes_sent: u64,
    /// Bytes read from the data connection (the backend's framing
    /// included).
    pub bytes_received: u64,
    /// Time the link's send thread spent writing to the socket (it blocks
    /// while the link is full, so on a slow link this is the transfer
    /// time).
    pub send_seconds: f64,
    /// Time the link's receive thread spent reading while data was
    /// flowing (a read that waited long for its first byte counts as
    /// idle, not as load: the peer had nothing to send; the transport
    /// sets the threshold).
    pub receive_seconds: f64,
}

/// What one process measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcessMetrics {
    /// The process's index.
    pub process: usize,
    /// Worker threads of the process's pool.
    pub threads: usize,
    /// Rows of R the process started with.
    pub left_rows: u64,
    /// Rows of S the process started with.
    pub right_rows: u64,
    /// Result rows the process produced.
    pub result_rows: u64,
    /// Pieces that arrived from peers.
    pub pieces_received: u64,
    /// Computation load, in seconds: time the pool's workers spent on the
    /// join's tasks (cutting, sorting, building, probing), summed over
    /// workers.
    pub compute_seconds: f64,
    /// Send load, in seconds: encoding plus writing to the links.
    pub send_seconds: f64,
    /// Receive load, in seconds: reading from the links plus decoding.
    pub receive_seconds: f64,
    /// The part of the send load spent encoding messages, in seconds.
    pub encode_seconds: f64,
    /// The part of the receive load spent decoding messages, in seconds.
    pub decode_seconds: f64,
    /// Join span, in seconds: wall time from the start of the join until
    /// this process had joined everything it owns (and its links had
    /// taken everything it sent).
    pub span_seconds: f64,
    /// Bytes written to all links (timely's framing included).
    pub bytes_sent: u64,
    /// Bytes read from all links (timely's framing included).
    pub bytes_received: u64,
    /// Per link.
    pub links: Vec<LinkTraffic>,
    /// How many times a piece of this process waited for a peer's
    /// receive credit (0 without a receive budget).
    #[serde(default)]
    pub sender_waits: u64,
    /// Seconds this process's pieces waited for credit, summed over
    /// peers.
    #[serde(default)]
    pub sender_wait_seconds: f64,
    /// The most row bytes of peers' pieces this process held at once,
    /// received and not yet processed (measured with or without a
    /// budget).
    #[serde(default)]
    pub peak_held_bytes: u64,
}

impl ProcessMetrics {
    /// Sets the send and receive loads and bytes from the links' traffic
    /// and the time spent (encoding, decoding) messages.
    pub fn set_links(&mut self, links: Vec<LinkTraffic>, codec: (f64, f64)) {
        let sum = |f: fn(&LinkTraffic) -> f64| links.iter().map(f).fold(0.0, |a, b| a + b);
        (self.encode_seconds, self.decode_seconds) = codec;
        self.send_seconds = sum(|l| l.send_seconds) + codec.0;
        self.receive_seconds = sum(|l| l.receive_seconds) + codec.1;
        self.bytes_sent = links.iter().map(|l| l.bytes_sent).sum();
        self.bytes_received = links.iter().map(|l| l.bytes_received).sum();
        self.links = links;
    }

    /// Computation plus communication load.
    pub fn total_load(&self) -> f64 {
        self.compute_seconds + self.send_seconds + self.receive_seconds
    }

    /// Total load / join span (0 for a span of 0).
    pub fn intra_node_gain(&self) -> f64 {
        if self.span_seconds > 0.0 {
            self.total_load() / self.span_seconds
        } else {
            0.0
        }
    }
}

/// The join span of the whole system: the last process to finish.
pub fn system_span(processes: &[ProcessMetrics]) -> f64 {
    processes.iter().map(|p| p.span_seconds).fold(0.0, f64::max)
}

/// Speedup of a span over the one-process span.
pub fn speedup(one_process_span: f64, span: f64) -> f64 {
    if span > 0.0 {
        one_process_span / span
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gain_is_total_load_over_span() {
        let mut m = ProcessMetrics {
            compute_seconds: 2.0,
            span_seconds: 1.0,
            ..Default::default()
        };
        m.set_links(
            vec![
                LinkTraffic {
                    peer: 1,
                    bytes_sent: 10,
                    bytes_received: 20,
                    send_seconds: 0.5,
                    receive_seconds: 0.25,
                },
                LinkTraffic {
                    peer: 2,
                    bytes_sent: 1,
                    bytes_received: 2,
                    send_seconds: 0.5,
                    receive_seconds: 0.25,
                },
            ],
            (0.25, 0.25),
        );
        assert_eq!(m.bytes_sent, 11);
        assert_eq!(m.send_seconds, 1.25);
        assert_eq!(m.total_load(), 4.0);
        assert_eq!(m.intra_node_gain(), 4.0);
        assert_eq!(ProcessMetrics::default().intra_node_gain(), 0.0);
        let spans = [
            m.clone(),
            ProcessMetrics {
                span_seconds: 4.0,
                ..m
            },
        ];
        assert_eq!(system_span(&spans), 4.0);
        assert_eq!(speedup(8.0, 4.0), 2.0);
    }
}
