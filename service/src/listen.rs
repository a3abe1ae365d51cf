//! The listeners' accept loop: at most N connections per listener, each served by hyper's HTTP/1
//! with deadlines, so that neither idle nor slow clients can hold the server's connections.
//!
//! - `accept` waits for a free slot (`admission.max_connections`), so a client that opens
//!   connections and never uses them costs sockets queued in the kernel's backlog, not file
//!   descriptors of the server.
//! - A connection must deliver a complete request head within `header_timeout` of being accepted or
//!   of its previous response (hyper's header-read timeout), or it is closed: an idle keep-alive
//!   connection, or one that sends half a head, frees its slot after that long.
//! - A request head over 16 KiB is refused (431).
//! - A response write that makes no progress for `send_timeout` (a client that stops reading)
//!   closes the connection.
//! - The body has its own deadline, applied where it is read (`http.rs`), after authentication.
//! - Connections that have not had a request authenticated yet have a budget of their own
//!   (`admission.max_unauthenticated_connections`, within `max_connections`) and must get one
//!   authenticated within `admission.unauthenticated_timeout_ms` of being accepted, or are closed:
//!   clients without credentials can hold at most that many slots, for that long, and never the
//!   slots of connections that have proved who they are ([`Unproven`]).
//!
//! The peer (Unix credentials or TCP address) goes into each request's extensions as
//! [`ConnectInfo<Peer>`]. The requests hyper refuses itself (a head over the bound: 431; a
//! malformed head: 400) never reach the router; they are reported to [`Refusals`].

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::Router;
use hyper::body::Incoming;
use hyper::service::Service as _;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::{watch, Semaphore};

use super::http::Peer;

/// A connection's read and write buffers: a request head larger than this is refused (431) before
/// anyone is authenticated, so slow-header clients hold at most this much each (hyper's default
/// is ~400 KiB).
const MAX_BUFFER: usize = 16 * 1024;

/// How connections are bounded (from `[admission]`).
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    pub max_connections: usize,
    pub header_timeout: Duration,
    pub send_timeout: Duration,
    /// Connections without an authenticated request yet, at once.
    pub max_unauthenticated: usize,
    /// How long a connection may go without an authenticated request after it was accepted.
    pub unauthenticated_timeout: Duration,
}

/// A connection's place in the unauthenticated budget, shared with each of its requests (in their
/// extensions): the authentication layer gives it back ([`Unproven::settle`]) when a request
/// proves who sends it; a connection still holding it at its deadline is closed.
#[derive(Clone, Debug)]
pub struct Unproven(Arc<std::sync::Mutex<Option<tokio::sync::OwnedSemaphorePermit>>>);

impl Unproven {
    /// A request on this connection was authenticated: its place in the budget is given back.
    pub fn settle(&self) {
        if let Ok(mut permit) = self.0.lock() {
            permit.take();
        }
    }

    fn pending(&self) -> bool {
        self.0.lock().map_or(true, |permit| permit.is_some())
    }
}

/// Told the reason of each request hyper refused before the router saw it (`header_too_large`,
/// `bad_request`), for `warden_requests_rejected_total`.
pub type Refusals = Arc<dyn Fn(&'static str) + Send + Sync>;

/// A listening socket: accepts one connection and says who is at the other end.
pub trait Accept: Send + 'static {
    type Io: AsyncRead + AsyncWrite + Unpin + Send + 'static;
    fn accept(&mut self) -> impl Future<Output = io::Result<(Self::Io, Peer)>> + Send;
}

impl Accept for tokio::net::TcpListener {
    type Io = tokio::net::TcpStream;

    async fn accept(&mut self) -> io::Result<(Self::Io, Peer)> {
        let (stream, addr) = tokio::net::TcpListener::accept(self).await?;
        let _ = stream.set_nodelay(true);
        Ok((stream, Peer::Tcp(addr)))
    }
}

impl Accept for tokio::net::UnixListener {
    type Io = tokio::net::UnixStream;

    async fn accept(&mut self) -> io::Result<(Self::Io, Peer)> {
        let (stream, _) = tokio::net::UnixListener::accept(self).await?;
        let cred = stream.peer_cred().ok();
        let peer = Peer::Unix {
            uid: cred.map(|c| c.uid()),
            pid: cred.and_then(|c| c.pid()),
        };
        Ok((stream, peer))
    }
}

/// Serves `app` on `listener` until `stop` turns true; then stops accepting, lets each connection
/// finish the request it is answering (idle ones close at once), and returns when all are closed.
pub async fn serve<L: Accept>(
    mut listener: L,
    app: Router,
    limits: ConnectionLimits,
    refusals: Refusals,
    mut stop: watch::Receiver<bool>,
) {
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let unproven = Arc::new(Semaphore::new(
        limits
            .max_unauthenticated
            .clamp(1, limits.max_connections.max(1)),
    ));
    // Every connection task holds a receiver; `closed()` resolves when the last one is gone.
    let (open_tx, open_rx) = watch::channel(());
    loop {
        let slot = tokio::select! {
            slot = Arc::clone(&slots).acquire_owned() => slot,
            _ = stop.wait_for(|stop| *stop) => break,
        };
        // The semaphores are never closed.
        let Ok(slot) = slot else { break };
        let place = tokio::select! {
            place = Arc::clone(&unproven).acquire_owned() => place,
            _ = stop.wait_for(|stop| *stop) => break,
        };
        let Ok(place) = place else { break };
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stop.wait_for(|stop| *stop) => break,
        };
        let (io, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(err) => {
                // A peer that reset before we accepted costs nothing; anything else (EMFILE)
                // is waited out rather than spun on.
                if !matches!(
                    err.kind(),
                    io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset
                ) {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                continue;
            }
        };
        let app = app.clone();
        let stop = stop.clone();
        let open = open_rx.clone();
        let refusals = Arc::clone(&refusals);
        let place = Unproven(Arc::new(std::sync::Mutex::new(Some(place))));
        tokio::spawn(async move {
            serve_connection(io, peer, place, app, limits, refusals, stop).await;
            drop(slot);
            drop(open);
        });
    }
    drop(listener);
    drop(open_rx);
    open_tx.closed().await;
}

async fn serve_connection<I>(
    io: I,
    peer: Peer,
    place: Unproven,
    app: Router,
    limits: ConnectionLimits,
    refusals: Refusals,
    mut stop: watch::Receiver<bool>,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let router = TowerToHyperService::new(app);
    let proof = place.clone();
    let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
        request.extensions_mut().insert(ConnectInfo(peer.clone()));
        request.extensions_mut().insert(proof.clone());
        router.call(request)
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .max_buf_size(MAX_BUFFER)
        .keep_alive(true);
    let io = TokioIo::new(SendDeadline::new(io, limits.send_timeout));
    let connection = builder.serve_connection(io, service);
    tokio::pin!(connection);
    // Closed at its deadline unless a request proved who sends it by then.
    let deadline = async {
        tokio::time::sleep(limits.unauthenticated_timeout).await;
        if !place.pending() {
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        result = connection.as_mut() => return note_refusal(&result, &refusals),
        () = deadline => return refusals("unauthenticated_timeout"),
        _ = stop.wait_for(|stop| *stop) => {}
    }
    // Shutting down: an idle connection closes now, a busy one after its response.
    connection.as_mut().graceful_shutdown();
    let result = connection.await;
    note_refusal(&result, &refusals);
}

/// hyper answers a head over [`MAX_BUFFER`] with 431 and a malformed one with 400, then ends the
/// connection with that error.
fn note_refusal(result: &Result<(), hyper::Error>, refusals: &Refusals) {
    if let Err(err) = result {
        if err.is_parse_too_large() {
            refusals("header_too_large");
        } else if err.is_parse() {
            refusals("bad_request");
        }
    }
}

/// A connection whose writes fail with `TimedOut` once one has waited `limit` without progress
/// (the client stopped reading); hyper then closes it.
struct SendDeadline<T> {
    io: T,
    limit: Duration,
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<T> SendDeadline<T> {
    fn new(io: T, limit: Duration) -> Self {
        Self {
            io,
            limit,
            stalled: None,
        }
    }

    /// Called when a write is pending: starts the clock, or reports that it ran out.
    fn check_stall(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let limit = self.limit;
        let sleep = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        match sleep.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client did not read the response in time",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn on_write<R>(
        &mut self,
        cx: &mut Context<'_>,
        result: Poll<io::Result<R>>,
    ) -> Poll<io::Result<R>> {
        match result {
            Poll::Pending => match self.check_stall(cx) {
                Poll::Ready(Err(err)) => Poll::Ready(Err(err)),
                _ => Poll::Pending,
            },
            ready => {
                self.stalled = None;
                ready
            }
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for SendDeadline<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for SendDeadline<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let result = Pin::new(&mut self.io).poll_write(cx, buf);
        self.on_write(cx, result)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let result = Pin::new(&mut self.io).poll_flush(cx);
        self.on_write(cx, result)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let result = Pin::new(&mut self.io).poll_shutdown(cx);
        self.on_write(cx, result)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let result = Pin::new(&mut self.io).poll_write_vectored(cx, bufs);
        self.on_write(cx, result)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn a_write_the_peer_never_reads_times_out() {
        // A 1 KiB pipe whose other end never reads.
        let (near, _far) = tokio::io::duplex(1024);
        let mut io = SendDeadline::new(near, Duration::from_millis(300));
        let started = std::time::Instant::now();
        let err = io.write_all(&[0u8; 64 * 1024]).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert!(started.elapsed() >= Duration::from_millis(300));
    }

    #[tokio::test]
    async fn a_slow_reader_that_keeps_reading_is_not_cut_off() {
        let (near, mut far) = tokio::io::duplex(1024);
        let reader = tokio::spawn(async move {
            let mut sink = [0u8; 1024];
            let mut total = 0;
            while total < 16 * 1024 {
                // The whole write takes longer than the deadline; no single wait does.
                tokio::time::sleep(Duration::from_millis(50)).await;
                total += far.read(&mut sink).await.unwrap();
            }
        });
        let mut io = SendDeadline::new(near, Duration::from_millis(300));
        let started = std::time::Instant::now();
        io.write_all(&[0u8; 16 * 1024]).await.unwrap();
        assert!(started.elapsed() > Duration::from_millis(300));
        reader.await.unwrap();
    }
}
