//! One session's actor and its worker process: the task that owns the worker's pipes, serves the
//! session's requests one at a time, bounds each answer, ends the session when asked, and writes
//! the audit line and metrics of every cell.
//!
//! Owns: the server's side of the session protocol (`warden_worker::wire`: requests, answers) and
//! the record of a cell its session ended under ([`lost_cell`]). Does not own: the table of
//! sessions and their caps (`sessions.rs`), the session itself (`warden_gateway::session`).

use super::*;
use crate::executor::WorkerProcess;
use tokio::io::AsyncBufReadExt;

/// A session's worker process, read with a bound on its answers.
pub(super) struct Worker {
    /// Its directory is removed once the worker is gone (the actor ends after waiting for it).
    pub(super) process: WorkerProcess,
    /// The longest answer line read (a cell's record with its figures, a file's content).
    pub(super) line_cap: usize,
}

impl Worker {
    pub(super) async fn send(&mut self, request: &WorkerRequest) -> Result<(), String> {
        let line = serde_json::to_vec(request).map_err(|err| err.to_string())?;
        self.send_line(line).await
    }

    pub(super) async fn send_line(&mut self, line: Vec<u8>) -> Result<(), String> {
        if self.process.stdin.is_none() {
            return Err("the session worker's input is closed".to_owned());
        }
        match tokio::time::timeout(SEND_TIMEOUT, self.process.send_line(line)).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(err)) => Err(format!("the session worker stopped reading ({err})")),
            Err(_) => Err("the session worker did not read its request in time".to_owned()),
        }
    }

    /// The next answer line, parsed. `Err`: the worker ended, or sent something too large or not
    /// an answer (it is killed then; not cancel-safe).
    pub(super) async fn read(&mut self) -> Result<WorkerAnswer, String> {
        let mut line = Vec::new();
        loop {
            let buffer = self
                .process
                .stdout
                .fill_buf()
                .await
                .map_err(|err| format!("cannot read the session worker's answer: {err}"))?;
            if buffer.is_empty() {
                return Err("the session worker ended".to_owned());
            }
            if let Some(end) = buffer.iter().position(|&b| b == b'\n') {
                line.extend_from_slice(&buffer[..end]);
                self.process.stdout.consume(end + 1);
                break;
            }
            let n = buffer.len();
            line.extend_from_slice(buffer);
            self.process.stdout.consume(n);
            if line.len() > self.line_cap {
                return Err(format!(
                    "the session worker's answer exceeded {} bytes",
                    self.line_cap
                ));
            }
        }
        serde_json::from_slice(&line).map_err(|err| {
            format!("the session worker sent something that is not an answer: {err}")
        })
    }

    pub(super) async fn kill(&mut self) {
        let _ = self.process.child.start_kill();
        let _ = self.process.child.wait().await;
    }

    /// Closes the session cleanly (its jail ends and removes what it had); kills the worker if it
    /// does not finish in time. Returns the session's usage when the worker reported it.
    pub(super) async fn close(&mut self) -> Option<warden_jail::Usage> {
        let closing = async {
            self.send(&WorkerRequest::Close).await.ok()?;
            self.process.stdin = None;
            loop {
                match self.read().await {
                    Ok(WorkerAnswer::Closed { usage }) => return usage,
                    Ok(_) => {}
                    Err(_) => return None,
                }
            }
        };
        let usage = tokio::time::timeout(CLOSE_TIMEOUT, closing)
            .await
            .ok()
            .flatten();
        match tokio::time::timeout(Duration::from_secs(2), self.process.child.wait()).await {
            Ok(_) => {}
            Err(_) => self.kill().await,
        }
        usage
    }

    /// The last line of the worker's standard error (waited for at most 2 s).
    pub(super) async fn stderr_text(&mut self) -> String {
        match tokio::time::timeout(Duration::from_secs(2), self.process.stderr_text()).await {
            Ok(text) => text.lines().last().unwrap_or("").to_owned(),
            Err(_) => String::new(),
        }
    }
}

/// How a request ended, for the actor.
pub(super) enum Served {
    /// The session goes on.
    Alive,
    /// The session is over (the reason), cleanly (`true`) or its worker must be killed.
    Over(String, bool),
}

/// Owns one session's worker and serves its requests in order.
pub(super) struct Actor {
    pub(super) sessions: Arc<Sessions>,
    pub(super) handle: Arc<Handle>,
    /// Who started the session (for the audit line of its end).
    pub(super) client: String,
    pub(super) worker: Worker,
    pub(super) requests: mpsc::Receiver<Request>,
    pub(super) end: watch::Receiver<Option<EndRequest>>,
    pub(super) done: watch::Sender<Option<EndSummary>>,
}

impl Actor {
    pub(super) async fn run(mut self) {
        let (reason, graceful) = loop {
            let request = tokio::select! {
                biased;
                _ = self.end.changed() => {
                    let ask = (*self.end.borrow()).unwrap_or(EndRequest { reason: "closed", graceful: true });
                    break (ask.reason.to_owned(), ask.graceful);
                }
                request = self.requests.recv() => request,
            };
            let Some(request) = request else {
                break ("closed".to_owned(), true);
            };
            match self.serve(request).await {
                Served::Alive => {}
                Served::Over(reason, graceful) => break (reason, graceful),
            }
        };
        self.sessions.forget(&self.handle.id);
        // Requests still queued are answered: the session is over.
        self.requests.close();
        while let Ok(request) = self.requests.try_recv() {
            let _ = request
                .answers
                .send(Answer::Lost(format!("the session has ended ({reason})")))
                .await;
        }
        let usage = if graceful {
            self.worker.close().await
        } else {
            self.worker.kill().await;
            None
        };
        let execution_count = self.handle.activity.lock().map_or(0, |a| a.execution_count);
        let summary = EndSummary {
            reason: reason.clone(),
            execution_count,
            usage,
        };
        self.sessions.metrics.session_ended(&reason);
        let mut audit = AuditRecord::new(&self.client, "session_end");
        audit.session = Some(self.handle.id.clone());
        audit.policy = Some(self.handle.policy.clone());
        audit.policy_sha256 = Some(self.handle.policy_sha256.clone());
        audit.status = reason;
        if let Some(usage) = usage {
            audit.wall_ms = Some(usage.wall_ms);
            audit.cpu_ms = Some(usage.cpu_ms);
            audit.memory_peak_bytes = Some(usage.memory_peak_bytes);
        }
        audit.duration_ms = millis(self.handle.created.elapsed());
        self.sessions.audit.write(&audit);
        // The worker is gone; its directory goes with `self.worker`.
        drop(self.worker);
        let _ = self.done.send(Some(summary));
    }

    /// Serves one request; says whether the session goes on.
    pub(super) async fn serve(&mut self, request: Request) -> Served {
        let started = Instant::now();
        let code = match &request.op {
            WorkerRequest::Execute { code, .. } => Some(code.clone()),
            _ => None,
        };
        // With a hard limit the output is streamed, so a killed cell still shows what it wrote.
        let op = match (request.op, request.hard_limit) {
            (WorkerRequest::Execute { code, .. }, Some(_)) => {
                WorkerRequest::Execute { code, stream: true }
            }
            (op, _) => op,
        };
        if let Err(message) = self.worker.send(&op).await {
            let _ = request.answers.send(Answer::Lost(lost(&message))).await;
            return Served::Over("session_lost".to_owned(), false);
        }
        let deadline = request
            .hard_limit
            .map(|limit| tokio::time::Instant::now() + limit);
        let mut partial = Partial::default();
        loop {
            let answer = tokio::select! {
                biased;
                _ = self.end.changed() => {
                    let reason = (*self.end.borrow()).map_or("closed", |ask| ask.reason);
                    let _ = request.answers.send(Answer::Lost(format!(
                        "the session was ended ({reason}) while this request ran"
                    ))).await;
                    return Served::Over(reason.to_owned(), false);
                }
                () = sleep_until(deadline) => {
                    let limit = request.hard_limit.unwrap_or_default();
                    let record = partial.timeout_record(limit, started);
                    self.audit_cell(&request.client, &request.endpoint, code.as_deref(), &record, started);
                    let _ = request.answers.send(Answer::Final(WorkerAnswer::Cell(record))).await;
                    return Served::Over("timeout".to_owned(), false);
                }
                answer = self.worker.read() => answer,
            };
            match answer {
                Ok(WorkerAnswer::Chunk { name, text }) => {
                    partial.add(&name, &text);
                    // A client that stopped reading holds the cell back, but not an end.
                    let chunk = Answer::Chunk(Chunk { name, text });
                    tokio::select! {
                        biased;
                        _ = self.end.changed() => {
                            let reason = (*self.end.borrow()).map_or("closed", |ask| ask.reason);
                            return Served::Over(reason.to_owned(), false);
                        }
                        _ = request.answers.send(chunk) => {}
                    }
                }
                Ok(answer) => {
                    let mut over = None;
                    if let WorkerAnswer::Cell(record) = &answer {
                        self.audit_cell(
                            &request.client,
                            &request.endpoint,
                            code.as_deref(),
                            record,
                            started,
                        );
                        if let Some(count) = record.execution_count {
                            if let Ok(mut activity) = self.handle.activity.lock() {
                                activity.execution_count = count;
                            }
                        }
                        if !record.session_alive {
                            over = Some(record.status.as_str().to_owned());
                        }
                    }
                    if let WorkerAnswer::Failed {
                        kind: warden_worker::wire::FailKind::Ended,
                        ..
                    } = &answer
                    {
                        over = Some("session_lost".to_owned());
                    }
                    let _ = request.answers.send(Answer::Final(answer)).await;
                    self.handle.touch();
                    return match over {
                        Some(reason) => Served::Over(reason, true),
                        None => Served::Alive,
                    };
                }
                Err(message) => {
                    let message = lost(&message);
                    match code {
                        Some(_) => {
                            let record = partial.lost_record(&message, started);
                            self.audit_cell(
                                &request.client,
                                &request.endpoint,
                                code.as_deref(),
                                &record,
                                started,
                            );
                            let _ = request
                                .answers
                                .send(Answer::Final(WorkerAnswer::Cell(record)))
                                .await;
                        }
                        None => {
                            let _ = request.answers.send(Answer::Lost(message)).await;
                        }
                    }
                    return Served::Over("session_lost".to_owned(), false);
                }
            }
        }
    }

    pub(super) fn audit_cell(
        &self,
        client: &str,
        endpoint: &str,
        code: Option<&str>,
        record: &CellRecord,
        started: Instant,
    ) {
        let status = record.status.as_str();
        let findings = &record.check.findings;
        self.sessions
            .metrics
            .cell(status, &CheckRecord::rule_ids(findings, true));
        let mut audit = AuditRecord::new(client, endpoint);
        audit.session = Some(self.handle.id.clone());
        audit.code_sha256 = code.map(|code| crate::sha256(code.as_bytes()));
        audit.policy = Some(self.handle.policy.clone());
        audit.policy_sha256 = Some(self.handle.policy_sha256.clone());
        audit.decision = Some(record.check.decision.clone());
        audit.rules = CheckRecord::rule_ids(findings, false);
        audit.status = status.to_owned();
        audit.memory_peak_bytes = Some(record.usage.memory_peak_bytes);
        audit.duration_ms = millis(started.elapsed());
        self.sessions.audit.write(&audit);
    }
}

/// What a cell wrote before it was stopped (streamed; within the policy's caps already).
#[derive(Default)]
pub(super) struct Partial {
    pub(super) stdout: String,
    pub(super) stderr: String,
}

impl Partial {
    pub(super) fn add(&mut self, name: &str, text: &str) {
        if name == "stdout" {
            self.stdout.push_str(text);
        } else {
            self.stderr.push_str(text);
        }
    }

    pub(super) fn record(
        &self,
        status: CellStatus,
        message: String,
        started: Instant,
    ) -> Box<CellRecord> {
        Box::new(CellRecord::ended(
            status,
            message,
            self.stdout.clone(),
            self.stderr.clone(),
            millis(started.elapsed()),
        ))
    }

    pub(super) fn timeout_record(&self, limit: Duration, started: Instant) -> Box<CellRecord> {
        self.record(
            CellStatus::Timeout,
            format!(
                "the cell ran past the call's limit of {} ms; the session was ended and its state is lost",
                limit.as_millis()
            ),
            started,
        )
    }

    pub(super) fn lost_record(&self, message: &str, started: Instant) -> Box<CellRecord> {
        self.record(
            CellStatus::SessionLost,
            format!("{message}; the session is over and its state is lost"),
            started,
        )
    }
}

/// The record of a cell whose session ended under it before it answered.
pub fn lost_cell(message: &str) -> CellRecord {
    *Partial::default().lost_record(message, Instant::now())
}

pub(super) fn lost(message: &str) -> String {
    format!("the session was lost: {message}")
}

pub(super) async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

/// The largest answer line a session under `policy` can send: a cell's frame (its figures, up to
/// the gateway's 64 MiB), its output JSON-escaped, or a file's content in base64.
pub(super) fn answer_cap(policy: &warden_policy::Policy) -> usize {
    let limits = &policy.limits;
    let output = limits
        .stdout_bytes
        .saturating_add(limits.stderr_bytes)
        .saturating_mul(6);
    let file = limits.output_bytes.saturating_mul(4) / 3;
    let cap = (64u64 << 20)
        .saturating_add(output)
        .max(file)
        .saturating_add(4 << 20);
    usize::try_from(cap).unwrap_or(usize::MAX)
}
