//! Connecting the processes of a join to each other, with a deadline.
//!
//! Every process listens on its own address; process i connects to every
//! process below it and accepts a connection from every process above it,
//! so each pair shares exactly one TCP connection. The connecting side
//! introduces itself (the number of processes, its index and a
//! fingerprint of the join's options) and the accepting side confirms or
//! refuses, so a process started with other options, or twice with the
//! same index, is caught here with an error that names it, not later as
//! a wrong result. A peer that does not show up within the timeout is an
//! error naming the peer: nothing waits forever. Every connection then
//! watches its peer's liveness (TCP keepalive probes while idle, and a
//! limit on how long sent data may stay unacknowledged), so a peer whose
//! machine stops answering, without closing anything, is noticed within
//! about [`LIVENESS`].
//!
//! This module only makes connected sockets; it knows no message format
//! beyond its own greeting.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use crate::error::{ClusterError, Result};

/// About how long a peer may stop answering before it counts as lost.
pub const LIVENESS: Duration = Duration::from_secs(15);
const KEEPALIVE_IDLE: Duration = Duration::from_secs(5);
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(2);
const KEEPALIVE_PROBES: u32 = 5;

const HELLO: u64 = 0x6e75_6d61_6b69_7431; // "numakit1"
const ACCEPTED: u64 = 1;
const WRONG_SIZE: u64 = 2;
const WRONG_OPTIONS: u64 = 3;
const DUPLICATE: u64 = 4;

/// Who this process is and whom it expects.
#[derive(Clone, Debug)]
pub struct Endpoints {
    /// This process's index into `addresses`.
    pub process: usize,
    /// `host:port` of every process, in process order.
    pub addresses: Vec<String>,
    /// How long to wait for all peers.
    pub timeout: Duration,
    /// Equal on every process of the same join (a hash of its options).
    pub fingerprint: u64,
}

/// One connected socket per peer (`None` at this process's own index).
pub fn establish(e: &Endpoints) -> Result<Vec<Option<TcpStream>>> {
    let me = e.process;
    if me >= e.addresses.len() {
        return Err(ClusterError::InvalidArgument(format!(
            "process {me} but only {} addresses",
            e.addresses.len()
        )));
    }
    let deadline = Instant::now() + e.timeout;
    let listen_at = resolve(&e.addresses[me]).map_err(|source| ClusterError::Listen {
        process: me,
        address: e.addresses[me].clone(),
        source,
    })?;
    let listener = TcpListener::bind(listen_at).map_err(|source| ClusterError::Listen {
        process: me,
        address: e.addresses[me].clone(),
        source,
    })?;
    let accepting = {
        let e = e.clone();
        std::thread::Builder::new()
            .name("numakit:accept".into())
            .spawn(move || accept_all(&listener, &e, deadline))?
    };
    let mut sockets: Vec<Option<TcpStream>> = Vec::with_capacity(e.addresses.len());
    let mut failure = None;
    for peer in 0..me {
        match connect_to(peer, e, deadline) {
            Ok(s) => sockets.push(Some(s)),
            Err(err) => {
                failure = Some(err);
                break;
            }
        }
    }
    let accepted = accepting
        .join()
        .map_err(|_| ClusterError::Transport("the accepting thread panicked".into()))?;
    if let Some(err) = failure {
        return Err(err);
    }
    sockets.push(None);
    sockets.extend(accepted?.into_iter().map(Some));
    Ok(sockets)
}

/// Makes the kernel give up on the connection when the peer stops
/// answering: after [`KEEPALIVE_IDLE`] without traffic it probes every
/// [`KEEPALIVE_INTERVAL`] (idle connections), and data unacknowledged for
/// [`LIVENESS`] breaks the connection (busy ones). Either way the next
/// read or write fails, and the transport reports the peer lost.
fn watch_liveness(s: &TcpStream) -> std::io::Result<()> {
    let socket = socket2::SockRef::from(s);
    let keepalive = socket2::TcpKeepalive::new()
        .with_time(KEEPALIVE_IDLE)
        .with_interval(KEEPALIVE_INTERVAL)
        .with_retries(KEEPALIVE_PROBES);
    socket.set_tcp_keepalive(&keepalive)?;
    socket.set_tcp_user_timeout(Some(LIVENESS))
}

fn resolve(address: &str) -> std::io::Result<SocketAddr> {
    address.to_socket_addrs()?.next().ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("`{address}` resolves to no address"),
        )
    })
}

fn words(values: &[u64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_be_bytes()).collect()
}

fn read_words<const N: usize>(s: &mut TcpStream) -> std::io::Result<[u64; N]> {
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

/// Connects to `peer` (below this process), retrying until the deadline
/// while the peer is not listening yet.
fn connect_to(peer: usize, e: &Endpoints, deadline: Instant) -> Result<TcpStream> {
    let address = &e.addresses[peer];
    let timeout = || ClusterError::ConnectTimeout {
        peer,
        address: address.clone(),
        seconds: e.timeout.as_secs_f64(),
    };
    let mut pause = Duration::from_millis(20);
    loop {
        let now = Instant::now();
        if now >= deadline {
            return Err(timeout());
        }
        let attempt = resolve(address).and_then(|a| {
            TcpStream::connect_timeout(&a, (deadline - now).min(Duration::from_secs(2)))
        });
        match attempt {
            Ok(mut s) => return greet(&mut s, peer, e, deadline).map(|()| s),
            Err(err) => {
                log::debug!(
                    "process {}: peer {peer} ({address}) not there yet: {err}",
                    e.process
                );
                std::thread::sleep(pause.min(deadline.saturating_duration_since(Instant::now())));
                pause = (pause * 2).min(Duration::from_millis(500));
            }
        }
    }
}

fn greet(s: &mut TcpStream, peer: usize, e: &Endpoints, deadline: Instant) -> Result<()> {
    let address = e.addresses[peer].clone();
    let lost = |why: String| ClusterError::Handshake {
        peer,
        address: address.clone(),
        why,
    };
    s.set_nodelay(true)?;
    watch_liveness(s)?;
    let wait = deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(100));
    s.set_read_timeout(Some(wait))?;
    let hello = [
        HELLO,
        e.addresses.len() as u64,
        e.process as u64,
        e.fingerprint,
    ];
    s.write_all(&words(&hello))
        .map_err(|err| lost(format!("sending the greeting: {err}")))?;
    let [answer] =
        read_words::<1>(s).map_err(|err| lost(format!("no answer to the greeting: {err}")))?;
    s.set_read_timeout(None)?;
    match answer {
        ACCEPTED => Ok(()),
        WRONG_SIZE => Err(lost("it expects a different number of processes".into())),
        WRONG_OPTIONS => Err(lost(
            "it was started with different join options (data, predicate or order)".into(),
        )),
        DUPLICATE => Err(lost(format!(
            "another process already connected as process {}",
            e.process
        ))),
        other => Err(lost(format!("unexpected answer {other:#x}"))),
    }
}

/// Accepts one connection from every process above this one.
fn accept_all(listener: &TcpListener, e: &Endpoints, deadline: Instant) -> Result<Vec<TcpStream>> {
    let me = e.process;
    let count = e.addresses.len() - me - 1;
    let mut got: Vec<Option<TcpStream>> = (0..count).map(|_| None).collect();
    listener.set_nonblocking(true)?;
    while got.iter().any(Option::is_none) {
        if Instant::now() >= deadline {
            let missing = me + 1 + got.iter().position(Option::is_none).unwrap_or(0);
            return Err(ClusterError::ConnectTimeout {
                peer: missing,
                address: e.addresses[missing].clone(),
                seconds: e.timeout.as_secs_f64(),
            });
        }
        match listener.accept() {
            Ok((stream, from)) => {
                if let Some((peer, s)) = welcome(stream, e, &got)? {
                    got[peer - me - 1] = Some(s);
                } else {
                    log::debug!("process {me}: ignored a connection from {from}");
                }
            }
            Err(err) if err.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(err) => return Err(err.into()),
        }
    }
    Ok(got.into_iter().flatten().collect())
}

/// Checks a newcomer's greeting; `None` for a stranger that did not greet.
fn welcome(
    mut s: TcpStream,
    e: &Endpoints,
    got: &[Option<TcpStream>],
) -> Result<Option<(usize, TcpStream)>> {
    s.set_nonblocking(false)?;
    s.set_nodelay(true)?;
    watch_liveness(&s)?;
    s.set_read_timeout(Some(Duration::from_secs(5)))?;
    let Ok([hello, processes, peer, fingerprint]) = read_words::<4>(&mut s) else {
        return Ok(None);
    };
    let me = e.process;
    let p = e.addresses.len();
    if hello != HELLO || peer as usize >= p || peer as usize <= me {
        return Ok(None);
    }
    let peer = peer as usize;
    let (answer, why) = if processes as usize != p {
        (
            WRONG_SIZE,
            format!("it expects {processes} processes, this join has {p}"),
        )
    } else if fingerprint != e.fingerprint {
        (
            WRONG_OPTIONS,
            "it was started with different join options (data, predicate or order)".into(),
        )
    } else if got[peer - me - 1].is_some() {
        (
            DUPLICATE,
            "a second process connected with the same index".into(),
        )
    } else {
        (ACCEPTED, String::new())
    };
    s.write_all(&words(&[answer]))?;
    s.set_read_timeout(None)?;
    if answer != ACCEPTED {
        return Err(ClusterError::Handshake {
            peer,
            address: e.addresses[peer].clone(),
            why,
        });
    }
    Ok(Some((peer, s)))
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
            fingerprint,
        }
    }

    #[test]
    fn three_processes_connect_pairwise() {
        let addresses = free_addresses(3);
        let handles: Vec<_> = (0..3)
            .map(|i| {
                let e = endpoints(i, &addresses, 7);
                std::thread::spawn(move || establish(&e))
            })
            .collect();
        for (i, h) in handles.into_iter().enumerate() {
            let sockets = h.join().unwrap().unwrap();
            assert_eq!(sockets.len(), 3);
            for (j, s) in sockets.iter().enumerate() {
                assert_eq!(s.is_none(), i == j);
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
}
