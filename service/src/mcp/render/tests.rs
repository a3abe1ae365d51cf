#![allow(clippy::unwrap_used)]
//! The wording of tool results, on records as the session worker sends them.

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
