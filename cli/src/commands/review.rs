//! `warden review list|show|approve|reject`: a local operator's side of the programs a running
//! `warden serve` holds for review, over the server's Unix socket.
//!
//! The server decides who may approve (its own uid or root on the socket, or a token with
//! `approve = true`); this command only speaks HTTP/1.1 on the socket (no async runtime in the
//! binary's own code) and prints the answers.

use super::out::{out, outln};
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
        outln!(
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
            outln!("{}", serde_json::to_string_pretty(&body)?);
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
        outln!("no reviews");
        return;
    }
    outln!(
        "{:<32}  {:<8}  {:<12}  {:<24}  {:<24}  rules",
        "id",
        "status",
        "policy",
        "submitted by",
        "expires at"
    );
    for review in reviews {
        outln!(
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
    outln!("review {}: {}", text(review, "id"), text(review, "status"));
    outln!(
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
    outln!("program sha256 {}", text(review, "program_sha256"));
    outln!(
        "submitted by {} at {}; expires at {}",
        text(review, "submitted_by"),
        text(review, "created_at"),
        text(review, "expires_at")
    );
    if let Some(by) = review.get("decided_by").and_then(Value::as_str) {
        outln!("decided by {by} at {}", text(review, "decided_at"));
    }
    if let Some(reason) = review.get("reason").and_then(Value::as_str) {
        outln!("reason: {reason}");
    }
    for finding in review
        .get("findings")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        outln!(
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
            outln!("inputs: {}", names.join(", "));
        }
    }
    outln!("--- program ---");
    out!("{}", text(review, "code"));
    if !text(review, "code").ends_with('\n') {
        outln!();
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
    let address = super::http_client::Address::Unix(socket);
    super::http_client::call(&address, None, method, path, body, Duration::from_secs(60))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn ids_cannot_leave_their_path_segment() {
        assert!(path_segment("0123abcd").is_ok());
        for bad in ["", "../metrics", "a/b", "a?b", "a b"] {
            assert!(path_segment(bad).is_err(), "{bad:?}");
        }
    }
}
