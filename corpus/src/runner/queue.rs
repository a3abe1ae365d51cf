//! The order a corpus run takes its cases in, and the shared host targets each holds while it
//! runs: the slowest cases first, and a worker takes the first case whose targets are all free.
//!
//! Owns: the schedule, the queue of waiting cases with the targets running ones hold, and which
//! effects name a shared target (its lock key). Does not own: running a case (`runner.rs`) or the
//! targets themselves (`fixtures.rs`).

use std::collections::{BTreeSet, VecDeque};
use std::sync::{Condvar, Mutex};

use super::lock;
use crate::case::{Case, Kind};
use crate::effects::{Effect, ESCAPE_GLOBS};

/// Long cases first (those expecting a timeout), so the slowest do not end the run alone.
pub(super) fn schedule(cases: &[Case]) -> Vec<usize> {
    let weight = |case: &Case| match &case.kind {
        Kind::Attack(spec) => {
            let slow = spec.effects.iter().any(|e| match e {
                Effect::Status(s) => s.contains("timeout"),
                Effect::NoPersist => true,
                _ => false,
            });
            if slow {
                0
            } else {
                1
            }
        }
        Kind::Benign(_) | Kind::Harmless => 2,
        Kind::Skipped(_) => 3,
    };
    let mut order: Vec<usize> = (0..cases.len()).collect();
    order.sort_by_key(|i| weight(&cases[*i]));
    order
}

/// The cases still to run, each with the named host targets it holds while it runs, and the
/// targets running cases hold. A worker takes the first case (in schedule order) whose targets are
/// all free, so a case waiting for a target (RedCode's 30 cases aimed at one port) never idles a
/// worker while another case could run.
#[derive(Debug, Default)]
pub(super) struct Queue {
    state: Mutex<QueueState>,
    freed: Condvar,
}

#[derive(Debug, Default)]
struct QueueState {
    waiting: VecDeque<(usize, BTreeSet<String>)>,
    held: BTreeSet<String>,
}

/// A case taken from the [`Queue`]; its targets are freed when it is dropped.
#[derive(Debug)]
pub(super) struct Taken<'a> {
    pub(super) index: usize,
    keys: BTreeSet<String>,
    queue: &'a Queue,
}

impl Queue {
    pub(super) fn new(cases: impl IntoIterator<Item = (usize, BTreeSet<String>)>) -> Queue {
        Queue {
            state: Mutex::new(QueueState {
                waiting: cases.into_iter().collect(),
                held: BTreeSet::new(),
            }),
            freed: Condvar::new(),
        }
    }

    /// The next case whose targets are free, now holding them; waits while every waiting case
    /// needs a held target; `None` when no case is left.
    pub(super) fn take(&self) -> Option<Taken<'_>> {
        let mut state = lock(&self.state);
        loop {
            let QueueState { waiting, held } = &mut *state;
            if waiting.is_empty() {
                return None;
            }
            if let Some(at) = waiting.iter().position(|(_, keys)| keys.is_disjoint(held)) {
                let (index, keys) = waiting.remove(at)?;
                held.extend(keys.iter().cloned());
                return Some(Taken {
                    index,
                    keys,
                    queue: self,
                });
            }
            state = self.freed.wait(state).unwrap_or_else(|p| p.into_inner());
        }
    }
}

impl Drop for Taken<'_> {
    fn drop(&mut self) {
        let mut state = lock(&self.queue.state);
        for key in &self.keys {
            state.held.remove(key);
        }
        self.queue.freed.notify_all();
    }
}

/// The shared targets a case declares (the baseline's shared escape globs excepted: every attack
/// has them).
pub(super) fn lock_keys(effects: &[Effect]) -> BTreeSet<String> {
    effects
        .iter()
        .filter_map(|effect| match effect {
            Effect::NoConnect(endpoint) => Some(format!("connect {endpoint}")),
            Effect::Unchanged(path) => Some(format!("file {}", path.display())),
            Effect::NoPath(glob) if !ESCAPE_GLOBS.contains(&glob.as_str()) => {
                Some(format!("path {glob}"))
            }
            Effect::HostnameUnchanged => Some("hostname".to_owned()),
            Effect::ClockUnchanged => Some("clock".to_owned()),
            Effect::InterpreterIntact => Some("interpreter".to_owned()),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    #[test]
    fn declared_shared_targets_become_lock_keys() {
        let effects = Effect::parse_list(
            "no-connect tcp4:127.0.0.1:5758; unchanged /root/.bashrc; no-path /tmp/warden-escape*; \
             no-path /usr/copy_file; hostname-unchanged; no-read /etc/shadow; contained",
        )
        .unwrap();
        let keys = lock_keys(&effects);
        assert_eq!(
            keys.into_iter().collect::<Vec<_>>(),
            [
                "connect tcp4:127.0.0.1:5758",
                "file /root/.bashrc",
                "hostname",
                "path /usr/copy_file"
            ]
        );
    }

    #[test]
    fn a_case_whose_target_is_held_is_passed_over_for_one_that_can_run() {
        let keys = |k: &[&str]| k.iter().map(|s| (*s).to_owned()).collect::<BTreeSet<_>>();
        let queue = Queue::new([
            (0, keys(&["x"])),
            (1, keys(&["x"])),
            (2, keys(&["y"])),
            (3, keys(&[])),
        ]);
        let first = queue.take().unwrap();
        assert_eq!(first.index, 0);
        // 1 needs x, which 0 holds: 2 and 3 run first.
        let second = queue.take().unwrap();
        assert_eq!(second.index, 2);
        let third = queue.take().unwrap();
        assert_eq!(third.index, 3);
        let waited = std::thread::scope(|s| {
            let handle = s.spawn(|| {
                let start = Instant::now();
                let fourth = queue.take().unwrap();
                (fourth.index, start.elapsed())
            });
            std::thread::sleep(Duration::from_millis(100));
            drop(first);
            handle.join().unwrap()
        });
        assert_eq!(waited.0, 1);
        assert!(waited.1 >= Duration::from_millis(90), "{waited:?}");
        assert!(queue.take().is_none());
        drop((second, third));
    }
}
