//! The session requests of the [`Service`]: create, list, describe, execute a cell in, end, and
//! the files of a session (`/v1/sessions…`, MCP's `run_python` and `get_file`).
//!
//! Owns: each request's checks (the caller's policy and caps, the session's owner), its audit
//! line, and its answer. Does not own: the sessions themselves and their actors (`sessions.rs`),
//! HTTP or MCP.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use warden_gateway::pipeline;
use warden_gateway::session::CellRecord;
use warden_worker::wire::{FailKind, WorkerAnswer, WorkerRequest};

use super::audit::AuditRecord;
use super::sessions::{self, Chunk, Handle, NewSession};
use super::uploads::{Scratch, Upload};
use super::*;

impl Service {
    /// `POST /v1/sessions`: starts a session for the caller under a policy it may use.
    pub async fn create_session(
        &self,
        caller: &Caller,
        body: SessionBody,
        endpoint: &str,
    ) -> Result<Value, ServiceError> {
        let started = Instant::now();
        let mut audit = AuditRecord::new(&caller.identity, endpoint);
        let result = self
            .create_session_handle(caller, body, &mut audit)
            .await
            .map(|handle| self.describe_new_session(&handle));
        if let Ok(answer) = &result {
            audit.session = answer.get("id").and_then(Value::as_str).map(str::to_owned);
        }
        self.finish_audit(audit, &result, started);
        result
    }

    /// Starts a session (no audit line: the callers write it).
    async fn create_session_handle(
        &self,
        caller: &Caller,
        body: SessionBody,
        audit: &mut AuditRecord,
    ) -> Result<Arc<Handle>, ServiceError> {
        let (name, registered) = self.admit(caller, body.policy.as_deref(), &body.inputs, audit)?;
        let limits = CallerLimits::from(body.limits);
        let want = pool::Want {
            policy: name,
            registered,
            memory_mib: limits.memory_mib,
        };
        let warm = self.pool.take(&want, true);
        self.sessions
            .create(
                &self.executor,
                NewSession {
                    owner: &caller.owner,
                    client: &caller.identity,
                    policy_name: name,
                    registered,
                    limits,
                    inputs: body.inputs,
                    warm,
                },
            )
            .await
    }

    fn describe_new_session(&self, handle: &Handle) -> Value {
        let limits = &self.config.sessions;
        json!({
            "id": handle.id,
            "policy": {"name": handle.policy, "sha256": handle.policy_sha256},
            "limits": session_limits_json(&handle.limits),
            "layers": handle.layers,
            "created_at": handle.created_at,
            "idle_timeout_ms": elapsed_ms_of(limits.idle_timeout),
            "max_lifetime_ms": elapsed_ms_of(limits.max_lifetime),
        })
    }

    /// The caller's session `id` for a request to it (its last activity now), or 404 (another
    /// owner's session is not told apart from none), 421 for an id of another node, 410 for an id
    /// of this node from an earlier life of the server.
    fn session(&self, caller: &Caller, id: &str) -> Result<Arc<Handle>, ServiceError> {
        self.find_session(caller, id, true)
    }

    fn find_session(
        &self,
        caller: &Caller,
        id: &str,
        touch: bool,
    ) -> Result<Arc<Handle>, ServiceError> {
        self.sessions.find(&caller.owner, id, touch).ok_or_else(|| {
            match self.sessions.elsewhere(id) {
                Some(sessions::Elsewhere::OtherNode(node)) => ServiceError::WrongNode(
                    node.clone(),
                    format!(
                        "session {id:?} is held by node {node:?}, not this one ({}): send its \
                         requests to that node (a router in front of the nodes does it)",
                        sessions::node().unwrap_or_default()
                    ),
                ),
                Some(sessions::Elsewhere::EarlierLife) => ServiceError::SessionLost(format!(
                    "session {id:?} was lost: the server on node {} restarted since it was \
                     created, and its interpreter and variables are gone; start a new session \
                     and run again the cells whose results you need",
                    sessions::node().unwrap_or_default()
                )),
                None => ServiceError::NotFound(format!(
                    "no session {id:?} for this client (it never existed, belongs to another \
                     client, or has ended)"
                )),
            }
        })
    }

    /// `GET /v1/sessions`: the caller's sessions.
    pub fn list_sessions(&self, caller: &Caller) -> Value {
        let limits = &self.config.sessions;
        let sessions: Vec<Value> = self
            .sessions
            .list(&caller.owner)
            .iter()
            .map(|handle| {
                let mut entry = handle.describe(limits);
                if let Some(object) = entry.as_object_mut() {
                    object.insert("limits".into(), session_limits_json(&handle.limits));
                }
                entry
            })
            .collect();
        json!({
            "sessions": sessions,
            "max_sessions": limits.max_sessions,
            "max_sessions_per_client": limits.max_per_client,
        })
    }

    /// `GET /v1/sessions/{id}`.
    pub fn session_info(&self, caller: &Caller, id: &str) -> Result<Value, ServiceError> {
        let handle = self
            .find_session(caller, id, false)
            .inspect_err(|err| self.metrics.rejected(err.code()))?;
        let mut entry = handle.describe(&self.config.sessions);
        if let Some(object) = entry.as_object_mut() {
            object.insert("limits".into(), session_limits_json(&handle.limits));
            object.insert("layers".into(), json!(handle.layers));
        }
        Ok(entry)
    }

    /// `POST /v1/sessions/{id}/execute`: the cell's record (every judged or executed cell is
    /// `Ok`, whatever its status). With `stream`, the cell's output is sent there as it comes.
    /// Past `hard_limit` the session is ended and the cell reported as a timeout.
    pub async fn execute_cell(
        &self,
        caller: &Caller,
        id: &str,
        code: String,
        stream: Option<tokio::sync::mpsc::Sender<Chunk>>,
        hard_limit: Option<Duration>,
        endpoint: &str,
    ) -> Result<CellRecord, ServiceError> {
        let started = Instant::now();
        let handle = match self.session(caller, id) {
            Ok(handle) => handle,
            Err(err) => {
                let mut audit = AuditRecord::new(&caller.identity, endpoint);
                audit.code_sha256 = Some(sha256(code.as_bytes()));
                self.finish_audit(audit, &Err::<(), _>(err.clone()), started);
                return Err(err);
            }
        };
        let streaming = stream.is_some();
        let op = WorkerRequest::Execute {
            code,
            stream: streaming,
        };
        // The cell's audit line and metrics are written by the session's actor.
        match self
            .sessions
            .request(&handle, op, hard_limit, &caller.identity, endpoint, stream)
            .await
        {
            Ok(WorkerAnswer::Cell(record)) => Ok(*record),
            Ok(WorkerAnswer::Failed { message, .. }) => Err(ServiceError::BadRequest(message)),
            Ok(_) => Err(ServiceError::Internal(
                "the session answered out of turn".to_owned(),
            )),
            Err(message) => Ok(sessions::lost_cell(&message)),
        }
    }

    /// `DELETE /v1/sessions/{id}`: ends the session (a running cell is interrupted) and answers
    /// once its processes, mounts, cgroup and files are gone.
    pub async fn end_session(
        &self,
        caller: &Caller,
        id: &str,
        endpoint: &str,
    ) -> Result<Value, ServiceError> {
        let started = Instant::now();
        let handle = match self.session(caller, id) {
            Ok(handle) => handle,
            Err(err) => {
                let audit = AuditRecord::new(&caller.identity, endpoint);
                self.finish_audit(audit, &Err::<(), _>(err.clone()), started);
                return Err(err);
            }
        };
        // The actor writes the `session_end` audit line.
        let summary = self.sessions.end(&handle, "closed", true).await;
        Ok(json!({
            "id": handle.id,
            "ended": true,
            "reason": summary.reason,
            "execution_count": summary.execution_count,
            "usage": summary.usage,
        }))
    }

    /// Ends the caller's session `id` for a front end (MCP's reset, a cancelled call), with
    /// `reason` in the audit log and metrics; nothing when there is no such session.
    pub async fn drop_session(&self, caller: &Caller, id: &str, reason: &'static str) {
        if let Some(handle) = self.sessions.find(&caller.owner, id, false) {
            self.sessions
                .end(&handle, reason, reason != "cancelled")
                .await;
        }
    }

    /// Whether the caller's session `id` is alive.
    pub fn session_alive(&self, caller: &Caller, id: &str) -> bool {
        self.sessions.find(&caller.owner, id, false).is_some()
    }

    /// Starts an upload into the caller's session `id`: a run slot (in the runs' queue, with their
    /// answers when none comes) and a staged file to write the body to (`uploads.rs`).
    pub async fn begin_upload(&self, caller: &Caller, id: &str) -> Result<Upload, ServiceError> {
        // An unknown session costs no slot.
        self.find_session(caller, id, false)?;
        let slot = self
            .admission
            .admit()
            .await
            .map_err(|rejection| self.rejected(rejection))?;
        self.staging
            .stage(slot)
            .map_err(|err| ServiceError::Internal(format!("cannot stage the upload: {err}")))
    }

    /// A scratch file for an upload's JSON body (the request already holds its upload's slot).
    pub fn upload_scratch(&self) -> Result<Scratch, ServiceError> {
        self.staging
            .scratch()
            .map_err(|err| ServiceError::Internal(format!("cannot stage the upload: {err}")))
    }

    /// Writes the staged `upload` as one file into the session's work dir (a relative path;
    /// directories made); its slot and staged file are released once the worker has answered.
    pub async fn upload_file(
        &self,
        caller: &Caller,
        id: &str,
        name: &str,
        mut upload: Upload,
        endpoint: &str,
    ) -> Result<Value, ServiceError> {
        let staged = upload
            .finish()
            .map_err(|err| ServiceError::Internal(format!("cannot stage the upload: {err}")))?
            .to_path_buf();
        let result = self
            .file_request(caller, id, name, endpoint, |path| WorkerRequest::Upload {
                path,
                staged,
            })
            .await;
        drop(upload);
        match result? {
            WorkerAnswer::File(file) => Ok(json!({"path": file.path, "size": file.size})),
            _ => Err(ServiceError::Internal(
                "the session answered out of turn".to_owned(),
            )),
        }
    }

    /// The regular files in the session's work dir.
    pub async fn list_files(
        &self,
        caller: &Caller,
        id: &str,
        endpoint: &str,
    ) -> Result<Value, ServiceError> {
        let started = Instant::now();
        let mut audit = AuditRecord::new(&caller.identity, endpoint);
        audit.session = Some(id.to_owned());
        let result = async {
            let handle = self.session(caller, id)?;
            let answer = self
                .sessions
                .request(
                    &handle,
                    WorkerRequest::List,
                    None,
                    &caller.identity,
                    endpoint,
                    None,
                )
                .await
                .map_err(ServiceError::NotFound)?;
            match answer {
                WorkerAnswer::Files { files, truncated } => {
                    Ok(json!({"files": files, "truncated": truncated}))
                }
                WorkerAnswer::Failed { kind, message } => Err(fail_error(kind, message)),
                _ => Err(ServiceError::Internal(
                    "the session answered out of turn".to_owned(),
                )),
            }
        }
        .await;
        self.finish_audit(audit, &result, started);
        result
    }

    /// One file of the session's work dir (a regular file, never through a symlink, within the
    /// policy's output cap).
    pub async fn download_file(
        &self,
        caller: &Caller,
        id: &str,
        name: &str,
        endpoint: &str,
    ) -> Result<Vec<u8>, ServiceError> {
        use base64::Engine;
        let answer = self
            .file_request(caller, id, name, endpoint, |path| WorkerRequest::Download {
                path,
            })
            .await?;
        match answer {
            WorkerAnswer::Content { content_base64, .. } => {
                base64::engine::general_purpose::STANDARD
                    .decode(content_base64)
                    .map_err(|err| ServiceError::Internal(format!("bad file content: {err}")))
            }
            _ => Err(ServiceError::Internal(
                "the session answered out of turn".to_owned(),
            )),
        }
    }

    /// A request about one file of a session: the name checked and normalised first (400), one
    /// audit line.
    async fn file_request(
        &self,
        caller: &Caller,
        id: &str,
        name: &str,
        endpoint: &str,
        op: impl FnOnce(String) -> WorkerRequest,
    ) -> Result<WorkerAnswer, ServiceError> {
        let started = Instant::now();
        let mut audit = AuditRecord::new(&caller.identity, endpoint);
        audit.session = Some(id.to_owned());
        audit.file = Some(name.chars().take(512).collect());
        let result = async {
            let handle = self.session(caller, id)?;
            let path = warden_gateway::files::relative_name(name)
                .map_err(|err| ServiceError::BadRequest(format!("file name: {err}")))?;
            let answer = self
                .sessions
                .request(&handle, op(path), None, &caller.identity, endpoint, None)
                .await
                .map_err(ServiceError::NotFound)?;
            match answer {
                WorkerAnswer::Failed { kind, message } => Err(fail_error(kind, message)),
                answer => Ok(answer),
            }
        }
        .await;
        self.finish_audit(audit, &result, started);
        result
    }
}

/// A session's limits as its answers show them: `wall_time_ms` and `stdout_bytes` per cell,
/// `memory_mib` for the whole session (its CPU is bounded by its lifetime).
fn session_limits_json(limits: &pipeline::AppliedLimits) -> Value {
    json!({
        "wall_time_ms": limits.wall_time_ms,
        "memory_mib": limits.memory_mib,
        "stdout_bytes": limits.stdout_bytes,
        "capped": limits.capped,
    })
}

/// A session worker's failed file request as the client's error.
fn fail_error(kind: FailKind, message: String) -> ServiceError {
    match kind {
        FailKind::BadRequest => ServiceError::BadRequest(message),
        FailKind::NotFound => ServiceError::NotFound(message),
        FailKind::TooLarge => ServiceError::TooLarge(message),
        FailKind::Ended => ServiceError::NotFound(format!("the session has ended: {message}")),
        FailKind::SetupFailed | FailKind::Internal => ServiceError::Internal(message),
    }
}
