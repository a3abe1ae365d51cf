//! Sessions: one confined interpreter that keeps its state across cells, each cell judged by the
//! policy in the context of the cells accepted before it, with Jupyter-shaped results.
//!
//! Owns: starting a session's jail (the run's jail config with the bootstrap in session mode), the
//! per-cell check in context, the host side of the driver protocol (`docs/sessions.md`: requests
//! as JSON lines on the driver's stdin; answers as JSON lines on its stdout — untrusted, bounded and
//! strictly parsed: the messages' types are `driver.rs`'s), the per-cell deadline (the driver
//! interrupts the cell; past a grace the session is ended), and the [`CellRecord`] (`record.rs`).
//!
//! Does not own: the jail ([`warden_jail::Session`]), the driver (`jail/src/bootstrap.py`), how
//! sessions are reached (the CLI's `repl`, the service's HTTP and MCP).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::Serialize;
use warden_jail::{Event, Layers, Outcome, Stream};
use warden_policy::{Decision, Policy};

use crate::files::{self, WorkDir};

mod driver;
mod record;
mod warm;

pub use record::{CellCheck, CellError, CellRecord, CellStatus, CellUsage, MimeBundle};

use driver::{parse_answer, Answer, CellRequest, Done, Op, OpRequest};
use record::finish_record;

/// How long a session's interpreter may take to start (import the driver, install the hook).
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a cell may run on after its wall time before the session is ended (the driver's
/// interrupt did not stop it).
pub const INTERRUPT_GRACE: Duration = Duration::from_secs(2);
/// The largest answer line the host reads (a cell's figures are in it, base64).
const MAX_FRAME: usize = 64 << 20;
/// The most MIME bundles one cell may display.
const MAX_DISPLAY: usize = 64;
/// Default lifetime of a session (the jail's wall time and CPU budget).
pub const DEFAULT_LIFETIME: Duration = Duration::from_secs(3600);
/// How long ending a session waits for the driver to exit before killing it.
const END_GRACE: Duration = Duration::from_secs(5);
/// The bytes of a file one upload operation carries (a large file goes in pieces): what warden and
/// the jail's driver hold of an upload at once.
pub const UPLOAD_PIECE: usize = 1 << 20;

/// Reads until `buf` is full or `source` ends; how many bytes were read.
fn read_full(source: &mut dyn std::io::Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match source.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    Ok(filled)
}

/// How a session is started.
#[derive(Debug, Clone)]
pub struct SessionOptions {
    /// Host files copied into the work dir before the interpreter starts.
    pub inputs: Vec<PathBuf>,
    /// The session's whole life: past it the jail is killed.
    pub lifetime: Duration,
    /// Turn the runtime layer's audit hook off (to prove the jail alone).
    pub no_hooks: bool,
    /// Skip the static check of each cell (to prove the other layers alone).
    pub no_policy: bool,
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            inputs: Vec::new(),
            lifetime: DEFAULT_LIFETIME,
            no_hooks: false,
            no_policy: false,
        }
    }
}

/// Why a session is over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// Its owner ended it.
    Closed,
    /// A cell ran past its wall time and did not stop when interrupted.
    Timeout,
    /// The interpreter died (out of memory, a signal, `os._exit`) or broke the protocol.
    Lost(String),
    /// A cell's output went far past its caps.
    OutputFlood,
}

/// Where a session's jail comes from.
#[derive(Debug, Clone, Copy)]
pub enum Origin<'a> {
    /// Started for it: a new interpreter.
    Cold,
    /// Started as a warm pool's template: it preloads, then forks runs (`warm.rs`).
    Template,
    /// Forked from the template whose channel (a Unix socket) is at this path.
    Fork(&'a std::path::Path),
}

/// A live session.
pub struct Session {
    policy: Policy,
    jail: Option<warden_jail::Session>,
    workdir: WorkDir,
    layers: Layers,
    /// The accepted cells, joined: what the next cell is checked with.
    accepted: String,
    /// Line of `accepted` where each accepted cell starts, with its number.
    starts: Vec<(usize, u64)>,
    count: u64,
    /// Bytes of the driver's stdout not yet ending in a newline.
    pending: Vec<u8>,
    /// How much of `pending` is known to hold no newline (so a long answer arriving in pieces is
    /// scanned once, not once per piece).
    pending_scanned: usize,
    ended: Option<Ended>,
    outcome: Option<Outcome>,
    no_policy: bool,
    /// The id of the last request sent to the driver.
    last_id: u64,
    /// The inputs placed in the work dir (not outputs).
    placed: files::PlacedInputs,
    /// How long the next file operation may take, when not the default (a pooled jail's preload).
    operation_deadline: Option<Duration>,
}

/// A file in a session's work dir.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct SessionFile {
    pub path: String,
    pub size: u64,
}

impl Session {
    /// Starts a session for `policy`. `Err`: it could not be set up (the message says why).
    pub fn start(policy: &Policy, options: &SessionOptions) -> anyhow::Result<Session> {
        Session::start_from(policy, options, Origin::Cold)
    }

    /// Starts a session for `policy` whose jail comes from `origin` (a cold start, a warm pool's
    /// template, or a fork of one: `warm.rs`).
    pub fn start_from(
        policy: &Policy,
        options: &SessionOptions,
        origin: Origin<'_>,
    ) -> anyhow::Result<Session> {
        files::check_inputs(&options.inputs)?;
        let lifetime_ms = u64::try_from(options.lifetime.as_millis()).unwrap_or(u64::MAX);
        let mut limits = policy.limits.clone();
        limits.wall_time_ms = lifetime_ms;
        limits.cpu_time_ms = lifetime_ms;
        let mut config = crate::jail_config::with_limits(policy, &limits)?;
        let layer = crate::hook_config::runtime_layer(policy, options.no_hooks)
            .map_err(anyhow::Error::msg)?;
        config.bootstrap = crate::jail_config::bootstrap(layer);
        config.bootstrap.session = true;
        config.bootstrap.template = matches!(origin, Origin::Template);
        anyhow::ensure!(
            !config.bootstrap.template || config.bootstrap.native_module.is_some(),
            "a template forks through warden's native module, which this policy's jail does not load \
             (its runtime layer is off)"
        );
        let plan = warden_jail::Plan::new(&config)?;
        let layers = warden_jail::layers(&plan);
        let workdir = WorkDir::create()?;
        let placed =
            files::place_inputs(&options.inputs, &workdir.path, policy.files.inputs_writable)?;
        let jail = match origin {
            Origin::Cold | Origin::Template => {
                warden_jail::Session::start(&plan, Some(&workdir.path))?
            }
            Origin::Fork(channel) => {
                warden_jail::Session::fork(&plan, Some(&workdir.path), channel)?
            }
        };
        let mut session = Session {
            policy: policy.clone(),
            jail: Some(jail),
            workdir,
            layers,
            accepted: String::new(),
            starts: Vec::new(),
            count: 0,
            pending: Vec::new(),
            pending_scanned: 0,
            ended: None,
            outcome: None,
            no_policy: options.no_policy,
            last_id: 0,
            placed,
            operation_deadline: None,
        };
        session.wait_ready()?;
        Ok(session)
    }

    /// The layers in force for this session.
    pub fn layers(&self) -> &Layers {
        &self.layers
    }

    /// How many cells have run.
    pub fn execution_count(&self) -> u64 {
        self.count
    }

    /// Why the session is over, when it is.
    pub fn ended(&self) -> Option<&Ended> {
        self.ended.as_ref()
    }

    /// The jail's init (its pid on the host), while the jail runs.
    pub fn jail_pid(&self) -> Option<u32> {
        self.jail.as_ref().map(warden_jail::Session::init_pid)
    }

    /// Interrupts the running cell from another thread (`warden repl`'s Ctrl-C), while the jail
    /// runs: the cell ends with KeyboardInterrupt and the session keeps its state.
    pub fn interrupter(&self) -> Option<warden_jail::Interrupter> {
        self.jail.as_ref().map(warden_jail::Session::interrupter)
    }

    /// The input files placed in the work dir when the session started.
    pub fn placed(&self) -> &files::PlacedInputs {
        &self.placed
    }

    /// The host directory the work dir comes back to when the session ends.
    pub fn workdir(&self) -> &std::path::Path {
        &self.workdir.path
    }

    fn wait_ready(&mut self) -> anyhow::Result<()> {
        let deadline = Instant::now() + START_TIMEOUT;
        let mut stderr = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                self.end(Ended::Lost("the interpreter did not start".into()));
                anyhow::bail!("the session's interpreter did not start within {START_TIMEOUT:?}");
            }
            let Some(jail) = self.jail.as_mut() else {
                anyhow::bail!("the session ended while starting");
            };
            match jail.next_event(left) {
                Some(Event::Output(Stream::Stderr, bytes)) if stderr.len() < 64 * 1024 => {
                    stderr.extend_from_slice(&bytes);
                }
                None | Some(Event::Output(Stream::Stderr, _)) => {}
                Some(Event::Output(Stream::Stdout, bytes)) => {
                    self.pending.extend_from_slice(&bytes);
                    if let Some(line) = self.take_line() {
                        if driver::is_ready(&line) {
                            return Ok(());
                        }
                        self.end(Ended::Lost("the driver did not start".into()));
                        anyhow::bail!("the session's driver sent something other than ready");
                    }
                }
                Some(Event::Ended) => {
                    let text = String::from_utf8_lossy(&stderr);
                    let last = text.trim_end().lines().last().unwrap_or("").to_owned();
                    self.end(Ended::Lost("the interpreter ended while starting".into()));
                    anyhow::bail!(
                        "the session's interpreter ended while starting{}",
                        if last.is_empty() {
                            String::new()
                        } else {
                            format!(": {last}")
                        }
                    );
                }
            }
        }
    }

    fn take_line(&mut self) -> Option<Vec<u8>> {
        let from = self.pending_scanned.min(self.pending.len());
        let Some(at) = self.pending[from..].iter().position(|&b| b == b'\n') else {
            self.pending_scanned = self.pending.len();
            return None;
        };
        let end = from + at;
        let mut line: Vec<u8> = self.pending.drain(..=end).collect();
        line.pop();
        self.pending_scanned = 0;
        Some(line)
    }

    /// Checks `cell` in the context of the accepted cells and, when allowed, runs it.
    pub fn execute(&mut self, cell: &[u8]) -> CellRecord {
        self.execute_with(cell, &mut |_, _| {})
    }

    /// [`Session::execute`], calling `on_output(stream, text)` with the cell's output as it is
    /// produced (`stream`: `"stdout"` or `"stderr"`; within the caps; the record holds it all).
    pub fn execute_with(
        &mut self,
        cell: &[u8],
        on_output: &mut dyn FnMut(&str, &str),
    ) -> CellRecord {
        let started = Instant::now();
        let mut record = CellRecord {
            status: CellStatus::Denied,
            execution_count: None,
            stdout: String::new(),
            stderr: String::new(),
            stdout_truncated: false,
            stderr_truncated: false,
            result: None,
            display: Vec::new(),
            error: None,
            check: CellCheck {
                decision: "skipped".into(),
                findings: Vec::new(),
            },
            usage: CellUsage::default(),
            session_alive: self.ended.is_none(),
            message: None,
        };
        if self.ended.is_some() {
            record.status = CellStatus::SessionLost;
            record.message = Some("the session has ended".into());
            return record;
        }
        let text = match self.check(cell, &mut record.check) {
            Ok(text) => text,
            Err(message) => {
                record.message = Some(message);
                return record;
            }
        };
        self.count += 1;
        record.execution_count = Some(self.count);
        self.run_cell(&text, &mut record, on_output);
        if record.status != CellStatus::Denied {
            // The cell ran (whatever its end): later cells are checked with it.
            let line = self.accepted.lines().count();
            self.starts.push((line, self.count));
            self.accepted.push_str(&text);
            if !self.accepted.ends_with('\n') {
                self.accepted.push('\n');
            }
        }
        record.usage.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(0);
        record.session_alive = self.ended.is_none();
        record
    }

    /// The static verdict on `cell` alone (its findings located in it), then on the session's
    /// cells with it (what only the context reveals). `Ok`: the text to run.
    fn check(&self, cell: &[u8], check: &mut CellCheck) -> Result<String, String> {
        let alone = warden_policy::check_on_worker(cell, &self.policy);
        let Some(decoded) = alone.decoded.clone() else {
            check.decision = alone.decision.as_str().into();
            check.findings = alone.findings;
            return Err("the cell could not be decoded; see the findings".into());
        };
        if self.policy_off() {
            return Ok(decoded.text);
        }
        let offset = self.accepted.lines().count();
        let mut findings = alone.findings;
        let mut decision = alone.decision;
        if decision != Decision::Deny && !self.accepted.is_empty() {
            let combined = format!("{}{}", self.accepted, decoded.text);
            let together = warden_policy::check_on_worker(combined.as_bytes(), &self.policy);
            for mut finding in together.findings {
                if finding.span.line > offset {
                    finding.span.line -= offset;
                    finding.span.end_line = finding.span.end_line.saturating_sub(offset);
                } else {
                    let (number, line) = self.cell_of(finding.span.line);
                    finding.message = format!(
                        "{} (in cell {number}, line {line}, together with this cell)",
                        finding.message
                    );
                    finding.span.line = 1;
                    finding.span.end_line = 1;
                    finding.span.column = 1;
                    finding.span.end_column = 1;
                }
                if !findings.iter().any(|f| {
                    f.rule == finding.rule
                        && f.span.line == finding.span.line
                        && f.message == finding.message
                }) {
                    findings.push(finding);
                }
            }
            decision = decision.max(together.decision);
        }
        check.decision = decision.as_str().into();
        check.findings = findings;
        match decision {
            Decision::Allow => Ok(decoded.text),
            Decision::Review => Err(
                "the policy requires a review before this cell runs, and sessions take no approvals"
                    .into(),
            ),
            Decision::Deny => Err("denied by the policy; see the findings".into()),
        }
    }

    fn policy_off(&self) -> bool {
        self.no_policy
    }

    /// The cell and its line for a line of the accepted text.
    fn cell_of(&self, line: usize) -> (u64, usize) {
        let mut found = (0, line);
        for &(start, number) in &self.starts {
            if line > start {
                found = (number, line - start);
            }
        }
        found
    }

    /// Sends `text` as cell `self.count` and reads the answers to it into `record`.
    fn run_cell(
        &mut self,
        text: &str,
        record: &mut CellRecord,
        on_output: &mut dyn FnMut(&str, &str),
    ) {
        self.last_id += 1;
        let id = self.last_id;
        let wall = Duration::from_millis(self.policy.limits.wall_time_ms.max(1));
        let caps = (
            self.policy.limits.stdout_bytes as usize,
            self.policy.limits.stderr_bytes as usize,
        );
        let line = driver::line_of(&CellRequest {
            id,
            count: self.count,
            code: text,
            timeout_ms: self.policy.limits.wall_time_ms,
            stdout_bytes: caps.0,
            stderr_bytes: caps.1,
        });
        let started = Instant::now();
        let hard_deadline = started + wall + INTERRUPT_GRACE;
        let Some(jail) = self.jail.as_mut() else {
            record.status = CellStatus::SessionLost;
            return;
        };
        if jail.send(line.as_bytes(), hard_deadline).is_err() {
            self.lose(record, "the interpreter stopped reading cells");
            return;
        }
        let mut stdout = Capped::new(caps.0);
        let mut stderr = Capped::new(caps.1);
        let mut flood = 0usize;
        loop {
            // Answers already buffered come first.
            while let Some(raw) = self.take_line() {
                match parse_answer(&raw) {
                    Some(Answer::Stream {
                        id: got,
                        stdout: out,
                        text,
                    }) if got == id => {
                        flood += text.len();
                        let (capped, name) = if out {
                            (&mut stdout, "stdout")
                        } else {
                            (&mut stderr, "stderr")
                        };
                        let before = capped.data.len();
                        capped.push(text.as_bytes());
                        if capped.data.len() > before {
                            on_output(name, &String::from_utf8_lossy(&capped.data[before..]));
                        }
                    }
                    Some(Answer::Done(done)) if done.id == id => {
                        finish_record(record, &done, &stdout, &stderr);
                        self.idle();
                        return;
                    }
                    // An answer to another cell, or not an answer: a cell wrote on the driver's
                    // channel. It can only confuse its own session; the session is ended.
                    _ => {
                        self.lose(record, "the driver's channel carried something that is not an answer (the cell wrote on it?)");
                        return;
                    }
                }
            }
            if self.pending.len() > MAX_FRAME || flood > caps.0 + caps.1 + (16 << 20) {
                record.stdout = lossy(&stdout.data);
                record.stderr = lossy(&stderr.data);
                record.stdout_truncated = true;
                self.end(Ended::OutputFlood);
                record.status = CellStatus::OutputLimit;
                record.message =
                    Some("the cell's output went far past its caps; the session was ended".into());
                return;
            }
            let now = Instant::now();
            if now >= hard_deadline {
                record.stdout = lossy(&stdout.data);
                record.stderr = lossy(&stderr.data);
                self.end(Ended::Timeout);
                record.status = CellStatus::Timeout;
                record.message = Some(format!(
                    "the cell ran past its wall time ({} ms) and did not stop when interrupted; the session was ended and its state is lost",
                    self.policy.limits.wall_time_ms
                ));
                return;
            }
            let Some(jail) = self.jail.as_mut() else {
                record.status = CellStatus::SessionLost;
                return;
            };
            match jail.next_event(hard_deadline - now) {
                None => {}
                Some(Event::Output(Stream::Stdout, bytes)) => {
                    self.pending.extend_from_slice(&bytes)
                }
                Some(Event::Output(Stream::Stderr, bytes)) => {
                    flood += bytes.len();
                    let before = stderr.data.len();
                    stderr.push(&bytes);
                    if stderr.data.len() > before {
                        on_output("stderr", &String::from_utf8_lossy(&stderr.data[before..]));
                    }
                }
                Some(Event::Ended) => {
                    record.stdout = lossy(&stdout.data);
                    record.stderr = lossy(&stderr.data);
                    self.lose(record, "the interpreter ended during the cell");
                    return;
                }
            }
        }
    }

    /// Writes `bytes` to `name` (a relative path, subdirectories made) in the session's work dir.
    pub fn upload(&mut self, name: &str, bytes: &[u8]) -> anyhow::Result<SessionFile> {
        self.upload_from(name, &mut &bytes[..])
    }

    /// Writes what `source` reads to `name` in the session's work dir, [`UPLOAD_PIECE`] bytes at a
    /// time, so that neither warden nor the driver holds more than one piece of the file.
    pub fn upload_from(
        &mut self,
        name: &str,
        source: &mut dyn std::io::Read,
    ) -> anyhow::Result<SessionFile> {
        use base64::Engine;
        let path = files::relative_name(name).map_err(anyhow::Error::msg)?;
        let mut piece = vec![0u8; UPLOAD_PIECE];
        let mut offset = 0u64;
        loop {
            let filled = read_full(source, &mut piece)?;
            if filled == 0 && offset > 0 {
                break;
            }
            let data = base64::engine::general_purpose::STANDARD.encode(&piece[..filled]);
            let answer = self.exchange(|id| driver::put_line(id, &path, &data, offset))?;
            anyhow::ensure!(
                answer.bytes == Some(filled as u64),
                "the session did not write the whole file"
            );
            offset += filled as u64;
            if filled < UPLOAD_PIECE {
                break;
            }
        }
        Ok(SessionFile { path, size: offset })
    }

    /// The regular files in the session's work dir (never through a symlink), at most the
    /// policy's `output_files` of them; `bool`: whether there were more.
    pub fn files(&mut self) -> anyhow::Result<(Vec<SessionFile>, bool)> {
        let cap = self.policy.limits.output_files;
        let answer = self.operation(Op::List { max_files: cap })?;
        let mut found = Vec::new();
        for item in answer.files.unwrap_or_default() {
            // Untrusted: keep only names a caller could also have given.
            if let Ok(path) = files::relative_name(&item.path) {
                found.push(SessionFile {
                    path,
                    size: item.size,
                });
            }
            if found.len() as u64 >= cap {
                break;
            }
        }
        let more = answer.truncated.unwrap_or(false);
        Ok((found, more))
    }

    /// The content of `name` in the work dir, at most the policy's `output_bytes` (a regular
    /// file, not through a symlink).
    pub fn download(&mut self, name: &str) -> anyhow::Result<Vec<u8>> {
        use base64::Engine;
        let path = files::relative_name(name).map_err(anyhow::Error::msg)?;
        let cap = self.policy.limits.output_bytes;
        let answer = self.operation(Op::Get {
            path: &path,
            max_bytes: cap,
        })?;
        let data = answer.data.unwrap_or_default();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|_| anyhow::anyhow!("the session sent a file that is not base64"))?;
        anyhow::ensure!(
            bytes.len() as u64 <= cap,
            "{path} is larger than the output cap ({cap} bytes)"
        );
        Ok(bytes)
    }

    /// Sends a file operation to the driver and waits for its answer (bounded in time and size).
    fn operation(&mut self, op: Op<'_>) -> anyhow::Result<Box<Done>> {
        self.exchange(|id| driver::line_of(&OpRequest { id, op }))
    }

    /// Sends the request line `line_for(id)` and waits for its answer (bounded in time and size).
    fn exchange(&mut self, line_for: impl FnOnce(u64) -> String) -> anyhow::Result<Box<Done>> {
        anyhow::ensure!(self.ended.is_none(), "the session has ended");
        self.last_id += 1;
        let id = self.last_id;
        let line = line_for(id);
        let deadline = Instant::now() + self.operation_deadline.unwrap_or(Duration::from_secs(30));
        let Some(jail) = self.jail.as_mut() else {
            anyhow::bail!("the session has ended");
        };
        if jail.send(line.as_bytes(), deadline).is_err() {
            self.end(Ended::Lost(
                "the interpreter stopped reading requests".into(),
            ));
            anyhow::bail!("the session was lost");
        }
        loop {
            if let Some(raw) = self.take_line() {
                return match parse_answer(&raw) {
                    Some(Answer::Done(done)) if done.id == id => {
                        if self.count > 0 {
                            self.idle();
                        }
                        if done.status == "ok" {
                            Ok(done)
                        } else {
                            let message = done.message.as_deref().unwrap_or("failed");
                            anyhow::bail!("{}", message.chars().take(500).collect::<String>())
                        }
                    }
                    _ => {
                        self.end(Ended::Lost(
                            "the driver's channel carried something that is not an answer".into(),
                        ));
                        anyhow::bail!("the session was lost (its channel carried something that is not an answer)")
                    }
                };
            }
            if self.pending.len() > MAX_FRAME {
                self.end(Ended::OutputFlood);
                anyhow::bail!("the session's answer was too large; the session was ended");
            }
            let now = Instant::now();
            if now >= deadline {
                self.end(Ended::Lost(
                    "the driver did not answer a file request".into(),
                ));
                anyhow::bail!("the session did not answer in time and was ended");
            }
            let Some(jail) = self.jail.as_mut() else {
                anyhow::bail!("the session has ended");
            };
            match jail.next_event(deadline - now) {
                None | Some(Event::Output(Stream::Stderr, _)) => {}
                Some(Event::Output(Stream::Stdout, bytes)) => {
                    self.pending.extend_from_slice(&bytes)
                }
                Some(Event::Ended) => {
                    self.end(Ended::Lost("the interpreter ended".into()));
                    anyhow::bail!("the session was lost");
                }
            }
        }
    }

    /// Between cells (after a cell's answer, or a file operation's once a cell ran): the jail is
    /// frozen, when its cgroup has a freezer, so that threads a cell left running use no CPU and
    /// write nothing until the next cell or file operation thaws it (`docs/jail.md`, sessions' table). Without
    /// a freezer, they run on: their CPU counts against the session's lifetime budget, and what
    /// they write waits on the host within [`warden_jail::TAP_BYTES`], then in the jail's pipe.
    fn idle(&mut self) {
        if let Some(jail) = self.jail.as_mut() {
            jail.freeze(true);
        }
    }

    /// Whether the jail is frozen between cells ([`Session::idle`]).
    pub fn frozen(&self) -> bool {
        self.jail.as_ref().is_some_and(warden_jail::Session::frozen)
    }

    /// The session ended under a cell: the record says how, from the jail's outcome.
    fn lose(&mut self, record: &mut CellRecord, why: &str) {
        self.end(Ended::Lost(why.to_owned()));
        let memory = self.outcome.as_ref().is_some_and(|o| {
            o.status == warden_jail::Status::MemoryLimit
                || o.limits_hit.contains(&warden_jail::LimitHit::Memory)
        });
        record.status = if memory {
            CellStatus::MemoryLimit
        } else {
            CellStatus::SessionLost
        };
        record.message = Some(match &self.outcome {
            Some(outcome) if memory => format!(
                "{why}: the session reached its memory limit ({} bytes); its state is lost",
                outcome
                    .usage
                    .memory_peak_bytes
                    .max(self.policy.limits.memory_bytes)
            ),
            Some(outcome) => format!(
                "{why} ({}); the session is over and its state is lost",
                describe(outcome)
            ),
            None => format!("{why}; the session is over and its state is lost"),
        });
        record.session_alive = false;
    }

    /// Ends the jail (idempotent): the work dir comes back into [`Session::workdir`].
    fn end(&mut self, why: Ended) {
        if self.ended.is_none() {
            self.ended = Some(why);
        }
        if let Some(mut jail) = self.jail.take() {
            if !matches!(self.ended, Some(Ended::Closed)) {
                jail.kill();
            }
            self.outcome = jail.finish(END_GRACE).ok();
        }
    }

    /// Ends the session; returns the jail's outcome (usage of the whole session) when it had one.
    pub fn close(mut self) -> Option<Outcome> {
        self.end(Ended::Closed);
        self.outcome.take()
    }

    /// Ends the session and delivers the files it wrote (not the inputs) into `destination`,
    /// within the policy's output caps, as `warden run --output-dir` does.
    pub fn close_into(mut self, destination: &std::path::Path) -> anyhow::Result<files::Collected> {
        files::check_output_dir(destination)?;
        self.end(Ended::Closed);
        let limits = files::CollectLimits {
            max_files: self.policy.limits.output_files,
            max_total_bytes: self.policy.limits.output_bytes,
        };
        files::collect_outputs(&self.workdir.path, &self.placed, limits, Some(destination))
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.end(Ended::Closed);
    }
}

fn describe(outcome: &Outcome) -> String {
    match (outcome.exit_code, outcome.signal) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        (None, None) => "no exit status".to_owned(),
    }
}

/// One output stream of a cell, kept up to its cap.
struct Capped {
    data: Vec<u8>,
    cap: usize,
    over: bool,
}

impl Capped {
    fn new(cap: usize) -> Self {
        Capped {
            data: Vec::new(),
            cap,
            over: false,
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        let room = self.cap.saturating_sub(self.data.len());
        if bytes.len() > room {
            self.over = true;
        }
        self.data.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
