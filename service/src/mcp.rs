//! The MCP server (`warden mcp`): the [`Service`] as three tools over standard input and output.
//!
//! `run_python` checks, runs and validates a program; `check_python` only judges it;
//! `describe_policy` tells the model what it may import and which limits apply. A program that was
//! judged or ran, whatever its status, is a tool result; anything but `ok` (or an allowed check)
//! sets `isError` and says in plain words what went wrong and what to change, because the reader is
//! a model. Requests warden refuses (unknown policy, bad input, a full queue) are tool errors too;
//! only a call to a tool that does not exist is a protocol error.
//!
//! All use of `rmcp` is in this file: its API changes between major versions. The tools' input
//! schemas are written by hand, so the macros are not needed.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use base64::Engine;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde::Deserialize;
use serde_json::{json, Value};

use super::job::InputFile;

use super::{Caller, CheckBody, RunBody, Service, ServiceError};
use warden_gateway::files::OutputFile;
use warden_gateway::pipeline::{CallerLimits, RunRecord, RunStatus};
use warden_jail::LimitHit;
use warden_policy::settings::PolicyLimits;
use warden_policy::{Action, CheckRecord, Decision, Finding};

/// Files up to this size that are UTF-8 are shown to the model in full.
const TEXT_FILE_MAX: usize = 64 * 1024;
/// How much of stdout, stderr or a traceback an error result quotes (its end).
const TAIL_LINES: usize = 40;
const TAIL_CHARS: usize = 8 * 1024;

const INSTRUCTIONS: &str =
    "warden runs Python programs in a locked-down Linux jail: no network, no \
subprocesses, limited time, memory and output. Every program is first checked against a policy; \
only the modules describe_policy lists as allowed can be imported, and a denied program does not \
run (the result names each finding and how to fix it). The program's working directory is its \
work dir: input files appear there, and files it writes there are returned (images as images). \
Print the result to stdout, as JSON when a caller needs to parse it (run_python's `schema` \
validates it). Use check_python to test a program against the policy without running it.";

/// `warden mcp`: serves one MCP client over standard input and output until it closes them, then
/// kills what still runs and removes this session's state.
///
/// Each MCP session has its own state directory under the configured one (several clients may run
/// `warden mcp` at once); those of sessions that died are swept first.
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
    let result = runtime.block_on(serve_stdio(Arc::clone(&service)));
    reaper.abort();
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
        },
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

/// The MCP front end of one session.
struct Warden {
    service: Arc<Service>,
    caller: Caller,
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
    #[serde(default)]
    timeout_ms: Option<u64>,
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
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let result = match request.name.as_ref() {
            // A cancelled run is dropped: its worker is killed (and its jail with it).
            "run_python" => match parse::<RunArgs>(arguments) {
                Ok(args) => tokio::select! {
                    result = self.run_python(args) => result,
                    () = context.ct.cancelled() => CallToolResult::error(vec![
                        ContentBlock::text("the client cancelled the run; it was stopped"),
                    ]),
                },
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
    async fn run_python(&self, args: RunArgs) -> CallToolResult {
        let policy = args
            .policy
            .clone()
            .unwrap_or_else(|| self.service.config.default_policy.clone());
        let body = RunBody {
            code: args.code,
            policy: args.policy,
            inputs: args.inputs,
            schema: args.schema,
            limits: CallerLimits {
                wall_time_ms: args.timeout_ms,
                ..CallerLimits::default()
            },
            return_files: true,
        };
        let limits = body.limits;
        match self
            .service
            .run_record(&self.caller, body, "run_python")
            .await
        {
            Ok(record) => {
                let applied = self.service.config.policies.get(&policy).map(|registered| {
                    warden_gateway::pipeline::effective_limits(&registered.policy, &limits)
                });
                run_result(&record, applied.as_ref())
            }
            Err(err) => service_error(&err),
        }
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
    if let ServiceError::Rejected(_, retry_after) = err {
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
                "description": "The whole Python program. It is checked against the policy, then runs in the jail with its work dir as the current directory."
            },
            "policy": {
                "type": "string",
                "description": "The name of a policy (see describe_policy); the server's default when absent."
            },
            "inputs": {
                "type": "array",
                "description": "Files placed in the work dir before the program runs, by plain file name.",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "description": "A plain file name, no '/'."},
                        "content_base64": {"type": "string", "description": "The file's bytes, base64."}
                    },
                    "required": ["name", "content_base64"],
                    "additionalProperties": false
                }
            },
            "schema": {
                "type": "object",
                "description": "A JSON Schema the program's standard output (parsed as JSON) must satisfy."
            },
            "timeout_ms": {
                "type": "integer",
                "minimum": 1,
                "description": "A wall-clock limit in milliseconds; it can only shorten the policy's limit."
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
            "Check a Python program against the policy and, if allowed, run it in a jail (no network, limited time and memory). Returns stdout, the files the program wrote in its working directory (images as images), and on failure the policy findings, the Python exception or the limit that stopped it.",
            schema_object(run),
        )
        .with_annotations(
            ToolAnnotations::with_title("Run Python in the jail")
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

fn schema_object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

/// A result record as a tool result.
fn run_result(record: &RunRecord, limits: Option<&PolicyLimits>) -> CallToolResult {
    let compact = match compact_record(record) {
        Ok(compact) => compact,
        Err(err) => {
            return service_error(&ServiceError::Internal(format!(
                "cannot serialise the record: {err}"
            )))
        }
    };
    let headline = match record.status {
        RunStatus::Ok => ok_text(record),
        RunStatus::Denied => format!(
            "{}\n{}\nThe program did not run. Change it so that none of the findings above applies \
             (only the modules describe_policy lists can be imported), or use check_python to test \
             a change, then call run_python again.",
            message_line(record, "The policy denied this program."),
            findings_text(&record.check.findings)
        ),
        RunStatus::ReviewRequired => format!(
            "The policy requires a person to approve this program before it runs, and this server \
             cannot approve it. The program did not run.\n{}\nRewrite it so that none of the \
             findings above applies.",
            findings_text(&record.check.findings)
        ),
        RunStatus::Error => error_text(record),
        RunStatus::Timeout | RunStatus::MemoryLimit | RunStatus::OutputLimit => {
            limit_text(record, limits)
        }
        RunStatus::OutputInvalid => invalid_text(record),
        RunStatus::SetupFailed => format!(
            "warden could not set up the jail, so the program did not run (not a fault of the \
             program): {}",
            message(record)
        ),
    };
    let mut content = vec![ContentBlock::text(format!(
        "{headline}\n\n{}",
        summary_line(record)
    ))];
    if matches!(
        record.status,
        RunStatus::Ok | RunStatus::OutputInvalid | RunStatus::Error
    ) {
        file_blocks(&record.files, &mut content);
    }
    content.push(ContentBlock::text(format!(
        "result record (stdout, stderr and file contents are shown above): {compact}"
    )));
    let mut result = if record.status == RunStatus::Ok {
        CallToolResult::success(content)
    } else {
        CallToolResult::error(content)
    };
    result.structured_content = Some(compact);
    result
}

fn ok_text(record: &RunRecord) -> String {
    let mut text = if record.stdout.is_empty() {
        "The program ran and printed nothing on stdout.".to_owned()
    } else {
        format!("stdout:\n{}", record.stdout.trim_end())
    };
    if record.stdout_truncated {
        text.push_str("\n[stdout was truncated at the policy's cap]");
    }
    if !record.stderr.is_empty() {
        let _ = write!(text, "\nstderr:\n{}", tail(&record.stderr));
    }
    text
}

fn error_text(record: &RunRecord) -> String {
    let mut text = match &record.error {
        Some(error) => format!(
            "The program raised {}: {}\ntraceback (end):\n{}",
            error.name,
            error.value,
            tail(&error.traceback)
        ),
        None => format!(
            "The program exited with code {}.",
            record
                .exit_code
                .map_or_else(|| "?".to_owned(), |code| code.to_string())
        ),
    };
    let other = match &record.error {
        Some(error) if !error.traceback.is_empty() => record
            .stderr
            .replace(&error.traceback, "")
            .trim()
            .to_owned(),
        _ => record.stderr.trim().to_owned(),
    };
    if !other.is_empty() {
        let _ = write!(text, "\nstderr (end):\n{}", tail(&other));
    }
    append_stdout(record, &mut text);
    text
}

fn limit_text(record: &RunRecord, limits: Option<&PolicyLimits>) -> String {
    let hits: Vec<String> = record
        .limits_hit
        .iter()
        .map(|hit| describe_limit(*hit, limits))
        .collect();
    let mut text = if hits.is_empty() {
        format!(
            "The run hit a limit ({}). {}",
            record.status.as_str(),
            message(record)
        )
    } else {
        format!(
            "The program was stopped: it exceeded the {}.",
            hits.join(" and the ")
        )
    };
    let advice = match record.status {
        RunStatus::Timeout => "Make it do less work or use faster (vectorised) code.",
        RunStatus::MemoryLimit => "Make it use less memory (smaller data, chunks, fewer copies).",
        _ => "Make it print less; write large results to files in the work dir instead.",
    };
    let _ = write!(text, " {advice}");
    if !record.stderr.is_empty() {
        let _ = write!(text, "\nstderr (end):\n{}", tail(&record.stderr));
    }
    append_stdout(record, &mut text);
    text
}

fn describe_limit(hit: LimitHit, limits: Option<&PolicyLimits>) -> String {
    let Some(l) = limits else {
        return format!("{} limit", limit_name(hit));
    };
    match hit {
        LimitHit::WallTime => format!("wall-clock limit of {} ms", l.wall_time_ms),
        LimitHit::CpuTime => format!("CPU-time limit of {} ms", l.cpu_time_ms),
        LimitHit::Memory => format!("memory limit of {} MiB", l.memory_bytes / (1024 * 1024)),
        LimitHit::Pids => format!("limit of {} processes and threads", l.pids),
        LimitHit::Stdout => format!("stdout cap of {} bytes", l.stdout_bytes),
        LimitHit::Stderr => format!("stderr cap of {} bytes", l.stderr_bytes),
    }
}

/// A limit as the record's `limits_hit` names it.
fn limit_name(hit: LimitHit) -> &'static str {
    match hit {
        LimitHit::WallTime => "wall_time",
        LimitHit::CpuTime => "cpu_time",
        LimitHit::Memory => "memory",
        LimitHit::Pids => "pids",
        LimitHit::Stdout => "stdout",
        LimitHit::Stderr => "stderr",
    }
}

fn invalid_text(record: &RunRecord) -> String {
    let mut text = "The program ran, but its stdout does not satisfy the output schema:".to_owned();
    for error in &record.validation.errors {
        let path = if error.instance_path.is_empty() {
            "/"
        } else {
            &error.instance_path
        };
        let _ = write!(text, "\n- at {path}: {}", error.message);
    }
    text.push_str("\nPrint exactly one JSON value that matches the schema.");
    append_stdout(record, &mut text);
    text
}

fn append_stdout(record: &RunRecord, text: &mut String) {
    if !record.stdout.is_empty() {
        let _ = write!(text, "\nstdout (end):\n{}", tail(&record.stdout));
    }
}

/// The record's `message`, empty when it has none.
fn message(record: &RunRecord) -> &str {
    record.message.as_deref().unwrap_or("")
}

fn message_line(record: &RunRecord, default: &str) -> String {
    match &record.message {
        Some(message) => format!("{default} {message}."),
        None => default.to_owned(),
    }
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

/// `status: ok · exit 0 · wall 12 ms · cpu 10 ms · peak memory 3.2 MiB`.
fn summary_line(record: &RunRecord) -> String {
    let mut line = format!("status: {}", record.status.as_str());
    if let Some(code) = record.exit_code {
        let _ = write!(line, " · exit {code}");
    }
    let usage = &record.usage;
    if usage.wall_ms > 0 || usage.memory_peak_bytes > 0 {
        #[allow(clippy::cast_precision_loss)]
        let mib = usage.memory_peak_bytes as f64 / (1024.0 * 1024.0);
        let _ = write!(
            line,
            " · wall {} ms · cpu {} ms · peak memory {mib:.1} MiB",
            usage.wall_ms, usage.cpu_ms
        );
    }
    line
}

/// The files the program wrote: images as image content, others as a note (with the text of small
/// UTF-8 files).
fn file_blocks(files: &[OutputFile], content: &mut Vec<ContentBlock>) {
    for file in files {
        let note = format!(
            "file {} ({} bytes, sha256 {})",
            file.path, file.bytes, file.sha256
        );
        match (image_mime(&file.path), &file.content_base64) {
            (Some(mime), Some(encoded)) => {
                content.push(ContentBlock::text(format!("{note}: image below")));
                content.push(ContentBlock::image(encoded, mime));
            }
            (None, Some(encoded)) => {
                let text = base64::engine::general_purpose::STANDARD
                    .decode(encoded)
                    .ok()
                    .filter(|raw| raw.len() < TEXT_FILE_MAX)
                    .and_then(|raw| String::from_utf8(raw).ok());
                content.push(ContentBlock::text(match text {
                    Some(text) => format!("{note}:\n{text}"),
                    None => note,
                }));
            }
            (_, None) => content.push(ContentBlock::text(format!("{note}: contents not returned"))),
        }
    }
}

fn image_mime(path: &str) -> Option<&'static str> {
    let extension = path.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match extension.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "svg" => "image/svg+xml",
        _ => return None,
    })
}

/// The record as JSON without what the text blocks already show (stdout, stderr, file contents,
/// the long hints).
fn compact_record(record: &RunRecord) -> Result<Value, serde_json::Error> {
    let mut compact = serde_json::to_value(record)?;
    if let Some(object) = compact.as_object_mut() {
        object.remove("stdout");
        object.remove("stderr");
        if let Some(error) = object.get_mut("error").and_then(Value::as_object_mut) {
            error.remove("traceback");
        }
    }
    if let Some(files) = compact.get_mut("files").and_then(Value::as_array_mut) {
        for file in files.iter_mut().filter_map(Value::as_object_mut) {
            file.remove("content_base64");
        }
    }
    if let Some(findings) = compact
        .pointer_mut("/check/findings")
        .and_then(Value::as_array_mut)
    {
        for finding in findings.iter_mut().filter_map(Value::as_object_mut) {
            finding.remove("hint");
        }
    }
    Ok(compact)
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
    use warden_gateway::pipeline::CheckSummary;
    use warden_gateway::validate::Validation;
    use warden_policy::{PolicyRef, Rule, Severity, Span};

    /// A record of a program that did not run, with `status`.
    fn record(status: RunStatus) -> RunRecord {
        RunRecord {
            status,
            exit_code: None,
            signal: None,
            stdout: String::new(),
            stderr: String::new(),
            stdout_truncated: false,
            stderr_truncated: false,
            check: CheckSummary {
                decision: "allow".to_owned(),
                findings: Vec::new(),
            },
            validation: Validation::not_required(),
            usage: warden_jail::Usage::default(),
            files: Vec::new(),
            layers: None,
            error: None,
            message: None,
            limits_hit: Vec::new(),
            approval: None,
            policy: PolicyRef {
                name: "default".to_owned(),
                sha256: "00".to_owned(),
                registered_as: None,
            },
            program_sha256: "00".to_owned(),
            stopped_by: None,
            limits: None,
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
    fn a_denied_record_lists_each_finding_and_is_an_error() {
        let rule = Rule::ImportNotAllowed;
        let record = RunRecord {
            check: CheckSummary {
                decision: "deny".to_owned(),
                findings: vec![Finding {
                    rule,
                    name: rule.name(),
                    severity: Severity::High,
                    action: Action::Deny,
                    message: "module `subprocess` is denied".to_owned(),
                    hint: "use only allowed modules".to_owned(),
                    span: Span {
                        line: 1,
                        column: 8,
                        end_line: 1,
                        end_column: 18,
                        start_byte: 7,
                        end_byte: 17,
                    },
                }],
            },
            ..record(RunStatus::Denied)
        };
        let result = run_result(&record, None);
        assert_eq!(result.is_error, Some(true));
        let text = texts(&result);
        assert!(text.contains(
            "IMP101 line 1:8: module `subprocess` is denied (hint: use only allowed modules)"
        ));
        assert!(text.contains("did not run"));
    }

    #[test]
    fn an_ok_record_returns_images_as_images_and_small_text_files_inline() {
        let png = base64::engine::general_purpose::STANDARD.encode(b"\x89PNG\r\n\x1a\n");
        let csv = base64::engine::general_purpose::STANDARD.encode(b"a,b\n1,2\n");
        let record = RunRecord {
            exit_code: Some(0),
            stdout: "{\"x\": 1}\n".to_owned(),
            usage: warden_jail::Usage {
                wall_ms: 10,
                cpu_ms: 8,
                memory_peak_bytes: 1_048_576,
            },
            files: vec![
                OutputFile {
                    path: "plot.png".to_owned(),
                    bytes: 8,
                    sha256: "ab".to_owned(),
                    content_base64: Some(png.clone()),
                },
                OutputFile {
                    path: "t.csv".to_owned(),
                    bytes: 8,
                    sha256: "cd".to_owned(),
                    content_base64: Some(csv),
                },
            ],
            ..record(RunStatus::Ok)
        };
        let result = run_result(&record, None);
        assert_eq!(result.is_error, Some(false));
        let image = result
            .content
            .iter()
            .find_map(ContentBlock::as_image)
            .unwrap();
        assert_eq!(image.mime_type, "image/png");
        let text = texts(&result);
        assert!(text.contains("{\"x\": 1}"));
        assert!(text.contains("file t.csv (8 bytes, sha256 cd):\na,b\n1,2"));
        assert!(
            !text.contains(&png),
            "file contents are not repeated in the record"
        );
    }

    #[test]
    fn a_timeout_names_the_limit_and_its_value() {
        let limits = PolicyLimits {
            wall_time_ms: 500,
            cpu_time_ms: 1000,
            memory_bytes: 1 << 30,
            pids: 64,
            stdout_bytes: 1 << 20,
            stderr_bytes: 1 << 20,
            file_size_bytes: 1 << 20,
            open_files: 64,
            tmp_bytes: 1 << 20,
            output_files: 16,
            output_bytes: 1 << 20,
        };
        let record = RunRecord {
            limits_hit: vec![LimitHit::WallTime],
            ..record(RunStatus::Timeout)
        };
        let text = texts(&run_result(&record, Some(&limits)));
        assert!(text.contains("wall-clock limit of 500 ms"), "{text}");
    }

    #[test]
    fn a_limit_is_named_as_the_record_names_it() {
        for hit in [
            LimitHit::WallTime,
            LimitHit::CpuTime,
            LimitHit::Memory,
            LimitHit::Pids,
            LimitHit::Stdout,
            LimitHit::Stderr,
        ] {
            assert_eq!(json!(hit), json!(limit_name(hit)));
        }
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
