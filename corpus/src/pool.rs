//! The pool pass: every attack (and benign program) through a real `warden serve` with its warm
//! pool on, over the server's HTTP API on a Unix socket, judged from the host side as the jail
//! pass judges `warden run`.
//!
//! The runner starts a server per parallel job, at most [`MAX_SERVERS`], for the whole run (in
//! the run directory: its configuration, its socket, its state directory), each with one
//! registered policy, `corpus-pool`: the policy under test with every rule of the static layer
//! turned off (`[actions] RULE = "off"` for each rule `warden rules explain` lists outside the
//! source rules, which cannot be turned off; the source limits and the target Python raised so
//! that the checker refuses as little as it can), so that what a program meets is the runtime
//! layer and the jail — the layers a pooled jail holds — as with `warden run --no-policy` in the
//! runtime pass. `[pool] depth` is [`DEPTH`].
//!
//! A server takes one pooled request at a time: before it, the runner waits until a jail of the
//! policy is waiting (`warden_pool_ready` in `/metrics`); it then posts the program (`POST
//! /v1/run`, or a session's cells to `POST /v1/sessions` and `…/execute`), reads the record, and
//! waits until the server has reaped the claimed worker (`warden_pool_busy` back to 0).
//! Meanwhile a watcher records every descendant of the server and their pid namespaces; what is
//! still alive afterwards and no longer belongs to the server's tree (the waiting jails do) is a
//! survivor. A run's record must say `"warm": true` (a session: the pool's session hits went up
//! by one); a program the server ran cold fails the case, unless the record says why (the static
//! layer's source rules refused it: nothing ran). Only the HTTP contract is used: never the
//! pool's internals.
//!
//! Layout: `pool/config.rs` holds what a server is configured with (its `serve.toml` and the
//! policy it registers), `pool/server.rs` starts, drives and stops one server, `pool/http.rs` is
//! the HTTP client, `pool/files.rs` writes a record's files back for the checks.
//!
//! Owns: the servers of a run and handing each request to a free one. Does not own: judging
//! (`verify.rs`) or scheduling (`runner.rs`).

mod config;
mod files;
mod http;
mod server;

pub use server::PoolServer;

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::exec::{Finished, Record, Warden};
use super::fixtures::{self, Owner};

/// The name the policy under test is registered under.
pub const POLICY: &str = "corpus-pool";
/// Jails kept waiting.
pub const DEPTH: u32 = 2;

/// One pooled run as the host saw it.
#[derive(Debug)]
pub struct PoolRun {
    pub finished: Finished,
    pub record: Option<Record>,
    pub output_dir: Option<PathBuf>,
    /// Whether a pooled jail ran it: the record's `warm` (a session: the pool's session hits).
    pub warm: Option<bool>,
    /// Things the case's report should carry (a worker not reaped in time…).
    pub notes: Vec<String>,
}

/// The pool pass's servers: one per parallel job, at most [`MAX_SERVERS`], each taking one pooled
/// request at a time (so that a slow case — a timeout, a copy-back flood — does not hold up every
/// other). They share one environment secret.
#[derive(Debug)]
pub struct Pool {
    servers: Vec<PoolServer>,
    /// The secret in every server's environment (`env-secret-hidden`): every pooled run's.
    pub env_secret: String,
}

/// The most servers a run starts.
pub const MAX_SERVERS: usize = 2;

impl Pool {
    /// Starts `count` servers (1 to [`MAX_SERVERS`]) in `run_dir/pool-N`.
    pub fn start(
        warden: &Warden,
        run_dir: &Path,
        owner: Option<Owner>,
        count: usize,
    ) -> Result<Pool, String> {
        let env_secret = format!("warden-env-secret-{}", fixtures::random_hex(16));
        let mut servers = Vec::new();
        for n in 0..count.clamp(1, MAX_SERVERS) {
            let dir = run_dir.join(format!("pool-{n}"));
            servers.push(PoolServer::start(warden, dir, owner, &env_secret)?);
        }
        Ok(Pool {
            servers,
            env_secret,
        })
    }

    /// How many servers run.
    pub fn len(&self) -> usize {
        self.servers.len()
    }

    /// Whether there is no server (never, once started).
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// Runs `program` on the first server free to take it (waiting for one).
    pub fn run(&self, program: Program<'_>, output_dir: Option<&Path>) -> PoolRun {
        loop {
            for server in &self.servers {
                if let Ok(_turn) = server.turn.try_lock() {
                    return server.run(program, output_dir);
                }
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Requests sent, and those that ran warm, over every server.
    pub fn counts(&self) -> (usize, usize) {
        self.servers.iter().fold((0, 0), |(sent, warm), server| {
            let (s, w) = server.counts();
            (sent + s, warm + w)
        })
    }

    /// Stops every server; what they left behind.
    pub fn stop(&mut self) -> Vec<String> {
        self.servers.iter_mut().flat_map(PoolServer::stop).collect()
    }
}

/// What one pooled request carries.
#[derive(Debug, Clone, Copy)]
pub enum Program<'a> {
    /// A program's text (`POST /v1/run`).
    Run(&'a str),
    /// A session's cells.
    Session(&'a [String]),
}
