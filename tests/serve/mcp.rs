//! End-to-end tests of `warden mcp`: the official MCP Python client (PyPI `mcp`, in the venv
//! scripts/setup-mcp-test.sh makes) spawns the server over stdio, lists the tools and calls them
//! the way an agent would (tests/serve/mcp_client.py): a chart comes back as a PNG image, a denied import
//! and a Python exception come back as tool errors a model can read, and the session leaves
//! nothing behind in the state directory.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use warden_test_support::repo;

/// Every check tests/serve/mcp_client.py makes; each must be reported, and true.
const CHECKS: &[&str] = &[
    "server_info",
    "list_tools",
    "run_ok_not_error",
    "run_ok_stdout",
    "run_ok_png_content",
    "run_ok_png_magic",
    "run_record_is_structured_not_dumped",
    "get_file_image",
    "get_file_missing_names_the_files",
    "run_output_bounded",
    "run_display_text",
    "run_schema_errors_are_actionable",
    "run_schema_last_line_ok",
    "run_schema_file_ok",
    "run_schema_file_missing",
    "run_denied_is_error",
    "run_denied_names_rule",
    "run_denied_did_not_run",
    "run_error_is_error",
    "run_error_names_exception",
    "run_chained_once",
    "run_denied_has_message",
    "run_timeout_is_error",
    "run_timeout_names_limit",
    "cancel_times_out",
    "cancel_stops_the_run",
    "cancel_ends_the_worker",
    "check_denied_is_error",
    "check_denied_names_rule",
    "check_allowed",
    "describe_policy",
    "unknown_policy_is_tool_error",
];

/// warden's data directory, found the way warden finds it (cli/src/runtime.rs `data_dir`).
fn data_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("WARDEN_DATA_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let root = status
        .lines()
        .find(|line| line.starts_with("Uid:"))
        .and_then(|line| line.split_whitespace().nth(2))
        == Some("0");
    if root {
        return PathBuf::from("/var/lib/warden");
    }
    if let Some(dir) = std::env::var_os("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir).join("warden");
    }
    PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".local/share/warden")
}

/// The venv's interpreter; a missing venv fails the test (it is never skipped).
fn client_python() -> PathBuf {
    let python = data_dir().join("test-venvs/mcp/bin/python3");
    assert!(
        python.exists(),
        "{} is missing: the MCP test client's venv is not installed; run scripts/setup.sh (or \
         scripts/setup-mcp-test.sh)",
        python.display()
    );
    python
}

/// A configuration whose state directory is private to this test, so leftovers can be seen.
fn config(dir: &Path) -> (PathBuf, PathBuf) {
    let state = dir.join("state");
    let config = dir.join("warden.toml");
    // Without the warm pool (on by default; tests/serve/pool.rs tests it): the client's check that a
    // cancelled run leaves no worker counts every worker of the state directory, and pooled jails
    // wait there by design.
    std::fs::write(
        &config,
        format!("[server]\nstate_dir = {state:?}\n[pool]\nenabled = false\n"),
    )
    .unwrap();
    (config, state)
}

struct ClientRun {
    code: i32,
    summary: Value,
    stdout: String,
    stderr: String,
}

fn run_client(state: &Path, extra: &[&str]) -> ClientRun {
    let output = Command::new(client_python())
        .env("WARDEN_TEST_STATE_DIR", state)
        .arg(repo().join("tests/serve/mcp_client.py"))
        .arg(warden_test_support::warden_bin())
        .args(extra)
        .output()
        .expect("run the MCP client");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let last = stdout.lines().last().unwrap_or("");
    let summary = serde_json::from_str(last).unwrap_or_else(|err| {
        panic!("the client's summary is not JSON ({err}):\n{stdout}\nstderr:\n{stderr}")
    });
    ClientRun {
        code: output.status.code().expect("exit code"),
        summary,
        stdout,
        stderr,
    }
}

#[test]
fn an_agent_runs_checks_and_describes_programs_over_stdio() {
    let dir = tempfile::tempdir().unwrap();
    let (config, state) = config(dir.path());
    let run = run_client(&state, &["--config", config.to_str().unwrap()]);
    let failures = &run.summary["failures"];
    assert_eq!(
        run.code, 0,
        "the MCP client reported failures: {failures:#}\nstdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    assert_eq!(run.summary["ok"], true, "{}", run.summary);
    for check in CHECKS {
        assert_eq!(
            run.summary["checks"][check], true,
            "check {check} was not made or failed: {}",
            run.summary
        );
    }
    // The server removes its session directory when the client closes standard input (or
    // SIGTERMs it, as the SDK does 2 s later). The client may return before `warden mcp` has
    // finished: its removal is waited for, within a bound.
    let left = || -> Vec<String> {
        std::fs::read_dir(&state)
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|name| name.starts_with("mcp-"))
                    .collect()
            })
            .unwrap_or_default()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !left().is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(
        left().is_empty(),
        "the session left {:?} in {} 10 s after the client ended",
        left(),
        state.display()
    );
}

#[test]
fn the_client_reports_a_server_that_does_not_start() {
    let dir = tempfile::tempdir().unwrap();
    let (config, state) = config(dir.path());
    let run = run_client(
        &state,
        &[
            "--config",
            config.to_str().unwrap(),
            "--policy",
            "no-such-policy",
        ],
    );
    assert_eq!(
        run.code, 2,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    assert_eq!(run.summary["ok"], false);
    assert!(
        run.stderr.contains("no policy is named \"no-such-policy\""),
        "the server's error reaches the client's stderr: {}",
        run.stderr
    );
}

/// Every check tests/serve/mcp_http_client.py makes; each must be reported, and true.
const HTTP_CHECKS: &[&str] = &[
    "unauthenticated_is_401",
    "wrong_token_is_401",
    "unauthenticated_client_fails",
    "server_info",
    "list_tools",
    "session_id_issued",
    "run_ok",
    "state_persists",
    "run_denied_is_error",
    "run_denied_names_rule",
    "check_allowed",
    "other_client_gets_404",
    "token_policies_apply",
    "socket_run_ok",
    "session_terminated_cleanly",
];

#[test]
fn an_agent_uses_the_tools_over_streamable_http_behind_the_apis_tokens() {
    use warden_test_support::serve::{metric, request, Options, Server, STRICT_TOKEN, TOKEN};
    warden_test_support::require_root!();
    let mut server = Server::start(Options {
        tcp: true,
        ..Options::default()
    });
    let Some(addr) = server.tcp else {
        panic!("the server listens on TCP")
    };
    let output = Command::new(client_python())
        .env("WARDEN_TEST_TOKEN", TOKEN)
        .env("WARDEN_TEST_STRICT_TOKEN", STRICT_TOKEN)
        .arg(repo().join("tests/serve/mcp_http_client.py"))
        .arg(format!("http://{addr}/mcp"))
        .arg(&server.socket)
        .output()
        .expect("run the MCP client");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let summary: Value =
        serde_json::from_str(stdout.lines().last().unwrap_or("")).unwrap_or_else(|err| {
            panic!("the client's summary is not JSON ({err}):\n{stdout}\nstderr:\n{stderr}")
        });
    assert_eq!(
        output.status.code(),
        Some(0),
        "the MCP client reported failures: {:#}\nstderr:\n{stderr}\nserver:\n{}",
        summary["failures"],
        server.stderr.lock().unwrap()
    );
    for check in HTTP_CHECKS {
        assert_eq!(
            summary["checks"][check], true,
            "check {check} was not made or failed: {summary}"
        );
    }
    // DELETE /mcp is answered as the official client expects: it exits without a warning.
    assert!(
        !stderr.contains("Session termination failed"),
        "the client could not end its MCP session:\n{stderr}"
    );
    // The tool calls are audited under the caller that made them.
    let audit = server.audit_lines();
    let by = |endpoint: &str, client: &str| {
        audit.iter().any(|line| {
            line["endpoint"] == endpoint
                && line["client"].as_str().unwrap_or("").starts_with(client)
        })
    };
    assert!(by("run_python", "token:agent-a "), "{audit:#?}");
    assert!(by("run_python", "uid:0 "), "{audit:#?}");
    assert!(by("check_python", "token:agent-a "), "{audit:#?}");
    // Refusals are counted; every MCP session's warden session ended with it (the client
    // deletes its MCP session on exit).
    let socket = server.unix();
    let mut metrics = String::new();
    for _ in 0..100 {
        metrics = request(&socket, "GET", "/metrics", None, None).text();
        if metric(&metrics, "warden_sessions_active") == Some(0.0) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(
        metric(&metrics, "warden_sessions_active"),
        Some(0.0),
        "{metrics}"
    );
    let rejected = |reason: &str| {
        metric(
            &metrics,
            &format!("warden_requests_rejected_total{{reason=\"{reason}\"}}"),
        )
        .unwrap_or(0.0)
    };
    assert!(rejected("unauthorized") >= 3.0, "{metrics}");
    assert!(rejected("not_found") >= 1.0, "{metrics}");
    assert!(rejected("forbidden") >= 1.0, "{metrics}");
    assert!(server.stop().success());
}

#[test]
fn an_open_mcp_stream_does_not_hold_up_shutdown() {
    use std::io::{Read, Write};
    use std::time::{Duration, Instant};
    use warden_test_support::serve::{connect, parse_raw_response, signal, Options, Server};
    warden_test_support::require_root!();
    let mut server = Server::start(Options::default());
    let socket = server.unix();
    let exchange = |head: String, body: &str| {
        let mut stream = connect(&socket);
        stream.set_read_timeout(Some(Duration::from_secs(30)));
        stream
            .write_all(format!("{head}Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes())
            .unwrap();
        let mut raw = Vec::new();
        let _ = stream.read_to_end(&mut raw);
        parse_raw_response(&raw)
    };
    let common = "Host: localhost\r\nConnection: close\r\nContent-Type: application/json\r\n\
                  Accept: application/json, text/event-stream\r\n";
    let init = exchange(
        format!("POST /mcp HTTP/1.1\r\n{common}"),
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#,
    );
    assert_eq!(init.status, 200, "{}", init.text());
    let id = init
        .header("mcp-session-id")
        .unwrap_or_else(|| panic!("no session id: {:?}", init.headers))
        .to_owned();
    let session = format!("Mcp-Session-Id: {id}\r\nMcp-Protocol-Version: 2025-06-18\r\n");
    let initialized = exchange(
        format!("POST /mcp HTTP/1.1\r\n{common}{session}"),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert_eq!(initialized.status, 202, "{}", initialized.text());
    // The client's standing stream for server messages: open until the server ends it.
    let mut stream = connect(&socket);
    stream
        .write_all(
            format!(
                "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n{session}\r\n"
            )
            .as_bytes(),
        )
        .unwrap();
    let mut first = [0u8; 64];
    stream.set_read_timeout(Some(Duration::from_secs(30)));
    let n = stream.read(&mut first).unwrap();
    assert!(
        String::from_utf8_lossy(&first[..n]).starts_with("HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&first[..n])
    );
    // SIGTERM: the MCP session is closed and its stream ends, well before the grace period (20 s).
    let started = Instant::now();
    signal(server.pid(), "TERM");
    let mut child = server.child.take().unwrap();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "an open MCP stream held up the shutdown"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status}");
    let mut rest = Vec::new();
    let _ = stream.read_to_end(&mut rest);
}

/// One request with extra headers on a fresh connection.
fn request_with(
    endpoint: &warden_test_support::serve::Endpoint,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> warden_test_support::serve::Response {
    use std::io::{Read, Write};
    let mut stream = warden_test_support::serve::connect(endpoint);
    stream.set_read_timeout(Some(std::time::Duration::from_secs(30)));
    let mut head = format!(
        "POST {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    // A server that refuses on the head (a cap, a browser's origin) may answer and close before
    // the body is written: the answer is what the caller judges.
    let _ = stream.write_all(body);
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    warden_test_support::serve::parse_raw_response(&raw)
}

#[test]
fn mcp_sessions_over_http_are_capped_and_browsers_refused() {
    use warden_test_support::serve::{Options, Server};
    warden_test_support::require_root!();
    // At most admission.max_connections MCP sessions at once.
    let mut server = Server::start(Options {
        max_connections: 2,
        ..Options::default()
    });
    let socket = server.unix();
    let initialize = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;
    let accept = ("Accept", "application/json, text/event-stream");
    // A browser's request (it carries an Origin) is refused.
    let browser = request_with(
        &socket,
        "/mcp",
        &[accept, ("Origin", "http://evil.example")],
        initialize,
    );
    assert_eq!(browser.status, 403, "{}", browser.text());
    // Each client has its share (admission.max_mcp_sessions_per_client: a quarter of
    // max_connections, at least 1): one token cannot take every MCP session.
    let open = |token: &str| {
        let bearer = format!("Bearer {token}");
        request_with(
            &socket,
            "/mcp",
            &[accept, ("Authorization", bearer.as_str())],
            initialize,
        )
    };
    use warden_test_support::serve::{MULTI_TOKEN, STRICT_TOKEN, TOKEN};
    let opened = open(TOKEN);
    assert_eq!(opened.status, 200, "{}", opened.text());
    assert!(opened.header("mcp-session-id").is_some());
    let share = open(TOKEN);
    assert_eq!(share.status, 429, "{}", share.text());
    assert_eq!(share.json()["error"]["code"], "session_limit");
    assert!(
        share.text().contains("max_mcp_sessions_per_client"),
        "{}",
        share.text()
    );
    // Concurrent first requests of one client: the share holds for them too (each is counted
    // from its check, not from when its session exists).
    let burst: Vec<_> = std::thread::scope(|scope| {
        let clients: Vec<_> = (0..6)
            .map(|_| scope.spawn(|| open(MULTI_TOKEN).status))
            .collect();
        clients
            .into_iter()
            .map(|c| c.join().expect("client"))
            .collect()
    });
    assert_eq!(
        burst.iter().filter(|status| **status == 200).count(),
        1,
        "one client opened more than its share at once: {burst:?}"
    );
    assert!(
        burst.iter().all(|status| *status == 200 || *status == 429),
        "{burst:?}"
    );
    // The server's cap.
    let refused = open(STRICT_TOKEN);
    assert_eq!(refused.status, 429, "{}", refused.text());
    assert_eq!(refused.json()["error"]["code"], "session_limit");
    assert!(
        refused.text().contains("as many MCP sessions as it may"),
        "{}",
        refused.text()
    );
    assert!(refused.header("retry-after").is_some());
    assert!(server.stop().success());
}

/// One MCP request over HTTP with `token` (and the session's id once there is one); the JSON-RPC
/// message that answers it, read from the JSON body or the event stream.
fn mcp_over_http(
    socket: &warden_test_support::serve::Endpoint,
    token: &str,
    session: Option<&str>,
    message: &serde_json::Value,
) -> (
    warden_test_support::serve::Response,
    Option<serde_json::Value>,
) {
    let bearer = format!("Bearer {token}");
    let mut headers = vec![
        ("Accept", "application/json, text/event-stream"),
        ("Authorization", bearer.as_str()),
    ];
    if let Some(id) = session {
        headers.push(("Mcp-Session-Id", id));
    }
    let response = request_with(socket, "/mcp", &headers, message.to_string().as_bytes());
    let text = response.text();
    let answer = text
        .lines()
        .filter_map(|line| line.strip_prefix("data:").map(str::trim))
        .chain(std::iter::once(text.trim()))
        .filter_map(|data| serde_json::from_str::<serde_json::Value>(data).ok())
        .find(|message| message.get("id").is_some());
    (response, answer)
}

/// Issue 25, point 8: `describe_policy {}` answers a token that may not use the server's default
/// with its own choices, never the default's name; `/metrics` shows it only its policies' series
/// (tests/serve/pool.rs: `metrics_show_a_restricted_token_only_its_own_policies`).
#[test]
fn describe_policy_names_only_the_policies_a_token_may_use() {
    use serde_json::json;
    use warden_test_support::serve::{Options, Server, MULTI_TOKEN, STRICT_TOKEN};
    warden_test_support::require_root!();
    let server = Server::start(Options::default());
    let socket = server.unix();
    // The text blocks of `describe_policy {}` for `token`, and whether it is an error.
    let describe = |token: &str| -> (Vec<String>, bool) {
        let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}});
        let (opened, _) = mcp_over_http(&socket, token, None, &initialize);
        assert_eq!(opened.status, 200, "{}", opened.text());
        let id = opened.header("mcp-session-id").unwrap().to_owned();
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let (done, _) = mcp_over_http(&socket, token, Some(&id), &initialized);
        assert!(done.status < 300, "{}", done.text());
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                          "params": {"name": "describe_policy", "arguments": {}}});
        let (answered, answer) = mcp_over_http(&socket, token, Some(&id), &call);
        let answer = answer.unwrap_or_else(|| panic!("no answer: {}", answered.text()));
        let blocks = answer["result"]["content"]
            .as_array()
            .unwrap_or_else(|| panic!("{answer}"))
            .iter()
            .filter_map(|block| block["text"].as_str().map(str::to_owned))
            .collect();
        (blocks, answer["result"]["isError"] == true)
    };
    // Two policies, neither the server's default: no default, and the choices are its own.
    let (multi, error) = describe(MULTI_TOKEN);
    let text = multi.join("\n");
    assert!(error && text.contains("no default policy"), "{text}");
    assert!(text.contains("review") && text.contains("strict"), "{text}");
    assert_eq!(text.matches("default").count(), 1, "{text}");
    // One policy: it is this token's default, described, and no other policy is named.
    let (strict, error) = describe(STRICT_TOKEN);
    assert!(!error, "{strict:?}");
    assert_eq!(strict.len(), 1, "{strict:?}");
    let described: Value = serde_json::from_str(&strict[0]).unwrap();
    assert_eq!(described["name"], "strict", "{described}");
}

/// A client that gives up waiting for `warden mcp` to exit sends SIGTERM (the MCP Python SDK does,
/// 2 s after closing our input, and SIGKILL 2 s after that): `warden mcp` then kills its session
/// at once and removes this connection's state directory, well within those 2 s.
#[test]
fn warden_mcp_ends_its_session_at_once_on_sigterm() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    use warden_test_support::jail::processes_with;
    use warden_test_support::serve::signal;
    warden_test_support::require_root!();
    let dir = tempfile::tempdir().unwrap();
    let (config, state) = config(dir.path());
    let mut child = warden_test_support::warden()
        .args(["mcp", "--config"])
        .arg(&config)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap());
    let mut call = |id: u64, method: &str, params: Value| {
        let message =
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(input, "{message}").unwrap();
        input.flush().unwrap();
        loop {
            let mut line = String::new();
            assert!(
                output.read_line(&mut line).unwrap() > 0,
                "warden mcp closed"
            );
            let answer: Value = serde_json::from_str(&line).unwrap();
            if answer["id"] == id {
                return answer;
            }
        }
    };
    call(
        1,
        "initialize",
        serde_json::json!({"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "sigterm-test", "version": "0"}}),
    );
    // (The initialized notification is not needed for tools/call by rmcp's server.)
    let cell = call(
        2,
        "tools/call",
        serde_json::json!({"name": "run_python", "arguments": {"code": "x = 1\nprint(x)\n"}}),
    );
    assert_eq!(cell["result"]["isError"], false, "{cell}");
    let mine = state.join(format!("mcp-{}", child.id()));
    assert!(mine.is_dir(), "{}", mine.display());
    let workers = processes_with(&mine.to_string_lossy());
    assert!(
        !workers.is_empty(),
        "no session worker under {}",
        mine.display()
    );
    let started = Instant::now();
    signal(child.id(), "TERM");
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "warden mcp did not end on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let took = started.elapsed();
    assert!(took < Duration::from_secs(2), "took {took:?} ({status})");
    assert!(!mine.exists(), "{} left", mine.display());
    assert!(
        warden_test_support::serve::wait_until(Duration::from_secs(5), || workers
            .iter()
            .all(|pid| !running(*pid))),
        "session processes outlived warden mcp: {workers:?}"
    );
}

/// Whether `pid` is a process that has not exited (a zombie waiting to be reaped has).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| !matches!(state, "Z" | "X"))
    })
}
