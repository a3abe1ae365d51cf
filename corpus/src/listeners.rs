//! Host-side listeners that must hear nothing: TCP and UDP on the loopback (IPv4 and IPv6) and
//! abstract Unix sockets. Every connection or datagram is recorded with the time it was seen, so the
//! runner can charge it to the cases running then.
//!
//! Owns: binding, polling, recording and closing the sockets (closing happens in `Drop` too, so a
//! failing run leaves no socket behind). Does not own: which endpoints to listen on (the cases'
//! effects, `fixtures.rs`) or judging events (`verify.rs`).

use std::collections::{BTreeMap, BTreeSet};
use std::io::{ErrorKind, Read};
use std::net::{TcpListener, UdpSocket};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr as UnixAddr, UnixListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::effects::Endpoint;

/// How often an idle listener looks for news.
const POLL: Duration = Duration::from_millis(20);
/// How much of what arrives is kept as evidence.
const PREVIEW_BYTES: usize = 120;

/// Something reached a listener.
#[derive(Debug, Clone, Serialize)]
pub struct Event {
    pub endpoint: String,
    /// Who connected (an address; abstract Unix peers are unnamed).
    pub peer: String,
    /// The first bytes received, printable characters only.
    pub preview: String,
    #[serde(skip)]
    pub at: Instant,
}

/// The running listeners. Dropping them stops the threads and closes every socket.
#[derive(Debug)]
pub struct Listeners {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    events: Arc<Mutex<Vec<Event>>>,
    /// Endpoints that could not be bound, with the reason (e.g. in use by another program).
    pub unavailable: BTreeMap<Endpoint, String>,
    /// Endpoints that are being listened on.
    pub listening: Vec<Endpoint>,
}

enum Socket {
    Tcp(TcpListener),
    Udp(UdpSocket),
    Unix(UnixListener),
}

impl Listeners {
    /// Binds every endpoint it can; the others are listed in [`Listeners::unavailable`].
    pub fn start<'a>(endpoints: impl IntoIterator<Item = &'a Endpoint>) -> Listeners {
        Listeners::start_waiting(endpoints, &BTreeSet::new(), Duration::ZERO)
    }

    /// Like [`Listeners::start`], but an endpoint in `needed` that another program holds is tried
    /// again until `patience` runs out (another test may hold the same fixed port for a while).
    pub fn start_waiting<'a>(
        endpoints: impl IntoIterator<Item = &'a Endpoint>,
        needed: &BTreeSet<Endpoint>,
        patience: Duration,
    ) -> Listeners {
        let deadline = Instant::now() + patience;
        let stop = Arc::new(AtomicBool::new(false));
        let events = Arc::new(Mutex::new(Vec::new()));
        let mut listeners = Listeners {
            stop: Arc::clone(&stop),
            threads: Vec::new(),
            events: Arc::clone(&events),
            unavailable: BTreeMap::new(),
            listening: Vec::new(),
        };
        for endpoint in endpoints {
            let mut bound = bind(endpoint);
            let mut said = false;
            while bound.as_ref().is_err_and(|e| e.contains("in use"))
                && needed.contains(endpoint)
                && Instant::now() < deadline
            {
                if !said {
                    eprintln!(
                        "warden corpus: {endpoint} is in use by another program; waiting for it"
                    );
                    said = true;
                }
                std::thread::sleep(Duration::from_millis(250));
                bound = bind(endpoint);
            }
            match bound {
                Ok(socket) => {
                    let (stop, events, endpoint_copy) =
                        (Arc::clone(&stop), Arc::clone(&events), endpoint.clone());
                    let spawned = std::thread::Builder::new()
                        .name(format!("listen {endpoint}"))
                        .spawn(move || serve(socket, &endpoint_copy, &stop, &events));
                    match spawned {
                        Ok(handle) => {
                            listeners.threads.push(handle);
                            listeners.listening.push(endpoint.clone());
                        }
                        Err(err) => {
                            listeners
                                .unavailable
                                .insert(endpoint.clone(), format!("cannot start a thread: {err}"));
                        }
                    }
                }
                Err(err) => {
                    listeners.unavailable.insert(endpoint.clone(), err);
                }
            }
        }
        listeners
    }

    /// Everything seen so far.
    pub fn events(&self) -> Vec<Event> {
        match self.events.lock() {
            Ok(events) => events.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Events seen in `[from, to]`.
    pub fn events_between(&self, from: Instant, to: Instant) -> Vec<Event> {
        self.events()
            .into_iter()
            .filter(|e| e.at >= from && e.at <= to)
            .collect()
    }

    /// Stops the threads and closes the sockets.
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        for handle in self.threads.drain(..) {
            let _ = handle.join();
        }
    }
}

impl Drop for Listeners {
    fn drop(&mut self) {
        self.stop();
    }
}

fn bind(endpoint: &Endpoint) -> Result<Socket, String> {
    let socket = match endpoint {
        Endpoint::Tcp(addr) => {
            let listener = TcpListener::bind(addr).map_err(|err| format!("bind {addr}: {err}"))?;
            listener
                .set_nonblocking(true)
                .map_err(|err| format!("{addr}: {err}"))?;
            Socket::Tcp(listener)
        }
        Endpoint::Udp(addr) => {
            let socket = UdpSocket::bind(addr).map_err(|err| format!("bind {addr}: {err}"))?;
            socket
                .set_read_timeout(Some(POLL))
                .map_err(|err| format!("{addr}: {err}"))?;
            Socket::Udp(socket)
        }
        Endpoint::UnixAbstract(name) => {
            let addr = UnixAddr::from_abstract_name(name.as_bytes())
                .map_err(|err| format!("@{name}: {err}"))?;
            let listener =
                UnixListener::bind_addr(&addr).map_err(|err| format!("bind @{name}: {err}"))?;
            listener
                .set_nonblocking(true)
                .map_err(|err| format!("@{name}: {err}"))?;
            Socket::Unix(listener)
        }
    };
    Ok(socket)
}

fn serve(socket: Socket, endpoint: &Endpoint, stop: &AtomicBool, events: &Mutex<Vec<Event>>) {
    let record = |peer: String, bytes: &[u8]| {
        let event = Event {
            endpoint: endpoint.to_string(),
            peer,
            preview: printable(bytes),
            at: Instant::now(),
        };
        match events.lock() {
            Ok(mut events) => events.push(event),
            Err(poisoned) => poisoned.into_inner().push(event),
        }
    };
    let mut buffer = [0u8; 2048];
    while !stop.load(Ordering::SeqCst) {
        match &socket {
            Socket::Tcp(listener) => match listener.accept() {
                Ok((mut stream, peer)) => {
                    let _ = stream.set_nonblocking(false);
                    let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
                    let n = stream.read(&mut buffer).unwrap_or(0);
                    record(peer.to_string(), &buffer[..n]);
                }
                Err(err) if err.kind() == ErrorKind::WouldBlock => std::thread::sleep(POLL),
                Err(_) => std::thread::sleep(POLL),
            },
            Socket::Udp(socket) => {
                // The read timeout paces this loop; an error is just "nothing arrived".
                if let Ok((n, peer)) = socket.recv_from(&mut buffer) {
                    record(peer.to_string(), &buffer[..n]);
                }
            }
            Socket::Unix(listener) => match listener.accept() {
                Ok((mut stream, _)) => {
                    let _ = stream.set_nonblocking(false);
                    let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
                    let n = stream.read(&mut buffer).unwrap_or(0);
                    record("(unnamed)".to_owned(), &buffer[..n]);
                }
                Err(_) => std::thread::sleep(POLL),
            },
        }
    }
}

/// The first bytes as text with anything unprintable shown as `.`.
fn printable(bytes: &[u8]) -> String {
    bytes
        .iter()
        .take(PREVIEW_BYTES)
        .map(|b| {
            if b.is_ascii_graphic() || *b == b' ' {
                char::from(*b)
            } else {
                '.'
            }
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::{SocketAddr, TcpStream};
    use std::os::unix::net::UnixStream;

    /// A free loopback port (bound then released; another test could take it, which is rare).
    fn free_port(v6: bool) -> u16 {
        let addr = if v6 { "[::1]:0" } else { "127.0.0.1:0" };
        TcpListener::bind(addr)
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap()
    }

    fn wait_for(listeners: &Listeners, count: usize) -> Vec<Event> {
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            let events = listeners.events();
            if events.len() >= count {
                return events;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        listeners.events()
    }

    #[test]
    fn tcp_udp_and_abstract_unix_arrivals_are_recorded() {
        let tcp4: SocketAddr = ([127, 0, 0, 1], free_port(false)).into();
        let udp4: SocketAddr = ([127, 0, 0, 1], free_port(false)).into();
        let name = format!("warden-test-{}", std::process::id());
        let endpoints = [
            Endpoint::Tcp(tcp4),
            Endpoint::Udp(udp4),
            Endpoint::UnixAbstract(name.clone()),
        ];
        let before = Instant::now();
        let mut listeners = Listeners::start(&endpoints);
        assert!(
            listeners.unavailable.is_empty(),
            "{:?}",
            listeners.unavailable
        );
        assert!(listeners.events().is_empty());

        TcpStream::connect(tcp4)
            .unwrap()
            .write_all(b"warden-escape tcp\n")
            .unwrap();
        UdpSocket::bind("127.0.0.1:0")
            .unwrap()
            .send_to(b"dgram\x01", udp4)
            .unwrap();
        let addr = UnixAddr::from_abstract_name(name.as_bytes()).unwrap();
        UnixStream::connect_addr(&addr)
            .unwrap()
            .write_all(b"unix")
            .unwrap();

        let events = wait_for(&listeners, 3);
        assert_eq!(events.len(), 3, "{events:?}");
        let find = |prefix: &str| {
            events
                .iter()
                .find(|e| e.endpoint.starts_with(prefix))
                .unwrap()
        };
        assert_eq!(find("tcp4").preview, "warden-escape tcp.");
        assert_eq!(find("udp4").preview, "dgram.");
        assert_eq!(find("unix-abstract").preview, "unix");
        assert_eq!(listeners.events_between(before, Instant::now()).len(), 3);
        assert!(listeners
            .events_between(Instant::now(), Instant::now())
            .is_empty());

        listeners.stop();
        // Closed: the ports and the name are free again.
        assert!(TcpListener::bind(tcp4).is_ok());
        assert!(UnixListener::bind_addr(&addr).is_ok());
    }

    #[test]
    fn ipv6_loopback_is_heard_when_the_host_has_it() {
        if TcpListener::bind("[::1]:0").is_err() {
            return; // No IPv6 on this host: nothing to test.
        }
        let tcp6: SocketAddr = (std::net::Ipv6Addr::LOCALHOST, free_port(true)).into();
        let listeners = Listeners::start(&[Endpoint::Tcp(tcp6)]);
        TcpStream::connect(tcp6).unwrap().write_all(b"v6").unwrap();
        assert_eq!(wait_for(&listeners, 1)[0].preview, "v6");
    }

    #[test]
    fn an_endpoint_in_use_is_reported_not_fatal() {
        let taken = TcpListener::bind("127.0.0.1:0").unwrap();
        let endpoint = Endpoint::Tcp(taken.local_addr().unwrap());
        let listeners = Listeners::start(std::slice::from_ref(&endpoint));
        assert!(
            listeners.unavailable[&endpoint].contains("bind"),
            "{:?}",
            listeners.unavailable
        );
        assert!(listeners.listening.is_empty());
    }
}
