//! warden as a service: the HTTP/JSON API (`warden serve`) and the MCP server (`warden mcp`) share
//! this core.
//!
//! A [`Service`] holds the policies (validated once at start-up; a client names one, it never sends
//! or weakens one), admits runs ([`admission`]), hands each to a single-threaded `warden worker`
//! process ([`executor`]) because a multithreaded process cannot create the jail's user namespace,
//! and writes the audit log and metrics. Front ends ([`http`], [`mcp`]) only translate.

/// warden's version and the commit it was built from (`WARDEN_COMMIT`, else `git rev-parse`, else
/// `unknown`: service/build.rs), as `warden --version` and `warden_build_info` show them.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("WARDEN_COMMIT"),
    ")"
);

pub mod admission;
pub mod audit;
pub mod cells;
pub mod config;
pub mod executor;
pub mod http;
pub mod listen;
pub mod mcp;
pub mod mcp_http;
pub mod metrics;
mod policies;
pub mod pool;
mod requests;
pub mod review;
pub mod server;
mod session_calls;
pub mod uploads;

pub use policies::{check_policy_imports, describe_policy, plan_policies};
pub use requests::{CheckBody, ExecuteBody, RunBody, SessionBody, SessionCallerLimits};
pub mod sessions;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use admission::{Admission, Rejection};
use audit::{AuditLog, AuditRecord};
use config::{RegisteredPolicy, ServerConfig};
use executor::{ExecError, Executor};
use metrics::{Gauges, Metrics};
use sessions::Sessions;
use warden_gateway::checked::Checked;
use warden_gateway::pipeline::{self, CallerLimits, RunRecord};
use warden_policy::{CheckRecord, PolicyRef};
use warden_worker::inputs::{decode_inputs, InputCaps};
use warden_worker::wire::{InputFile, Job};

/// Slack on top of a run's wall-clock limit before the server gives up on its worker (jail set-up,
/// copying files in and out, validation).
const GUARD_SLACK: Duration = Duration::from_secs(30);

/// Who is calling, as the front end established it.
#[derive(Debug, Clone)]
pub struct Caller {
    /// For the audit log: `token:<name>`, `uid:<uid> pid:<pid>` or `mcp:stdio`.
    pub identity: String,
    /// The policies this caller may use; `None` means every registered policy.
    pub policies: Option<BTreeSet<String>>,
    /// Whose sessions this caller sees: `token:<name>`, `uid:<uid>` on the socket without a
    /// token, or the MCP connection. A session belongs to the owner that created it.
    pub owner: String,
}

/// Why a request got no result.
#[derive(Debug, Clone)]
pub enum ServiceError {
    /// The request is malformed (400).
    BadRequest(String),
    /// The caller may not use what it asked for (403).
    Forbidden(String),
    /// No such session for this caller, or no such file in it (404).
    NotFound(String),
    /// A file is over the policy's output cap (413).
    TooLarge(String),
    /// The server, or this caller, holds the most sessions it may (429), with a `Retry-After`.
    SessionLimit(String, u64),
    /// Not admitted (429 for a full queue, 503 otherwise), with a `Retry-After` in seconds.
    Rejected(Rejection, u64),
    /// The session id names another node (421 `wrong_node`): the node, and a message.
    WrongNode(String, String),
    /// The session id is this node's from an earlier life of the server: its state is gone (410
    /// `session_lost`).
    SessionLost(String),
    /// The server could not run it (500).
    Internal(String),
    /// The request does not fit the state of what it names (409), e.g. a review that is not
    /// approved: a code (`review_pending`…) and a message.
    Conflict(&'static str, String),
}

impl ServiceError {
    /// A short code for the audit log and the error body.
    pub fn code(&self) -> &'static str {
        match self {
            ServiceError::BadRequest(_) => "bad_request",
            ServiceError::Forbidden(_) => "forbidden",
            ServiceError::NotFound(_) => "not_found",
            ServiceError::TooLarge(_) => "too_large",
            ServiceError::SessionLimit(..) => "session_limit",
            ServiceError::Rejected(rejection, _) => rejection.as_str(),
            ServiceError::WrongNode(..) => "wrong_node",
            ServiceError::SessionLost(_) => "session_lost",
            ServiceError::Internal(_) => "internal",
            ServiceError::Conflict(code, _) => code,
        }
    }

    pub fn message(&self) -> String {
        match self {
            ServiceError::BadRequest(m)
            | ServiceError::Forbidden(m)
            | ServiceError::NotFound(m)
            | ServiceError::TooLarge(m)
            | ServiceError::SessionLimit(m, _)
            | ServiceError::WrongNode(_, m)
            | ServiceError::SessionLost(m)
            | ServiceError::Internal(m)
            | ServiceError::Conflict(_, m) => m.clone(),
            ServiceError::Rejected(Rejection::QueueFull, _) => {
                "every run slot is busy and the queue is full; retry later".to_owned()
            }
            ServiceError::Rejected(Rejection::QueueTimeout, _) => {
                "no run slot became free in time; retry later".to_owned()
            }
            ServiceError::Rejected(Rejection::ShuttingDown, _) => {
                "the server is shutting down".to_owned()
            }
        }
    }
}

impl std::fmt::Display for ServiceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message(), self.code())
    }
}

impl std::error::Error for ServiceError {}

#[derive(Debug)]
pub struct Service {
    pub config: ServerConfig,
    executor: Executor,
    admission: Admission,
    metrics: Arc<Metrics>,
    audit: Arc<AuditLog>,
    sessions: Arc<Sessions>,
    /// Pre-started jails (`pool.rs`).
    pool: Arc<pool::Pool>,
    /// Each policy's jail plan, by registered name (for reaping and for what `/v1/policies` reports).
    plans: BTreeMap<String, warden_jail::Plan>,
    checks: tokio::sync::Semaphore,
    /// Where session uploads are staged on their way to a worker.
    staging: uploads::Staging,
}

impl Service {
    /// Checks that every policy can run on this host (fail closed), takes the state directory and
    /// reaps what a previous server left.
    pub fn start(config: ServerConfig, worker_binary: PathBuf) -> anyhow::Result<Self> {
        let plans = plan_policies(&config)?;
        let executor = Executor::new(worker_binary, &config.state_dir)?;
        Executor::reap_stale(plans.values());
        // With the state directory locked: this life's epoch, in the ids of its sessions.
        let epoch = sessions::boot_epoch(&config.state_dir)?;
        let admission = Admission::new(
            config.max_concurrent_runs,
            config.queue_size,
            config.queue_timeout,
        );
        let audit = Arc::new(AuditLog::open(&config.audit)?);
        let metrics = Arc::new(Metrics::default());
        let sessions = Arc::new(Sessions::new(
            config.sessions,
            epoch,
            Arc::clone(&metrics),
            Arc::clone(&audit),
        ));
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let pool = Arc::new(pool::Pool::new(config.pool));
        let staging = uploads::Staging::new(&config.state_dir)?;
        Ok(Self {
            config,
            executor,
            admission,
            metrics,
            audit,
            sessions,
            pool,
            plans,
            checks: tokio::sync::Semaphore::new(cores),
            staging,
        })
    }

    /// The first steps of a run and of a new session: the policy the request names (or the
    /// caller's default), written into its audit line, and its inputs decoded within the server's
    /// caps (a bad input is the caller's error, before anything is spent on it).
    fn admit(
        &self,
        caller: &Caller,
        policy: Option<&str>,
        inputs: &[InputFile],
        audit: &mut AuditRecord,
    ) -> Result<(&str, &RegisteredPolicy), ServiceError> {
        let (name, registered) = self.policy(caller, policy)?;
        audit.policy = Some(name.to_owned());
        audit.policy_sha256 = Some(registered.policy.sha256.clone());
        let caps = InputCaps {
            max_files: self.config.max_input_files,
            max_bytes: self.config.max_input_bytes,
        };
        decode_inputs(inputs, caps).map_err(ServiceError::BadRequest)?;
        Ok((name, registered))
    }

    fn policy(
        &self,
        caller: &Caller,
        name: Option<&str>,
    ) -> Result<(&str, &RegisteredPolicy), ServiceError> {
        let name = match name {
            Some(name) => name,
            None => self.default_policy(caller).ok_or_else(|| {
                ServiceError::BadRequest(format!(
                    "name a policy: this client may use {} (GET /v1/policies describes them)",
                    allowed_list(caller)
                ))
            })?,
        };
        // A restricted caller learns nothing of the policies outside its own: a name it may not
        // use gets the same answer whether or not the server has such a policy.
        if let Some(allowed) = &caller.policies {
            if !allowed.contains(name) {
                return Err(ServiceError::Forbidden(format!(
                    "this client may not use policy {name:?}; it may use {}",
                    allowed_list(caller)
                )));
            }
        }
        let Some((name, registered)) = self.config.policies.get_key_value(name) else {
            return Err(ServiceError::BadRequest(format!(
                "no policy is named {name:?}; the policy list (GET /v1/policies, or the describe_policy tool) names them"
            )));
        };
        Ok((name, registered))
    }

    /// The registered name of the policy a request naming `name` (or none) gets from `caller`,
    /// or why it may not have it.
    pub fn policy_name(&self, caller: &Caller, name: Option<&str>) -> Result<String, ServiceError> {
        self.policy(caller, name).map(|(name, _)| name.to_owned())
    }

    /// The policy a request that names none gets: the server's default if the caller may use it,
    /// else the caller's only policy; `None` when it may use several but not the default (it must
    /// name one, and never learns the default's name).
    fn default_policy(&self, caller: &Caller) -> Option<&str> {
        let default = self.config.default_policy.as_str();
        match &caller.policies {
            Some(allowed) if !allowed.contains(default) => match allowed.len() {
                1 => allowed
                    .first()
                    .and_then(|only| self.config.policies.get_key_value(only))
                    .map(|(name, _)| name.as_str()),
                _ => None,
            },
            _ => Some(default),
        }
    }

    /// Judges a program without running it.
    pub async fn check_record(
        self: &Arc<Self>,
        caller: &Caller,
        body: CheckBody,
        endpoint: &str,
    ) -> Result<CheckRecord, ServiceError> {
        let mut audit = PendingAudit::new(&self.audit, caller, endpoint, &body.code);
        let result = self.check_inner(caller, body, &mut audit.record).await;
        match &result {
            Ok(record) => {
                audit.record.status = "checked".to_owned();
                audit.record.decision = Some(record.decision.as_str().to_owned());
                audit.record.rules = CheckRecord::rule_ids(&record.findings, false);
            }
            Err(err) => {
                audit.record.status = err.code().to_owned();
                if !matches!(err, ServiceError::Internal(_)) {
                    self.metrics.rejected(err.code());
                }
            }
        }
        audit.finish();
        result
    }

    async fn check_inner(
        self: &Arc<Self>,
        caller: &Caller,
        body: CheckBody,
        audit: &mut AuditRecord,
    ) -> Result<CheckRecord, ServiceError> {
        let (name, registered) = self.policy(caller, body.policy.as_deref())?;
        audit.policy = Some(name.to_owned());
        audit.policy_sha256 = Some(registered.policy.sha256.clone());
        let _permit = self
            .checks
            .acquire()
            .await
            .map_err(|_| self.rejected(Rejection::ShuttingDown))?;
        let service = Arc::clone(self);
        let policy_name = name.to_owned();
        let code = body.code.into_bytes();
        let record = tokio::task::spawn_blocking(move || {
            let registered = service.config.policies.get(&policy_name)?;
            let report = pipeline::check(&registered.policy, &code);
            Some(CheckRecord {
                // The name the client picked the policy by.
                policy: PolicyRef {
                    name: policy_name,
                    sha256: registered.policy.sha256.clone(),
                    registered_as: None,
                },
                program_sha256: Some(sha256(&code)),
                ..CheckRecord::new(&report, &registered.policy)
            })
        })
        .await
        .map_err(|err| ServiceError::Internal(format!("the check failed: {err}")))?
        .ok_or_else(|| ServiceError::Internal("the policy disappeared".to_owned()))?;
        self.metrics.check(
            record.decision.as_str(),
            &CheckRecord::rule_ids(&record.findings, true),
        );
        Ok(record)
    }

    /// [`Service::run_record`], with the review it is held as when the policy sends it to review.
    pub async fn run(
        &self,
        caller: &Caller,
        body: RunBody,
        endpoint: &str,
    ) -> Result<review::RunAnswer, ServiceError> {
        // A program the policy may send to review is held, so it is copied (when small enough).
        let program = review::Program::of(&body, &self.config.review);
        let mut audit = PendingAudit::new(&self.audit, caller, endpoint, &body.code);
        let result = self
            .run_audited(caller, body, &mut audit.record, None)
            .await;
        let answer = result.map(|record| {
            let mut answer = review::RunAnswer::from(record);
            // The run's audit line names the review it is held as.
            audit.record.review = self.hold_for_review(caller, program, &mut answer);
            answer
        });
        audit.finish();
        answer
    }

    /// Checks, runs in the jail and validates a program; every judged or executed program is `Ok`
    /// with a result record, whatever its status.
    pub async fn run_record(
        &self,
        caller: &Caller,
        body: RunBody,
        endpoint: &str,
    ) -> Result<RunRecord, ServiceError> {
        self.run_record_with(caller, body, endpoint, None).await
    }

    /// [`Service::run_record`], for a program a person approved (`reviewed`: the review and the
    /// approval the record and the audit line carry).
    async fn run_record_with(
        &self,
        caller: &Caller,
        body: RunBody,
        endpoint: &str,
        reviewed: Option<&review::Reviewed>,
    ) -> Result<RunRecord, ServiceError> {
        let mut audit = PendingAudit::new(&self.audit, caller, endpoint, &body.code);
        let result = self
            .run_audited(caller, body, &mut audit.record, reviewed)
            .await;
        audit.finish();
        result
    }

    /// Runs a program and fills in its audit line (status, decision and usage, or why it was
    /// refused, counted; the review and its approver), which the caller writes.
    async fn run_audited(
        &self,
        caller: &Caller,
        body: RunBody,
        audit: &mut AuditRecord,
        reviewed: Option<&review::Reviewed>,
    ) -> Result<RunRecord, ServiceError> {
        if let Some(reviewed) = reviewed {
            audit.review = Some(reviewed.id.clone());
            audit.approver = Some(reviewed.approval.by.clone());
        }
        let approval = reviewed.map(|reviewed| reviewed.approval.clone());
        let result = self.run_inner(caller, body, audit, approval).await;
        match &result {
            Ok(record) => audit.from_record(record),
            Err(err) => {
                audit.status = err.code().to_owned();
                if !matches!(err, ServiceError::Internal(_)) {
                    self.metrics.rejected(err.code());
                }
            }
        }
        result
    }

    async fn run_inner(
        &self,
        caller: &Caller,
        body: RunBody,
        audit: &mut AuditRecord,
        approval: Option<pipeline::Approval>,
    ) -> Result<RunRecord, ServiceError> {
        let (name, registered) = self.admit(caller, body.policy.as_deref(), &body.inputs, audit)?;
        // A client's schema is bounded now (cheap) and compiled only once a run slot is held.
        if let Some(schema) = &body.schema {
            warden_gateway::validate::check_bounds(schema).map_err(|err| {
                ServiceError::BadRequest(format!("schema: invalid output schema: {err}"))
            })?;
        }
        let limits = pipeline::effective_limits(&registered.policy, &body.limits);
        let guard = Duration::from_millis(limits.wall_time_ms) + GUARD_SLACK;
        let reply_cap = executor::reply_cap(&registered.policy, body.return_files);
        let raw_schema = body
            .schema
            .as_ref()
            .map(serde_json::value::to_raw_value)
            .transpose()
            .map_err(|err| ServiceError::BadRequest(format!("schema: {err}")))?;
        let job = Job {
            policy_text: registered.text.clone(),
            policy_base_dir: registered.base_dir.clone(),
            policy_sha256: registered.policy.sha256.clone(),
            code: body.code,
            inputs: body.inputs,
            schema: raw_schema,
            result: body.result,
            limits: body.limits,
            return_files: body.return_files,
            approval,
            checked: None,
        };
        let slot = self
            .admission
            .admit()
            .await
            .map_err(|rejection| self.rejected(rejection))?;
        // The static check, once for this request (CPU work: off the async threads, within the
        // slot); it picks the way (a program it stops never takes a pooled jail) and travels in
        // the job, so the worker that runs it does not check it again.
        let checked = {
            let policy = registered.policy.clone();
            let code = job.code.clone().into_bytes();
            tokio::task::spawn_blocking(move || Checked::of(&policy, &code))
                .await
                .map_err(|err| ServiceError::Internal(format!("static check failed: {err}")))?
        };
        let job = Job {
            checked: Some(checked),
            ..job
        };
        if let Some(schema) = body.schema {
            // CPU work (its regexes): off the async threads, and within the slot.
            tokio::task::spawn_blocking(move || {
                warden_gateway::validate::OutputSchema::compile(&schema).map(|_| ())
            })
            .await
            .map_err(|err| ServiceError::Internal(format!("schema check failed: {err}")))?
            .map_err(|err| ServiceError::BadRequest(format!("schema: {err:#}")))?;
        }
        let admitted = Instant::now();
        let want = pool::Want {
            policy: name,
            registered,
            memory_mib: job.limits.memory_mib,
        };
        // A pooled jail when one fits (none, or it was gone: cold, as always).
        // A pooled worker keeps the slot until it has ended its jail (after the record).
        let mut held = Some(slot);
        let result = match self
            .pool
            .run(self, &want, &job, guard, reply_cap, &mut held)
            .await
        {
            Some(result) => result,
            None => self.executor.run(&job, guard, reply_cap).await,
        };
        drop(held);
        let seconds = admitted.elapsed().as_secs_f64();
        match result {
            Ok(mut record) => {
                self.metrics.run(
                    record.status.as_str(),
                    seconds,
                    &CheckRecord::rule_ids(&record.check.findings, true),
                );
                // The name the client used to pick it (the rules file's own name may differ).
                record.policy.registered_as = Some(name.to_owned());
                Ok(record)
            }
            Err(ExecError::ShuttingDown) => Err(self.rejected(Rejection::ShuttingDown)),
            Err(err) => {
                self.metrics.run("setup_failed", seconds, &[]);
                Err(ServiceError::Internal(err.to_string()))
            }
        }
    }

    /// What a model needs in its prompt about each policy this caller may use.
    /// `default` is what a request without `policy` gets from this caller (`null`: it must name one).
    pub fn policies(&self, caller: &Caller) -> Value {
        let default = self.default_policy(caller);
        let list: Vec<Value> = self
            .config
            .policies
            .iter()
            .filter(|(name, _)| {
                caller
                    .policies
                    .as_ref()
                    .is_none_or(|allowed| allowed.contains(*name))
            })
            .map(|(name, registered)| {
                let mut entry = describe_policy(name, registered, Some(name.as_str()) == default);
                if let (Some(plan), Some(object)) = (self.plans.get(name), entry.as_object_mut()) {
                    // What this host enforces for it: a layer it lacks shows here, not only in records.
                    object.insert("layers".to_owned(), json!(warden_jail::layers(plan)));
                }
                entry
            })
            .collect();
        json!({ "default": default, "policies": list })
    }

    /// [`Service::metrics_text`] as `caller` may see it: the series labelled with a policy it
    /// may not use are left out (a token restricted to one policy does not learn the others'
    /// names); the rest, server-wide counts and gauges, are the same for every caller.
    pub fn metrics_text_for(&self, caller: &Caller) -> String {
        let text = self.metrics_text();
        let Some(allowed) = &caller.policies else {
            return text;
        };
        let mut seen = String::with_capacity(text.len());
        for line in text.lines() {
            let hidden = !line.starts_with('#')
                && policy_label(line).is_some_and(|policy| !allowed.contains(policy));
            if !hidden {
                seen.push_str(line);
                seen.push('\n');
            }
        }
        seen
    }

    pub fn metrics_text(&self) -> String {
        let mut text = self.metrics.render(Gauges {
            queued: self.admission.queued(),
            running: self.executor.running(),
            max_running: self.config.max_concurrent_runs,
            sessions: self.sessions.count(),
            max_sessions: self.config.sessions.max_sessions,
        });
        text.push_str(&self.pool.render());
        text
    }

    /// The pool of pre-started jails.
    pub fn pool(&self) -> &Arc<pool::Pool> {
        &self.pool
    }

    pub(crate) fn executor(&self) -> &Executor {
        &self.executor
    }

    /// Stops admitting runs and sessions; the runs running and the sessions alive go on.
    pub fn stop_admitting(&self) {
        self.admission.close();
        self.sessions.close();
        self.executor.close();
        self.checks.close();
    }

    /// Kills every running worker and session worker (their jails die with them).
    pub fn kill_running(&self) {
        self.sessions.kill_all();
        self.executor.kill_all();
        self.pool.kill_busy();
    }

    /// The server's sessions (for the reaper and shutdown).
    pub fn sessions(&self) -> &Arc<Sessions> {
        &self.sessions
    }

    /// Ends every session cleanly (shutdown, or the end of an MCP connection), then removes the
    /// session directories left.
    pub async fn end_sessions(&self, reason: &'static str) {
        // The pooled jails waiting go first: nothing may be started into the pool any more.
        self.pool.close().await;
        self.sessions.close();
        self.sessions.end_all(reason, Duration::from_secs(20)).await;
        // Last the templates: the sessions forked from them have ended.
        self.pool.close_templates(Duration::from_secs(10)).await;
        if self.sessions.count() == 0 {
            self.executor.sweep_session_dirs();
        }
    }

    /// Removes job directories and run cgroups no live run owns (after the workers are gone).
    pub fn reap(&self) {
        if self.executor.running() == 0 {
            self.executor.sweep_job_dirs();
        }
        self.reap_cgroups();
    }

    /// Removes run cgroups whose worker is gone. Cheap (a few directory reads); the server does it
    /// at start-up and then periodically, because the workers of a SIGKILLed server may take a
    /// moment to finish dying after the next one starts.
    pub fn reap_cgroups(&self) {
        Executor::reap_stale(self.plans.values());
    }

    pub fn running(&self) -> usize {
        self.executor.running()
    }

    /// The error for a request turned away, with its `Retry-After`.
    fn rejected(&self, rejection: Rejection) -> ServiceError {
        ServiceError::Rejected(rejection, self.admission.retry_after(rejection))
    }

    /// Counts a request turned away before judgement (`unauthorized`…).
    pub fn note_rejected(&self, reason: &str) {
        self.metrics.rejected(reason);
    }

    /// Writes a session request's audit line: `ok`, or the error's code (counted as a rejection
    /// unless the server failed).
    fn finish_audit<T>(
        &self,
        mut audit: AuditRecord,
        result: &Result<T, ServiceError>,
        started: Instant,
    ) {
        audit.status = match result {
            Ok(_) => "ok".to_owned(),
            Err(err) => {
                if !matches!(err, ServiceError::Internal(_)) {
                    self.metrics.rejected(err.code());
                }
                err.code().to_owned()
            }
        };
        audit.duration_ms = elapsed_ms(started);
        self.audit.write(&audit);
    }
}

/// An audit line being filled in: written by [`PendingAudit::finish`], or as `cancelled` when the
/// request's future is dropped first (the client hung up or cancelled; its worker is killed then).
struct PendingAudit<'a> {
    log: &'a AuditLog,
    record: AuditRecord,
    started: Instant,
    written: bool,
}

impl<'a> PendingAudit<'a> {
    fn new(log: &'a AuditLog, caller: &Caller, endpoint: &str, code: &str) -> Self {
        let mut record = AuditRecord::new(&caller.identity, endpoint);
        record.code_sha256 = Some(sha256(code.as_bytes()));
        Self {
            log,
            record,
            started: Instant::now(),
            written: false,
        }
    }

    fn finish(mut self) {
        self.write();
    }

    fn write(&mut self) {
        self.record.duration_ms = elapsed_ms(self.started);
        self.log.write(&self.record);
        self.written = true;
    }
}

impl Drop for PendingAudit<'_> {
    fn drop(&mut self) {
        if !self.written {
            self.record.status = "cancelled".to_owned();
            self.write();
        }
    }
}

fn elapsed_ms_of(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// The value of a sample line's `policy` label (`warden_pool_ready{policy="default"} 1`).
fn policy_label(line: &str) -> Option<&str> {
    let labels = &line[line.find('{')? + 1..line.find('}')?];
    let value = labels
        .split(',')
        .find_map(|label| label.trim().strip_prefix("policy=\""))?;
    value.strip_suffix('"')
}

/// The policies a restricted caller may use, for messages (`any registered policy` otherwise).
fn allowed_list(caller: &Caller) -> String {
    match &caller.policies {
        Some(allowed) => allowed
            .iter()
            .map(|name| format!("{name:?}"))
            .collect::<Vec<_>>()
            .join(", "),
        None => "any registered policy".to_owned(),
    }
}

pub fn sha256(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    warden_policy::settings::hex(&Sha256::digest(bytes))
}

fn elapsed_ms(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}
