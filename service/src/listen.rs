//! A listener that holds at most N connections open.
//!
//! `accept` waits for a free slot, so a client that opens connections and never uses them costs
//! sockets queued in the kernel's backlog, not file descriptors of the server: the server keeps
//! answering the connections it has, and its descriptor use stays bounded
//! (`admission.max_connections`).

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::serve::Listener;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

pub struct Capped<L> {
    inner: L,
    slots: Arc<Semaphore>,
}

impl<L> Capped<L> {
    pub fn new(inner: L, max_connections: usize) -> Self {
        Self {
            inner,
            slots: Arc::new(Semaphore::new(max_connections.max(1))),
        }
    }
}

/// An accepted connection and the slot it holds until it is dropped.
pub struct CappedIo<T> {
    pub io: T,
    _slot: Option<OwnedSemaphorePermit>,
}

impl<L> Listener for Capped<L>
where
    L: Listener,
{
    type Io = CappedIo<L::Io>;
    type Addr = L::Addr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        // The semaphore is never closed; without a permit the connection is simply not counted.
        let slot = self.slots.clone().acquire_owned().await.ok();
        let (io, addr) = self.inner.accept().await;
        (CappedIo { io, _slot: slot }, addr)
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for CappedIo<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for CappedIo<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
}
