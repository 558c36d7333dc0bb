//! A peer that connects and greets properly, then goes silent without
//! closing anything (what a stopped or hung process looks like: its
//! kernel still answers), is named by the transport within the peer
//! timeout; one that closes its connections is named at once.

use std::net::TcpStream;
use std::time::{Duration, Instant};

use numakit_cluster::launch::free_local_addresses;
use numakit_cluster::message::Message;
use numakit_cluster::transport::connect::Endpoints;
use numakit_cluster::transport::greeting::{Answer, Channel, Hello, Verdict};
use numakit_cluster::transport::Transport;
use numakit_cluster::ClusterError;

const FINGERPRINT: u64 = 0x5eed;

/// Process 1 of two, faked: connects both channels to process 0, greets,
/// and then says nothing. Returns its sockets (dropping them closes it).
fn silent_peer(address: String) -> std::thread::JoinHandle<Vec<TcpStream>> {
    std::thread::spawn(move || {
        Channel::ALL
            .iter()
            .map(|&channel| {
                let mut s = loop {
                    match TcpStream::connect(&address) {
                        Ok(s) => break s,
                        Err(_) => std::thread::sleep(Duration::from_millis(20)),
                    }
                };
                let hello = Hello {
                    processes: 2,
                    process: 1,
                    fingerprint: FINGERPRINT,
                    channel,
                    beat: Duration::from_secs(60),
                };
                hello.write_to(&mut s).unwrap();
                let answer = Answer::read_from(&mut s).unwrap().unwrap();
                assert_eq!(answer.verdict, Verdict::Accepted);
                s
            })
            .collect()
    })
}

/// Process 0's first error from `recv`, and how long it took.
fn first_error(
    transport: &mut dyn Transport<Message>,
    limit: Duration,
) -> (ClusterError, Duration) {
    let start = Instant::now();
    loop {
        match transport.recv(Duration::from_millis(20)) {
            Err(e) => return (e, start.elapsed()),
            Ok(_) => assert!(start.elapsed() < limit, "no error within {limit:?}"),
        }
    }
}

fn endpoints(addresses: Vec<String>) -> Endpoints {
    Endpoints {
        process: 0,
        addresses,
        timeout: Duration::from_secs(10),
        peer_timeout: Duration::from_secs(1),
        fingerprint: FINGERPRINT,
    }
}

#[test]
fn a_silent_peer_is_named_within_the_peer_timeout() {
    let addresses = free_local_addresses(2).unwrap();
    let fake = silent_peer(addresses[0].clone());
    let mut transport = numakit_cluster::transport::connect(&endpoints(addresses)).unwrap();
    let _held = fake.join().unwrap();
    let (err, took) = first_error(transport.as_mut(), Duration::from_secs(10));
    assert!(
        matches!(&err, ClusterError::PeerLost { peer: 1, why, .. } if why.contains("sent nothing")),
        "{err}"
    );
    assert!(
        took >= Duration::from_millis(700) && took < Duration::from_secs(4),
        "{took:?}"
    );
}

#[test]
fn a_peer_that_closes_its_connections_is_named_at_once() {
    let addresses = free_local_addresses(2).unwrap();
    let fake = silent_peer(addresses[0].clone());
    let mut transport = numakit_cluster::transport::connect(&endpoints(addresses)).unwrap();
    drop(fake.join().unwrap());
    let (err, took) = first_error(transport.as_mut(), Duration::from_secs(10));
    assert!(
        matches!(err, ClusterError::PeerLost { peer: 1, .. }),
        "{err}"
    );
    assert!(took < Duration::from_millis(900), "{took:?}: {err}");
}
