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
//! Owns: the server's configuration, start and shutdown, the HTTP client, the record's files
//! written back for the checks. Does not own: judging (`verify.rs`) or scheduling (`runner.rs`).

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Component, Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::exec::{Finished, Record, Warden};
use super::fixtures::{self, Owner};
use super::procs::{self, Seen, Watcher};

/// The name the policy under test is registered under.
pub const POLICY: &str = "corpus-pool";
/// Jails kept waiting.
pub const DEPTH: u32 = 2;
/// Longest wait for a pooled jail to be ready before a request (a pandas import per jail, on a
/// loaded machine, is seconds).
const READY_PATIENCE: Duration = Duration::from_secs(180);
/// Longest wait for the server to reap a claimed worker after its record (the server kills one
/// not gone 10 s after its record).
const REAP_PATIENCE: Duration = Duration::from_secs(30);
/// The most bytes of one HTTP answer kept.
const MAX_ANSWER: u64 = 256 << 20;
/// The most bytes of the server's standard error kept (for messages).
const MAX_LOG: usize = 1 << 20;

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
    turn: Mutex<()>,
    guard: Duration,
    /// Every pid namespace and process seen over the server's life, checked after it stopped.
    all_seen: Mutex<Seen>,
    /// Requests sent through the pool, and those that ran warm (by the record or the metrics).
    counts: Mutex<(usize, usize)>,
}

/// The policy under test with the static layer off, as a rules file extending it.
fn no_static_policy(warden: &Warden) -> Result<String, String> {
    let output = Command::new(&warden.binary)
        .args(["rules", "explain"])
        .stdin(Stdio::null())
        .output()
        .map_err(|err| {
            format!(
                "cannot run {} rules explain: {err}",
                warden.binary.display()
            )
        })?;
    let listing = String::from_utf8_lossy(&output.stdout);
    let rules = rules_to_turn_off(&listing);
    if rules.is_empty() {
        return Err(format!(
            "`warden rules explain` listed no rule: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    let base = match &warden.rules {
        Some(path) => std::fs::canonicalize(path)
            .map_err(|err| format!("{}: {err}", path.display()))?
            .display()
            .to_string(),
        None => "default".to_owned(),
    };
    let mut text = format!(
        "# The policy under test with the static layer off (warden corpus run --passes pool).\n\
         extends = {}\n[policy]\nname = \"{POLICY}\"\ntarget_python = \"3.13\"\n\
         [source]\nmax_bytes = 16777216\nmax_depth = 5000\nmax_nodes = 5000000\n[actions]\n",
        json!(base)
    );
    for rule in rules {
        text.push_str(&format!("{rule} = \"off\"\n"));
    }
    Ok(text)
}

/// The rule ids of `warden rules explain`'s listing (`ID name category severity action`), but the
/// source rules and the runtime layer's (their action cannot change).
fn rules_to_turn_off(listing: &str) -> Vec<String> {
    listing
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (id, category) = (fields.first()?, fields.get(2)?);
            let is_id = id.len() >= 4
                && id
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
                && id.chars().any(|c| c.is_ascii_digit());
            (is_id && !matches!(*category, "source" | "runtime")).then(|| (*id).to_owned())
        })
        .collect()
}

impl PoolServer {
    /// Starts the server in `dir` (owned by `owner` when warden runs as another user), with
    /// `env_secret` in its environment, and waits until it listens.
    fn start(
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
        let text = format!(
            "[server]\nsocket = {socket}\nsocket_mode = \"0600\"\nstate_dir = {state}\n\
             audit_log = \"off\"\ndefault_policy = \"{POLICY}\"\n\
             [admission]\nmax_concurrent_runs = 2\nshutdown_grace_ms = 10000\n\
             [sessions]\nmax_sessions = 2\n\
             [pool]\nenabled = true\ndepth = {DEPTH}\nmax_idle_ms = 3600000\n\
             [policies]\n\"{POLICY}\" = {policy}\n",
            socket = json!(socket.display().to_string()),
            state = json!(state.display().to_string()),
            policy = json!(policy.display().to_string()),
        );
        std::fs::write(&config, text).map_err(|err| format!("{}: {err}", config.display()))?;
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
                super::verify::clip(&log)
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
    fn run(&self, program: Program<'_>, output_dir: Option<&Path>) -> PoolRun {
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
        if let Some(mut sum) = super::session::record(&lines, Some(0)) {
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

impl Drop for PoolServer {
    fn drop(&mut self) {
        let _ = self.stop();
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

/// Writes the record's `files` (`path`, `content_base64`) under `dir`, refusing any path that
/// would leave it.
fn write_files(record: &Value, dir: &Path) -> Result<(), String> {
    let Some(files) = record["files"].as_array() else {
        return Ok(());
    };
    if files.is_empty() {
        return Ok(());
    }
    std::fs::create_dir_all(dir).map_err(|err| format!("{}: {err}", dir.display()))?;
    for file in files {
        let (Some(path), Some(content)) = (file["path"].as_str(), file["content_base64"].as_str())
        else {
            continue;
        };
        let relative = Path::new(path);
        if relative
            .components()
            .any(|c| !matches!(c, Component::Normal(_)))
        {
            return Err(format!("the record names the file {path:?}"));
        }
        let bytes = base64_decode(content).ok_or_else(|| format!("{path}: not base64"))?;
        let target = dir.join(relative);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|err| format!("{path}: {err}"))?;
        }
        std::fs::write(&target, bytes).map_err(|err| format!("{path}: {err}"))?;
    }
    Ok(())
}

/// Standard base64 (with or without padding); `None` when `text` is not.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let digits: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    let digits = digits
        .strip_suffix(b"==")
        .or_else(|| digits.strip_suffix(b"="))
        .unwrap_or(&digits);
    if digits.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for chunk in digits.chunks(4) {
        let mut n = 0u32;
        for (i, c) in chunk.iter().enumerate() {
            n |= value(*c)? << (18 - 6 * i);
        }
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
    }
    Some(out)
}

/// The value of one sample (`name{labels}` exactly as printed) in Prometheus text.
fn metric(text: &str, key: &str) -> Option<f64> {
    text.lines().find_map(|line| {
        let rest = line.strip_prefix(key)?;
        rest.strip_prefix(' ')?.trim().parse().ok()
    })
}

/// An HTTP answer.
#[derive(Debug, Clone)]
struct Answer {
    status: u16,
    body: Vec<u8>,
}

/// One HTTP/1.1 request over the Unix socket (`Connection: close`), waiting at most `timeout` for
/// each read.
fn request(
    socket: &Path,
    method: &str,
    path: &str,
    body: Option<&Value>,
    timeout: Duration,
) -> Result<Answer, String> {
    let mut stream =
        UnixStream::connect(socket).map_err(|err| format!("{}: {err}", socket.display()))?;
    stream
        .set_read_timeout(Some(timeout))
        .and_then(|()| stream.set_write_timeout(Some(timeout)))
        .map_err(|err| err.to_string())?;
    let body = body.map(Value::to_string).unwrap_or_default();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: warden\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream
        .write_all(head.as_bytes())
        .and_then(|()| stream.write_all(body.as_bytes()))
        .map_err(|err| format!("{method} {path}: {err}"))?;
    let mut raw = Vec::new();
    match stream.take(MAX_ANSWER).read_to_end(&mut raw) {
        Ok(_) => {}
        Err(err)
            if matches!(
                err.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) =>
        {
            return Err(format!(
                "{method} {path}: no answer within {}s (timed out)",
                timeout.as_secs()
            ));
        }
        Err(err) => return Err(format!("{method} {path}: {err}")),
    }
    parse_answer(&raw).ok_or_else(|| {
        format!(
            "{method} {path}: not an HTTP answer: {}",
            super::verify::clip(&String::from_utf8_lossy(&raw[..raw.len().min(200)]))
        )
    })
}

/// Reads a whole HTTP/1.1 answer: the status line, headers, and a body that is read to the end
/// of the connection, delimited by `Content-Length`, or chunked.
fn parse_answer(raw: &[u8]) -> Option<Answer> {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&raw[..end]).ok()?;
    let mut lines = head.split("\r\n");
    let status: u16 = lines.next()?.split_whitespace().nth(1)?.parse().ok()?;
    let mut length = None;
    let mut chunked = false;
    for line in lines {
        let (name, value) = line.split_once(':')?;
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            length = value.parse::<usize>().ok();
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = value.to_ascii_lowercase().contains("chunked");
        }
    }
    let rest = &raw[end + 4..];
    let body = if chunked {
        let mut body = Vec::new();
        let mut at = rest;
        loop {
            let line_end = at.windows(2).position(|w| w == b"\r\n")?;
            let size_text = std::str::from_utf8(&at[..line_end]).ok()?;
            let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
            at = &at[line_end + 2..];
            if size == 0 {
                break;
            }
            body.extend_from_slice(at.get(..size)?);
            at = at.get(size + 2..)?;
        }
        body
    } else {
        match length {
            Some(n) => rest.get(..n)?.to_vec(),
            None => rest.to_vec(),
        }
    };
    Some(Answer { status, body })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn answers_parse_with_a_length_or_chunked() {
        let plain = b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\n{\"a\"";
        let answer = parse_answer(plain).unwrap();
        assert_eq!(
            (answer.status, answer.body.as_slice()),
            (200, &b"{\"a\""[..])
        );
        let chunked =
            b"HTTP/1.1 429 Too Many\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x\r\nde\r\n0\r\n\r\n";
        let answer = parse_answer(chunked).unwrap();
        assert_eq!(
            (answer.status, answer.body.as_slice()),
            (429, &b"abcde"[..])
        );
        assert!(parse_answer(b"garbage").is_none());
        assert!(parse_answer(b"HTTP/1.1 200 OK\r\ncontent-length: 9\r\n\r\nshort").is_none());
    }

    #[test]
    fn base64_decodes_with_and_without_padding() {
        assert_eq!(base64_decode("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(base64_decode("aGVsbG8").unwrap(), b"hello");
        assert_eq!(base64_decode("").unwrap(), b"");
        assert_eq!(base64_decode("AAEC/w==").unwrap(), [0, 1, 2, 255]);
        assert!(base64_decode("a$==").is_none());
        assert!(base64_decode("a").is_none());
    }

    #[test]
    fn metrics_are_read_by_their_exact_sample_name() {
        let text = "# HELP warden_pool_ready x\nwarden_pool_ready{policy=\"corpus-pool\"} 2\n\
                    warden_pool_ready{policy=\"other\"} 0\nwarden_pool_busy 1\n";
        assert_eq!(
            metric(text, "warden_pool_ready{policy=\"corpus-pool\"}"),
            Some(2.0)
        );
        assert_eq!(metric(text, "warden_pool_busy"), Some(1.0));
        assert_eq!(metric(text, "warden_pool"), None);
    }

    #[test]
    fn every_rule_but_the_source_and_runtime_rules_is_turned_off() {
        let listing = "SYN001   syntax-error           source      high     deny\n\
                       IMP101   import-not-allowed     imports     high     deny\n\
                       FILE704  dynamic-path           files       low      warn\n\
                       PROC801  process-start          runtime     high     deny\n\
                       something else\n";
        assert_eq!(rules_to_turn_off(listing), ["IMP101", "FILE704"]);
    }

    #[test]
    fn returned_files_stay_in_their_directory() {
        let dir = tempfile::tempdir().unwrap();
        let record = json!({"files": [{"path": "a/b.csv", "content_base64": "eA=="}]});
        write_files(&record, dir.path()).unwrap();
        assert_eq!(std::fs::read(dir.path().join("a/b.csv")).unwrap(), b"x");
        let evil = json!({"files": [{"path": "../x", "content_base64": "eA=="}]});
        assert!(write_files(&evil, dir.path()).is_err());
        let absolute = json!({"files": [{"path": "/tmp/x", "content_base64": "eA=="}]});
        assert!(write_files(&absolute, dir.path()).is_err());
    }
}
