//! One `warden serve` with its warm pool on, for the length of a corpus run: started in a
//! directory of its own, sent one pooled run (or session) at a time, watched, and stopped.
//!
//! Owns: the server process and its log, waiting on its metrics (a jail ready before a request,
//! the claimed worker reaped after it), the processes seen over its life and what outlived it, and
//! the counts of requests sent and run warm. Does not own: its configuration (`config.rs`), the
//! HTTP client (`http.rs`) or sharing requests among the servers (`pool.rs`).

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::config::{no_static_policy, serve_config};
use super::files::write_files;
use super::http::{metric, request, Answer};
use super::{PoolRun, Program, POLICY};
use crate::exec::{Finished, Record, Warden};
use crate::fixtures::Owner;
use crate::procs::{self, Seen, Watcher};

/// Longest wait for a pooled jail to be ready before a request (a pandas import per jail, on a
/// loaded machine, is seconds).
const READY_PATIENCE: Duration = Duration::from_secs(180);
/// Longest wait for the server to reap a claimed worker after its record (the server kills one
/// not gone 10 s after its record).
const REAP_PATIENCE: Duration = Duration::from_secs(30);
/// The most bytes of the server's standard error kept (for messages).
const MAX_LOG: usize = 1 << 20;

/// A `warden serve` with its pool on, for the length of a corpus run. Stopped (and its directory
/// removed) on drop.
#[derive(Debug)]
pub struct PoolServer {
    child: Option<Child>,
    pid: u32,
    dir: PathBuf,
    socket: PathBuf,
    /// The secret in the server's environment (`env-secret-hidden`): every pooled run's.
    pub env_secret: String,
    log: Arc<Mutex<String>>,
    /// One pooled request at a time, so that the processes of a run are told apart.
    pub(super) turn: Mutex<()>,
    guard: Duration,
    /// Every pid namespace and process seen over the server's life, checked after it stopped.
    all_seen: Mutex<Seen>,
    /// Requests sent through the pool, and those that ran warm (by the record or the metrics).
    counts: Mutex<(usize, usize)>,
}

impl PoolServer {
    /// Starts the server in `dir` (owned by `owner` when warden runs as another user), with
    /// `env_secret` in its environment, and waits until it listens.
    pub(super) fn start(
        warden: &Warden,
        dir: PathBuf,
        owner: Option<Owner>,
        env_secret: &str,
    ) -> Result<PoolServer, String> {
        std::fs::create_dir(&dir).map_err(|err| format!("{}: {err}", dir.display()))?;
        let socket = dir.join("warden.sock");
        let state = dir.join("state");
        let policy = dir.join("corpus-pool.toml");
        std::fs::write(&policy, no_static_policy(warden)?)
            .map_err(|err| format!("{}: {err}", policy.display()))?;
        let config = dir.join("serve.toml");
        std::fs::write(&config, serve_config(&socket, &state, &policy))
            .map_err(|err| format!("{}: {err}", config.display()))?;
        if let Some(owner) = owner {
            for path in [&dir, &policy, &config] {
                std::os::unix::fs::chown(path, Some(owner.uid), Some(owner.gid))
                    .map_err(|err| format!("cannot hand {} over: {err}", path.display()))?;
            }
        }
        // The server dies with the runner (`setpriv --pdeathsig`, where there is one): a killed
        // run must not leave a pool of jails behind.
        let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"]
            .into_iter()
            .find(|p| Path::new(p).is_file());
        let mut command = warden.command_for(setpriv.map(Path::new));
        if setpriv.is_some() {
            command
                .args(["--pdeathsig", "KILL", "--"])
                .arg(&warden.binary);
        }
        command
            .args(["serve", "--config"])
            .arg(&config)
            .env("WARDEN_CORPUS_SECRET", env_secret)
            .env("AWS_SECRET_ACCESS_KEY", env_secret)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if warden.run_as.is_some() && std::env::var_os("WARDEN_DATA_DIR").is_none() {
            // The runtimes root installed, not the user's own (HOME is in the run directory).
            command.env("WARDEN_DATA_DIR", "/var/lib/warden");
        }
        let mut child = command
            .spawn()
            .map_err(|err| format!("cannot start warden serve: {err}"))?;
        let pid = child.id();
        let log = Arc::new(Mutex::new(String::new()));
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        if let Some(stderr) = child.stderr.take() {
            let log = Arc::clone(&log);
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stderr);
                let mut line = String::new();
                let mut told = false;
                while reader.read_line(&mut line).unwrap_or(0) > 0 {
                    if !told && line.contains("serving on") {
                        let _ = ready_tx.send(());
                        told = true;
                    }
                    if let Ok(mut log) = log.lock() {
                        if log.len() < MAX_LOG {
                            log.push_str(&line);
                        }
                    }
                    line.clear();
                }
            });
        }
        let mut server = PoolServer {
            child: Some(child),
            pid,
            dir,
            socket,
            env_secret: env_secret.to_owned(),
            log,
            turn: Mutex::new(()),
            guard: warden.guard,
            all_seen: Mutex::new(Seen::default()),
            counts: Mutex::new((0, 0)),
        };
        if ready_rx.recv_timeout(Duration::from_secs(120)).is_err() {
            let exited = server
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten());
            let log = server.log_text();
            server.stop();
            return Err(format!(
                "warden serve did not start{}: {}",
                exited.map(|s| format!(" ({s})")).unwrap_or_default(),
                crate::verify::clip(&log)
            ));
        }
        Ok(server)
    }

    fn log_text(&self) -> String {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// How many requests went through the pool, and how many ran warm.
    pub fn counts(&self) -> (usize, usize) {
        *self.counts.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// One HTTP request to the server.
    fn request(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Answer, String> {
        request(&self.socket, method, path, body, self.guard)
    }

    fn metrics(&self) -> String {
        self.request("GET", "/metrics", None)
            .map(|a| String::from_utf8_lossy(&a.body).into_owned())
            .unwrap_or_default()
    }

    /// Waits until `test` holds of the metrics, at most `patience`; whether it did.
    fn wait_metrics(&self, patience: Duration, test: impl Fn(&str) -> bool) -> bool {
        let deadline = Instant::now() + patience;
        loop {
            if test(&self.metrics()) {
                return true;
            }
            if Instant::now() >= deadline || self.exited() {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn exited(&self) -> bool {
        procs::stat(self.pid).is_none_or(|p| p.state == 'Z')
    }

    /// Runs `code` (one program, or a session's cells) through a pooled jail, watched, and writes
    /// the files the record returns into `output_dir`. The caller holds the server's turn.
    pub(super) fn run(&self, program: Program<'_>, output_dir: Option<&Path>) -> PoolRun {
        let mut notes = Vec::new();
        let ready_key = format!("warden_pool_ready{{policy=\"{POLICY}\"}}");
        if !self.wait_metrics(READY_PATIENCE, |m| {
            metric(m, &ready_key).is_some_and(|v| v >= 1.0)
        }) {
            notes.push(format!(
                "no pooled jail was ready after {}s (the request went anyway)",
                READY_PATIENCE.as_secs()
            ));
        }
        let kind = match program {
            Program::Run(_) => "run",
            Program::Session(_) => "session",
        };
        let hits_key = format!("warden_pool_hits_total{{policy=\"{POLICY}\",kind=\"{kind}\"}}");
        let hits_before = metric(&self.metrics(), &hits_key);
        let started = Instant::now();
        let watcher = Watcher::start(self.pid);
        let (answer, extra) = match program {
            Program::Run(code) => (
                self.request(
                    "POST",
                    "/v1/run",
                    Some(&json!({"policy": POLICY, "code": code})),
                ),
                None,
            ),
            Program::Session(cells) => self.session(cells),
        };
        let reaped = self.wait_metrics(REAP_PATIENCE, |m| {
            metric(m, "warden_pool_busy").is_some_and(|v| v == 0.0)
        });
        let elapsed = started.elapsed();
        let seen = watcher.finish();
        let hits_after = metric(&self.metrics(), &hits_key);
        let mut killed = false;
        let (code, stdout, stderr) = match &answer {
            Ok(a) if a.status == 200 => (Some(0), a.body.clone(), Vec::new()),
            Ok(a) => (
                Some(if a.status < 500 { 2 } else { 1 }),
                Vec::new(),
                format!("HTTP {}: {}", a.status, String::from_utf8_lossy(&a.body)).into_bytes(),
            ),
            Err(err) => {
                killed = err.contains("timed out");
                (None, Vec::new(), err.clone().into_bytes())
            }
        };
        let mut stdout = stdout;
        if let Some(extra) = extra {
            stdout = extra;
        }
        let record = Record::parse(&stdout);
        let warm = match program {
            Program::Run(_) => record.as_ref().and_then(|r| r.warm),
            Program::Session(_) => match (hits_before, hits_after) {
                (Some(before), Some(after)) => Some(after > before),
                _ => None,
            },
        };
        {
            let mut all = self.all_seen.lock().unwrap_or_else(|p| p.into_inner());
            all.procs.extend(seen.procs.clone());
            for (ns, last) in &seen.namespaces {
                let entry = all.namespaces.entry(*ns).or_insert(0);
                *entry = (*entry).max(*last);
            }
            let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
            counts.0 += 1;
            counts.1 += usize::from(warm == Some(true));
        }
        // What still belongs to the server (the waiting jails, a refill) is not the run's.
        let seen = if reaped {
            Some(outside_of(seen, self.pid))
        } else {
            notes.push(format!(
                "the server had not reaped the claimed worker {}s after the record \
                 (warden_pool_busy > 0): survivors could not be told apart",
                REAP_PATIENCE.as_secs()
            ));
            None
        };
        if let (Some(dir), Some(record)) = (output_dir, Record::parse_value(&stdout)) {
            if let Err(err) = write_files(&record, dir) {
                notes.push(format!(
                    "the record's files could not be written back: {err}"
                ));
            }
        }
        PoolRun {
            finished: Finished {
                code,
                stdout,
                stderr,
                killed,
                elapsed,
                started,
                seen,
            },
            record,
            output_dir: output_dir.map(Path::to_path_buf),
            warm,
            notes,
        }
    }

    /// A session of `cells`: created (from the pool), each cell executed until one ends it, then
    /// deleted. Returns the creation's answer (an error when it failed) and, once created, what
    /// the runner reads as warden's stdout: the cell records, one per line, then their sum (with
    /// the session's `layers`) on the last line.
    fn session(&self, cells: &[String]) -> (Result<Answer, String>, Option<Vec<u8>>) {
        let created = match self.request("POST", "/v1/sessions", Some(&json!({"policy": POLICY}))) {
            Ok(a) if a.status == 200 => a,
            other => return (other, None),
        };
        let info: Value = serde_json::from_slice(&created.body).unwrap_or(Value::Null);
        let Some(id) = info["id"].as_str().map(str::to_owned) else {
            return (Err("the session's creation gave no id".to_owned()), None);
        };
        let mut lines = Vec::new();
        let mut failure = None;
        for cell in cells {
            match self.request(
                "POST",
                &format!("/v1/sessions/{id}/execute"),
                Some(&json!({"code": cell})),
            ) {
                Ok(a) if a.status == 200 => {
                    let record: Value = serde_json::from_slice(&a.body).unwrap_or(Value::Null);
                    lines.extend(a.body.iter().copied().filter(|b| *b != b'\n'));
                    lines.push(b'\n');
                    if record["session_alive"] == false {
                        break;
                    }
                }
                Ok(a) => {
                    failure = Some(Ok(a));
                    break;
                }
                Err(err) => {
                    failure = Some(Err(err));
                    break;
                }
            }
        }
        let _ = self.request("DELETE", &format!("/v1/sessions/{id}"), None);
        if let Some(mut sum) = crate::session::record(&lines, Some(0)) {
            sum["layers"] = info["layers"].clone();
            lines.extend(sum.to_string().into_bytes());
            lines.push(b'\n');
        }
        (failure.unwrap_or(Ok(created)), Some(lines))
    }

    /// Stops the server (SIGTERM, then SIGKILL after its grace), removes its directory, and
    /// returns what it left behind: any process seen over its life still alive (killed now).
    pub fn stop(&mut self) -> Vec<String> {
        let Some(mut child) = self.child.take() else {
            return Vec::new();
        };
        let _ = Command::new("kill")
            .args(["-TERM", &self.pid.to_string()])
            .stderr(Stdio::null())
            .status();
        let deadline = Instant::now() + Duration::from_secs(40);
        while matches!(child.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        let mut left = Vec::new();
        if matches!(child.try_wait(), Ok(None)) {
            left.push(format!(
                "warden serve (pid {}) did not stop within 40 s of SIGTERM (killed)",
                self.pid
            ));
            let _ = child.kill();
        }
        let _ = child.wait();
        let all = std::mem::take(&mut *self.all_seen.lock().unwrap_or_else(|p| p.into_inner()));
        for p in procs::survivors(&all, Duration::from_secs(5)) {
            procs::kill(p.pid);
            left.push(format!(
                "{} (pid {}) outlived the server (killed now)",
                p.comm, p.pid
            ));
        }
        if let Err(err) = std::fs::remove_dir_all(&self.dir) {
            if err.kind() != std::io::ErrorKind::NotFound {
                left.push(format!(
                    "{} could not be removed: {err}",
                    self.dir.display()
                ));
            }
        }
        left
    }
}

impl Drop for PoolServer {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// `seen` without the processes that are the server's descendants now, nor the pid namespaces
/// they live in (the waiting jails, a refill started during the run).
fn outside_of(mut seen: Seen, server: u32) -> Seen {
    let now = procs::descendants_of(server);
    let mut namespaces = BTreeSet::new();
    for p in &now {
        seen.procs.remove(&(p.pid, p.start));
        if let Some(ns) = procs::pid_ns(&p.pid.to_string()) {
            namespaces.insert(ns);
        }
    }
    seen.namespaces.retain(|ns, _| !namespaces.contains(ns));
    seen
}
