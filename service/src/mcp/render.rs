//! A tool result as a model reads it: a cell's record in words (status, output with its head and
//! tail when long, the error, the findings, what to change), its figures as images, the compact
//! record as structured content; a check's findings; text clipped to the budget.
//!
//! Owns: the wording and the budgets. Does not own: running the cell (`mcp.rs`, the service) or
//! judging its result (`crate::cells`).

use super::*;

/// How much of stdout, stderr or a traceback an error result quotes (its end).
pub(super) const TAIL_LINES: usize = 40;
pub(super) const TAIL_CHARS: usize = 8 * 1024;
/// PNG files a cell wrote that come back as images, and the largest.
pub(super) const MAX_FILE_IMAGES: usize = 4;
pub(super) const MAX_FILE_IMAGE_BYTES: u64 = 8 << 20;
/// The most new or changed work-dir files a result names.
pub(super) const FILES_SHOWN: usize = 20;
/// The most characters of text one tool result gives the model (the Python client's default
/// budget, `warden_client.render.DEFAULT_TEXT_BUDGET`): output over it is cut in the middle, its
/// head and tail kept, with a line saying what was cut and how to see it.
pub(super) const TEXT_BUDGET: usize = 20_000;
/// Each part's share of the budget: stdout, and stderr, each `display()` output, the value.
pub(super) const STDOUT_CHARS: usize = 12_000;
pub(super) const PART_CHARS: usize = 3_000;
/// How to see output that was cut.
pub(super) const HOW_TO_SEE_OUTPUT: &str = "to see the cut part, print less at a time, or write the output to a file and read it with get_file or print slices of it";

/// The MIME type of an image MCP clients show, by its magic bytes.
pub(super) fn image_type(bytes: &[u8]) -> Option<&'static str> {
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

/// The limits a cell result names.
pub(super) struct CellLimits {
    /// Each cell's wall-clock limit in the session (past it the cell is interrupted).
    pub(super) wall_time_ms: u64,
    /// Each cell's stdout cap in the session (past it the output is truncated).
    pub(super) stdout_bytes: u64,
    /// The call's `timeout_ms` (past it the session is ended).
    pub(super) hard_limit_ms: Option<u64>,
}

/// The files that are new or changed in size since the last listing.
pub(super) fn changed_files(
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
pub(super) fn cell_result(
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

pub(super) fn text_of<'a>(record: &'a Value, key: &str) -> &'a str {
    record.get(key).and_then(Value::as_str).unwrap_or("")
}

pub(super) fn ok_text(record: &Value) -> String {
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

pub(super) fn error_text(record: &Value) -> String {
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
pub(super) fn append_output(record: &Value, text: &mut String) {
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
pub(super) fn images(record: &Value) -> Vec<String> {
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
pub(super) fn summary_line(record: &Value) -> String {
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
pub(super) fn compact_record(record: &Value) -> Value {
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
pub(super) fn findings_text_of(record: &Value) -> String {
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
pub(super) fn findings_text(findings: &[Finding]) -> String {
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

pub(super) fn check_result(report: &CheckRecord) -> CallToolResult {
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
pub(super) fn clip<'a>(text: &'a str, room: usize, what: &str, how: &str) -> Cow<'a, str> {
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
pub(super) fn tail(text: &str) -> Cow<'_, str> {
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

/// A reviewed program's run record as text for the model.
pub(super) fn reviewed_result(record: &Value) -> CallToolResult {
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

#[cfg(test)]
mod tests;
