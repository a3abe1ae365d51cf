//! Attack sessions: a case whose program is several cells run one after the other in one warden
//! session (`warden repl --json`), so that an evasion can spread over cells — a module bound in one
//! cell and used in the next, a wrapper defined then called, a file planted then loaded.
//!
//! Format: a header-format case (`corpus/README.md`) with the header line `# session: cells`; the
//! body is split into cells at lines that start with [`MARKER`] (`# %%`, as in Jupyter's percent
//! format). Text before the first marker (the header) is no cell. The whole file is one valid Python
//! program, so the policy pass judges it as `warden check` judges a session's cells in context.
//!
//! A session case runs like a one-shot case, with the same passes and host-side checks: the runner
//! starts `warden repl --json` with the pass's flags instead of `warden run --json`, feeds it the
//! cells, and reads the cell records into one result record ([`record`]) that the rest of the runner
//! judges as it judges `warden run`'s. Owns: splitting the cells and that summary; not the session
//! itself (`gateway/src/session.rs`).

use serde_json::{json, Map, Value};

/// The line that starts a cell.
pub const MARKER: &str = "# %%";

/// The header key and value that make a case a session.
pub const KEY: &str = "session";
pub const VALUE: &str = "cells";

/// The cells of a session case, or `None` when the file is not one (no `# session: cells` header
/// line).
pub fn cells(bytes: &[u8]) -> Option<Vec<String>> {
    let text = String::from_utf8_lossy(bytes);
    let is_session = text
        .lines()
        .take_while(|line| line.starts_with('#'))
        .filter_map(|line| line[1..].split_once(':'))
        .any(|(key, value)| key.trim() == KEY && value.trim() == VALUE);
    if !is_session {
        return None;
    }
    let mut cells: Vec<String> = Vec::new();
    let mut current: Option<String> = None;
    for line in text.split_inclusive('\n') {
        if line.starts_with(MARKER) {
            cells.extend(current.take());
            current = Some(String::new());
        } else if let Some(cell) = current.as_mut() {
            cell.push_str(line);
        }
    }
    cells.extend(current);
    Some(cells)
}

/// What `warden repl --json` reads: one `{"code"}` line per cell.
pub fn input(cells: &[String]) -> Vec<u8> {
    let mut out = Vec::new();
    for cell in cells {
        out.extend(json!({ "code": cell }).to_string().into_bytes());
        out.push(b'\n');
    }
    out
}

/// One result record summing up the cell records `warden repl --json` printed (one per line), in
/// the shape of `warden run --json`'s: `status` (`denied` when a cell was denied, else the first
/// cell's that did not end `ok`, `session_lost` read as `error`), the cells' stdout and stderr
/// joined, `check` (`deny` when a cell was denied, with every finding), `error` and `stopped_by` of
/// the first cell something stopped: the static layer (a denied cell: its first denying finding),
/// the runtime layer (a `warden.PolicyViolation`: `warden[RULE] EVENT: …`) or the kernel (an
/// `EPERM`, `EACCES`, `EROFS` or `ENOSYS` error). `None` when warden printed no cell record.
pub fn record(stdout: &[u8], exit_code: Option<i32>) -> Option<Value> {
    let text = String::from_utf8_lossy(stdout);
    let cells: Vec<Map<String, Value>> = text
        .lines()
        .filter_map(|line| serde_json::from_str::<Map<String, Value>>(line).ok())
        .filter(|cell| cell.contains_key("status") && cell.contains_key("check"))
        .collect();
    if cells.is_empty() {
        return None;
    }
    let field = |cell: &Map<String, Value>, key: &str| -> String {
        cell.get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let mut stdout = String::new();
    let mut stderr = String::new();
    let mut findings: Vec<Value> = Vec::new();
    let mut denied = false;
    let mut skipped = true;
    let mut status: Option<String> = None;
    let mut stopped: Option<(Value, Value)> = None;
    for cell in &cells {
        stdout.push_str(&field(cell, "stdout"));
        stderr.push_str(&field(cell, "stderr"));
        let check = cell.get("check").cloned().unwrap_or(Value::Null);
        let decision = check["decision"].as_str().unwrap_or_default();
        skipped &= decision == "skipped";
        let cell_findings = check["findings"].as_array().cloned().unwrap_or_default();
        findings.extend(cell_findings.iter().cloned());
        let cell_status = field(cell, "status");
        if cell_status == "denied" {
            denied = true;
            if stopped.is_none() {
                let rule = cell_findings
                    .iter()
                    .find(|f| f["action"] == "deny")
                    .or_else(|| cell_findings.first())
                    .map(|f| f["rule"].clone())
                    .unwrap_or(Value::Null);
                stopped = Some((json!({"layer": "static", "rule": rule}), Value::Null));
            }
            continue;
        }
        if cell_status != "ok" && status.is_none() {
            status = Some(if cell_status == "session_lost" {
                "error".to_owned()
            } else {
                cell_status
            });
        }
        let error = cell.get("error").cloned().unwrap_or(Value::Null);
        if stopped.is_none() && error.is_object() {
            stopped = stopped_by(&error).map(|by| (by, error));
        }
    }
    let status = if denied {
        "denied".to_owned()
    } else {
        status.unwrap_or_else(|| "ok".to_owned())
    };
    let decision = match (denied, skipped) {
        (true, _) => "deny",
        (false, true) => "skipped",
        (false, false) => "allow",
    };
    let (stopped_by, error) = stopped.unwrap_or((Value::Null, Value::Null));
    Some(json!({
        "status": status,
        "exit_code": exit_code,
        "stdout": stdout,
        "stderr": stderr,
        "check": {"decision": decision, "findings": findings},
        "error": error,
        "stopped_by": stopped_by,
        "message": format!("a session of {} cell(s) (warden repl --json)", cells.len()),
    }))
}

/// The layer a cell's error names: the runtime layer's denial, or an errno of the kernel.
fn stopped_by(error: &Value) -> Option<Value> {
    let name = error["name"].as_str().unwrap_or_default();
    let value = error["value"].as_str().unwrap_or_default();
    let traceback: Vec<&str> = error["traceback"]
        .as_array()
        .map(|lines| lines.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let denial = |text: &str| -> Option<Value> {
        let start = text.find("warden[")?;
        let rest = &text[start + "warden[".len()..];
        let (rule, rest) = rest.split_once("] ")?;
        let event = rest.split_once(": ").map(|(event, _)| event);
        Some(json!({"layer": "runtime", "rule": rule, "event": event}))
    };
    if name.ends_with("PolicyViolation") {
        if let Some(by) = denial(value) {
            return Some(by);
        }
    }
    // A library wrapped the denial in its own error (`URLError: <urlopen error warden[NET802] …>`):
    // its value or the traceback holds the hook's message.
    if let Some(by) = std::iter::once(value)
        .chain(traceback.iter().rev().copied())
        .filter(|text| text.contains("PolicyViolation") || text.contains("runtime layer)"))
        .find_map(denial)
    {
        return Some(by);
    }
    const ERRNOS: &[(&str, &str)] = &[
        ("[Errno 1]", "EPERM"),
        ("[Errno 13]", "EACCES"),
        ("[Errno 30]", "EROFS"),
        ("[Errno 38]", "ENOSYS"),
    ];
    ERRNOS
        .iter()
        .find(|(text, _)| value.contains(text))
        .map(|(_, errno)| json!({"layer": "kernel", "errno": errno}))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    const CASE: &str = "# warden-case: d-session-x\n# session: cells\n# expect-jail: contained\n\
        # %% bind\nimport os as o\n# %%\no.system('id')\nx = 1\n";

    #[test]
    fn cells_start_at_markers_and_the_header_is_none() {
        let cells = cells(CASE.as_bytes()).expect("a session");
        assert_eq!(cells, ["import os as o\n", "o.system('id')\nx = 1\n"]);
        assert_eq!(
            String::from_utf8(input(&cells)).unwrap(),
            "{\"code\":\"import os as o\\n\"}\n{\"code\":\"o.system('id')\\nx = 1\\n\"}\n"
        );
        let one_shot = CASE.replace("# session: cells\n", "");
        assert_eq!(super::cells(one_shot.as_bytes()), None);
    }

    fn cell(status: &str, decision: &str, error: Value, findings: Value) -> String {
        json!({"status": status, "stdout": format!("{status}\n"), "stderr": "",
               "check": {"decision": decision, "findings": findings}, "error": error})
        .to_string()
    }

    #[test]
    fn the_record_names_the_first_cell_something_stopped() {
        let runtime = json!({"name": "warden.PolicyViolation",
            "value": "warden[PROC801] os.system: starting a process (policy default, runtime layer)",
            "traceback": []});
        let lines = [
            cell("ok", "skipped", Value::Null, json!([])),
            cell("error", "skipped", runtime, json!([])),
        ]
        .join("\n");
        let record = super::record(lines.as_bytes(), Some(0)).expect("record");
        assert_eq!(record["status"], "error");
        assert_eq!(record["stdout"], "ok\nerror\n");
        assert_eq!(record["check"]["decision"], "skipped");
        assert_eq!(
            record["stopped_by"],
            json!({"layer": "runtime", "rule": "PROC801", "event": "os.system"})
        );

        let finding = json!([{"rule": "IMP101", "action": "deny"}]);
        let lines = [
            cell("denied", "deny", Value::Null, finding),
            cell(
                "error",
                "allow",
                json!({"name": "PermissionError", "value": "[Errno 13] Permission denied: '/x'"}),
                json!([]),
            ),
        ]
        .join("\n");
        let record = super::record(lines.as_bytes(), Some(0)).expect("record");
        assert_eq!(record["status"], "denied");
        assert_eq!(record["check"]["decision"], "deny");
        assert_eq!(
            record["stopped_by"],
            json!({"layer": "static", "rule": "IMP101"})
        );

        let wrapped = json!({"name": "URLError", "value": "<urlopen error>",
            "traceback": ["warden.PolicyViolation: warden[NET802] socket.connect: a socket (…)"]});
        let lines = cell("error", "skipped", wrapped, json!([]));
        let record = super::record(lines.as_bytes(), None).expect("record");
        assert_eq!(record["stopped_by"]["rule"], "NET802");
        let in_value = json!({"name": "URLError",
            "value": "<urlopen error warden[NET802] socket.getaddrinfo: opening or using a socket (policy default, runtime layer) — hint: …>"});
        let lines = cell("error", "skipped", in_value, json!([]));
        let record = super::record(lines.as_bytes(), None).expect("record");
        assert_eq!(
            record["stopped_by"],
            json!({"layer": "runtime", "rule": "NET802", "event": "socket.getaddrinfo"})
        );
        let look_alike = json!({"name": "ValueError", "value": "warden[NET802] x: y"});
        let lines = cell("error", "skipped", look_alike, json!([]));
        let record = super::record(lines.as_bytes(), None).expect("record");
        assert_eq!(record["stopped_by"], Value::Null);
        assert_eq!(super::record(b"not a record\n", Some(2)), None);
    }
}
