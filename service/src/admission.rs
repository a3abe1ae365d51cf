//! Admission control: at most N runs at once, a bounded queue in front of them, a wait timeout.
//!
//! A request that finds every slot busy waits in the queue; a request that finds the queue full is
//! turned away at once (429), one that waited longer than the timeout is turned away then (503), and
//! after shutdown begins every waiting and new request is turned away (503). The queue is a count,
//! not a buffer: a waiting request holds nothing but its own future.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Why a request was not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejection {
    /// The queue is full (429).
    QueueFull,
    /// The request waited `queue_timeout` without a slot (503).
    QueueTimeout,
    /// The server is shutting down (503).
    ShuttingDown,
}

impl Rejection {
    pub fn as_str(self) -> &'static str {
        match self {
            Rejection::QueueFull => "queue_full",
            Rejection::QueueTimeout => "queue_timeout",
            Rejection::ShuttingDown => "shutting_down",
        }
    }
}

#[derive(Debug)]
pub struct Admission {
    slots: Arc<Semaphore>,
    waiting: AtomicUsize,
    queue_size: usize,
    timeout: Duration,
}

/// A run slot, released when dropped.
#[derive(Debug)]
pub struct Slot {
    _permit: OwnedSemaphorePermit,
}

impl Admission {
    pub fn new(max_running: usize, queue_size: usize, timeout: Duration) -> Self {
        Self {
            slots: Arc::new(Semaphore::new(max_running)),
            waiting: AtomicUsize::new(0),
            queue_size,
            timeout,
        }
    }

    /// Waits for a run slot, within the queue's bounds.
    pub async fn admit(&self) -> Result<Slot, Rejection> {
        match self.slots.clone().try_acquire_owned() {
            Ok(permit) => return Ok(Slot { _permit: permit }),
            Err(tokio::sync::TryAcquireError::Closed) => return Err(Rejection::ShuttingDown),
            Err(tokio::sync::TryAcquireError::NoPermits) => {}
        }
        // Join the queue only if there is room (checked and taken in one step).
        let joined = self
            .waiting
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < self.queue_size).then_some(n + 1)
            });
        if joined.is_err() {
            return Err(Rejection::QueueFull);
        }
        let _leave = LeaveQueue(&self.waiting);
        match tokio::time::timeout(self.timeout, self.slots.clone().acquire_owned()).await {
            Ok(Ok(permit)) => Ok(Slot { _permit: permit }),
            Ok(Err(_closed)) => Err(Rejection::ShuttingDown),
            Err(_elapsed) => Err(Rejection::QueueTimeout),
        }
    }

    /// Requests waiting for a slot now.
    pub fn queued(&self) -> usize {
        self.waiting.load(Ordering::SeqCst)
    }

    /// Turns away every waiting and future request.
    pub fn close(&self) {
        self.slots.close();
    }

    /// A `Retry-After` hint, in seconds.
    pub fn retry_after(&self, rejection: Rejection) -> u64 {
        match rejection {
            Rejection::QueueFull => 1,
            Rejection::QueueTimeout => 5,
            Rejection::ShuttingDown => 10,
        }
    }
}

/// Leaves the queue however the wait ends (the future may also be dropped by a client hang-up).
struct LeaveQueue<'a>(&'a AtomicUsize);

impl Drop for LeaveQueue<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_full_queue_turns_requests_away_and_a_slot_frees_a_waiter() {
        let admission = Arc::new(Admission::new(1, 1, Duration::from_secs(5)));
        let first = admission.admit().await.unwrap();
        let waiter = {
            let admission = admission.clone();
            tokio::spawn(async move { admission.admit().await.map(|_| ()) })
        };
        while admission.queued() == 0 {
            tokio::task::yield_now().await;
        }
        assert_eq!(admission.admit().await.unwrap_err(), Rejection::QueueFull);
        drop(first);
        assert_eq!(waiter.await.unwrap(), Ok(()));
        assert_eq!(admission.queued(), 0);
    }

    #[tokio::test]
    async fn waiting_too_long_and_shutdown_are_rejections() {
        let admission = Admission::new(1, 4, Duration::from_millis(50));
        let _held = admission.admit().await.unwrap();
        assert_eq!(
            admission.admit().await.unwrap_err(),
            Rejection::QueueTimeout
        );
        assert_eq!(admission.queued(), 0);
        admission.close();
        assert_eq!(
            admission.admit().await.unwrap_err(),
            Rejection::ShuttingDown
        );
    }
}
