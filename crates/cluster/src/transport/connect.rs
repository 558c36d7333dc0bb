//! Connecting the processes of a join to each other, with a deadline.
//!
//! Every process listens on its own address; process i connects to every
//! process below it and accepts connections from every process above it.
//! Each pair shares two TCP connections: the data connection, which the
//! backend gets, and the control connection, which carries heartbeats
//! and last words ([`crate::transport::heartbeat`]). The connecting side
//! introduces itself on each ([`crate::transport::greeting`]: the number
//! of processes, its index, a fingerprint of the join's options, the
//! channel) and the accepting side confirms or refuses, so a process
//! started with other options, or twice with the same index, is caught
//! here with an error that names it, not later as a wrong result.
//!
//! Every address is resolved first: a host name that does not resolve is
//! an error at once, naming the peer, not a connect timeout. A peer that
//! does not show up within the timeout is an error naming the peer:
//! nothing waits forever. Data connections also watch their peer's
//! machine (TCP keepalive probes while idle, and a limit on how long sent
//! data may stay unacknowledged, about [`LIVENESS`]); a peer whose process
//! stops answering while its kernel still does is the heartbeats' to find.
//!
//! This module only makes connected sockets; it knows no message format
//! beyond the greeting.

use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use crate::error::{ClusterError, Result};
use crate::transport::greeting::{Answer, Channel, Hello, Verdict};

/// About how long a peer's machine may stop acknowledging data before
/// its data connection breaks.
pub const LIVENESS: Duration = Duration::from_secs(15);
const KEEPALIVE_IDLE: Duration = Duration::from_secs(5);
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(2);
const KEEPALIVE_PROBES: u32 = 5;

/// How long a peer may stay silent by default (`Endpoints::peer_timeout`).
pub const DEFAULT_PEER_TIMEOUT: Duration = Duration::from_secs(10);

/// How often a process wants heartbeats from a peer it gives up on after
/// `peer_timeout` of silence: five a timeout, at most every 2 s.
pub fn beat_interval(peer_timeout: Duration) -> Duration {
    (peer_timeout / 5).clamp(Duration::from_millis(10), Duration::from_secs(2))
}

/// Who this process is and whom it expects.
#[derive(Clone, Debug)]
pub struct Endpoints {
    /// This process's index into `addresses`.
    pub process: usize,
    /// `host:port` of every process, in process order.
    pub addresses: Vec<String>,
    /// How long to wait for all peers.
    pub timeout: Duration,
    /// How long a connected peer may send nothing (not even a heartbeat)
    /// before it counts as lost.
    pub peer_timeout: Duration,
    /// Equal on every process of the same join (a hash of its options).
    pub fingerprint: u64,
}

/// The two connections to one peer.
#[derive(Debug)]
pub struct PeerSockets {
    /// The connection for the join's messages (handed to the backend),
    /// with TCP keepalive and a user timeout set.
    pub data: TcpStream,
    /// The connection for heartbeats and last words.
    pub control: TcpStream,
    /// How often to beat on `control`: the more frequent of what the two
    /// sides asked for.
    pub beat_every: Duration,
}

/// Every peer's connections (`None` at this process's own index) and the
/// join's run id (process 0's).
#[derive(Debug)]
pub struct Established {
    /// `peers[p]`: the connections to process `p`, in process order.
    pub peers: Vec<Option<PeerSockets>>,
    /// The join's run id: process 0's, the same on every process.
    pub run_id: u64,
}

/// What the accepting thread and the connecting loop share.
struct Context<'a> {
    e: &'a Endpoints,
    resolved: Vec<SocketAddr>,
    deadline: Instant,
    run_id: u64,
    beat: Duration,
}

/// Connects to every peer.
pub fn establish(e: &Endpoints) -> Result<Established> {
    let me = e.process;
    if me >= e.addresses.len() {
        return Err(ClusterError::InvalidArgument(format!(
            "process {me} but only {} addresses",
            e.addresses.len()
        )));
    }
    let resolved = resolve_all(e)?;
    let listener = TcpListener::bind(resolved[me]).map_err(|source| ClusterError::Listen {
        process: me,
        address: e.addresses[me].clone(),
        source,
    })?;
    let cx = Context {
        e,
        resolved,
        deadline: Instant::now() + e.timeout,
        run_id: super::new_run_id(),
        beat: beat_interval(e.peer_timeout),
    };
    let (below, above) = std::thread::scope(|s| {
        let accepting = std::thread::Builder::new()
            .name("numakit:accept".into())
            .spawn_scoped(s, || accept_all(&listener, &cx))?;
        let below = connect_below(&cx);
        let above = accepting
            .join()
            .map_err(|_| ClusterError::Transport("the accepting thread panicked".into()))?;
        Ok::<_, ClusterError>((below, above))
    })?;
    let (mut peers, run_id) = below?;
    peers.push(None);
    peers.extend(above?.into_iter().map(Some));
    Ok(Established {
        peers,
        run_id: if me == 0 { cx.run_id } else { run_id },
    })
}

/// Every address, resolved once; a peer's that does not resolve is an
/// error naming it (at once: retrying a name lookup only delays the error).
fn resolve_all(e: &Endpoints) -> Result<Vec<SocketAddr>> {
    let me = e.process;
    e.addresses
        .iter()
        .enumerate()
        .map(|(peer, address)| {
            resolve(address).map_err(|source| {
                if peer == me {
                    ClusterError::Listen {
                        process: me,
                        address: address.clone(),
                        source,
                    }
                } else {
                    ClusterError::Unresolvable {
                        peer,
                        address: address.clone(),
                        why: source.to_string(),
                    }
                }
            })
        })
        .collect()
}

fn resolve(address: &str) -> std::io::Result<SocketAddr> {
    address.to_socket_addrs()?.next().ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("`{address}` resolves to no address"),
        )
    })
}

/// Connects both channels to every process below this one; returns the
/// sockets and process 0's run id.
fn connect_below(cx: &Context<'_>) -> Result<(Vec<Option<PeerSockets>>, u64)> {
    let mut peers = Vec::new();
    let mut run_id = 0;
    for peer in 0..cx.e.process {
        let (data, answer) = connect_to(peer, Channel::Data, cx)?;
        let (control, control_answer) = connect_to(peer, Channel::Control, cx)?;
        if peer == 0 {
            run_id = answer.run_id;
        }
        peers.push(Some(PeerSockets {
            data,
            control,
            beat_every: cx.beat.min(control_answer.beat),
        }));
    }
    Ok((peers, run_id))
}

/// Makes the kernel give up on a data connection when the peer's machine
/// stops answering: after [`KEEPALIVE_IDLE`] without traffic it probes
/// every [`KEEPALIVE_INTERVAL`] (idle connections), and data
/// unacknowledged for [`LIVENESS`] breaks the connection (busy ones).
fn watch_machine(s: &TcpStream) -> std::io::Result<()> {
    let socket = socket2::SockRef::from(s);
    let keepalive = socket2::TcpKeepalive::new()
        .with_time(KEEPALIVE_IDLE)
        .with_interval(KEEPALIVE_INTERVAL)
        .with_retries(KEEPALIVE_PROBES);
    socket.set_tcp_keepalive(&keepalive)?;
    socket.set_tcp_user_timeout(Some(LIVENESS))
}

fn prepare(s: &TcpStream, channel: Channel) -> std::io::Result<()> {
    s.set_nodelay(true)?;
    if channel == Channel::Data {
        watch_machine(s)?;
    }
    Ok(())
}

/// Connects `channel` to `peer` (below this process), retrying until the
/// deadline while the peer is not listening yet.
fn connect_to(peer: usize, channel: Channel, cx: &Context<'_>) -> Result<(TcpStream, Answer)> {
    let e = cx.e;
    let address = &e.addresses[peer];
    let mut pause = Duration::from_millis(20);
    loop {
        let now = Instant::now();
        if now >= cx.deadline {
            return Err(ClusterError::ConnectTimeout {
                peer,
                address: address.clone(),
                seconds: e.timeout.as_secs_f64(),
            });
        }
        let wait = (cx.deadline - now).min(Duration::from_secs(2));
        match TcpStream::connect_timeout(&cx.resolved[peer], wait) {
            Ok(mut s) => return greet(&mut s, peer, channel, cx).map(|a| (s, a)),
            Err(err) => {
                log::debug!(
                    "process {}: peer {peer} ({address}) not there yet: {err}",
                    e.process
                );
                std::thread::sleep(
                    pause.min(cx.deadline.saturating_duration_since(Instant::now())),
                );
                pause = (pause * 2).min(Duration::from_millis(500));
            }
        }
    }
}

fn greet(s: &mut TcpStream, peer: usize, channel: Channel, cx: &Context<'_>) -> Result<Answer> {
    let e = cx.e;
    let refused = |why: String| ClusterError::Handshake {
        peer,
        address: e.addresses[peer].clone(),
        why,
    };
    prepare(s, channel)?;
    let wait = cx
        .deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(100));
    s.set_read_timeout(Some(wait))?;
    let hello = Hello {
        processes: e.addresses.len() as u64,
        process: e.process as u64,
        fingerprint: e.fingerprint,
        channel,
        beat: cx.beat,
    };
    hello
        .write_to(s)
        .map_err(|err| refused(format!("sending the greeting: {err}")))?;
    let answer = Answer::read_from(s)
        .map_err(|err| refused(format!("no answer to the greeting: {err}")))?
        .map_err(|other| refused(format!("unexpected answer {other:#x}")))?;
    s.set_read_timeout(None)?;
    match answer.verdict.refusal(e.process) {
        None => Ok(answer),
        Some(why) => Err(refused(why)),
    }
}

/// Both connections of one process above this one, as they arrive.
type Arrivals = Vec<[Option<(TcpStream, Duration)>; 2]>;

/// Accepts both connections from every process above this one.
fn accept_all(listener: &TcpListener, cx: &Context<'_>) -> Result<Vec<PeerSockets>> {
    let e = cx.e;
    let me = e.process;
    let count = e.addresses.len() - me - 1;
    let mut got: Arrivals = (0..count).map(|_| [None, None]).collect();
    listener.set_nonblocking(true)?;
    while let Some(missing) = got.iter().position(|g| g.iter().any(Option::is_none)) {
        if Instant::now() >= cx.deadline {
            let peer = me + 1 + missing;
            return Err(ClusterError::ConnectTimeout {
                peer,
                address: e.addresses[peer].clone(),
                seconds: e.timeout.as_secs_f64(),
            });
        }
        match listener.accept() {
            Ok((stream, from)) => match welcome(stream, cx, &got)? {
                Some((peer, channel, s, beat)) => {
                    got[peer - me - 1][channel.index()] = Some((s, beat));
                }
                None => log::debug!("process {me}: ignored a connection from {from}"),
            },
            Err(err) if err.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(err) => return Err(err.into()),
        }
    }
    Ok(got
        .into_iter()
        .filter_map(|[data, control]| {
            let ((data, _), (control, beat)) = (data?, control?);
            Some(PeerSockets {
                data,
                control,
                beat_every: cx.beat.min(beat),
            })
        })
        .collect())
}

/// Checks a newcomer's greeting; `None` for a stranger that did not greet.
fn welcome(
    mut s: TcpStream,
    cx: &Context<'_>,
    got: &Arrivals,
) -> Result<Option<(usize, Channel, TcpStream, Duration)>> {
    let e = cx.e;
    s.set_nonblocking(false)?;
    s.set_read_timeout(Some(Duration::from_secs(5)))?;
    let Ok(Some(hello)) = Hello::read_from(&mut s) else {
        return Ok(None);
    };
    let me = e.process;
    let p = e.addresses.len();
    let peer = usize::try_from(hello.process).unwrap_or(usize::MAX);
    if peer >= p || peer <= me {
        return Ok(None);
    }
    prepare(&s, hello.channel)?;
    let (verdict, why) = if hello.processes != p as u64 {
        let why = format!(
            "it expects {} processes, this join has {p}",
            hello.processes
        );
        (Verdict::WrongSize, why)
    } else if hello.fingerprint != e.fingerprint {
        let why = "it was started with different join options (data, predicate or order)";
        (Verdict::WrongOptions, why.to_string())
    } else if got[peer - me - 1][hello.channel.index()].is_some() {
        let why = "a second process connected with the same index";
        (Verdict::Duplicate, why.to_string())
    } else {
        (Verdict::Accepted, String::new())
    };
    let answer = Answer {
        verdict,
        run_id: cx.run_id,
        beat: cx.beat,
    };
    answer.write_to(&mut s)?;
    s.set_read_timeout(None)?;
    if verdict != Verdict::Accepted {
        return Err(ClusterError::Handshake {
            peer,
            address: e.addresses[peer].clone(),
            why,
        });
    }
    Ok(Some((peer, hello.channel, s, hello.beat)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn free_addresses(n: usize) -> Vec<String> {
        let listeners: Vec<TcpListener> = (0..n)
            .map(|_| TcpListener::bind("127.0.0.1:0").unwrap())
            .collect();
        listeners
            .iter()
            .map(|l| l.local_addr().unwrap().to_string())
            .collect()
    }

    fn endpoints(process: usize, addresses: &[String], fingerprint: u64) -> Endpoints {
        Endpoints {
            process,
            addresses: addresses.to_vec(),
            timeout: Duration::from_secs(5),
            peer_timeout: DEFAULT_PEER_TIMEOUT,
            fingerprint,
        }
    }

    #[test]
    fn three_processes_connect_pairwise_and_share_process_0s_run_id() {
        let addresses = free_addresses(3);
        let handles: Vec<_> = (0..3)
            .map(|i| {
                let mut e = endpoints(i, &addresses, 7);
                // Process 2 wants faster heartbeats; its peers oblige.
                if i == 2 {
                    e.peer_timeout = Duration::from_secs(1);
                }
                std::thread::spawn(move || establish(&e))
            })
            .collect();
        let all: Vec<Established> = handles
            .into_iter()
            .map(|h| h.join().unwrap().unwrap())
            .collect();
        for (i, est) in all.iter().enumerate() {
            assert_eq!(est.peers.len(), 3);
            assert_eq!(est.run_id, all[0].run_id, "process {i}");
            for (j, s) in est.peers.iter().enumerate() {
                assert_eq!(s.is_none(), i == j);
                if let Some(s) = s {
                    let want = if i == 2 || j == 2 { 200 } else { 2000 };
                    assert_eq!(s.beat_every, Duration::from_millis(want), "{i}-{j}");
                }
            }
        }
    }

    #[test]
    fn a_missing_peer_is_a_timeout_naming_it() {
        let addresses = free_addresses(2);
        let mut e = endpoints(0, &addresses, 1);
        e.timeout = Duration::from_millis(300);
        let started = Instant::now();
        let err = establish(&e).unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(3));
        assert!(
            matches!(err, ClusterError::ConnectTimeout { peer: 1, .. }),
            "{err}"
        );
        let mut e = endpoints(1, &addresses, 1);
        e.timeout = Duration::from_millis(300);
        let err = establish(&e).unwrap_err();
        assert!(err.to_string().contains("peer 0"), "{err}");
    }

    #[test]
    fn an_unresolvable_peer_is_named_at_once() {
        let mut addresses = free_addresses(2);
        addresses.push("no-such-host.invalid:7000".into());
        let mut e = endpoints(0, &addresses, 1);
        e.timeout = Duration::from_secs(30);
        let started = Instant::now();
        let err = establish(&e).unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(10));
        assert!(
            matches!(err, ClusterError::Unresolvable { peer: 2, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("no-such-host.invalid"), "{err}");
    }

    #[test]
    fn different_options_are_refused_on_both_sides() {
        let addresses = free_addresses(2);
        let a = endpoints(0, &addresses, 1);
        let b = endpoints(1, &addresses, 2);
        let h = std::thread::spawn(move || establish(&a));
        let err_b = establish(&b).unwrap_err();
        let err_a = h.join().unwrap().unwrap_err();
        assert!(
            err_b.to_string().contains("different join options"),
            "{err_b}"
        );
        assert!(err_a.to_string().contains("peer 1"), "{err_a}");
    }

    #[test]
    fn beats_are_five_a_timeout_within_bounds() {
        assert_eq!(
            beat_interval(Duration::from_secs(3)),
            Duration::from_millis(600)
        );
        assert_eq!(
            beat_interval(Duration::from_secs(60)),
            Duration::from_secs(2)
        );
        assert_eq!(beat_interval(Duration::ZERO), Duration::from_millis(10));
    }
}
