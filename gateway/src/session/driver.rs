//! The driver protocol, host side: what a session's host sends the driver in the jail
//! (`jail/src/bootstrap.py`, session mode) and what it reads back, as types.
//!
//! The driver's first line says it is up ([`is_ready`]). Requests are JSON lines on the driver's stdin: a cell ([`CellRequest`]) or an operation
//! ([`OpRequest`]: a file put, list or get, a preload, becoming a template, a pooled jail's run).
//! Answers are JSON lines on its stdout, read with [`parse_answer`]: a piece of a cell's output
//! ([`Answer::Stream`]) or the final answer to a request ([`Done`]). An answer comes out of the
//! jail: untrusted, bounded by the caller (`MAX_FRAME`), and parsed strictly — a line that is not
//! one of these shapes is no answer, and the session that carried it is ended.
//!
//! Owns: the messages' shapes (the JSON is docs/sessions.md's). Does not own: when they are sent
//! or what the host does with an answer (`session.rs`, `warm.rs`), the driver itself.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One cell to run.
#[derive(Debug, Serialize)]
pub(super) struct CellRequest<'a> {
    pub id: u64,
    /// The cell's number (`In [count]`).
    pub count: u64,
    pub code: &'a str,
    pub timeout_ms: u64,
    pub stdout_bytes: usize,
    pub stderr_bytes: usize,
}

/// An operation other than a cell, with its request id.
#[derive(Debug, Serialize)]
pub(super) struct OpRequest<'a> {
    pub id: u64,
    #[serde(flatten)]
    pub op: Op<'a>,
}

/// What an operation asks of the driver.
#[derive(Debug, Serialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub(super) enum Op<'a> {
    /// The regular files of the work dir, at most `max_files`.
    List { max_files: u64 },
    /// The content of `path`, at most `max_bytes`.
    Get { path: &'a str, max_bytes: u64 },
    /// Import `modules` (a pooled jail's preload).
    Preload { modules: &'a [String] },
    /// Become the policy's template (`warden_jail::template`).
    Template,
    /// Run a program once, as a cold run's bootstrap would (a pooled jail).
    Run {
        code: &'a str,
        cpu_time_ms: u64,
        /// The file name its tracebacks show.
        #[serde(skip_serializing_if = "Option::is_none")]
        name: Option<&'a str>,
    },
}

/// A line from the driver.
#[derive(Debug)]
pub(super) enum Answer {
    /// A piece of the running cell's output (`stdout`: else stderr).
    Stream { id: u64, stdout: bool, text: String },
    /// The final answer to a request.
    Done(Box<Done>),
}

/// The final answer to a request: `status` and the fields of its kind (a cell's, a file
/// operation's, a preload's, a run's); the others absent.
#[derive(Debug, Default, Deserialize)]
pub(super) struct Done {
    pub id: u64,
    /// `ok` (`timeout`, `error` for a cell; `error` for an operation, with its `message`).
    pub status: String,
    #[serde(default)]
    pub message: Option<String>,
    // A cell's.
    /// The cell's last expression, a MIME bundle (filtered by the host).
    #[serde(default)]
    pub result: Option<RawBundle>,
    /// What the cell displayed, MIME bundles (filtered by the host).
    #[serde(default)]
    pub display: Option<Vec<RawBundle>>,
    #[serde(default)]
    pub error: Option<DriverError>,
    /// How much the cell wrote (the driver stops sending past the cap).
    #[serde(default)]
    pub stdout_chars: Option<u64>,
    #[serde(default)]
    pub stderr_chars: Option<u64>,
    #[serde(default)]
    pub max_rss_bytes: Option<u64>,
    // A file operation's.
    /// `put`: the bytes written.
    #[serde(default)]
    pub bytes: Option<u64>,
    /// `list`: the files found, and whether there were more.
    #[serde(default)]
    pub files: Option<Vec<Listed>>,
    #[serde(default)]
    pub truncated: Option<bool>,
    /// `get`: the file's content, base64.
    #[serde(default)]
    pub data: Option<String>,
    // A preload's and a run's.
    /// `preload`: the modules that failed to import, each with its error.
    #[serde(default)]
    pub failed: Option<Vec<String>>,
    /// The interpreter's CPU time so far.
    #[serde(default)]
    pub cpu_ms: Option<u64>,
}

/// A MIME bundle as the driver sent it: values that are not text are kept aside (and dropped by
/// the host), not refused.
pub(super) type RawBundle = BTreeMap<String, Loose>;

/// A bundle's value: text, or anything else.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum Loose {
    Text(String),
    Other(serde::de::IgnoredAny),
}

/// The exception a cell raised.
#[derive(Debug, Deserialize)]
pub(super) struct DriverError {
    pub name: String,
    #[serde(default)]
    pub value: Option<String>,
    #[serde(default)]
    pub traceback: Option<Vec<String>>,
}

/// A file `list` found (its path is checked by the host before use).
#[derive(Debug, Deserialize)]
pub(super) struct Listed {
    pub path: String,
    pub size: u64,
}

/// A piece of output: `stream` is `stdout` or `stderr`.
#[derive(Deserialize)]
struct StreamLine {
    id: u64,
    stream: StreamName,
    text: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum StreamName {
    Stdout,
    Stderr,
}

/// Parses one answer line strictly: a JSON object of a known shape, or `None`.
pub(super) fn parse_answer(raw: &[u8]) -> Option<Answer> {
    let map: Map<String, Value> = serde_json::from_slice(raw).ok()?;
    if map.contains_key("stream") {
        let line: StreamLine = serde_json::from_value(Value::Object(map)).ok()?;
        return Some(Answer::Stream {
            id: line.id,
            stdout: matches!(line.stream, StreamName::Stdout),
            text: line.text,
        });
    }
    let done: Done = serde_json::from_value(Value::Object(map)).ok()?;
    Some(Answer::Done(Box::new(done)))
}

/// The driver's first line, once it is up: `{"ready": true}`.
#[derive(Deserialize)]
struct Ready {
    ready: bool,
}

/// Whether `line` is the driver's first line.
pub(super) fn is_ready(line: &[u8]) -> bool {
    serde_json::from_slice::<Ready>(line).is_ok_and(|first| first.ready)
}

/// A `put` request as one line: write `data` (base64) at `path` in the work dir, at `offset` (a
/// large file goes in pieces: the first at 0 creates or empties the file, each next one where the
/// last ended). Written directly rather than serialised: base64 holds nothing JSON escapes, so a
/// piece of a large upload is copied once rather than run through the serialiser a character at a
/// time. `data` must be base64 (checked in debug builds).
pub(super) fn put_line(id: u64, path: &str, data: &str, offset: u64) -> String {
    debug_assert!(data
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=')));
    let path = serde_json::to_string(path).unwrap_or_default();
    let mut line = String::with_capacity(data.len() + path.len() + 64);
    line.push_str(&format!(
        "{{\"id\":{id},\"op\":\"put\",\"path\":{path},\"data\":\""
    ));
    line.push_str(data);
    line.push('"');
    if offset > 0 {
        line.push_str(&format!(",\"offset\":{offset}"));
    }
    line.push_str("}\n");
    line
}

/// Serialises a request as one line.
pub(super) fn line_of(request: &impl Serialize) -> String {
    // A request of these types always serialises (no maps with non-string keys, no failing
    // Serialize impls); an empty line would be refused by the driver all the same.
    let mut line = serde_json::to_string(request).unwrap_or_default();
    line.push('\n');
    line
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn requests_have_the_drivers_shape() {
        let value: Value = serde_json::from_str(&put_line(3, "a.txt", "eA==", 0)).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"id": 3, "op": "put", "path": "a.txt", "data": "eA=="})
        );
        let name = "dir/\"quoted\" é.csv";
        let value: Value = serde_json::from_str(&put_line(9, name, "YWJj", 1 << 20)).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"id": 9, "op": "put", "path": name, "data": "YWJj", "offset": 1 << 20})
        );
        let run = OpRequest {
            id: 1,
            op: Op::Run {
                code: "print(1)",
                cpu_time_ms: 5,
                name: None,
            },
        };
        let value: Value = serde_json::from_str(&line_of(&run)).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"id": 1, "op": "run", "code": "print(1)", "cpu_time_ms": 5})
        );
        let template: Value = serde_json::from_str(&line_of(&OpRequest {
            id: 2,
            op: Op::Template,
        }))
        .unwrap();
        assert_eq!(template, serde_json::json!({"id": 2, "op": "template"}));
    }

    #[test]
    fn answers_are_parsed_strictly() {
        assert!(matches!(
            parse_answer(br#"{"id": 1, "stream": "stdout", "text": "x"}"#),
            Some(Answer::Stream {
                id: 1,
                stdout: true,
                ..
            })
        ));
        assert!(parse_answer(br#"{"id": 1, "stream": "other", "text": "x"}"#).is_none());
        assert!(parse_answer(br#"{"id": 1, "stream": "stdout"}"#).is_none());
        assert!(parse_answer(br#"{"id": 1}"#).is_none());
        assert!(parse_answer(br#"[1]"#).is_none());
        assert!(parse_answer(b"not json").is_none());
        let Some(Answer::Done(done)) = parse_answer(
            br#"{"id": 2, "status": "ok", "result": null, "display": [], "error": null,
                "stdout_chars": 3, "stderr_chars": 0, "duration_ms": 1, "max_rss_bytes": 10}"#,
        ) else {
            panic!("a cell's answer");
        };
        assert_eq!((done.id, done.status.as_str()), (2, "ok"));
        assert_eq!(done.stdout_chars, Some(3));
        // A bundle's values that are not text are set aside, not refused.
        let Some(Answer::Done(done)) = parse_answer(
            br#"{"id": 3, "status": "ok", "result": {"text/plain": "1", "application/x": {"a": 1}},
                "display": [{"text/plain": "<Figure>", "image/png": "iVBO"}]}"#,
        ) else {
            panic!("a cell's answer with bundles");
        };
        let result = done.result.unwrap();
        assert!(matches!(result.get("text/plain"), Some(Loose::Text(t)) if t == "1"));
        assert!(matches!(result.get("application/x"), Some(Loose::Other(_))));
        assert_eq!(done.display.unwrap().len(), 1);
        // Keys the host does not read are let through (`_matplotlib`, `duration_ms`).
        assert!(parse_answer(br#"{"id": 4, "status": "ok", "cpu_ms": 7, "_exits": 0}"#).is_some());
        assert!(is_ready(br#"{"ready": true}"#));
        assert!(!is_ready(br#"{"ready": false}"#));
        assert!(!is_ready(br#"{"id": 1, "status": "ok"}"#));
    }
}
