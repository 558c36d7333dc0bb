//! Starting the processes of a join as users do: a hostfile lists every
//! process's address, and each process learns its index from `--process`
//! or from the launcher (`SLURM_PROCID` under srun, `OMPI_COMM_WORLD_RANK`
//! under Open MPI's mpirun, `PMI_RANK` under MPICH). For a quick try on
//! one machine, [`run_local`] starts P copies of a program on loopback
//! ports, collects their outputs, and stops the rest when one fails.
//!
//! This module starts and watches processes; it does not join anything.

use std::io::Read;
use std::net::{TcpListener, ToSocketAddrs};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::error::{ClusterError, Result};

/// The environment variables launchers set to a process's rank, in the
/// order they are looked at.
pub const RANK_VARIABLES: [&str; 3] = ["SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"];

/// One process of a hostfile: its `host:port` and the line it is on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostEntry {
    /// `host:port`: as written, or `host` with the default port added.
    pub address: String,
    /// 1-based line number in the hostfile.
    pub line: usize,
}

/// The processes of a hostfile: one per line, `host:port`, or `host`
/// alone (port `base_port` + the line's process index); blank lines and
/// `#` comments are skipped.
pub fn parse_hostfile_entries(text: &str, base_port: u16) -> Result<Vec<HostEntry>> {
    let mut out: Vec<HostEntry> = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let bad = |why: &str| {
            ClusterError::InvalidArgument(format!("hostfile line {}: `{line}`: {why}", n + 1))
        };
        let mut words = line.split_whitespace();
        let host = words.next().ok_or_else(|| bad("no host"))?;
        if words.next().is_some() {
            return Err(bad("one `host` or `host:port` per line"));
        }
        let address = match host.rsplit_once(':') {
            Some((h, port)) if !h.is_empty() && !h.ends_with(':') => {
                port.parse::<u16>()
                    .map_err(|_| bad("the port is not a number up to 65535"))?;
                host.to_string()
            }
            _ => {
                let port = u16::try_from(u32::from(base_port) + out.len() as u32)
                    .map_err(|_| bad("the port would exceed 65535"))?;
                format!("{host}:{port}")
            }
        };
        if out.iter().any(|e| e.address == address) {
            return Err(bad("this address is listed twice"));
        }
        out.push(HostEntry {
            address,
            line: n + 1,
        });
    }
    if out.is_empty() {
        return Err(ClusterError::InvalidArgument(
            "the hostfile lists no process".into(),
        ));
    }
    Ok(out)
}

/// The addresses of a hostfile, in process order (see
/// [`parse_hostfile_entries`]).
///
/// # Examples
///
/// ```
/// use numakit_cluster::launch::parse_hostfile;
///
/// let text = "# three processes\nnode1:7000\nnode2   # port 7100 + 1\n10.0.0.3:7002\n";
/// let addresses = parse_hostfile(text, 7100).unwrap();
/// assert_eq!(addresses, ["node1:7000", "node2:7101", "10.0.0.3:7002"]);
/// assert!(parse_hostfile("node1:7000\nnode1:7000\n", 7100).is_err(), "listed twice");
/// ```
pub fn parse_hostfile(text: &str, base_port: u16) -> Result<Vec<String>> {
    Ok(parse_hostfile_entries(text, base_port)?
        .into_iter()
        .map(|e| e.address)
        .collect())
}

/// Fails at once, naming the host and its line, when a hostfile's host
/// does not resolve (rather than after the connect timeout, as a peer
/// that "did not connect").
pub fn check_resolvable(entries: &[HostEntry], hostfile: &Path) -> Result<()> {
    for e in entries {
        let resolved = e.address.to_socket_addrs().map(|mut a| a.next());
        let why = match resolved {
            Ok(Some(_)) => continue,
            Ok(None) => "it resolves to no address".to_string(),
            Err(err) => err.to_string(),
        };
        let host = e
            .address
            .rsplit_once(':')
            .map_or(e.address.as_str(), |(h, _)| h);
        return Err(ClusterError::InvalidArgument(format!(
            "hostfile {} line {}: host `{host}` does not resolve: {why}",
            hostfile.display(),
            e.line
        )));
    }
    Ok(())
}

/// Reads a hostfile and checks that every host resolves.
pub fn read_hostfile(path: &Path, base_port: u16) -> Result<Vec<String>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        ClusterError::InvalidArgument(format!("cannot read hostfile {}: {e}", path.display()))
    })?;
    let entries = parse_hostfile_entries(&text, base_port)?;
    check_resolvable(&entries, path)?;
    Ok(entries.into_iter().map(|e| e.address).collect())
}

/// This process's index: `explicit`, else the first launcher variable
/// that is set; checked against the number of processes. Returns the
/// index and where it came from.
pub fn process_index(
    explicit: Option<usize>,
    processes: usize,
    env: impl Fn(&str) -> Option<String>,
) -> Result<(usize, String)> {
    let (index, from) = match explicit {
        Some(i) => (i, "--process".to_string()),
        None => {
            let found = RANK_VARIABLES
                .iter()
                .find_map(|&v| env(v).map(|value| (v, value)));
            let Some((var, value)) = found else {
                return Err(ClusterError::InvalidArgument(
                    "which process is this? Pass --process I, or start it with srun or mpirun (which set SLURM_PROCID or OMPI_COMM_WORLD_RANK)".into(),
                ));
            };
            let i = value.trim().parse::<usize>().map_err(|_| {
                ClusterError::InvalidArgument(format!("{var}={value} is not a process index"))
            })?;
            (i, var.to_string())
        }
    };
    if index >= processes {
        return Err(ClusterError::InvalidArgument(format!(
            "process {index} (from {from}) but the hostfile lists {processes} processes (0..{})",
            processes.saturating_sub(1)
        )));
    }
    Ok((index, from))
}

/// `count` loopback addresses with ports free right now (another program
/// could take one before the join binds it; the join then fails clearly).
pub fn free_local_addresses(count: usize) -> Result<Vec<String>> {
    let listeners = (0..count)
        .map(|_| TcpListener::bind("127.0.0.1:0"))
        .collect::<std::io::Result<Vec<_>>>()
        .map_err(|e| {
            ClusterError::InvalidArgument(format!("no loopback port to listen on: {e}"))
        })?;
    listeners
        .iter()
        .map(|l| Ok(l.local_addr()?.to_string()))
        .collect()
}

/// Whether this machine can talk to itself over TCP on 127.0.0.1 (a
/// network namespace without a loopback interface cannot).
pub fn check_loopback() -> Result<()> {
    let fail = |e: std::io::Error| {
        ClusterError::InvalidArgument(format!("loopback TCP does not work here: {e}"))
    };
    let listener = TcpListener::bind("127.0.0.1:0").map_err(fail)?;
    let address = listener.local_addr().map_err(fail)?;
    std::net::TcpStream::connect_timeout(&address, Duration::from_secs(1)).map_err(fail)?;
    Ok(())
}

/// How one local process ended.
#[derive(Debug)]
pub struct ChildOutcome {
    /// The process's index: the position of its command.
    pub process: usize,
    /// `None` when it was stopped because another process failed (or ran
    /// past the timeout).
    pub status: Option<ExitStatus>,
    /// Everything it wrote to standard output.
    pub stdout: String,
    /// Everything it wrote to standard error.
    pub stderr: String,
}

impl ChildOutcome {
    /// Whether it ended on its own with exit status 0.
    pub fn succeeded(&self) -> bool {
        self.status.is_some_and(|s| s.success())
    }
}

struct Running {
    child: Child,
    out: JoinHandle<String>,
    err: JoinHandle<String>,
    status: Option<ExitStatus>,
}

fn start(mut c: Command) -> Result<Running> {
    let mut child = c
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let no = |what: &str| ClusterError::Transport(format!("no {what} of a started process"));
    let out = drain(child.stdout.take().ok_or_else(|| no("stdout"))?);
    let err = drain(child.stderr.take().ok_or_else(|| no("stderr"))?);
    Ok(Running {
        child,
        out,
        err,
        status: None,
    })
}

/// Waits for every process; after the first failure the others get
/// `grace`, and nothing runs past `timeout`.
fn watch(running: &mut [Running], grace: Duration, timeout: Duration) -> Result<()> {
    let start = Instant::now();
    let mut failed_at: Option<Instant> = None;
    loop {
        for r in running.iter_mut().filter(|r| r.status.is_none()) {
            if let Some(s) = r.child.try_wait()? {
                r.status = Some(s);
                if !s.success() && failed_at.is_none() {
                    failed_at = Some(Instant::now());
                }
            }
        }
        if running.iter().all(|r| r.status.is_some()) {
            return Ok(());
        }
        let give_up = failed_at.is_some_and(|t| t.elapsed() > grace) || start.elapsed() > timeout;
        if give_up {
            for r in running.iter_mut().filter(|r| r.status.is_none()) {
                let _ = r.child.kill();
                let _ = r.child.wait();
            }
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn drain(mut r: impl Read + Send + 'static) -> JoinHandle<String> {
    std::thread::spawn(move || {
        let mut s = String::new();
        let _ = r.read_to_string(&mut s);
        s
    })
}

/// Runs `commands` (one per process) side by side and waits for all. When
/// one fails, the others get `grace` to end on their own (they notice the
/// lost peer), then are killed. Nothing runs past `timeout`.
pub fn run_local(
    commands: Vec<Command>,
    grace: Duration,
    timeout: Duration,
) -> Result<Vec<ChildOutcome>> {
    let mut running = Vec::with_capacity(commands.len());
    for c in commands {
        match start(c) {
            Ok(r) => running.push(r),
            Err(e) => {
                for r in &mut running {
                    let _ = r.child.kill();
                    let _ = r.child.wait();
                }
                return Err(e);
            }
        }
    }
    watch(&mut running, grace, timeout)?;
    Ok(running
        .into_iter()
        .enumerate()
        .map(|(process, r)| ChildOutcome {
            process,
            status: r.status,
            stdout: r.out.join().unwrap_or_default(),
            stderr: r.err.join().unwrap_or_default(),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostfiles_parse_with_ports_defaults_and_comments() {
        let text = "# cluster\nnode1:7000\n\nnode2   # second\n10.77.0.3:7002\n";
        assert_eq!(
            parse_hostfile(text, 7100).unwrap(),
            ["node1:7000", "node2:7101", "10.77.0.3:7002"]
        );
        assert!(parse_hostfile("a:1\na:1\n", 1)
            .unwrap_err()
            .to_string()
            .contains("twice"));
        assert!(parse_hostfile("a:x\n", 1)
            .unwrap_err()
            .to_string()
            .contains("line 1"));
        assert!(parse_hostfile("a b\n", 1).is_err());
        assert!(parse_hostfile("# nothing\n", 1).is_err());
    }

    #[test]
    fn a_host_that_does_not_resolve_is_named_with_its_line() {
        let text = "127.0.0.1:7000\n# comment\nno-such-host.invalid:7001\n";
        let entries = parse_hostfile_entries(text, 7000).unwrap();
        assert_eq!(entries[1].line, 3);
        let started = Instant::now();
        let err = check_resolvable(&entries, Path::new("hosts"))
            .unwrap_err()
            .to_string();
        assert!(started.elapsed() < Duration::from_secs(10));
        assert!(
            err.contains("line 3") && err.contains("`no-such-host.invalid`"),
            "{err}"
        );
        check_resolvable(&entries[..1], Path::new("hosts")).unwrap();
    }

    #[test]
    fn the_index_comes_from_the_option_or_the_launcher() {
        let none = |_: &str| None;
        let slurm = |v: &str| (v == "SLURM_PROCID").then(|| "2".to_string());
        let ompi = |v: &str| (v == "OMPI_COMM_WORLD_RANK").then(|| "1".to_string());
        assert_eq!(process_index(Some(1), 3, none).unwrap().0, 1);
        assert_eq!(
            process_index(None, 3, slurm).unwrap(),
            (2, "SLURM_PROCID".into())
        );
        assert_eq!(process_index(None, 3, ompi).unwrap().0, 1);
        assert_eq!(process_index(Some(0), 3, slurm).unwrap().0, 0);
        assert!(process_index(None, 3, none)
            .unwrap_err()
            .to_string()
            .contains("--process"));
        assert!(process_index(None, 2, slurm)
            .unwrap_err()
            .to_string()
            .contains("SLURM_PROCID"));
        let junk = |_: &str| Some("x".to_string());
        assert!(process_index(None, 2, junk).is_err());
    }

    #[test]
    fn loopback_works_on_this_machine() {
        check_loopback().unwrap();
    }

    #[test]
    fn a_failing_process_stops_the_others() {
        let mut ok = Command::new("sh");
        ok.args(["-c", "echo fine"]);
        let mut bad = Command::new("sh");
        bad.args(["-c", "echo broken >&2; exit 3"]);
        let mut slow = Command::new("sleep");
        slow.arg("30");
        let start = Instant::now();
        let out = run_local(
            vec![ok, bad, slow],
            Duration::from_millis(200),
            Duration::from_secs(20),
        )
        .unwrap();
        assert!(start.elapsed() < Duration::from_secs(10));
        assert!(out[0].succeeded() && out[0].stdout.trim() == "fine");
        assert_eq!(out[1].status.and_then(|s| s.code()), Some(3));
        assert!(out[1].stderr.contains("broken"));
        assert!(out[2].status.is_none(), "the slow one was stopped");
    }
}
