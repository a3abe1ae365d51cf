//! The MCP server (`warden mcp`): the [`Service`] as three tools over standard input and output.
//!
//! `run_python` runs a cell in the connection's session: one jailed interpreter that keeps its
//! variables, imports and files from one call to the next (started at the first call, ended when
//! the connection ends; `reset: true` starts a fresh one). Each cell is checked by the policy in
//! the context of the cells before it. `check_python` only judges a program; `describe_policy` tells
//! the model what it may import and which limits apply. A cell that was judged or ran, whatever its
//! status, is a tool result; anything but `ok` (or an allowed check) sets `isError` and says in
//! plain words what went wrong, whether the session kept its state, and what to change, because
//! the reader is a model. Figures the cell shows or leaves open, and a figure as its value, come
//! back as images. Requests warden refuses (unknown policy, bad input, too many sessions) are tool
//! errors too; only a call to a tool that does not exist is a protocol error.
//!
//! All use of `rmcp` is in this file, its rooms (`mcp/tools.rs`: the tools' declarations, by hand, so
//! the macros are not needed; `mcp/render.rs`: results as a model reads them; `mcp/review.rs`: the
//! review tools) and `mcp_http.rs` (the same tools over Streamable HTTP): its API changes between
//! major versions. Judging a cell's result against a schema is the service's (`cells.rs`).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde::Deserialize;
use serde_json::{json, Value};

use warden_worker::wire::InputFile;

use super::{Caller, CheckBody, Service, ServiceError, SessionBody};
use warden_policy::{Action, CheckRecord, Decision, Finding};

mod render;
mod review;
mod tools;

use render::*;
use review::ReviewArgs;
use tools::*;

const INSTRUCTIONS: &str =
    "warden runs Python in a locked-down Linux jail: no network, no subprocesses, \
limited time, memory and output. run_python works like a Jupyter notebook: every call is a cell \
in one persistent Python session for this connection, so variables, imports, loaded data and \
files persist between calls (load a CSV once, then inspect, clean, group and plot it in later \
calls); pass reset: true to start over. Every cell is first checked against a policy, together \
with the cells before it; only the modules describe_policy lists as allowed can be imported, and \
a denied cell does not run and changes nothing (the result names each finding and how to fix it). \
The value of a cell's last expression is shown, and matplotlib figures it shows or leaves open \
come back as images. The working directory is the session's work dir: input files appear there, \
and the result names the files a cell wrote. Use check_python to test a program against the \
policy without running it.";

/// `warden mcp`: serves one MCP client over standard input and output until it closes them, then
/// ends its session, kills what still runs and removes this connection's state.
///
/// Each MCP connection has its own state directory under the configured one (several clients may
/// run `warden mcp` at once); those of connections that died are swept first.
pub fn serve_stdio_blocking(
    mut config: super::config::ServerConfig,
    worker_binary: PathBuf,
) -> anyhow::Result<()> {
    let parent = config.state_dir.clone();
    crate::executor::sweep_abandoned_sessions(&parent);
    config.state_dir = parent.join(format!("mcp-{}", std::process::id()));
    let service = Arc::new(Service::start(config, worker_binary)?);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let state_dir = service.config.state_dir.clone();
    let reaper = runtime.spawn(crate::server::reap_periodically(Arc::clone(&service)));
    let pool = runtime.spawn(crate::pool::maintain(Arc::clone(&service)));
    let session_reaper = runtime.spawn(crate::sessions::reap_periodically(Arc::clone(
        service.sessions(),
    )));
    let result = runtime.block_on(async {
        let served = async {
            let result = serve_stdio(Arc::clone(&service)).await;
            // The connection is over: so is its session.
            service.end_sessions("connection_closed").await;
            result
        };
        // A client that closed our input waits a moment for us to exit, then sends SIGTERM (the
        // MCP Python SDK after 2 s) and SIGKILL soon after. On SIGTERM or SIGINT the session is
        // killed instead of ended cleanly (below), so that this connection's jails, cgroups and
        // state directory are still removed in time.
        let mut signals = crate::server::TerminatingSignals::new()?;
        tokio::select! {
            result = served => result.map(|()| false),
            signal = signals.recv() => {
                eprintln!("warden mcp: {signal}: ending the session now");
                Ok(true)
            }
        }
    });
    if matches!(result, Ok(true)) {
        // Told to end: the session's processes are killed and this connection's state removed,
        // then warden mcp exits at once (the cgroups of the killed jails are reaped by the next
        // warden that starts; waiting for them here outlasted the client's 2 s before SIGKILL).
        service.kill_running();
        let _ = std::fs::remove_dir_all(&state_dir);
        std::process::exit(0);
    }
    let result = result.map(|_| ());
    reaper.abort();
    pool.abort();
    session_reaper.abort();
    service.kill_running();
    // The state directory goes first: the client SIGKILLs us soon after closing our input, and
    // reaping the jails' cgroups below can take seconds on a loaded host (what a kill leaves of
    // them the next warden reaps; a state directory left behind nobody would).
    let _ = std::fs::remove_dir_all(&state_dir);
    // Tasks still blocked (a check, a worker's pipe) are not waited for past this.
    runtime.shutdown_timeout(Duration::from_secs(1));
    service.reap();
    drop(service);
    result
}

/// Serves MCP over standard input and output until the client closes them.
async fn serve_stdio(service: Arc<Service>) -> anyhow::Result<()> {
    let server = Warden {
        service,
        caller: Caller {
            identity: "mcp:stdio".into(),
            policies: None,
            owner: format!("mcp:{}", std::process::id()),
        },
        session: tokio::sync::Mutex::new(None),
        end_on_drop: false,
    };
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|err| anyhow::anyhow!("MCP initialisation failed: {err}"))?;
    running
        .waiting()
        .await
        .context("the MCP session ended abnormally")?;
    Ok(())
}

/// The MCP front end of one connection (stdio), or of one MCP session over HTTP.
pub(crate) struct Warden {
    service: Arc<Service>,
    caller: Caller,
    /// The connection's session, once a cell has run; calls take their turn on it.
    session: tokio::sync::Mutex<Option<McpSession>>,
    /// Over HTTP, the warden session ends with the MCP session (stdio ends them all at the end).
    end_on_drop: bool,
}

impl Warden {
    /// The front end of one MCP session over Streamable HTTP (`mcp_http.rs`), for the caller
    /// that initialised it.
    pub(crate) fn over_http(service: Arc<Service>, caller: Caller) -> Self {
        Self {
            service,
            caller,
            session: tokio::sync::Mutex::new(None),
            end_on_drop: true,
        }
    }
}

impl Drop for Warden {
    fn drop(&mut self) {
        let Some(session) = self.session.get_mut().take() else {
            return;
        };
        if !self.end_on_drop {
            return;
        }
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let service = Arc::clone(&self.service);
            let caller = self.caller.clone();
            runtime.spawn(async move {
                service
                    .drop_session(&caller, &session.id, "connection_closed")
                    .await;
            });
        }
    }
}

/// The connection's session, as the front end knows it.
#[derive(Debug, Clone)]
struct McpSession {
    id: String,
    policy: String,
    /// Each cell's wall-clock limit (the policy's, for sessions).
    wall_time_ms: u64,
    /// Each cell's stdout cap.
    stdout_bytes: u64,
    /// The work dir's files after the last call, to name what a cell wrote.
    files: BTreeMap<String, u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RunArgs {
    code: String,
    #[serde(default)]
    policy: Option<String>,
    #[serde(default)]
    inputs: Vec<InputFile>,
    #[serde(default)]
    schema: Option<Value>,
    /// Where the result the schema judges is read from (as the HTTP API's `result`).
    #[serde(default)]
    result: Option<warden_gateway::validate::ResultFrom>,
    #[serde(default)]
    timeout_ms: Option<u64>,
    #[serde(default)]
    reset: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GetFileArgs {
    path: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CheckArgs {
    code: String,
    #[serde(default)]
    policy: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DescribeArgs {
    #[serde(default)]
    policy: Option<String>,
}

impl ServerHandler for Warden {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("warden", env!("CARGO_PKG_VERSION"))
                    .with_title("warden: policy-checked, jailed Python"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            [tools(), review_tools()].concat(),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let result = match request.name.as_ref() {
            "run_python" => match parse::<RunArgs>(arguments) {
                Ok(args) => self.run_python(args, &context).await,
                Err(result) => result,
            },
            "check_python" => match parse::<CheckArgs>(arguments) {
                Ok(args) => self.check_python(args).await,
                Err(result) => result,
            },
            "describe_policy" => match parse::<DescribeArgs>(arguments) {
                Ok(args) => self.describe_policy(&args),
                Err(result) => result,
            },
            "get_file" => match parse::<GetFileArgs>(arguments) {
                Ok(args) => self.get_file(&args).await,
                Err(result) => result,
            },
            "review_status" => match parse::<ReviewArgs>(arguments) {
                Ok(args) => self.review_status(&args),
                Err(result) => result,
            },
            "run_reviewed" => match parse::<ReviewArgs>(arguments) {
                Ok(args) => self.run_reviewed(&args).await,
                Err(result) => result,
            },
            other => {
                return Err(ErrorData::invalid_params(
                    format!("no tool is named {other:?}"),
                    None,
                ))
            }
        };
        Ok(result.into())
    }
}

impl Warden {
    /// Runs a cell in the connection's session (started now if there is none, or a fresh one on
    /// `reset` or another policy). A cancelled call stops the cell and ends the session.
    async fn run_python(
        &self,
        args: RunArgs,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        // A bad schema or policy changes nothing.
        if args.result.is_some() && args.schema.is_none() {
            return service_error(&ServiceError::BadRequest(
                "result: says where the result the schema judges is; give a schema too".to_owned(),
            ));
        }
        if let Some(schema) = &args.schema {
            if let Err(err) = warden_gateway::validate::check_bounds(schema) {
                return service_error(&ServiceError::BadRequest(format!(
                    "schema: invalid output schema: {err}"
                )));
            }
        }
        let policy = match self
            .service
            .policy_name(&self.caller, args.policy.as_deref())
        {
            Ok(name) => name,
            Err(err) => {
                self.service.note_rejected(err.code());
                return service_error(&err);
            }
        };
        let mut slot = self.session.lock().await;
        let mut notes: Vec<String> = Vec::new();
        if let Some(current) = slot.clone() {
            let why = if args.reset {
                Some("reset")
            } else if current.policy != policy {
                Some("policy_changed")
            } else {
                None
            };
            if let Some(why) = why {
                self.service
                    .drop_session(&self.caller, &current.id, why)
                    .await;
                *slot = None;
                notes.push(if args.reset {
                    "Started a fresh session (reset): the earlier variables and files are gone."
                        .to_owned()
                } else {
                    format!(
                        "Started a new session under policy {policy:?}: the previous session's \
                         variables and files are gone."
                    )
                });
            } else if !self.service.session_alive(&self.caller, &current.id) {
                *slot = None;
                notes.push(
                    "The previous session had ended (idle for too long, too old, or lost), so a \
                     new one was started: the earlier variables and files are gone; define them \
                     again."
                        .to_owned(),
                );
            }
        }
        let inputs = args.inputs;
        let session = match slot.as_mut() {
            Some(session) => {
                for input in &inputs {
                    if let Err(err) = self.upload(&session.id, input).await {
                        return service_error(&err);
                    }
                }
                session
            }
            None => {
                let body = SessionBody {
                    policy: Some(policy.clone()),
                    inputs,
                    ..SessionBody::default()
                };
                let created = match self
                    .service
                    .create_session(&self.caller, body, "run_python")
                    .await
                {
                    Ok(created) => created,
                    Err(err) => return service_error(&err),
                };
                let id = created["id"].as_str().unwrap_or_default().to_owned();
                let files = self.files(&id).await;
                slot.insert(McpSession {
                    id,
                    policy: policy.clone(),
                    wall_time_ms: created
                        .pointer("/limits/wall_time_ms")
                        .and_then(Value::as_u64)
                        .unwrap_or(0),
                    stdout_bytes: created
                        .pointer("/limits/stdout_bytes")
                        .and_then(Value::as_u64)
                        .unwrap_or(0),
                    files,
                })
            }
        };
        let hard_limit = args
            .timeout_ms
            .filter(|ms| *ms > 0)
            .map(Duration::from_millis);
        // Kept to hold for review, should the policy send the cell there.
        let code = args.code.clone();
        let execute = self.service.execute_cell(
            &self.caller,
            &session.id,
            args.code,
            None,
            hard_limit,
            "run_python",
        );
        let record = tokio::select! {
            record = execute => record,
            () = context.ct.cancelled() => {
                let id = session.id.clone();
                *slot = None;
                self.service.drop_session(&self.caller, &id, "cancelled").await;
                return CallToolResult::error(vec![ContentBlock::text(
                    "the client cancelled the call; the cell was stopped and the session ended \
                     (its variables and files are gone; the next call starts a fresh session)",
                )]);
            }
        };
        // The text a model reads is rendered from the record's JSON form.
        let record = match record.map(|record| serde_json::to_value(&record)) {
            Ok(Ok(record)) => record,
            Ok(Err(err)) => return service_error(&crate::ServiceError::Internal(err.to_string())),
            Err(err) => return service_error(&err),
        };
        if record.pointer("/check/decision").and_then(Value::as_str) == Some("review") {
            return self.held_for_review(&policy, &code, &record);
        }
        let alive = record.get("session_alive") != Some(&Value::Bool(false));
        let mut written = Vec::new();
        let mut file_images = Vec::new();
        if alive {
            let now = self.files(&session.id).await;
            written = changed_files(&session.files, &now);
            session.files = now;
            file_images = self.written_images(&session.id, &written).await;
        }
        let wall_time_ms = session.wall_time_ms;
        let stdout_bytes = session.stdout_bytes;
        let session_id = session.id.clone();
        if !alive {
            *slot = None;
        }
        drop(slot);
        let from = args.result.unwrap_or_default();
        let validation = match (&args.schema, record.get("status").and_then(Value::as_str)) {
            (Some(schema), Some("ok")) => {
                let file = if from == warden_gateway::validate::ResultFrom::File && alive {
                    Some(
                        self.service
                            .download_file(
                                &self.caller,
                                &session_id,
                                warden_gateway::validate::RESULT_FILE,
                                "run_python",
                            )
                            .await,
                    )
                } else {
                    None
                };
                Some(
                    crate::cells::validate_cell(
                        schema.clone(),
                        from,
                        text_of(&record, "stdout"),
                        record.get("stdout_truncated") == Some(&Value::Bool(true)),
                        file,
                    )
                    .await,
                )
            }
            _ => None,
        };
        let limits = CellLimits {
            wall_time_ms,
            stdout_bytes,
            hard_limit_ms: args.timeout_ms,
        };
        cell_result(
            &record,
            &notes,
            &written,
            &file_images,
            validation.as_ref(),
            &limits,
        )
    }

    /// The PNG files a cell wrote (a chart saved with `savefig`), base64, for the model to see:
    /// at most [`MAX_FILE_IMAGES`], each at most [`MAX_FILE_IMAGE_BYTES`].
    async fn written_images(&self, id: &str, written: &[(String, u64)]) -> Vec<String> {
        use base64::Engine;
        let mut images = Vec::new();
        for (path, size) in written {
            if images.len() >= MAX_FILE_IMAGES
                || *size > MAX_FILE_IMAGE_BYTES
                || !path.to_ascii_lowercase().ends_with(".png")
            {
                continue;
            }
            if let Ok(bytes) = self
                .service
                .download_file(&self.caller, id, path, "run_python")
                .await
            {
                if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
                    images.push(base64::engine::general_purpose::STANDARD.encode(bytes));
                }
            }
        }
        images
    }

    /// A file of the session's work dir, for the model: an image as an image, UTF-8 text as text
    /// (its head and tail past the budget), anything else as an embedded binary resource.
    async fn get_file(&self, args: &GetFileArgs) -> CallToolResult {
        use base64::Engine;
        let id = match self.session.lock().await.as_ref() {
            Some(session) if self.service.session_alive(&self.caller, &session.id) => {
                session.id.clone()
            }
            _ => {
                return CallToolResult::error(vec![ContentBlock::text(
                    "there is no session, so no work dir to read from: files come from the \
                     session run_python starts (its variables and files are gone when it ends)",
                )])
            }
        };
        let bytes = match self
            .service
            .download_file(&self.caller, &id, &args.path, "get_file")
            .await
        {
            Ok(bytes) => bytes,
            Err(ServiceError::NotFound(_)) => {
                let mut text = format!(
                    "no file {:?} in the session's work dir (paths are relative to it).",
                    args.path
                );
                let files = self.files(&id).await;
                if !files.is_empty() {
                    let names: Vec<&str> =
                        files.keys().take(FILES_SHOWN).map(String::as_str).collect();
                    let _ = write!(text, " Its files: {}", names.join(", "));
                }
                return CallToolResult::error(vec![ContentBlock::text(text)]);
            }
            Err(err) => return service_error(&err),
        };
        let size = bytes.len();
        let encode = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
        let text_file = std::str::from_utf8(&bytes).is_ok() && image_type(&bytes).is_none();
        if !text_file && size as u64 > MAX_FILE_IMAGE_BYTES {
            return CallToolResult::error(vec![ContentBlock::text(format!(
                "{} is {size} bytes, over the {MAX_FILE_IMAGE_BYTES} bytes a binary file or an \
                 image may have here: read what you need of it with run_python (a smaller \
                 image, a summary of the data)",
                args.path
            ))]);
        }
        if let Some(mime) = image_type(&bytes) {
            return CallToolResult::success(vec![
                ContentBlock::text(format!("{} ({size} bytes, {mime}):", args.path)),
                ContentBlock::image(encode(&bytes), mime),
            ]);
        }
        match std::str::from_utf8(&bytes) {
            Ok(text) => CallToolResult::success(vec![ContentBlock::text(format!(
                "{} ({size} bytes):\n{}",
                args.path,
                clip(
                    text,
                    TEXT_BUDGET,
                    "this file",
                    "read a part of it with run_python (open(path).read()[start:end], or its lines)"
                )
            ))]),
            Err(_) => CallToolResult::success(vec![
                ContentBlock::text(format!(
                    "{} ({size} bytes) is binary; its bytes are attached as a resource.",
                    args.path
                )),
                ContentBlock::resource(
                    rmcp::model::ResourceContents::blob(
                        encode(&bytes),
                        format!("file:///work/{}", args.path.trim_start_matches('/')),
                    )
                    .with_mime_type("application/octet-stream"),
                ),
            ]),
        }
    }

    async fn upload(&self, id: &str, input: &InputFile) -> Result<Value, ServiceError> {
        let mut upload = self.service.begin_upload(&self.caller, id).await?;
        upload.write_base64(&input.content_base64).map_err(|err| {
            ServiceError::BadRequest(format!("input {:?} is not valid base64: {err}", input.name))
        })?;
        self.service
            .upload_file(&self.caller, id, &input.name, upload, "run_python")
            .await
    }

    /// The session's work-dir files, by path (empty when they cannot be listed).
    async fn files(&self, id: &str) -> BTreeMap<String, u64> {
        let listed = self
            .service
            .list_files(&self.caller, id, "session_files")
            .await
            .unwrap_or_default();
        listed
            .get("files")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|file| {
                Some((
                    file.get("path")?.as_str()?.to_owned(),
                    file.get("size")?.as_u64()?,
                ))
            })
            .collect()
    }

    async fn check_python(&self, args: CheckArgs) -> CallToolResult {
        let body = CheckBody {
            code: args.code,
            policy: args.policy,
        };
        match self
            .service
            .check_record(&self.caller, body, "check_python")
            .await
        {
            Ok(record) => check_result(&record),
            Err(err) => service_error(&err),
        }
    }

    fn describe_policy(&self, args: &DescribeArgs) -> CallToolResult {
        let all = self.service.policies(&self.caller);
        // Without a name: this caller's default (never a policy it may not use, not even by name).
        let Some(wanted) = args
            .policy
            .as_deref()
            .or_else(|| all.get("default").and_then(Value::as_str))
        else {
            return CallToolResult::error(vec![ContentBlock::text(format!(
                "this client has no default policy; name one of: {}",
                all.get("policies")
                    .and_then(Value::as_array)
                    .map(|list| {
                        list.iter()
                            .filter_map(|p| p.get("name").and_then(Value::as_str))
                            .collect::<Vec<_>>()
                            .join(", ")
                    })
                    .unwrap_or_default()
            ))]);
        };
        let policies = all
            .get("policies")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let names: Vec<&str> = policies
            .iter()
            .filter_map(|p| p.get("name").and_then(Value::as_str))
            .collect();
        let Some(found) = policies
            .iter()
            .find(|p| p.get("name").and_then(Value::as_str) == Some(wanted))
        else {
            return CallToolResult::error(vec![ContentBlock::text(format!(
                "no policy is named {wanted:?}; the policies are: {}",
                names.join(", ")
            ))]);
        };
        let mut content = vec![ContentBlock::text(found.to_string())];
        let others: Vec<&str> = names.into_iter().filter(|n| *n != wanted).collect();
        if !others.is_empty() {
            content.push(ContentBlock::text(format!(
                "Other policies (pass `policy` to run_python or check_python): {}",
                others.join(", ")
            )));
        }
        CallToolResult::success(content)
    }
}

/// Reads a tool's arguments; wrong ones are a tool error the model can read and correct.
fn parse<T: for<'de> Deserialize<'de>>(arguments: Value) -> Result<T, CallToolResult> {
    serde_json::from_value(arguments).map_err(|err| {
        CallToolResult::error(vec![ContentBlock::text(format!(
            "invalid arguments: {err}"
        ))])
    })
}

fn service_error(err: &ServiceError) -> CallToolResult {
    let mut text = format!(
        "warden did not run the request ({}): {}",
        err.code(),
        err.message()
    );
    if let ServiceError::Rejected(_, retry_after) | ServiceError::SessionLimit(_, retry_after) = err
    {
        let _ = write!(text, " (retry in about {retry_after} s)");
    }
    CallToolResult::error(vec![ContentBlock::text(text)])
}
