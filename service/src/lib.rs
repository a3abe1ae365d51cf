//! warden as a service: the HTTP/JSON API (`warden serve`) and the MCP server (`warden mcp`) share
//! this core.
//!
//! A [`Service`] holds the policies (validated once at start-up; a client names one, it never sends
//! or weakens one), admits runs ([`admission`]), hands each to a single-threaded `warden worker`
//! process ([`executor`]) because a multithreaded process cannot create the jail's user namespace,
//! and writes the audit log and metrics. Front ends ([`http`], [`mcp`]) only translate.

pub mod admission;
pub mod audit;
pub mod config;
pub mod executor;
pub mod http;
pub mod job;
pub mod listen;
pub mod mcp;
pub mod metrics;
pub mod server;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{json, Value};

use admission::{Admission, Rejection};
use audit::{AuditLog, AuditRecord};
use config::{RegisteredPolicy, ServerConfig};
use executor::{ExecError, Executor};
use job::{InputFile, Job};
use metrics::{Gauges, Metrics};
use warden_gateway::pipeline::{self, CallerLimits, RunRecord};
use warden_policy::{CheckRecord, PolicyRef};

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
}

/// `POST /v1/run` (and the MCP `run_python` tool).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunBody {
    pub code: String,
    /// A registered policy's name; the server's default when absent.
    #[serde(default)]
    pub policy: Option<String>,
    #[serde(default)]
    pub inputs: Vec<InputFile>,
    /// A JSON Schema standard output must satisfy (replaces the policy's).
    #[serde(default)]
    pub schema: Option<Value>,
    /// Limits that may only tighten the policy's.
    #[serde(default)]
    pub limits: CallerLimits,
    /// Return the files the program wrote, base64 (default true).
    #[serde(default = "yes")]
    pub return_files: bool,
}

fn yes() -> bool {
    true
}

/// `POST /v1/check` (and the MCP `check_python` tool).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckBody {
    pub code: String,
    #[serde(default)]
    pub policy: Option<String>,
}

/// Why a request got no result.
#[derive(Debug, Clone)]
pub enum ServiceError {
    /// The request is malformed (400).
    BadRequest(String),
    /// The caller may not use what it asked for (403).
    Forbidden(String),
    /// Not admitted (429 for a full queue, 503 otherwise), with a `Retry-After` in seconds.
    Rejected(Rejection, u64),
    /// The server could not run it (500).
    Internal(String),
}

impl ServiceError {
    /// A short code for the audit log and the error body.
    pub fn code(&self) -> &'static str {
        match self {
            ServiceError::BadRequest(_) => "bad_request",
            ServiceError::Forbidden(_) => "forbidden",
            ServiceError::Rejected(rejection, _) => rejection.as_str(),
            ServiceError::Internal(_) => "internal",
        }
    }

    pub fn message(&self) -> String {
        match self {
            ServiceError::BadRequest(m)
            | ServiceError::Forbidden(m)
            | ServiceError::Internal(m) => m.clone(),
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

#[derive(Debug)]
pub struct Service {
    pub config: ServerConfig,
    executor: Executor,
    admission: Admission,
    metrics: Metrics,
    audit: AuditLog,
    /// Each policy's jail plan, by registered name (for reaping and for what `/v1/policies` reports).
    plans: BTreeMap<String, warden_jail::Plan>,
    checks: tokio::sync::Semaphore,
}

impl Service {
    /// Checks that every policy can run on this host (fail closed), takes the state directory and
    /// reaps what a previous server left.
    pub fn start(config: ServerConfig, worker_binary: PathBuf) -> anyhow::Result<Self> {
        let plans = plan_policies(&config)?;
        let executor = Executor::new(worker_binary, &config.state_dir)?;
        Executor::reap_stale(plans.values());
        let admission = Admission::new(
            config.max_concurrent_runs,
            config.queue_size,
            config.queue_timeout,
        );
        let audit = AuditLog::open(&config.audit)?;
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        Ok(Self {
            config,
            executor,
            admission,
            metrics: Metrics::default(),
            audit,
            plans,
            checks: tokio::sync::Semaphore::new(cores),
        })
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

    /// Judges a program without running it: the record as JSON.
    pub async fn check(
        self: &Arc<Self>,
        caller: &Caller,
        body: CheckBody,
        endpoint: &str,
    ) -> Result<Value, ServiceError> {
        self.check_record(caller, body, endpoint)
            .await
            .and_then(|record| to_json(&record))
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

    /// [`Service::run_record`], the record as JSON.
    pub async fn run(
        &self,
        caller: &Caller,
        body: RunBody,
        endpoint: &str,
    ) -> Result<Value, ServiceError> {
        self.run_record(caller, body, endpoint)
            .await
            .and_then(|record| to_json(&record))
    }

    /// Checks, runs in the jail and validates a program; every judged or executed program is `Ok`
    /// with a result record, whatever its status.
    pub async fn run_record(
        &self,
        caller: &Caller,
        body: RunBody,
        endpoint: &str,
    ) -> Result<RunRecord, ServiceError> {
        let mut audit = PendingAudit::new(&self.audit, caller, endpoint, &body.code);
        let result = self.run_inner(caller, body, &mut audit.record).await;
        match &result {
            Ok(record) => audit.record.from_record(record),
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

    async fn run_inner(
        &self,
        caller: &Caller,
        body: RunBody,
        audit: &mut AuditRecord,
    ) -> Result<RunRecord, ServiceError> {
        let (name, registered) = self.policy(caller, body.policy.as_deref())?;
        audit.policy = Some(name.to_owned());
        audit.policy_sha256 = Some(registered.policy.sha256.clone());
        let caps = job::InputCaps {
            max_files: self.config.max_input_files,
            max_bytes: self.config.max_input_bytes,
        };
        job::decode_inputs(&body.inputs, caps).map_err(ServiceError::BadRequest)?;
        // A client's schema is bounded now (cheap) and compiled only once a run slot is held.
        if let Some(schema) = &body.schema {
            warden_gateway::validate::check_bounds(schema).map_err(|err| {
                ServiceError::BadRequest(format!("schema: invalid output schema: {err}"))
            })?;
        }
        let limits = pipeline::effective_limits(&registered.policy, &body.limits);
        let guard = Duration::from_millis(limits.wall_time_ms) + GUARD_SLACK;
        let reply_cap = executor::reply_cap(&registered.policy, body.return_files);
        let job = Job {
            policy_text: registered.text.clone(),
            policy_base_dir: registered.base_dir.clone(),
            policy_sha256: registered.policy.sha256.clone(),
            code: body.code,
            inputs: body.inputs,
            schema: body.schema,
            limits: body.limits,
            return_files: body.return_files,
        };
        let slot = self
            .admission
            .admit()
            .await
            .map_err(|rejection| self.rejected(rejection))?;
        if let Some(schema) = job.schema.clone() {
            // CPU work (its regexes): off the async threads, and within the slot.
            tokio::task::spawn_blocking(move || {
                warden_gateway::validate::OutputSchema::compile(&schema).map(|_| ())
            })
            .await
            .map_err(|err| ServiceError::Internal(format!("schema check failed: {err}")))?
            .map_err(|err| ServiceError::BadRequest(format!("schema: {err:#}")))?;
        }
        let admitted = Instant::now();
        let result = self.executor.run(&job, guard, reply_cap).await;
        drop(slot);
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

    pub fn metrics_text(&self) -> String {
        self.metrics.render(Gauges {
            queued: self.admission.queued(),
            running: self.executor.running(),
            max_running: self.config.max_concurrent_runs,
        })
    }

    /// Stops admitting runs; the ones running go on.
    pub fn stop_admitting(&self) {
        self.admission.close();
        self.executor.close();
        self.checks.close();
    }

    /// Kills every running worker (their jails die with them), then removes what they left.
    pub fn kill_running(&self) {
        self.executor.kill_all();
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
}

/// Plans every policy's jail on this host; a policy whose required layers cannot be enforced here is
/// an error (the server does not start with it).
pub fn plan_policies(config: &ServerConfig) -> anyhow::Result<BTreeMap<String, warden_jail::Plan>> {
    let mut plans = BTreeMap::new();
    for (name, registered) in &config.policies {
        let jail = warden_gateway::jail_config::from_policy(&registered.policy)
            .map_err(|err| anyhow::anyhow!("policy {name}: {err:#}"))?;
        let plan = warden_jail::Plan::new(&jail)
            .map_err(|err| anyhow::anyhow!("policy {name} cannot run on this host: {err}"))?;
        plans.insert(name.clone(), plan);
    }
    Ok(plans)
}

/// "Allowed means importable": imports, in the jail, every module each policy allows, with the
/// policy's runtime; a policy whose allowed modules do not all import is an error. Returns the number
/// of modules checked per policy. Runs jails from this process, so it is for `serve --check-config`
/// (single-threaded), not for a running server.
pub fn check_policy_imports(config: &ServerConfig) -> anyhow::Result<BTreeMap<String, usize>> {
    let mut counts = BTreeMap::new();
    for (name, registered) in &config.policies {
        let count = warden_gateway::runtime_check::require_importable(&registered.policy)
            .map_err(|err| anyhow::anyhow!("policy {name}: {err:#}"))?;
        counts.insert(name.clone(), count);
    }
    Ok(counts)
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

/// One entry of `GET /v1/policies`.
pub fn describe_policy(name: &str, registered: &RegisteredPolicy, is_default: bool) -> Value {
    let policy = &registered.policy;
    let limits = &policy.limits;
    let members: serde_json::Map<String, Value> = policy
        .imports
        .members
        .iter()
        .map(|(module, members)| (module.clone(), json!(members)))
        .collect();
    json!({
        "name": name,
        "rules_name": policy.name,
        "description": policy.description,
        "sha256": policy.sha256,
        "source": registered.source,
        "default": is_default,
        "python": format!("3.{}", policy.target_minor),
        "allowed_imports": policy.imports.allowed_list(),
        "denied_imports": policy.imports.deny.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "partial_modules": members,
        "network": policy.network,
        "files": {
            "workdir": warden_policy::settings::WORKDIR,
            "read": policy.files.read,
            "write": policy.files.write,
        },
        "limits": {
            "wall_time_ms": limits.wall_time_ms,
            "cpu_time_ms": limits.cpu_time_ms,
            "memory_bytes": limits.memory_bytes,
            "pids": limits.pids,
            "stdout_bytes": limits.stdout_bytes,
            "stderr_bytes": limits.stderr_bytes,
            "output_files": limits.output_files,
            "output_bytes": limits.output_bytes,
            "source_bytes": policy.source.max_bytes,
        },
    })
}

/// The ids of the findings that denied (action `deny`), each once.
/// A record as the JSON the front ends send.
fn to_json(record: &impl serde::Serialize) -> Result<Value, ServiceError> {
    serde_json::to_value(record)
        .map_err(|err| ServiceError::Internal(format!("cannot serialise the record: {err}")))
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
