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
//! All use of `rmcp` is in this file and `mcp_http.rs` (the same tools over Streamable HTTP): its API changes between major versions. The tools' input
//! schemas are written by hand, so the macros are not needed.

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

/// How much of stdout, stderr or a traceback an error result quotes (its end).
const TAIL_LINES: usize = 40;
const TAIL_CHARS: usize = 8 * 1024;
/// PNG files a cell wrote that come back as images, and the largest.
const MAX_FILE_IMAGES: usize = 4;
const MAX_FILE_IMAGE_BYTES: u64 = 8 << 20;
/// The most new or changed work-dir files a result names.
const FILES_SHOWN: usize = 20;
/// The most characters of text one tool result gives the model (the Python client's default
/// budget, `warden_client.render.DEFAULT_TEXT_BUDGET`): output over it is cut in the middle, its
/// head and tail kept, with a line saying what was cut and how to see it.
const TEXT_BUDGET: usize = 20_000;
/// Each part's share of the budget: stdout, and stderr, each `display()` output, the value.
const STDOUT_CHARS: usize = 12_000;
const PART_CHARS: usize = 3_000;
/// How to see output that was cut.
const HOW_TO_SEE_OUTPUT: &str = "to see the cut part, print less at a time, or write the output to a file and read it with get_file or print slices of it";

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
        let result = serve_stdio(Arc::clone(&service)).await;
        // The connection is over: so is its session.
        service.end_sessions("connection_closed").await;
        result
    });
    reaper.abort();
    pool.abort();
    session_reaper.abort();
    service.kill_running();
    drop(runtime);
    service.reap();
    drop(service);
    let _ = std::fs::remove_dir_all(&state_dir);
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
        let record = match record {
            Ok(record) => record,
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
                Some(validate(schema.clone(), from, &record, file).await)
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
        use base64::Engine;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&input.content_base64)
            .map_err(|err| {
                ServiceError::BadRequest(format!(
                    "input {:?} is not valid base64: {err}",
                    input.name
                ))
            })?;
        self.service
            .upload_file(&self.caller, id, &input.name, &bytes, "run_python")
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
        let wanted = args
            .policy
            .as_deref()
            .unwrap_or(&self.service.config.default_policy);
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

fn tools() -> Vec<Tool> {
    let run = json!({
        "type": "object",
        "properties": {
            "code": {
                "type": "string",
                "description": "A Python cell. It runs in this connection's persistent session, after the cells of earlier calls: their variables, imports and files are still there. It is checked against the policy together with those cells, then runs with the session's work dir as the current directory. The value of its last expression is shown, like Jupyter's Out[n]."
            },
            "policy": {
                "type": "string",
                "description": "The name of a policy (see describe_policy); the server's default when absent. Naming another policy than the session's starts a new session."
            },
            "reset": {
                "type": "boolean",
                "description": "Start a fresh session before this cell: every variable, import and file of the previous one is gone."
            },
            "inputs": {
                "type": "array",
                "description": "Files written into the session's work dir before this cell runs (they stay for later calls).",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "description": "A path relative to the work dir, e.g. data.csv or inputs/sales.csv (no '..')."},
                        "content_base64": {"type": "string", "description": "The file's bytes, base64."}
                    },
                    "required": ["name", "content_base64"],
                    "additionalProperties": false
                }
            },
            "schema": {
                "type": "object",
                "description": "A JSON Schema this cell's result must satisfy: by default the whole of its standard output, parsed as one JSON document (see result)."
            },
            "result": {
                "type": "string",
                "enum": ["stdout", "last_line", "file"],
                "description": "Where the result the schema judges is read from: stdout (the whole of standard output, the default), last_line (the last non-empty line of stdout; earlier prints are free) or file (result.json the cell writes in the work dir). Only with schema."
            },
            "timeout_ms": {
                "type": "integer",
                "minimum": 1,
                "description": "A hard wall-clock limit for this call in milliseconds. A cell still running past it is stopped and the session ended (its state is lost); the policy's per-cell limit instead interrupts the cell and keeps the state."
            }
        },
        "required": ["code"],
        "additionalProperties": false
    });
    let check = json!({
        "type": "object",
        "properties": {
            "code": {"type": "string", "description": "The whole Python program to judge."},
            "policy": {
                "type": "string",
                "description": "The name of a policy (see describe_policy); the server's default when absent."
            }
        },
        "required": ["code"],
        "additionalProperties": false
    });
    let get_file = json!({
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "A path relative to the session's work dir, e.g. chart.png or out/summary.csv (no '..')."
            }
        },
        "required": ["path"],
        "additionalProperties": false
    });
    let describe = json!({
        "type": "object",
        "properties": {
            "policy": {
                "type": "string",
                "description": "The name of a policy; the server's default when absent."
            }
        },
        "additionalProperties": false
    });
    vec![
        Tool::new(
            "run_python",
            "Run a Python cell in this conversation's persistent Python session, like a Jupyter notebook: variables, imports, loaded data and files persist between calls, so load data once and build on it in later calls (reset: true starts over). Each cell is checked against the policy together with the earlier cells and, if allowed, runs in a jail (no network, limited time and memory); a denied cell does not run and changes nothing. Returns stdout, the value of the last expression, matplotlib figures as images, the files the cell wrote, and on failure the policy findings, the Python exception or the limit that stopped it (and whether the session kept its state).",
            schema_object(run),
        )
        .with_annotations(
            ToolAnnotations::with_title("Run a Python cell in the jailed session")
                .read_only(false)
                .destructive(false)
                .idempotent(false)
                .open_world(false),
        ),
        Tool::new(
            "check_python",
            "Judge a Python program against the policy without running it: allowed, needs review, or denied with findings (rule, line, message, hint).",
            schema_object(check),
        )
        .with_annotations(
            ToolAnnotations::with_title("Check Python against the policy")
                .read_only(true)
                .idempotent(true)
                .open_world(false),
        ),
        Tool::new(
            "get_file",
            "Fetch a file a cell wrote in the session's work dir: an image comes back as an image, text as text (its head and tail when long), anything else as a binary resource. run_python names the files each cell wrote.",
            schema_object(get_file),
        )
        .with_annotations(
            ToolAnnotations::with_title("Fetch a file from the session's work dir")
                .read_only(true)
                .idempotent(true)
                .open_world(false),
        ),
        Tool::new(
            "describe_policy",
            "Describe a policy: the modules a program may import (and which members of partly allowed modules), the files it may read and write, and its time, memory and output limits.",
            schema_object(describe),
        )
        .with_annotations(
            ToolAnnotations::with_title("Describe the policy")
                .read_only(true)
                .idempotent(true)
                .open_world(false),
        ),
    ]
}

/// The MIME type of an image MCP clients show, by its magic bytes.
fn image_type(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(b"\xff\xd8\xff") {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() > 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

fn schema_object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

/// The limits a cell result names.
struct CellLimits {
    /// Each cell's wall-clock limit in the session (past it the cell is interrupted).
    wall_time_ms: u64,
    /// Each cell's stdout cap in the session (past it the output is truncated).
    stdout_bytes: u64,
    /// The call's `timeout_ms` (past it the session is ended).
    hard_limit_ms: Option<u64>,
}

/// Validates a cell's result against the caller's schema, read from where `from` says: its stdout,
/// the last line of it, or `result.json` in the session's work dir (`file`: its download), compiled
/// and run off the async threads.
async fn validate(
    schema: Value,
    from: warden_gateway::validate::ResultFrom,
    record: &Value,
    file: Option<Result<Vec<u8>, ServiceError>>,
) -> warden_gateway::validate::Validation {
    use warden_gateway::validate::{delivery_help, ResultFrom, RESULT_FILE};
    let stdout = record
        .get("stdout")
        .and_then(Value::as_str)
        .unwrap_or("")
        .as_bytes()
        .to_vec();
    let truncated = record.get("stdout_truncated") == Some(&Value::Bool(true));
    let (text, from_text) = match (from, file) {
        (ResultFrom::File, Some(Ok(bytes))) => (bytes, ResultFrom::Stdout),
        (ResultFrom::File, Some(Err(ServiceError::NotFound(_))) | None) => {
            let mut validation = failed_validation(format!(
                "{RESULT_FILE} was not written in the work dir. {}",
                delivery_help(ResultFrom::File)
            ));
            validation.result = ResultFrom::File;
            return validation;
        }
        (ResultFrom::File, Some(Err(err))) => {
            let mut validation =
                failed_validation(format!("{RESULT_FILE} cannot be read: {}", err.message()));
            validation.result = ResultFrom::File;
            return validation;
        }
        (other, _) => (stdout, other),
    };
    let judged = tokio::task::spawn_blocking(move || {
        warden_gateway::validate::OutputSchema::compile(&schema).map(|compiled| {
            compiled.validate_result(
                from_text,
                &text,
                truncated && from != ResultFrom::File,
                None,
                0,
            )
        })
    })
    .await;
    let mut validation = match judged {
        Ok(Ok(validation)) => validation,
        Ok(Err(err)) => failed_validation(format!("{err:#}")),
        Err(err) => failed_validation(format!("the schema check failed: {err}")),
    };
    if from == ResultFrom::File {
        // The file's text was judged as a document of its own: name it as what it is.
        validation.result = ResultFrom::File;
        for error in &mut validation.errors {
            if error.instance_path.is_empty() && error.schema_path.is_empty() {
                error.message = error
                    .message
                    .replace(
                        "standard output is empty",
                        &format!("{RESULT_FILE} is empty"),
                    )
                    .replace("standard output is not", &format!("{RESULT_FILE} is not"))
                    .replace(
                        &delivery_help(ResultFrom::Stdout),
                        &delivery_help(ResultFrom::File),
                    );
            }
        }
    }
    validation
}

fn failed_validation(message: String) -> warden_gateway::validate::Validation {
    warden_gateway::validate::Validation {
        valid: false,
        errors: vec![warden_gateway::validate::OutputError {
            instance_path: String::new(),
            schema_path: String::new(),
            message,
        }],
        result: Default::default(),
    }
}

/// The files that are new or changed in size since the last listing.
fn changed_files(
    before: &BTreeMap<String, u64>,
    now: &BTreeMap<String, u64>,
) -> Vec<(String, u64)> {
    now.iter()
        .filter(|(path, size)| before.get(*path) != Some(*size))
        .map(|(path, size)| (path.clone(), *size))
        .collect()
}

/// A cell's record as a tool result: what a model needs to go on, in words, with the figures as
/// images and the compact record as structured content.
fn cell_result(
    record: &Value,
    notes: &[String],
    written: &[(String, u64)],
    file_images: &[String],
    validation: Option<&warden_gateway::validate::Validation>,
    limits: &CellLimits,
) -> CallToolResult {
    let status = text_of(record, "status");
    let alive = record.get("session_alive") != Some(&Value::Bool(false));
    let mut text = String::new();
    for note in notes {
        let _ = writeln!(text, "{note}");
    }
    let mut is_error = status != "ok";
    match status {
        "ok" => text.push_str(&ok_text(record)),
        "denied" => {
            let _ = write!(
                text,
                "The policy denied this cell{}.\n{}\nThe cell did not run, and the session is as \
                 it was (its variables are unchanged). Change the cell so that none of the \
                 findings above applies (only the modules describe_policy lists can be \
                 imported), then call run_python again.",
                match record.get("message").and_then(Value::as_str) {
                    Some(message) => format!(" ({message})"),
                    None => String::new(),
                },
                findings_text_of(record)
            );
        }
        "error" => text.push_str(&error_text(record)),
        "timeout" if alive => {
            let _ = write!(
                text,
                "The cell was interrupted: it ran past the wall-clock limit of {} ms per cell. \
                 The session kept its state (what the cell had done before the interrupt \
                 stays). Make the cell do less work, or split it over several calls.",
                limits.wall_time_ms
            );
            append_output(record, &mut text);
        }
        "timeout" => {
            let _ = match limits.hard_limit_ms {
                Some(ms) if text_of(record, "message").contains("call's limit") => write!(
                    text,
                    "The cell was stopped: it exceeded the wall-clock limit of {ms} ms this call \
                     gave (timeout_ms). The session was ended: its variables and files are \
                     gone, and the next call starts a fresh session."
                ),
                _ => write!(
                    text,
                    "The cell ran past the wall-clock limit of {} ms per cell and did not stop \
                     when interrupted, so the session was ended: its variables and files are \
                     gone, and the next call starts a fresh session.",
                    limits.wall_time_ms
                ),
            };
            append_output(record, &mut text);
        }
        "output_limit" if alive => {
            let _ = write!(
                text,
                "The cell's output went past its cap of {} bytes of stdout per cell \
                 (stdout_bytes) and was truncated. The session kept its state. Print less (a \
                 summary, the first rows), and write large results to files (get_file reads \
                 them).",
                limits.stdout_bytes
            );
            append_output(record, &mut text);
        }
        "memory_limit" | "output_limit" | "session_lost" => {
            let _ = write!(
                text,
                "{} The session is over: its variables and files are gone, and the next call \
                 starts a fresh session.{}",
                match status {
                    "memory_limit" =>
                        "The cell used more memory than the session may (its \
                                       memory limit); use less (smaller data, chunks, fewer \
                                       copies).",
                    "output_limit" =>
                        "The cell wrote far more output than the caps allow; \
                                       print less, and write large results to files.",
                    _ => "The session's interpreter died during the cell.",
                },
                match record.get("message").and_then(Value::as_str) {
                    Some(message) => format!(" ({message})"),
                    None => String::new(),
                }
            );
            append_output(record, &mut text);
        }
        other => {
            let _ = write!(
                text,
                "The cell ended with status {other}. {}",
                text_of(record, "message")
            );
        }
    }
    if let Some(validation) = validation {
        if !validation.valid {
            is_error = true;
            let _ = write!(
                text,
                "\nThe cell ran, but its result ({}) does not satisfy the output schema:",
                match validation.result {
                    warden_gateway::validate::ResultFrom::Stdout => "the whole of stdout",
                    warden_gateway::validate::ResultFrom::LastLine =>
                        "the last non-empty line of stdout",
                    warden_gateway::validate::ResultFrom::File => "result.json in the work dir",
                }
            );
            for error in &validation.errors {
                let path = if error.instance_path.is_empty() {
                    "/"
                } else {
                    &error.instance_path
                };
                let message = error.message.replace(
                    "warden run --result stdout|last-line|file",
                    "run_python's result argument: stdout, last_line or file",
                );
                let _ = write!(text, "\n- at {path} (instance path): {message}");
                if !error.schema_path.is_empty() {
                    let _ = write!(text, " (schema requirement: {})", error.schema_path);
                }
            }
            text.push_str(
                "\nMake the result one JSON value that matches the schema (run_python's result \
                 argument says where it is read: stdout, last_line or file).",
            );
        }
    }
    if !written.is_empty() {
        let shown: Vec<String> = written
            .iter()
            .take(FILES_SHOWN)
            .map(|(path, size)| format!("{path} ({size} bytes)"))
            .collect();
        let more = written.len().saturating_sub(FILES_SHOWN);
        let _ = write!(
            text,
            "\nFiles new or changed in the work dir: {}{}",
            shown.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        );
    }
    if !file_images.is_empty() {
        let _ = write!(
            text,
            "\n{} PNG file{} the cell wrote {} attached as image{} after the figures.",
            file_images.len(),
            if file_images.len() == 1 { "" } else { "s" },
            if file_images.len() == 1 { "is" } else { "are" },
            if file_images.len() == 1 { "" } else { "s" },
        );
    }
    let _ = write!(text, "\n\n{}", summary_line(record));
    // The bound holds whatever the parts: each is clipped to its share, and this catches the rest.
    let text = clip(&text, TEXT_BUDGET, "this result", HOW_TO_SEE_OUTPUT).into_owned();
    let mut content = vec![ContentBlock::text(text)];
    for image in images(record) {
        content.push(ContentBlock::image(image, "image/png"));
    }
    for image in file_images {
        content.push(ContentBlock::image(image.clone(), "image/png"));
    }
    // The record goes as structured content only: the text and images above already say what it
    // holds, so a copy of it as text would only repeat them.
    let mut compact = compact_record(record);
    if let (Some(validation), Some(object)) = (validation, compact.as_object_mut()) {
        object.insert("validation".into(), json!(validation));
    }
    let mut result = if is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    result.structured_content = Some(compact);
    result
}

fn text_of<'a>(record: &'a Value, key: &str) -> &'a str {
    record.get(key).and_then(Value::as_str).unwrap_or("")
}

fn ok_text(record: &Value) -> String {
    let stdout = text_of(record, "stdout");
    let mut text = if stdout.is_empty() {
        "The cell ran and printed nothing on stdout.".to_owned()
    } else {
        format!(
            "stdout:\n{}",
            clip(stdout.trim_end(), STDOUT_CHARS, "stdout", HOW_TO_SEE_OUTPUT)
        )
    };
    if record.get("stdout_truncated") == Some(&Value::Bool(true)) {
        text.push_str("\n[stdout was truncated at the policy's cap]");
    }
    let stderr = text_of(record, "stderr");
    if !stderr.is_empty() {
        let _ = write!(
            text,
            "\nstderr:\n{}",
            clip(stderr.trim_end(), PART_CHARS, "stderr", HOW_TO_SEE_OUTPUT)
        );
    }
    // What display() showed, in order: a figure is named (its image follows the text), anything
    // else (a DataFrame, a value) is its text/plain.
    let mut figure = 0;
    let displays = record
        .get("display")
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    for (index, bundle) in displays.enumerate() {
        if bundle.get("image/png").is_some() {
            figure += 1;
            let _ = write!(
                text,
                "\n[display {}: figure, image {figure} below]",
                index + 1
            );
        } else if let Some(plain) = bundle.get("text/plain").and_then(Value::as_str) {
            let _ = write!(
                text,
                "\n[display {}]:\n{}",
                index + 1,
                clip(
                    plain.trim_end(),
                    PART_CHARS,
                    "this display() output",
                    "display a smaller part (df.head(20), x[:50])"
                )
            );
        }
    }
    if let Some(count) = record.get("execution_count").and_then(Value::as_u64) {
        if record.pointer("/result/image~1png").is_some() {
            figure += 1;
            let _ = write!(text, "\nOut[{count}]: a figure, image {figure} below");
        } else if let Some(value) = record
            .pointer("/result/text~1plain")
            .and_then(Value::as_str)
        {
            let _ = write!(
                text,
                "\nOut[{count}]: {}",
                clip(
                    value,
                    PART_CHARS,
                    "the value",
                    "show a smaller part of it (df.head(20), x[:50])"
                )
            );
        }
    }
    text
}

fn error_text(record: &Value) -> String {
    let name = record.pointer("/error/name").and_then(Value::as_str);
    let mut text = match name {
        Some(name) => {
            let traceback: Vec<&str> = record
                .pointer("/error/traceback")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            format!(
                "The cell raised {name}: {}\ntraceback (end):\n{}",
                record
                    .pointer("/error/value")
                    .and_then(Value::as_str)
                    .unwrap_or(""),
                tail(&traceback.join("\n"))
            )
        }
        None => format!("The cell failed. {}", text_of(record, "message")),
    };
    text.push_str(
        "\nThe session kept its state: what ran before the error (in this cell and earlier \
         ones) stays defined. Fix the cell and run it again.",
    );
    append_output(record, &mut text);
    text
}

/// The cell's stdout and stderr (their head and tail when long), when it printed any.
fn append_output(record: &Value, text: &mut String) {
    for key in ["stdout", "stderr"] {
        let value = text_of(record, key);
        if !value.trim().is_empty() {
            let _ = write!(
                text,
                "\n{key}:\n{}",
                clip(value.trim_end(), PART_CHARS * 2, key, HOW_TO_SEE_OUTPUT)
            );
        }
    }
}

/// The PNG images of the cell: its displays, then its value.
fn images(record: &Value) -> Vec<String> {
    let displays = record
        .get("display")
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    displays
        .chain(record.get("result"))
        .filter_map(|bundle| bundle.get("image/png")?.as_str().map(str::to_owned))
        .collect()
}

/// `status: ok · In [3] · 12 ms · memory 45.1 MiB`.
fn summary_line(record: &Value) -> String {
    let mut line = format!("status: {}", text_of(record, "status"));
    if let Some(count) = record.get("execution_count").and_then(Value::as_u64) {
        let _ = write!(line, " · In [{count}]");
    }
    if let Some(ms) = record.pointer("/usage/duration_ms").and_then(Value::as_u64) {
        let _ = write!(line, " · {ms} ms");
    }
    if let Some(bytes) = record
        .pointer("/usage/memory_peak_bytes")
        .and_then(Value::as_u64)
        .filter(|b| *b > 0)
    {
        #[allow(clippy::cast_precision_loss)]
        let mib = bytes as f64 / (1024.0 * 1024.0);
        let _ = write!(line, " · memory {mib:.1} MiB");
    }
    line
}

/// The record without what the text and images already show (output, images, HTML, hints).
fn compact_record(record: &Value) -> Value {
    let mut compact = record.clone();
    if let Some(object) = compact.as_object_mut() {
        object.remove("stdout");
        object.remove("stderr");
        if let Some(error) = object.get_mut("error").and_then(Value::as_object_mut) {
            error.remove("traceback");
        }
    }
    let strip = |bundle: &mut Value| {
        if let Some(bundle) = bundle.as_object_mut() {
            bundle.remove("image/png");
            bundle.remove("text/html");
            bundle.remove("image/svg+xml");
        }
    };
    if let Some(result) = compact.get_mut("result") {
        strip(result);
    }
    if let Some(display) = compact.get_mut("display").and_then(Value::as_array_mut) {
        display.iter_mut().for_each(strip);
    }
    if let Some(findings) = compact
        .pointer_mut("/check/findings")
        .and_then(Value::as_array_mut)
    {
        for finding in findings.iter_mut().filter_map(Value::as_object_mut) {
            finding.remove("hint");
        }
    }
    compact
}

/// The findings of a cell record, one a line (as [`findings_text`]).
fn findings_text_of(record: &Value) -> String {
    let findings: Vec<&Value> = record
        .pointer("/check/findings")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .collect();
    if findings.is_empty() {
        return "(no findings)".to_owned();
    }
    let lines: Vec<String> = findings
        .iter()
        .map(|finding| {
            let mut line = format!(
                "{} line {}:{}: {}",
                finding.get("rule").and_then(Value::as_str).unwrap_or("?"),
                finding
                    .pointer("/span/line")
                    .and_then(Value::as_u64)
                    .unwrap_or(0),
                finding
                    .pointer("/span/column")
                    .and_then(Value::as_u64)
                    .unwrap_or(0),
                finding.get("message").and_then(Value::as_str).unwrap_or(""),
            );
            if let Some(hint) = finding
                .get("hint")
                .and_then(Value::as_str)
                .filter(|h| !h.is_empty())
            {
                let _ = write!(line, " (hint: {hint})");
            }
            match finding.get("action").and_then(Value::as_str) {
                Some("deny") | None => {}
                Some(action) => {
                    let _ = write!(line, " [{action}]");
                }
            }
            line
        })
        .collect();
    lines.join("\n")
}

/// One line per finding: `RULE line:col: message (hint: ...)`.
fn findings_text(findings: &[Finding]) -> String {
    if findings.is_empty() {
        return "(no findings)".to_owned();
    }
    let lines: Vec<String> = findings
        .iter()
        .map(|finding| {
            let mut line = format!(
                "{} line {}:{}: {}",
                finding.rule, finding.span.line, finding.span.column, finding.message,
            );
            if !finding.hint.is_empty() {
                let _ = write!(line, " (hint: {})", finding.hint);
            }
            if finding.action != Action::Deny {
                let _ = write!(line, " [{}]", finding.action.as_str());
            }
            line
        })
        .collect();
    lines.join("\n")
}

fn check_result(report: &CheckRecord) -> CallToolResult {
    let policy = &report.policy.name;
    let findings = findings_text(&report.findings);
    match report.decision {
        Decision::Allow => {
            let mut text = format!("allowed: policy {policy:?} lets this program run.");
            if !report.findings.is_empty() {
                let _ = write!(text, " Warnings:\n{findings}");
            }
            CallToolResult::success(vec![ContentBlock::text(text)])
        }
        Decision::Review => CallToolResult::success(vec![ContentBlock::text(format!(
            "review: policy {policy:?} requires a person to approve this program before it runs \
             (this server cannot approve it):\n{findings}"
        ))]),
        Decision::Deny => CallToolResult::error(vec![ContentBlock::text(format!(
            "{}: policy {policy:?} does not let this program run:\n{findings}\nChange the program \
             so that none of these findings applies.",
            report.decision.as_str()
        ))]),
    }
}

/// `text` in at most about `room` characters: its head (two thirds) and tail, whole lines where a
/// line end is near, and between them one line saying what was cut and how to see it.
fn clip<'a>(text: &'a str, room: usize, what: &str, how: &str) -> Cow<'a, str> {
    let total = text.chars().count();
    if total <= room {
        return Cow::Borrowed(text);
    }
    let keep = room.saturating_sub(300);
    let head_chars = keep * 2 / 3;
    let tail_chars = keep - head_chars;
    let head_end = text
        .char_indices()
        .nth(head_chars)
        .map_or(text.len(), |(at, _)| at);
    let tail_start = text
        .char_indices()
        .nth(total - tail_chars)
        .map_or(text.len(), |(at, _)| at);
    let mut head = &text[..head_end];
    if let Some(newline) = head.rfind('\n').filter(|at| *at > head.len() / 2) {
        head = &head[..=newline];
    }
    let mut tail = &text[tail_start..];
    if let Some(newline) = tail.find('\n').filter(|at| *at < tail.len() / 2) {
        tail = &tail[newline + 1..];
    }
    let cut = total - head.chars().count() - tail.chars().count();
    let first_line = head.matches('\n').count() + 1;
    let last_line = text.matches('\n').count() + 1 - tail.matches('\n').count();
    let lines = if last_line > first_line {
        format!(" (lines {first_line}-{last_line})")
    } else {
        String::new()
    };
    let newline = if head.ends_with('\n') { "" } else { "\n" };
    Cow::Owned(format!(
        "{head}{newline}[... warden cut {cut} of {total} characters of {what} here{lines}; {how} ...]\n{tail}"
    ))
}

/// The last lines of a long text, marked as cut.
fn tail(text: &str) -> Cow<'_, str> {
    let text = text.trim_end();
    let lines: Vec<&str> = text.lines().collect();
    let first = lines.len().saturating_sub(TAIL_LINES);
    let mut kept = lines[first..].join("\n");
    if kept.len() > TAIL_CHARS {
        let mut from = kept.len() - TAIL_CHARS;
        while !kept.is_char_boundary(from) {
            from += 1;
        }
        kept = kept[from..].to_owned();
    } else if first == 0 {
        return Cow::Borrowed(text);
    }
    Cow::Owned(format!("[…]\n{kept}"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A cell record as the session worker sends it.
    fn record(status: &str) -> Value {
        json!({
            "status": status, "execution_count": 3, "stdout": "", "stderr": "",
            "stdout_truncated": false, "stderr_truncated": false, "result": null, "display": [],
            "error": null, "check": {"decision": "allow", "findings": []},
            "usage": {"duration_ms": 12, "memory_peak_bytes": 1_048_576},
            "session_alive": true, "message": null,
        })
    }

    fn limits() -> CellLimits {
        CellLimits {
            wall_time_ms: 30_000,
            stdout_bytes: 1 << 20,
            hard_limit_ms: None,
        }
    }

    fn texts(result: &CallToolResult) -> String {
        result
            .content
            .iter()
            .filter_map(|block| block.as_text().map(|t| t.text.clone()))
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn a_reviewed_runs_chained_exception_is_shown_once() {
        let stderr =
            "Traceback (most recent call last):\n  File \"x\", line 3, in f\nKeyError: 'a'\n\n\
                      The above exception was the direct cause of the following exception:\n\n\
                      Traceback (most recent call last):\n  File \"x\", line 5, in f\n    \
                      raise ValueError('bad') from err\nValueError: bad\n";
        let last = &stderr[stderr.rfind("Traceback").unwrap()..];
        let record = json!({
            "status": "error", "stdout": "", "stderr": stderr, "message": null,
            "error": {"name": "ValueError", "value": "bad", "traceback": last.trim_end()},
        });
        let text = texts(&reviewed_result(&record));
        assert_eq!(
            text.matches("raise ValueError('bad') from err").count(),
            1,
            "{text}"
        );
        assert_eq!(text.matches("KeyError: 'a'").count(), 1, "{text}");
        // Without stderr (cut away), the traceback is still shown.
        let mut bare = record.clone();
        bare["stderr"] = json!("");
        let text = texts(&reviewed_result(&bare));
        assert_eq!(
            text.matches("raise ValueError('bad') from err").count(),
            1,
            "{text}"
        );
    }

    #[test]
    fn a_denied_cell_lists_each_finding_says_it_did_not_run_and_is_an_error() {
        let mut cell = record("denied");
        cell["execution_count"] = Value::Null;
        cell["check"] = json!({"decision": "deny", "findings": [{
            "rule": "IMP101", "name": "import-not-allowed", "severity": "high", "action": "deny",
            "message": "module `subprocess` is denied", "hint": "use only allowed modules",
            "span": {"line": 1, "column": 8, "end_line": 1, "end_column": 18},
        }]});
        let result = cell_result(&cell, &[], &[], &[], None, &limits());
        assert_eq!(result.is_error, Some(true));
        let text = texts(&result);
        assert!(text.contains(
            "IMP101 line 1:8: module `subprocess` is denied (hint: use only allowed modules)"
        ));
        assert!(text.contains("did not run"), "{text}");
        assert!(text.contains("variables are unchanged"), "{text}");
    }

    #[test]
    fn an_ok_cell_shows_its_value_and_its_figures_as_images() {
        let png = "iVBORw0KGgo=";
        let mut cell = record("ok");
        cell["stdout"] = json!("{\"x\": 1}\n");
        cell["result"] = json!({"text/plain": "42"});
        cell["display"] = json!([{"image/png": png, "text/plain": "<Figure>"}]);
        let written = vec![("out/chart.png".to_owned(), 1234)];
        let result = cell_result(&cell, &[], &written, &[], None, &limits());
        assert_eq!(result.is_error, Some(false));
        let image = result
            .content
            .iter()
            .find_map(ContentBlock::as_image)
            .unwrap();
        assert_eq!(image.mime_type, "image/png");
        assert_eq!(image.data, png);
        let text = texts(&result);
        assert!(text.contains("{\"x\": 1}"), "{text}");
        assert!(text.contains("Out[3]: 42"), "{text}");
        assert!(text.contains("out/chart.png (1234 bytes)"), "{text}");
        assert!(!text.contains(png), "images are not repeated as text");
    }

    #[test]
    fn timeouts_name_their_limit_and_whether_the_state_was_kept() {
        let interrupted = record("timeout");
        let text = texts(&cell_result(&interrupted, &[], &[], &[], None, &limits()));
        assert!(
            text.contains("30000 ms") && text.contains("kept its state"),
            "{text}"
        );
        let mut stopped = record("timeout");
        stopped["session_alive"] = json!(false);
        stopped["message"] = json!("the cell ran past the call's limit of 700 ms; …");
        let result = cell_result(
            &stopped,
            &[],
            &[],
            &[],
            None,
            &CellLimits {
                wall_time_ms: 30_000,
                stdout_bytes: 1 << 20,
                hard_limit_ms: Some(700),
            },
        );
        assert_eq!(result.is_error, Some(true));
        let text = texts(&result);
        assert!(
            text.contains("700 ms") && text.contains("fresh session"),
            "{text}"
        );
    }

    #[test]
    fn new_and_resized_files_are_named() {
        let before = BTreeMap::from([("a".to_owned(), 1), ("b".to_owned(), 2)]);
        let now = BTreeMap::from([
            ("a".to_owned(), 1),
            ("b".to_owned(), 3),
            ("c/d".to_owned(), 4),
        ]);
        assert_eq!(
            changed_files(&before, &now),
            vec![("b".to_owned(), 3), ("c/d".to_owned(), 4)]
        );
    }

    #[test]
    fn long_output_is_bounded_with_its_head_tail_and_a_line_on_what_was_cut() {
        let mut cell = record("ok");
        let stdout: String = (0..200_000).map(|i| format!("row {i}\n")).collect();
        cell["stdout"] = json!(stdout);
        cell["result"] = json!({"text/plain": "x".repeat(50_000)});
        cell["display"] = json!([{"text/plain": "y".repeat(50_000)}]);
        let result = cell_result(&cell, &[], &[], &[], None, &limits());
        let text = texts(&result);
        assert!(text.chars().count() <= TEXT_BUDGET, "{}", text.len());
        assert!(text.contains("row 0\nrow 1\n"), "the head is kept");
        assert!(text.contains("row 199999"), "the tail is kept");
        assert!(
            text.contains("warden cut") && text.contains("print less at a time"),
            "{text}"
        );
        assert!(
            text.contains("characters of the value"),
            "the value is bounded"
        );
        assert!(
            text.contains("characters of this display() output"),
            "displays are bounded"
        );
        // Short text passes whole; a cut line names the lines it took out.
        assert_eq!(clip("short", 10, "it", "how"), "short");
        let lines: String = (0..1000).map(|i| format!("{i}\n")).collect();
        let cut = clip(&lines, 1_000, "stdout", "how");
        assert!(cut.starts_with("0\n1\n") && cut.ends_with("999\n"), "{cut}");
        assert!(cut.contains("(lines "), "{cut}");
    }

    #[test]
    fn output_past_its_cap_names_the_cap_and_keeps_the_session() {
        let mut cell = record("output_limit");
        cell["stdout"] = json!("row 0\nrow 1\n");
        cell["stdout_truncated"] = json!(true);
        let result = cell_result(&cell, &[], &[], &[], None, &limits());
        assert_eq!(result.is_error, Some(true));
        let text = texts(&result);
        assert!(
            text.contains("cap of 1048576 bytes of stdout per cell")
                && text.contains("The session kept its state")
                && text.contains("row 0"),
            "{text}"
        );
        cell["session_alive"] = json!(false);
        let text = texts(&cell_result(&cell, &[], &[], &[], None, &limits()));
        assert!(text.contains("The session is over"), "{text}");
    }

    #[test]
    fn displays_are_shown_and_the_record_is_structured_content_not_a_text_dump() {
        let png = "iVBORw0KGgo=";
        let mut cell = record("ok");
        cell["display"] = json!([
            {"text/plain": "   region  n\n0  north  31337", "text/html": "<table>"},
            {"image/png": png, "text/plain": "<Figure>"},
        ]);
        let result = cell_result(&cell, &[], &[], &[], None, &limits());
        let text = texts(&result);
        assert!(text.contains("north  31337"), "{text}");
        assert!(
            text.contains("[display 2: figure, image 1 below]"),
            "{text}"
        );
        assert!(!text.contains("execution_count"), "no JSON dump: {text}");
        assert!(!text.contains("<table>"), "{text}");
        let structured = result.structured_content.unwrap();
        assert_eq!(structured["status"], "ok");
        assert_eq!(result.content.len(), 2, "one text, one image");
    }

    #[test]
    fn schema_errors_name_the_instance_path_the_requirement_and_the_tools_option() {
        let validation = warden_gateway::validate::Validation {
            valid: false,
            errors: vec![warden_gateway::validate::OutputError {
                instance_path: "/n".to_owned(),
                schema_path: "/properties/n/type".to_owned(),
                message: "3 is not of type \"string\"".to_owned(),
            }],
            result: warden_gateway::validate::ResultFrom::LastLine,
        };
        let mut cell = record("ok");
        cell["stdout"] = json!("{\"n\": 3}\n");
        let result = cell_result(&cell, &[], &[], &[], Some(&validation), &limits());
        assert_eq!(result.is_error, Some(true));
        let text = texts(&result);
        assert!(
            text.contains("at /n (instance path): 3 is not of type \"string\"")
                && text.contains("(schema requirement: /properties/n/type)")
                && text.contains("the last non-empty line of stdout")
                && text.contains("run_python's result argument"),
            "{text}"
        );
        assert!(!text.contains("warden run"), "{text}");
    }

    #[test]
    fn images_are_told_by_their_magic_bytes() {
        assert_eq!(image_type(b"\x89PNG\r\n\x1a\nrest"), Some("image/png"));
        assert_eq!(image_type(b"\xff\xd8\xff\xe0"), Some("image/jpeg"));
        assert_eq!(image_type(b"GIF89a.."), Some("image/gif"));
        assert_eq!(image_type(b"RIFF\0\0\0\0WEBPVP8 "), Some("image/webp"));
        assert_eq!(image_type(b"a,b\n1,2\n"), None);
    }

    #[test]
    fn the_tail_of_a_long_text_is_marked() {
        let long: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let cut = tail(&long);
        assert!(cut.starts_with("[…]\n"));
        assert!(cut.ends_with("line 99"));
        assert_eq!(tail("short\n"), "short");
    }
}

// Reviews (service/src/review.rs): a cell the policy sends to review is held; once a person
// approves it, `run_reviewed` runs it once as a standalone program.

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReviewArgs {
    id: String,
}

impl Warden {
    /// The tool result for a cell the policy sends to review: held, with its id and what to do.
    fn held_for_review(&self, policy: &str, code: &str, record: &Value) -> CallToolResult {
        let findings = record
            .pointer("/check/findings")
            .cloned()
            .unwrap_or(Value::Null);
        let rules = findings
            .as_array()
            .into_iter()
            .flatten()
            .filter(|f| f.get("action").and_then(Value::as_str) == Some("review"))
            .map(|f| {
                format!(
                    "{} at line {}: {}",
                    f.get("rule").and_then(Value::as_str).unwrap_or("?"),
                    f.pointer("/span/line").and_then(Value::as_u64).unwrap_or(0),
                    f.get("message").and_then(Value::as_str).unwrap_or("")
                )
            })
            .collect::<Vec<_>>();
        let why = format!(
            "This cell did not run: policy {policy:?} requires a person to approve it first ({}). \
             The session kept its state.",
            rules.join("; ")
        );
        match self
            .service
            .hold_cell_for_review(&self.caller, policy, code, findings)
        {
            Ok(review) => CallToolResult::error(vec![ContentBlock::text(format!(
                "{why}\nIt awaits approval as review {id} (until {expires}). Tell the user: a \
                 person approves it with `warden review approve {id}` on the server, or POST \
                 /v1/reviews/{id}/approve. Check with the review_status tool ({{\"id\": \"{id}\"}}); \
                 once it is approved, the run_reviewed tool ({{\"id\": \"{id}\"}}) runs it once, as \
                 a standalone program in a fresh jail, not in this session: it must define or load \
                 everything it uses itself. Or write the cell without what needs review.",
                id = review.id,
                expires = review.expires_at,
            ))]),
            Err(err) => CallToolResult::error(vec![ContentBlock::text(format!(
                "{why}\nIt could not be held for review ({}): {}",
                err.code(),
                err.message()
            ))]),
        }
    }

    fn review_status(&self, args: &ReviewArgs) -> CallToolResult {
        match self.service.own_review(&self.caller, &args.id) {
            Ok(review) => {
                let now = review.state_now();
                let next = match now {
                    "pending" => "It awaits a person's approval; check again later.",
                    "approved" => "Approved: call run_reviewed with this id to run it (once).",
                    "rejected" => "Rejected: it will not run; write the program another way.",
                    "used" => "It has run already; an approval is good for one run.",
                    "void" => "Void: the policy changed since; submit the program again.",
                    _ => "Expired: submit the program again.",
                };
                let mut text = format!("review {}: {now}. {next}", review.id);
                if let Some(by) = &review.decided_by {
                    let _ = write!(text, " Decided by {by}.");
                }
                if let Some(reason) = &review.reason {
                    let _ = write!(text, " Reason: {reason}");
                }
                CallToolResult::success(vec![ContentBlock::text(text)])
            }
            Err(err) => service_error(&err),
        }
    }

    async fn run_reviewed(&self, args: &ReviewArgs) -> CallToolResult {
        let result = self
            .service
            .run_reviewed(
                &self.caller,
                &args.id,
                super::review::RunReviewBody::default(),
                "run_reviewed",
            )
            .await;
        match result {
            Ok(record) => reviewed_result(&record),
            Err(err) => service_error(&err),
        }
    }
}

/// A reviewed program's run record as text for the model.
fn reviewed_result(record: &Value) -> CallToolResult {
    let status = record["status"].as_str().unwrap_or("?");
    let mut text = format!("The approved program ran (status {status}).");
    let field = |name: &str| record.get(name).and_then(Value::as_str).unwrap_or("");
    for (name, label) in [
        ("stdout", "stdout"),
        ("stderr", "stderr"),
        ("message", "note"),
    ] {
        let value = field(name);
        if !value.is_empty() {
            let _ = write!(text, "\n{label}:\n{}", tail(value));
        }
    }
    // The traceback is read from stderr: shown on its own only when stderr does not show it (once,
    // however chained the exception).
    if let Some(traceback) = record.pointer("/error/traceback").and_then(Value::as_str) {
        if !tail(field("stderr")).contains(traceback) {
            let _ = write!(text, "\ntraceback:\n{}", tail(traceback));
        }
    }
    let content = vec![ContentBlock::text(text)];
    if status == "ok" {
        CallToolResult::success(content)
    } else {
        CallToolResult::error(content)
    }
}

fn review_tools() -> Vec<Tool> {
    let id = json!({
        "type": "object",
        "properties": {
            "id": {"type": "string", "description": "The review id a run_python result gave."}
        },
        "required": ["id"],
        "additionalProperties": false
    });
    vec![
        Tool::new(
            "review_status",
            "Where a program held for review stands: pending (a person has not decided yet), approved (run it with run_reviewed), rejected, used, void or expired.",
            schema_object(id.clone()),
        )
        .with_annotations(
            ToolAnnotations::with_title("Check a review")
                .read_only(true)
                .idempotent(true)
                .open_world(false),
        ),
        Tool::new(
            "run_reviewed",
            "Run a program a person approved, by its review id: once, as a standalone program in a fresh jail (not in the session). Returns its output like run_python.",
            schema_object(id),
        )
        .with_annotations(
            ToolAnnotations::with_title("Run an approved program")
                .read_only(false)
                .destructive(false)
                .idempotent(false)
                .open_world(false),
        ),
    ]
}
