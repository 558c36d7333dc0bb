//! The control connection of each link: heartbeats and last words.
//!
//! Beside its data connection, every pair of processes shares a control
//! connection that carries a few bytes: a heartbeat at least every
//! `beat_every` (a fifth of the peer timeout, see
//! [`crate::transport::connect::beat_interval`]), *goodbye* when a
//! process leaves after finishing the join, and *gave up* (naming the
//! peer it lost, if it knows one, and why) when it leaves with an error.
//! One thread per peer beats and listens. A peer that sends nothing for
//! the peer timeout (stopped with SIGSTOP, hung, or cut off by the network
//! while its kernel still answers) counts as silent, and a control
//! connection that ends without goodbye as closed.
//!
//! The threads run apart from the join and from the backend's threads, so
//! a busy computation or a full data connection never delays a beat, and
//! a stopped peer is noticed even when nothing else is being sent.
//!
//! This module watches and reports what each peer's control connection
//! said; [`crate::transport::verdict`] decides whom to blame. It does not
//! look at the data connections.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

const BEAT: u8 = 1;
const GOODBYE: u8 = 2;
const GAVE_UP: u8 = 3;
/// `blamed` of a gave-up frame that names nobody.
const NOBODY: u32 = u32::MAX;
/// Longest reason a gave-up frame carries (bytes).
const MAX_WHY: usize = 1024;
/// Longest a last word or a beat may block on a peer that does not read.
const WRITE_TIMEOUT: Duration = Duration::from_millis(200);

/// One message on a control connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    /// The sender is alive (one byte).
    Beat,
    /// The sender finished the join and leaves.
    Goodbye,
    /// The sender leaves with an error; `blamed` is the process it lost,
    /// if it knows one.
    GaveUp {
        /// The process the sender lost, if it knows one.
        blamed: Option<usize>,
        /// Why it gave up, in words (at most 1 KiB is sent).
        why: String,
    },
}

impl Frame {
    /// The frame's bytes: a tag, and for gave-up the blamed process (u32,
    /// all ones for nobody), the reason's length (u16) and the reason.
    pub fn encode(&self) -> Vec<u8> {
        match self {
            Frame::Beat => vec![BEAT],
            Frame::Goodbye => vec![GOODBYE],
            Frame::GaveUp { blamed, why } => {
                let mut end = why.len().min(MAX_WHY);
                while !why.is_char_boundary(end) {
                    end -= 1;
                }
                let blamed = blamed.and_then(|b| u32::try_from(b).ok()).unwrap_or(NOBODY);
                let mut out = vec![GAVE_UP];
                out.extend(blamed.to_be_bytes());
                out.extend((end as u16).to_be_bytes());
                out.extend(&why.as_bytes()[..end]);
                out
            }
        }
    }
}

/// Cuts the bytes of a control connection into frames.
#[derive(Debug, Default)]
pub struct Decoder {
    buf: Vec<u8>,
}

impl Decoder {
    /// Adds bytes read from the connection (any split of the frames).
    pub fn feed(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The next whole frame; an unknown tag is an error.
    pub fn next_frame(&mut self) -> Result<Option<Frame>, String> {
        let Some(&tag) = self.buf.first() else {
            return Ok(None);
        };
        let (frame, used) = match tag {
            BEAT => (Frame::Beat, 1),
            GOODBYE => (Frame::Goodbye, 1),
            GAVE_UP => {
                if self.buf.len() < 7 {
                    return Ok(None);
                }
                let blamed =
                    u32::from_be_bytes([self.buf[1], self.buf[2], self.buf[3], self.buf[4]]);
                let len = usize::from(u16::from_be_bytes([self.buf[5], self.buf[6]]));
                if self.buf.len() < 7 + len {
                    return Ok(None);
                }
                let why = String::from_utf8_lossy(&self.buf[7..7 + len]).into_owned();
                let blamed = (blamed != NOBODY).then_some(blamed as usize);
                (Frame::GaveUp { blamed, why }, 7 + len)
            }
            other => return Err(format!("it sent an unknown control message ({other:#x})")),
        };
        self.buf.drain(..used);
        Ok(Some(frame))
    }
}

/// What a peer's control connection revealed.
#[derive(Clone, Debug, PartialEq)]
pub enum News {
    /// It finished the join and left.
    Left,
    /// It sent nothing, not even a heartbeat, for this long.
    Silent(Duration),
    /// Its control connection ended without goodbye, or failed.
    Closed(String),
    /// It left with an error, blaming `blamed` if it knew whom.
    GaveUp {
        /// The process it lost, if it said.
        blamed: Option<usize>,
        /// Why it gave up, as it said it.
        why: String,
    },
}

/// One peer's control connection, shared by its thread and the transport.
#[derive(Debug)]
pub struct PeerWatch {
    /// The watched peer's process index.
    pub peer: usize,
    writer: Mutex<TcpStream>,
    /// The first news and when it came; later news does not replace it.
    news: Mutex<Option<(Instant, News)>>,
    /// Set once this process said its last word: no more beats.
    done: AtomicBool,
}

impl PeerWatch {
    /// The first thing the control connection revealed, and when.
    pub fn news(&self) -> Option<(Instant, News)> {
        self.news
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn note(&self, news: News) {
        let mut n = self.news.lock().unwrap_or_else(PoisonError::into_inner);
        if n.is_none() {
            *n = Some((Instant::now(), news));
        }
    }

    /// Whether the control connection revealed anything yet.
    pub fn has_news(&self) -> bool {
        self.news
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }

    fn say(&self, frame: &Frame) -> std::io::Result<()> {
        let mut w = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        w.write_all(&frame.encode())
    }

    /// Sends this process's last word (goodbye or gave up) and stops
    /// beating. Only the first last word is sent; failures are ignored
    /// (a peer that does not read is lost to us anyway).
    pub fn last_word(&self, frame: &Frame) {
        if !self.done.swap(true, Ordering::SeqCst) {
            let _ = self.say(frame);
        }
    }
}

/// Starts watching `peer` on its `control` connection: a thread that
/// beats every `beat_every` and records news, silence after `timeout`
/// included.
pub fn watch(
    peer: usize,
    control: TcpStream,
    beat_every: Duration,
    timeout: Duration,
) -> std::io::Result<Arc<PeerWatch>> {
    control.set_write_timeout(Some(WRITE_TIMEOUT))?;
    let reader = control.try_clone()?;
    let w = Arc::new(PeerWatch {
        peer,
        writer: Mutex::new(control),
        news: Mutex::new(None),
        done: AtomicBool::new(false),
    });
    let shared = Arc::clone(&w);
    std::thread::Builder::new()
        .name(format!("numakit:beat-{peer}"))
        .spawn(move || listen(&shared, reader, beat_every, timeout))?;
    Ok(w)
}

/// The thread of one peer: beat, read what comes, notice silence. Ends
/// when this process said its last word or the connection ended.
fn listen(w: &PeerWatch, mut reader: TcpStream, beat_every: Duration, timeout: Duration) {
    let mut decoder = Decoder::default();
    let mut buf = [0u8; 256];
    let mut heard = Instant::now();
    let mut next_beat = Instant::now();
    while !w.done.load(Ordering::SeqCst) {
        let now = Instant::now();
        if now >= next_beat {
            next_beat = now + beat_every;
            if let Err(e) = w.say(&Frame::Beat) {
                if !matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) {
                    w.note(News::Closed(format!("its control connection failed: {e}")));
                    return;
                }
            }
        }
        let wait = next_beat.saturating_duration_since(Instant::now());
        if reader
            .set_read_timeout(Some(wait.max(Duration::from_millis(5))))
            .is_err()
        {
            return;
        }
        match reader.read(&mut buf) {
            Ok(0) => {
                w.note(News::Closed("the connection was closed".into()));
                return;
            }
            Ok(n) => {
                heard = Instant::now();
                decoder.feed(&buf[..n]);
                if !take_frames(w, &mut decoder) {
                    return;
                }
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                // Silence counts only after a read that found nothing, so
                // a process that was itself paused reads what came first.
                let silent = heard.elapsed();
                if silent >= timeout && !w.has_news() {
                    w.note(News::Silent(silent));
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => {
                w.note(News::Closed(e.to_string()));
                return;
            }
        }
    }
}

/// Records the frames that arrived; false when the stream is garbage.
fn take_frames(w: &PeerWatch, decoder: &mut Decoder) -> bool {
    loop {
        match decoder.next_frame() {
            Ok(None) => return true,
            Ok(Some(Frame::Beat)) => {}
            Ok(Some(Frame::Goodbye)) => w.note(News::Left),
            Ok(Some(Frame::GaveUp { blamed, why })) => w.note(News::GaveUp { blamed, why }),
            Err(why) => {
                w.note(News::Closed(why));
                return false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    fn pair() -> (TcpStream, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        (a, b)
    }

    fn wait_for_news(w: &PeerWatch, within: Duration) -> Option<(Instant, News)> {
        let start = Instant::now();
        while start.elapsed() < within {
            if let Some(n) = w.news() {
                return Some(n);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        None
    }

    #[test]
    fn frames_survive_any_split() {
        let frames = [
            Frame::Beat,
            Frame::GaveUp {
                blamed: Some(2),
                why: "it sent nothing for 3.0 s".into(),
            },
            Frame::GaveUp {
                blamed: None,
                why: String::new(),
            },
            Frame::Goodbye,
        ];
        let bytes: Vec<u8> = frames.iter().flat_map(Frame::encode).collect();
        for cut in 0..bytes.len() {
            let mut d = Decoder::default();
            let mut got = Vec::new();
            for part in [&bytes[..cut], &bytes[cut..]] {
                d.feed(part);
                while let Some(f) = d.next_frame().unwrap() {
                    got.push(f);
                }
            }
            assert_eq!(got, frames, "cut at {cut}");
        }
        let mut d = Decoder::default();
        d.feed(&[9]);
        assert!(d.next_frame().is_err());
        let long = Frame::GaveUp {
            blamed: Some(1),
            why: "é".repeat(MAX_WHY),
        };
        let mut d = Decoder::default();
        d.feed(&long.encode());
        let Some(Frame::GaveUp { why, .. }) = d.next_frame().unwrap() else {
            panic!("a gave-up frame");
        };
        assert!(why.len() <= MAX_WHY && why.starts_with('é'));
    }

    #[test]
    fn a_peer_that_beats_is_not_silent_and_one_that_stops_is() {
        let (a, b) = pair();
        let timeout = Duration::from_millis(400);
        let beat = Duration::from_millis(50);
        let wa = watch(1, a, beat, timeout).unwrap();
        let wb = watch(0, b, beat, timeout).unwrap();
        std::thread::sleep(timeout * 3);
        assert_eq!(wa.news(), None);
        assert_eq!(wb.news(), None);
        // b's process stops beating without a word (as SIGSTOP would).
        wb.done.store(true, Ordering::SeqCst);
        let stopped = Instant::now();
        let (_, news) = wait_for_news(&wa, Duration::from_secs(5)).expect("silence noticed");
        assert!(matches!(news, News::Silent(d) if d >= timeout), "{news:?}");
        let took = stopped.elapsed();
        assert!(took >= timeout - beat && took < timeout * 3, "{took:?}");
    }

    #[test]
    fn last_words_and_a_closed_connection_are_news() {
        let (a, b) = pair();
        let long = Duration::from_secs(30);
        let wa = watch(1, a, Duration::from_millis(20), long).unwrap();
        let wb = watch(0, b, Duration::from_millis(20), long).unwrap();
        wb.last_word(&Frame::GaveUp {
            blamed: Some(2),
            why: "peer 2 went silent".into(),
        });
        wb.last_word(&Frame::Goodbye);
        let (_, news) = wait_for_news(&wa, Duration::from_secs(5)).unwrap();
        assert_eq!(
            news,
            News::GaveUp {
                blamed: Some(2),
                why: "peer 2 went silent".into()
            }
        );
        let (c, d) = pair();
        let wc = watch(1, c, Duration::from_millis(20), long).unwrap();
        drop(d);
        let (_, news) = wait_for_news(&wc, Duration::from_secs(5)).unwrap();
        assert!(matches!(news, News::Closed(_)), "{news:?}");
        let (e, f) = pair();
        let we = watch(1, e, Duration::from_millis(20), long).unwrap();
        let wf = watch(0, f, Duration::from_millis(20), long).unwrap();
        wf.last_word(&Frame::Goodbye);
        drop(wf);
        assert_eq!(
            wait_for_news(&we, Duration::from_secs(5)).unwrap().1,
            News::Left
        );
    }
}
