//! `warden review list|show|approve|reject`: a local operator's side of the programs a running
//! `warden serve` holds for review, over the server's Unix socket.
//!
//! The server decides who may approve (its own uid or root on the socket, or a token with
//! `approve = true`); this command only speaks HTTP/1.1 on the socket (no async runtime in the
//! binary's own code) and prints the answers.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::{Args, Subcommand};
use serde_json::{json, Value};

use super::exit;

/// `warden review ...` (its help is the doc comment of `Command::Review`).
#[derive(Debug, Subcommand)]
pub enum ReviewCommand {
    /// List the reviews (every review for an approver; your own otherwise).
    List(ListArgs),
    /// Show one review: its program, policy, findings and state.
    Show(IdArgs),
    /// Approve a pending review: its submitter may then run it, once.
    Approve(DecideArgs),
    /// Reject a review (pending, or approved and not yet run).
    Reject(DecideArgs),
}

/// Where the server is.
#[derive(Debug, Clone, Args)]
pub struct ServerArgs {
    /// The server's Unix socket (default: server.socket of --config, else /run/warden/warden.sock
    /// as root, $XDG_RUNTIME_DIR/warden.sock otherwise).
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// The server's configuration file, to find its socket.
    #[arg(long, value_name = "FILE", conflicts_with = "socket")]
    pub config: Option<PathBuf>,
    /// Print the server's JSON answer.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub server: ServerArgs,
}

#[derive(Debug, Args)]
pub struct IdArgs {
    /// The review's id.
    pub id: String,
    #[command(flatten)]
    pub server: ServerArgs,
}

#[derive(Debug, Args)]
pub struct DecideArgs {
    /// The review's id.
    pub id: String,
    /// Why (kept with the review and shown to its submitter).
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
    #[command(flatten)]
    pub server: ServerArgs,
}

pub fn run(command: ReviewCommand) -> anyhow::Result<ExitCode> {
    match command {
        ReviewCommand::List(args) => {
            let answer = call(&args.server, "GET", "/v1/reviews", None)?;
            print_answer(&args.server, answer, print_list)
        }
        ReviewCommand::Show(args) => {
            let path = format!("/v1/reviews/{}", path_segment(&args.id)?);
            let answer = call(&args.server, "GET", &path, None)?;
            print_answer(&args.server, answer, print_review)
        }
        ReviewCommand::Approve(args) => decide(&args, "approve"),
        ReviewCommand::Reject(args) => decide(&args, "reject"),
    }
}

fn decide(args: &DecideArgs, verb: &str) -> anyhow::Result<ExitCode> {
    let path = format!("/v1/reviews/{}/{verb}", path_segment(&args.id)?);
    let body = json!({"reason": args.reason});
    let answer = call(&args.server, "POST", &path, Some(&body))?;
    print_answer(&args.server, answer, |review| {
        println!(
            "review {}: {} by {}",
            text(review, "id"),
            text(review, "status"),
            text(review, "decided_by")
        );
    })
}

/// Prints a successful answer (as JSON with `--json`), or the server's error; the exit code.
fn print_answer(
    server: &ServerArgs,
    (status, body): (u16, Value),
    human: impl FnOnce(&Value),
) -> anyhow::Result<ExitCode> {
    if status == 200 {
        if server.json {
            println!("{}", serde_json::to_string_pretty(&body)?);
        } else {
            human(&body);
        }
        return Ok(ExitCode::from(exit::OK));
    }
    let code = body.pointer("/error/code").and_then(Value::as_str);
    let message = body.pointer("/error/message").and_then(Value::as_str);
    match (code, message) {
        (Some(code), Some(message)) if (400..500).contains(&status) => {
            eprintln!("warden review: the server refused ({status} {code}): {message}");
            Ok(ExitCode::from(exit::FAILED))
        }
        _ => bail!("the server answered {status}: {body}"),
    }
}

fn print_list(answer: &Value) {
    let reviews = answer
        .get("reviews")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    if reviews.is_empty() {
        println!("no reviews");
        return;
    }
    println!(
        "{:<32}  {:<8}  {:<12}  {:<24}  {:<24}  rules",
        "id", "status", "policy", "submitted by", "expires at"
    );
    for review in reviews {
        println!(
            "{:<32}  {:<8}  {:<12}  {:<24}  {:<24}  {}",
            text(review, "id"),
            text(review, "status"),
            review
                .pointer("/policy/name")
                .and_then(Value::as_str)
                .unwrap_or("?"),
            text(review, "submitted_by"),
            text(review, "expires_at"),
            rules(review).join(",")
        );
    }
}

fn print_review(review: &Value) {
    println!("review {}: {}", text(review, "id"), text(review, "status"));
    println!(
        "policy {} (sha256 {})",
        review
            .pointer("/policy/name")
            .and_then(Value::as_str)
            .unwrap_or("?"),
        review
            .pointer("/policy/sha256")
            .and_then(Value::as_str)
            .unwrap_or("?")
    );
    println!("program sha256 {}", text(review, "program_sha256"));
    println!(
        "submitted by {} at {}; expires at {}",
        text(review, "submitted_by"),
        text(review, "created_at"),
        text(review, "expires_at")
    );
    if let Some(by) = review.get("decided_by").and_then(Value::as_str) {
        println!("decided by {by} at {}", text(review, "decided_at"));
    }
    if let Some(reason) = review.get("reason").and_then(Value::as_str) {
        println!("reason: {reason}");
    }
    for finding in review
        .get("findings")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        println!(
            "{} {} line {}: {}",
            text(finding, "rule"),
            text(finding, "action"),
            finding
                .pointer("/span/line")
                .and_then(Value::as_u64)
                .unwrap_or(0),
            text(finding, "message")
        );
    }
    if let Some(inputs) = review.get("inputs").and_then(Value::as_array) {
        if !inputs.is_empty() {
            let names: Vec<&str> = inputs.iter().filter_map(Value::as_str).collect();
            println!("inputs: {}", names.join(", "));
        }
    }
    println!("--- program ---");
    print!("{}", text(review, "code"));
    if !text(review, "code").ends_with('\n') {
        println!();
    }
}

fn rules(review: &Value) -> Vec<&str> {
    review
        .get("findings")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|f| f.get("action").and_then(Value::as_str) == Some("review"))
        .filter_map(|f| f.get("rule").and_then(Value::as_str))
        .collect()
}

fn text<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or("")
}

/// A review id as a path segment: ids are hex, so anything else is refused here.
fn path_segment(id: &str) -> anyhow::Result<&str> {
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_alphanumeric()) {
        bail!("{id:?} is not a review id (32 hex digits, as `warden review list` shows)");
    }
    Ok(id)
}

/// The socket: `--socket`, the configuration's, or the default.
fn socket(server: &ServerArgs) -> anyhow::Result<PathBuf> {
    if let Some(socket) = &server.socket {
        return Ok(socket.clone());
    }
    if let Some(path) = &server.config {
        let config = warden_service::config::ServerConfig::load(
            Some(path),
            &warden_service::config::Overrides::default(),
        )?;
        return config
            .socket
            .context("the configuration has no Unix socket; give --socket");
    }
    Ok(warden_service::config::default_socket())
}

/// One request on the socket: the status and the JSON body.
fn call(
    server: &ServerArgs,
    method: &str,
    path: &str,
    body: Option<&Value>,
) -> anyhow::Result<(u16, Value)> {
    let socket = socket(server)?;
    let mut stream = UnixStream::connect(&socket).with_context(|| {
        format!(
            "cannot connect to warden serve at {} (is it running? --socket names another socket)",
            socket.display()
        )
    })?;
    stream.set_read_timeout(Some(Duration::from_secs(60)))?;
    stream.set_write_timeout(Some(Duration::from_secs(60)))?;
    let payload = body
        .map(serde_json::to_vec)
        .transpose()?
        .unwrap_or_default();
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: warden\r\nConnection: close\r\nContent-Length: {}\r\n",
        payload.len()
    );
    if body.is_some() {
        request.push_str("Content-Type: application/json\r\n");
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes())?;
    stream.write_all(&payload)?;
    let mut raw = Vec::new();
    stream
        .take(64 << 20)
        .read_to_end(&mut raw)
        .with_context(|| format!("no answer from {}", socket.display()))?;
    parse_response(&raw)
}

/// An HTTP/1.1 response: its status and its body as JSON (a chunked body is joined).
fn parse_response(raw: &[u8]) -> anyhow::Result<(u16, Value)> {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .context("the server's answer has no complete head")?;
    let head = String::from_utf8_lossy(&raw[..split]);
    let mut body = raw[split + 4..].to_vec();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse::<u16>().ok())
        .context("the server's answer has no status")?;
    let chunked = head.lines().any(|line| {
        let lower = line.to_ascii_lowercase();
        lower.starts_with("transfer-encoding:") && lower.contains("chunked")
    });
    if chunked {
        body = dechunk(&body)?;
    }
    let value = serde_json::from_slice(&body).with_context(|| {
        format!(
            "the server answered {status} without JSON: {}",
            String::from_utf8_lossy(&body)
        )
    })?;
    Ok((status, value))
}

fn dechunk(mut data: &[u8]) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = data
            .windows(2)
            .position(|w| w == b"\r\n")
            .context("a chunk without its size line")?;
        let size_text = String::from_utf8_lossy(&data[..line_end]);
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .context("a chunk size that is not hex")?;
        data = &data[line_end + 2..];
        if size == 0 {
            return Ok(out);
        }
        let chunk = data.get(..size).context("a chunk cut short")?;
        out.extend_from_slice(chunk);
        data = data.get(size + 2..).unwrap_or_default();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn responses_plain_and_chunked_are_read() {
        let plain = b"HTTP/1.1 403 Forbidden\r\ncontent-length: 13\r\n\r\n{\"error\": 1}\n";
        assert_eq!(parse_response(plain).unwrap(), (403, json!({"error": 1})));
        let chunked =
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n4\r\n{\"a\"\r\n3\r\n: 1\r\n1\r\n}\r\n0\r\n\r\n";
        assert_eq!(parse_response(chunked).unwrap(), (200, json!({"a": 1})));
        assert!(parse_response(b"HTTP/1.1 200 OK\r\n").is_err());
    }

    #[test]
    fn ids_cannot_leave_their_path_segment() {
        assert!(path_segment("0123abcd").is_ok());
        for bad in ["", "../metrics", "a/b", "a?b", "a b"] {
            assert!(path_segment(bad).is_err(), "{bad:?}");
        }
    }
}
