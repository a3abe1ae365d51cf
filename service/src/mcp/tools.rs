//! The MCP tools' declarations: names, descriptions, input schemas (written by hand, so rmcp's
//! macros are not needed) and annotations.
//!
//! Owns: what a client lists. Does not own: what a call does (`mcp.rs`, `review.rs`) or how its
//! result reads (`render.rs`).

use super::*;

pub(super) fn tools() -> Vec<Tool> {
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

pub(super) fn review_tools() -> Vec<Tool> {
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

pub(super) fn schema_object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}
