//! The socket timely's send and receive threads use, wrapped to measure
//! each link (bytes and busy time in each direction) and to tell a lost
//! peer from one that finished.
//!
//! timely ends every connection with a zero-length message header before
//! it closes it. The reading side follows the framing (timely 0.32's
//! `MessageHeader`: six big-endian u64 words, the fifth the payload
//! length) to see that header; a connection that ends before it, or fails,
//! means the peer was lost, and that is recorded here, before timely's
//! thread gives up, so the join can name the peer.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use timely::communication::allocator::zero_copy::stream::Stream;

use crate::metrics::LinkTraffic;
use crate::transport::RECEIVE_IDLE;

const HEADER_WORDS: usize = 6;
const HEADER_BYTES: usize = 8 * HEADER_WORDS;
const LENGTH_WORD: usize = 4;

/// What became of a link.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LinkState {
    /// Neither ended nor broken yet.
    Open,
    /// The peer ended the connection properly.
    Closed,
    /// The connection broke; why.
    Lost(String),
}

/// Counters of one link, shared by its reading and writing halves.
#[derive(Debug)]
pub struct LinkMeter {
    /// The peer at the other end.
    pub peer: usize,
    bytes_sent: AtomicU64,
    bytes_received: AtomicU64,
    send_ns: AtomicU64,
    receive_ns: AtomicU64,
    state: Mutex<LinkState>,
    /// When the state left `Open`.
    ended_at: Mutex<Option<Instant>>,
    framing: Mutex<Framing>,
}

impl LinkMeter {
    /// Zeroed counters of an open link to `peer`.
    pub fn new(peer: usize) -> Self {
        Self {
            peer,
            bytes_sent: AtomicU64::new(0),
            bytes_received: AtomicU64::new(0),
            send_ns: AtomicU64::new(0),
            receive_ns: AtomicU64::new(0),
            state: Mutex::new(LinkState::Open),
            ended_at: Mutex::new(None),
            framing: Mutex::new(Framing::default()),
        }
    }

    /// Bytes written to the socket so far.
    pub fn bytes_sent(&self) -> u64 {
        self.bytes_sent.load(Ordering::Relaxed)
    }

    /// What has become of the link so far (the first change sticks).
    pub fn state(&self) -> LinkState {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// When and why the connection broke, if it did.
    pub fn lost(&self) -> Option<(Instant, String)> {
        match self.state() {
            LinkState::Lost(why) => {
                let at = *self.ended_at.lock().unwrap_or_else(PoisonError::into_inner);
                Some((at.unwrap_or_else(Instant::now), why))
            }
            _ => None,
        }
    }

    fn set_state(&self, state: LinkState) {
        let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if *s == LinkState::Open {
            *s = state;
            *self.ended_at.lock().unwrap_or_else(PoisonError::into_inner) = Some(Instant::now());
        }
    }

    /// The link's bytes and busy time so far.
    pub fn traffic(&self) -> LinkTraffic {
        LinkTraffic {
            peer: self.peer,
            bytes_sent: self.bytes_sent.load(Ordering::Relaxed),
            bytes_received: self.bytes_received.load(Ordering::Relaxed),
            send_seconds: self.send_ns.load(Ordering::Relaxed) as f64 / 1e9,
            receive_seconds: self.receive_ns.load(Ordering::Relaxed) as f64 / 1e9,
        }
    }
}

/// Where the reader is in timely's (header, payload)* framing.
#[derive(Debug)]
struct Framing {
    header: [u8; HEADER_BYTES],
    have: usize,
    skip: u64,
    ended: bool,
}

impl Default for Framing {
    fn default() -> Self {
        Self {
            header: [0; HEADER_BYTES],
            have: 0,
            skip: 0,
            ended: false,
        }
    }
}

impl Framing {
    /// Follows `bytes`; returns whether the end-of-stream header was seen.
    fn feed(&mut self, mut bytes: &[u8]) -> bool {
        while !bytes.is_empty() && !self.ended {
            if self.skip > 0 {
                let n = (self.skip.min(bytes.len() as u64)) as usize;
                self.skip -= n as u64;
                bytes = &bytes[n..];
                continue;
            }
            let n = (HEADER_BYTES - self.have).min(bytes.len());
            self.header[self.have..self.have + n].copy_from_slice(&bytes[..n]);
            self.have += n;
            bytes = &bytes[n..];
            if self.have == HEADER_BYTES {
                let at = LENGTH_WORD * 8;
                let mut word = [0u8; 8];
                word.copy_from_slice(&self.header[at..at + 8]);
                let length = u64::from_be_bytes(word);
                self.have = 0;
                if length == 0 {
                    self.ended = true;
                } else {
                    self.skip = length;
                }
            }
        }
        self.ended
    }
}

/// A TCP connection to one peer, metered.
pub struct MeteredStream {
    inner: TcpStream,
    meter: Arc<LinkMeter>,
}

impl MeteredStream {
    /// `inner`, counted into `meter` (shared with its clones).
    pub fn new(inner: TcpStream, meter: Arc<LinkMeter>) -> Self {
        Self { inner, meter }
    }
}

impl Read for MeteredStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let start = Instant::now();
        let result = self.inner.read(buf);
        let waited = start.elapsed();
        let m = &self.meter;
        match &result {
            Ok(0) => {
                let ended = m
                    .framing
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .ended;
                if ended {
                    m.set_state(LinkState::Closed);
                } else {
                    m.set_state(LinkState::Lost("the connection was closed".into()));
                }
            }
            Ok(n) => {
                m.bytes_received.fetch_add(*n as u64, Ordering::Relaxed);
                if waited <= RECEIVE_IDLE {
                    m.receive_ns
                        .fetch_add(waited.as_nanos() as u64, Ordering::Relaxed);
                }
                m.framing
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .feed(&buf[..*n]);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => m.set_state(LinkState::Lost(e.to_string())),
        }
        result
    }
}

impl Write for MeteredStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let start = Instant::now();
        let result = self.inner.write(buf);
        let m = &self.meter;
        m.send_ns
            .fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
        match &result {
            Ok(n) => {
                m.bytes_sent.fetch_add(*n as u64, Ordering::Relaxed);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => m.set_state(LinkState::Lost(e.to_string())),
        }
        result
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl Stream for MeteredStream {
    fn try_clone(&self) -> io::Result<Self> {
        Ok(Self {
            inner: self.inner.try_clone()?,
            meter: Arc::clone(&self.meter),
        })
    }

    fn set_nonblocking(&self, nonblocking: bool) -> io::Result<()> {
        self.inner.set_nonblocking(nonblocking)
    }

    fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        self.inner.shutdown(how)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use timely::communication::networking::MessageHeader;

    fn header(length: usize) -> Vec<u8> {
        let mut out = Vec::new();
        MessageHeader {
            channel: 3,
            source: 1,
            target_lower: 0,
            target_upper: 1,
            length,
            seqno: 9,
        }
        .write_to(&mut out)
        .unwrap();
        out
    }

    #[test]
    fn framing_finds_the_end_header_in_any_split() {
        let mut bytes = header(5);
        bytes.extend([0u8; 5]);
        bytes.extend(header(0));
        for cut in 0..bytes.len() {
            let mut f = Framing::default();
            let first = f.feed(&bytes[..cut]);
            assert!(!first || cut == bytes.len());
            assert!(f.feed(&bytes[cut..]), "cut at {cut}");
        }
        let mut f = Framing::default();
        assert!(!f.feed(&bytes[..bytes.len() - 1]));
    }

    #[test]
    fn a_payload_of_zeros_is_not_an_end() {
        let mut bytes = header(HEADER_BYTES * 2);
        bytes.extend(vec![0u8; HEADER_BYTES * 2]);
        let mut f = Framing::default();
        assert!(!f.feed(&bytes));
    }
}
