//! The greeting on every new connection between two processes of a join.
//!
//! The connecting side introduces itself: `[HELLO, processes, its index,
//! fingerprint of the join's options, channel, beat ms]` (big-endian u64
//! words); the accepting side answers `[verdict, run id, beat ms]`. The
//! channel says which of the pair's two connections this is (data or
//! control); "beat ms" is how often the sender wants heartbeats on the
//! control connection (both sides then beat at the more frequent of the
//! two). The run id is the accepting process's; process 0's becomes the
//! join's run id (every process connects to process 0).
//!
//! This module only encodes, decodes and checks greetings; it neither
//! opens sockets nor decides what to do with a refused one.

use std::io::{Read, Write};
use std::time::Duration;

/// "numakit2": the greeting of this version (with channels and run ids).
pub const HELLO: u64 = 0x6e75_6d61_6b69_7432;

/// Which of a pair's two connections a greeting opens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Channel {
    /// Carries the join's messages (handed to the backend).
    Data,
    /// Carries heartbeats and last words.
    Control,
}

impl Channel {
    /// Both channels, in the order a connecting process opens them.
    pub const ALL: [Channel; 2] = [Channel::Data, Channel::Control];

    /// 0 for data, 1 for control: the channel's word in a greeting and
    /// its index in per-channel arrays.
    pub fn index(self) -> usize {
        match self {
            Channel::Data => 0,
            Channel::Control => 1,
        }
    }

    fn from_word(w: u64) -> Option<Self> {
        match w {
            0 => Some(Channel::Data),
            1 => Some(Channel::Control),
            _ => None,
        }
    }
}

/// The accepting side's verdict on a greeting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The connecting process belongs to this join.
    Accepted,
    /// It expects another number of processes.
    WrongSize,
    /// Its join options' fingerprint differs.
    WrongOptions,
    /// Another process already connected this channel with its index.
    Duplicate,
}

impl Verdict {
    fn word(self) -> u64 {
        match self {
            Verdict::Accepted => 1,
            Verdict::WrongSize => 2,
            Verdict::WrongOptions => 3,
            Verdict::Duplicate => 4,
        }
    }

    fn from_word(w: u64) -> Option<Self> {
        match w {
            1 => Some(Verdict::Accepted),
            2 => Some(Verdict::WrongSize),
            3 => Some(Verdict::WrongOptions),
            4 => Some(Verdict::Duplicate),
            _ => None,
        }
    }

    /// Why the connecting side was refused, in words (None when accepted).
    pub fn refusal(self, my_index: usize) -> Option<String> {
        match self {
            Verdict::Accepted => None,
            Verdict::WrongSize => Some("it expects a different number of processes".into()),
            Verdict::WrongOptions => {
                Some("it was started with different join options (data, predicate or order)".into())
            }
            Verdict::Duplicate => Some(format!(
                "another process already connected as process {my_index}"
            )),
        }
    }
}

/// What the connecting side says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hello {
    /// How many processes the sender's join has.
    pub processes: u64,
    /// The sender's process index.
    pub process: u64,
    /// The fingerprint of the sender's join options.
    pub fingerprint: u64,
    /// Which of the pair's two connections this is.
    pub channel: Channel,
    /// How often the sender wants heartbeats (sent in whole milliseconds).
    pub beat: Duration,
}

/// What the accepting side answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Answer {
    /// Whether the greeting was accepted, and if not why.
    pub verdict: Verdict,
    /// The accepting process's run id (process 0's is the join's).
    pub run_id: u64,
    /// How often the accepting side wants heartbeats (whole milliseconds).
    pub beat: Duration,
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn words(values: &[u64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_be_bytes()).collect()
}

fn read_words<const N: usize>(s: &mut impl Read) -> std::io::Result<[u64; N]> {
    let mut buf = vec![0u8; 8 * N];
    s.read_exact(&mut buf)?;
    let mut out = [0u64; N];
    for (o, c) in out.iter_mut().zip(buf.chunks_exact(8)) {
        let mut b = [0u8; 8];
        b.copy_from_slice(c);
        *o = u64::from_be_bytes(b);
    }
    Ok(out)
}

impl Hello {
    /// Writes the greeting: six big-endian u64 words.
    pub fn write_to(&self, s: &mut impl Write) -> std::io::Result<()> {
        s.write_all(&words(&[
            HELLO,
            self.processes,
            self.process,
            self.fingerprint,
            self.channel.index() as u64,
            millis(self.beat),
        ]))
    }

    /// Reads a greeting; `None` for bytes that are not one (a stranger).
    pub fn read_from(s: &mut impl Read) -> std::io::Result<Option<Self>> {
        let [hello, processes, process, fingerprint, channel, beat] = read_words::<6>(s)?;
        let Some(channel) = Channel::from_word(channel) else {
            return Ok(None);
        };
        Ok((hello == HELLO).then_some(Hello {
            processes,
            process,
            fingerprint,
            channel,
            beat: Duration::from_millis(beat),
        }))
    }
}

impl Answer {
    /// Writes the answer: three big-endian u64 words.
    pub fn write_to(&self, s: &mut impl Write) -> std::io::Result<()> {
        s.write_all(&words(&[
            self.verdict.word(),
            self.run_id,
            millis(self.beat),
        ]))
    }

    /// Reads an answer; an unknown verdict is an error carrying its value.
    pub fn read_from(s: &mut impl Read) -> std::io::Result<Result<Self, u64>> {
        let [verdict, run_id, beat] = read_words::<3>(s)?;
        Ok(match Verdict::from_word(verdict) {
            Some(verdict) => Ok(Answer {
                verdict,
                run_id,
                beat: Duration::from_millis(beat),
            }),
            None => Err(verdict),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greetings_and_answers_round_trip() {
        let hello = Hello {
            processes: 3,
            process: 2,
            fingerprint: 0xdead_beef,
            channel: Channel::Control,
            beat: Duration::from_millis(600),
        };
        let mut bytes = Vec::new();
        hello.write_to(&mut bytes).unwrap();
        assert_eq!(
            Hello::read_from(&mut bytes.as_slice()).unwrap(),
            Some(hello)
        );
        bytes[0] ^= 1;
        assert_eq!(Hello::read_from(&mut bytes.as_slice()).unwrap(), None);

        let answer = Answer {
            verdict: Verdict::Duplicate,
            run_id: 77,
            beat: Duration::from_secs(2),
        };
        let mut bytes = Vec::new();
        answer.write_to(&mut bytes).unwrap();
        assert_eq!(
            Answer::read_from(&mut bytes.as_slice()).unwrap(),
            Ok(answer)
        );
        let junk = words(&[99, 0, 0]);
        assert_eq!(Answer::read_from(&mut junk.as_slice()).unwrap(), Err(99));
        assert!(Verdict::Duplicate.refusal(4).unwrap().contains("process 4"));
        assert!(Verdict::Accepted.refusal(4).is_none());
    }
}
