//! Sessions end to end (issue 14, point 6): a real `warden serve` with real jails and real Python,
//! driven over the Unix socket like an agent: state kept across cells, a denied cell that changes
//! nothing, other clients locked out (404), `DELETE`, the idle timeout and the session cap ending
//! or refusing sessions with nothing left behind, files in and out (subdirectories yes, `..` no),
//! output streamed as Server-Sent Events before the cell ends, and `warden mcp`'s `run_python`
//! keeping state across calls until `reset`.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use base64::Engine;
use serde_json::{json, Value};

use super::support::{
    self, cgroups_of, post_json, request, session_dirs, session_workers, sse_events, timed_request,
    wait_until, Options, Server, MULTI_TOKEN, STRICT_TOKEN, TOKEN,
};

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Starts a session for `token` and returns its id.
fn create(server: &Server, token: Option<&str>, body: &Value) -> String {
    let created = post_json(&server.unix(), "/v1/sessions", token, body);
    assert_eq!(created.status, 200, "{}", created.text());
    let id = created.json()["id"].as_str().expect("id").to_owned();
    assert_eq!(id.len(), 32, "{id}");
    id
}

fn execute(server: &Server, token: Option<&str>, id: &str, code: &str) -> Value {
    let answer = post_json(
        &server.unix(),
        &format!("/v1/sessions/{id}/execute"),
        token,
        &json!({ "code": code }),
    );
    assert_eq!(answer.status, 200, "{}", answer.text());
    answer.json()
}

/// Asserts that nothing of a session whose worker was `pid` is left: no process, no cgroup, no
/// directory in the server's state directory.
fn assert_session_gone(server: &Server, pids: &[u32]) {
    assert!(
        wait_until(Duration::from_secs(10), || session_workers(
            &server.state_dir
        )
        .iter()
        .all(|pid| !pids.contains(pid))),
        "the session's processes are still running: {:?}",
        session_workers(&server.state_dir)
    );
    for pid in pids {
        assert!(
            wait_until(Duration::from_secs(5), || cgroups_of(*pid).is_empty()),
            "cgroups left behind: {:?}",
            cgroups_of(*pid)
        );
    }
    assert!(
        wait_until(Duration::from_secs(5), || session_dirs(&server.state_dir)
            .is_empty()),
        "session directories left behind: {:?}",
        session_dirs(&server.state_dir)
    );
}

#[test]
fn a_session_keeps_its_state_refuses_a_denied_cell_and_belongs_to_its_creator() {
    let server = Server::start(Options::default());
    let socket = server.unix();
    let id = create(&server, Some(TOKEN), &json!({}));
    let workers = session_workers(&server.state_dir);
    assert!(!workers.is_empty(), "no session worker runs");

    let first = execute(&server, Some(TOKEN), &id, "x = 41\nimport os as o\n");
    assert_eq!(first["status"], "ok", "{first}");
    assert_eq!(first["execution_count"], 1);
    let second = execute(&server, Some(TOKEN), &id, "x + 1");
    assert_eq!(second["status"], "ok", "{second}");
    assert_eq!(second["result"]["text/plain"], "42", "{second}");
    assert_eq!(second["execution_count"], 2);
    for key in [
        "stdout", "stderr", "display", "error", "usage", "check", "status",
    ] {
        assert!(
            second.get(key).is_some(),
            "the record has no {key}: {second}"
        );
    }

    // The alias from an earlier cell is judged with it: the cell is denied and does not run.
    let denied = execute(
        &server,
        Some(TOKEN),
        &id,
        "x = 0\no.system(\"id\")\nprint('ran')",
    );
    assert_eq!(denied["status"], "denied", "{denied}");
    assert_eq!(denied["check"]["decision"], "deny", "{denied}");
    assert_eq!(denied["execution_count"], Value::Null);
    assert_eq!(denied["stdout"], "", "{denied}");
    assert_eq!(denied["session_alive"], true);
    let kept = execute(&server, Some(TOKEN), &id, "x");
    assert_eq!(
        kept["result"]["text/plain"], "41",
        "the denied cell changed x: {kept}"
    );
    assert_eq!(kept["execution_count"], 3);

    // Anyone else gets 404 for everything about it, and does not see it listed.
    let path = format!("/v1/sessions/{id}");
    for other in [Some(STRICT_TOKEN), Some(MULTI_TOKEN), None] {
        let run = post_json(
            &socket,
            &format!("{path}/execute"),
            other,
            &json!({"code": "x"}),
        );
        assert_eq!(run.status, 404, "{other:?}: {}", run.text());
        assert_eq!(run.json()["error"]["code"], "not_found");
        for (method, suffix) in [
            ("GET", ""),
            ("GET", "/files"),
            ("GET", "/files/a.txt"),
            ("DELETE", ""),
        ] {
            let answer = request(&socket, method, &format!("{path}{suffix}"), other, None);
            assert_eq!(
                answer.status,
                404,
                "{method} {suffix} as {other:?}: {}",
                answer.text()
            );
        }
        let listed = request(&socket, "GET", "/v1/sessions", other, None).json();
        assert_eq!(listed["sessions"], json!([]), "{listed}");
    }
    let mine = request(&socket, "GET", "/v1/sessions", Some(TOKEN), None).json();
    assert_eq!(mine["sessions"][0]["id"], id.as_str(), "{mine}");
    assert_eq!(mine["sessions"][0]["execution_count"], 3, "{mine}");

    // DELETE ends it and leaves nothing behind.
    let ended = request(&socket, "DELETE", &path, Some(TOKEN), None);
    assert_eq!(ended.status, 200, "{}", ended.text());
    assert_eq!(ended.json()["reason"], "closed");
    assert_session_gone(&server, &workers);
    let after = post_json(
        &socket,
        &format!("{path}/execute"),
        Some(TOKEN),
        &json!({"code": "x"}),
    );
    assert_eq!(after.status, 404, "{}", after.text());

    // Audit lines and metrics cover the session and its cells.
    let audit = server.audit_lines();
    let of = |endpoint: &str| -> Vec<&Value> {
        audit
            .iter()
            .filter(|l| l["endpoint"] == endpoint && l["session"] == id.as_str())
            .collect()
    };
    assert_eq!(of("session_create").len(), 1, "{audit:?}");
    let cells = of("session_execute");
    let statuses: Vec<&str> = cells.iter().filter_map(|l| l["status"].as_str()).collect();
    assert_eq!(statuses, ["ok", "ok", "denied", "ok"], "{cells:?}");
    assert_eq!(cells[2]["decision"], "deny");
    assert!(cells
        .iter()
        .all(|l| l["client"].as_str().unwrap().starts_with("token:agent-a")));
    let end = of("session_end");
    assert_eq!(end.len(), 1, "{audit:?}");
    assert_eq!(end[0]["status"], "closed");
    let metrics = request(&socket, "GET", "/metrics", None, None).text();
    for (name, value) in [
        ("warden_sessions_created_total", 1.0),
        ("warden_sessions_ended_total{reason=\"closed\"}", 1.0),
        ("warden_session_cells_total{status=\"ok\"}", 3.0),
        ("warden_session_cells_total{status=\"denied\"}", 1.0),
        ("warden_sessions_active", 0.0),
    ] {
        assert_eq!(
            support::metric(&metrics, name),
            Some(value),
            "{name}:\n{metrics}"
        );
    }
}

#[test]
fn idle_sessions_end_and_the_session_cap_refuses_one_more() {
    let server = Server::start(Options {
        sessions: Some("max_sessions = 2\nidle_timeout_ms = 1500\n".to_owned()),
        ..Options::default()
    });
    let socket = server.unix();
    let first = create(&server, Some(TOKEN), &json!({}));
    let second = create(&server, None, &json!({}));
    let workers = session_workers(&server.state_dir);

    // A third is refused, whoever asks, with the reason and when to retry.
    let refused = post_json(
        &socket,
        "/v1/sessions",
        Some(MULTI_TOKEN),
        &json!({"policy": "strict"}),
    );
    assert_eq!(refused.status, 429, "{}", refused.text());
    assert_eq!(refused.json()["error"]["code"], "session_limit");
    let message = refused.json()["error"]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(message.contains("sessions.max_sessions"), "{message}");
    assert!(refused.header("retry-after").is_some());

    // One-shot runs do not wait for sessions: they have their own slots.
    let run = post_json(
        &socket,
        "/v1/run",
        Some(TOKEN),
        &json!({"code": "print(6 * 7)"}),
    );
    assert_eq!(run.status, 200, "{}", run.text());
    assert_eq!(run.json()["stdout"], "42\n");

    // Used sessions stay; idle ones end after the idle timeout.
    assert_eq!(
        execute(&server, Some(TOKEN), &first, "y = 1")["status"],
        "ok"
    );
    for _ in 0..3 {
        std::thread::sleep(Duration::from_millis(600));
        assert_eq!(
            execute(&server, Some(TOKEN), &first, "y += 1")["status"],
            "ok"
        );
    }
    let info = request(
        &socket,
        "GET",
        &format!("/v1/sessions/{second}"),
        None,
        None,
    );
    assert_eq!(
        info.status,
        404,
        "the idle session is still there: {}",
        info.text()
    );
    let kept = execute(&server, Some(TOKEN), &first, "y");
    assert_eq!(kept["result"]["text/plain"], "4", "{kept}");
    assert!(
        wait_until(Duration::from_secs(5), || request(
            &socket,
            "GET",
            &format!("/v1/sessions/{first}"),
            Some(TOKEN),
            None
        )
        .status
            == 404),
        "the first session did not end once idle"
    );
    assert_session_gone(&server, &workers);
    let ends: Vec<Value> = server
        .audit_lines()
        .into_iter()
        .filter(|l| l["endpoint"] == "session_end")
        .collect();
    assert_eq!(ends.len(), 2, "{ends:?}");
    assert!(
        ends.iter().all(|l| l["status"] == "idle_timeout"),
        "{ends:?}"
    );

    // With the places free again, a session starts.
    let third = create(&server, Some(MULTI_TOKEN), &json!({"policy": "strict"}));
    assert_eq!(
        execute(&server, Some(MULTI_TOKEN), &third, "1 + 1")["status"],
        "ok"
    );
}

#[test]
fn a_session_ends_at_its_maximum_lifetime_even_when_in_use() {
    let server = Server::start(Options {
        sessions: Some("max_lifetime_ms = 2000\n".to_owned()),
        ..Options::default()
    });
    let started = std::time::Instant::now();
    let id = create(&server, Some(TOKEN), &json!({}));
    let workers = session_workers(&server.state_dir);
    let mut last = Value::Null;
    while started.elapsed() < Duration::from_secs(15) {
        let answer = post_json(
            &server.unix(),
            &format!("/v1/sessions/{id}/execute"),
            Some(TOKEN),
            &json!({"code": "z = 1"}),
        );
        if answer.status == 404 {
            break;
        }
        last = answer.json();
        if last["status"] != "ok" {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let ended = started.elapsed();
    assert!(
        ended >= Duration::from_millis(1900) && ended < Duration::from_secs(8),
        "ended after {ended:?}; last answer {last}"
    );
    assert_session_gone(&server, &workers);
    let end: Vec<Value> = server
        .audit_lines()
        .into_iter()
        .filter(|l| l["endpoint"] == "session_end")
        .collect();
    assert_eq!(end.len(), 1, "{end:?}");
    assert_eq!(end[0]["status"], "max_lifetime", "{end:?}");
}

#[test]
fn files_go_in_and_out_in_subdirectories_and_never_outside_the_work_dir() {
    let server = Server::start(Options::default());
    let socket = server.unix();
    let id = create(
        &server,
        Some(TOKEN),
        &json!({"inputs": [{"name": "inputs/sales.csv", "content_base64": b64(b"region,n\nn,3\ns,4\n")}]}),
    );
    let files = format!("/v1/sessions/{id}/files");

    // Upload: raw bytes with PUT, base64 JSON with POST; directories are made.
    let put = request(
        &socket,
        "PUT",
        &format!("{files}/data/2024/q1.txt"),
        Some(TOKEN),
        Some(b"first quarter"),
    );
    assert_eq!(put.status, 200, "{}", put.text());
    assert_eq!(put.json(), json!({"path": "data/2024/q1.txt", "size": 13}));
    let post = post_json(
        &socket,
        &files,
        Some(TOKEN),
        &json!({"name": "./notes//a.txt", "content_base64": b64(b"note")}),
    );
    assert_eq!(post.status, 200, "{}", post.text());
    assert_eq!(post.json()["path"], "notes/a.txt");

    let cell = execute(
        &server,
        Some(TOKEN),
        &id,
        "import csv, os\n\
         rows = list(csv.DictReader(open('inputs/sales.csv')))\n\
         os.makedirs('out', exist_ok=True)\n\
         total = sum(int(r['n']) for r in rows)\n\
         open('out/total.txt', 'w').write(f\"{total} {open('data/2024/q1.txt').read()} {open('notes/a.txt').read()}\")\n\
         total",
    );
    assert_eq!(cell["status"], "ok", "{cell}");
    assert_eq!(cell["result"]["text/plain"], "7");

    let listed = request(&socket, "GET", &files, Some(TOKEN), None);
    assert_eq!(listed.status, 200, "{}", listed.text());
    let paths: Vec<String> = listed.json()["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_owned())
        .collect();
    for expected in [
        "inputs/sales.csv",
        "data/2024/q1.txt",
        "notes/a.txt",
        "out/total.txt",
    ] {
        assert!(
            paths.iter().any(|p| p == expected),
            "{expected} not in {paths:?}"
        );
    }
    let got = request(
        &socket,
        "GET",
        &format!("{files}/out/total.txt"),
        Some(TOKEN),
        None,
    );
    assert_eq!(got.status, 200, "{}", got.text());
    assert_eq!(got.body, b"7 first quarter note");
    let missing = request(
        &socket,
        "GET",
        &format!("{files}/out/none.txt"),
        Some(TOKEN),
        None,
    );
    assert_eq!(missing.status, 404, "{}", missing.text());

    // `..` and absolute paths are refused, encoded or not, and nothing is written.
    for bad in [
        "../escape.txt",
        "a/../../escape.txt",
        "%2e%2e/escape.txt",
        "%2Fetc%2Fpasswd",
    ] {
        for method in ["PUT", "GET"] {
            let answer = request(
                &socket,
                method,
                &format!("{files}/{bad}"),
                Some(TOKEN),
                (method == "PUT").then_some(&b"x"[..]),
            );
            assert_eq!(answer.status, 400, "{method} {bad}: {}", answer.text());
        }
    }
    for bad in ["../escape.txt", "/etc/passwd", ""] {
        let answer = post_json(
            &socket,
            &files,
            Some(TOKEN),
            &json!({"name": bad, "content_base64": b64(b"x")}),
        );
        assert_eq!(answer.status, 400, "{bad}: {}", answer.text());
    }
    let refused = post_json(
        &socket,
        "/v1/sessions",
        Some(TOKEN),
        &json!({"inputs": [{"name": "../x", "content_base64": ""}]}),
    );
    assert_eq!(refused.status, 400, "{}", refused.text());
    let escaped = server.state_dir.parent().unwrap().join("escape.txt");
    assert!(!escaped.exists());

    // A one-shot run takes inputs in subdirectories too.
    let run = post_json(
        &socket,
        "/v1/run",
        Some(TOKEN),
        &json!({
            "code": "print(open('inputs/2024/sales.csv').read().strip())",
            "inputs": [{"name": "inputs/2024/sales.csv", "content_base64": b64(b"a,b")}],
        }),
    );
    assert_eq!(run.status, 200, "{}", run.text());
    assert_eq!(run.json()["stdout"], "a,b\n", "{}", run.text());

    let ended = request(
        &socket,
        "DELETE",
        &format!("/v1/sessions/{id}"),
        Some(TOKEN),
        None,
    );
    assert_eq!(ended.status, 200);
}

#[test]
fn a_cells_output_streams_before_the_cell_ends() {
    let server = Server::start(Options::default());
    let id = create(&server, Some(TOKEN), &json!({}));
    let code = "import time\nprint('first', flush=True)\ntime.sleep(1.5)\nprint('second')\n'done'";
    let reads = timed_request(
        &server.unix(),
        "POST",
        &format!("/v1/sessions/{id}/execute"),
        Some(TOKEN),
        &["Accept: text/event-stream"],
        &serde_json::to_vec(&json!({ "code": code })).unwrap(),
    );
    let raw: Vec<u8> = reads.iter().flat_map(|(_, bytes)| bytes.clone()).collect();
    let response = support::parse_raw_response(&raw);
    assert_eq!(response.status, 200, "{}", response.text());
    assert!(
        response
            .header("content-type")
            .is_some_and(|t| t.starts_with("text/event-stream")),
        "{:?}",
        response.headers
    );
    let when = |needle: &str| {
        reads
            .iter()
            .find(|(_, bytes)| String::from_utf8_lossy(bytes).contains(needle))
            .map(|(at, _)| *at)
            .unwrap_or_else(|| panic!("{needle} never arrived: {}", response.text()))
    };
    let first = when("first");
    let record = when("event: record");
    assert!(
        record >= first + Duration::from_millis(1000),
        "the first chunk came at {first:?}, the record at {record:?}"
    );
    let events = sse_events(&response.body);
    assert_eq!(events[0].0, "stream", "{events:?}");
    assert_eq!(events[0].1["name"], "stdout");
    let (last, data) = events.last().unwrap();
    assert_eq!(last, "record", "{events:?}");
    assert_eq!(data["status"], "ok", "{data}");
    assert_eq!(data["stdout"], "first\nsecond\n");
    assert_eq!(data["result"]["text/plain"], "'done'");

    // `?stream=1` asks for the same; an unknown session is a plain 404.
    let reads = timed_request(
        &server.unix(),
        "POST",
        &format!("/v1/sessions/{id}/execute?stream=1"),
        Some(TOKEN),
        &[],
        br#"{"code": "print('again')"}"#,
    );
    let raw: Vec<u8> = reads.into_iter().flat_map(|(_, bytes)| bytes).collect();
    let events = sse_events(&support::parse_raw_response(&raw).body);
    assert_eq!(events.last().unwrap().1["stdout"], "again\n", "{events:?}");
    let unknown = request(
        &server.unix(),
        "POST",
        "/v1/sessions/0000/execute?stream=1",
        Some(TOKEN),
        Some(br#"{"code": "1"}"#),
    );
    assert_eq!(unknown.status, 404, "{}", unknown.text());
}

/// A minimal MCP client over a child's standard input and output (JSON-RPC, one message a line).
struct Mcp {
    child: std::process::Child,
    input: std::process::ChildStdin,
    output: BufReader<std::process::ChildStdout>,
    next: u64,
}

impl Mcp {
    fn start(config: &Path) -> Mcp {
        let mut child = Command::new(warden_test_support::warden_bin())
            .args(["mcp", "--audit-log", "off", "--config"])
            .arg(config)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start warden mcp");
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        let mut mcp = Mcp {
            child,
            input,
            output,
            next: 0,
        };
        let init = mcp.call(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "warden-test", "version": "0"}}),
        );
        assert_eq!(init["serverInfo"]["name"], "warden", "{init}");
        assert!(
            init["instructions"].as_str().unwrap().contains("persist"),
            "{init}"
        );
        mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        mcp
    }

    fn send(&mut self, message: &Value) {
        let mut line = serde_json::to_vec(message).unwrap();
        line.push(b'\n');
        self.input.write_all(&line).unwrap();
        self.input.flush().unwrap();
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            assert!(
                self.output.read_line(&mut line).unwrap() > 0,
                "warden mcp closed"
            );
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                assert!(message.get("error").is_none(), "{message}");
                return message["result"].clone();
            }
        }
    }

    fn run(&mut self, arguments: Value) -> Value {
        self.call(
            "tools/call",
            json!({"name": "run_python", "arguments": arguments}),
        )
    }
}

/// Session workers (and their jails' processes) anywhere below `state` (`warden mcp` keeps its
/// sessions in `<state>/mcp-<pid>/`).
fn session_workers_below(state: &Path) -> Vec<u32> {
    super::jail::processes_with(&state.to_string_lossy())
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|cmdline| String::from_utf8_lossy(&cmdline).contains("session-worker"))
        })
        .collect()
}

fn text_of(result: &Value) -> String {
    result["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|block| block["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn mcp_run_python_keeps_state_between_calls_until_reset() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let config = dir.path().join("warden.toml");
    std::fs::write(&config, format!("[server]\nstate_dir = {state:?}\n")).unwrap();
    let mut mcp = Mcp::start(&config);

    let tools = mcp.call("tools/list", json!({}));
    let run = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "run_python")
        .unwrap()
        .clone();
    let description = run["description"].as_str().unwrap();
    assert!(description.contains("persist"), "{description}");
    assert!(
        run["inputSchema"]["properties"]["reset"].is_object(),
        "{run}"
    );

    let first = mcp.run(json!({"code": "import matplotlib.pyplot as plt\nx = 41"}));
    assert_eq!(first["isError"], false, "{first}");
    let second = mcp.run(json!({
        "code": "plt.plot([1, 2], [3, x])\nx + 1",
        "inputs": [{"name": "in/a.txt", "content_base64": b64(b"hi")}],
    }));
    assert_eq!(second["isError"], false, "{second}");
    let text = text_of(&second);
    assert!(text.contains("Out[2]: 42"), "{text}");
    let images: Vec<&Value> = second["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "image")
        .collect();
    assert_eq!(images.len(), 1, "{second}");
    assert_eq!(images[0]["mimeType"], "image/png");
    let png = base64::engine::general_purpose::STANDARD
        .decode(images[0]["data"].as_str().unwrap())
        .unwrap();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
    let read = mcp.run(json!({"code": "open('in/a.txt').read()"}));
    assert!(text_of(&read).contains("Out[3]: 'hi'"), "{read}");

    // A denied cell does not run and leaves the session as it was.
    let denied = mcp.run(json!({"code": "import subprocess\nx = 0"}));
    assert_eq!(denied["isError"], true, "{denied}");
    assert!(text_of(&denied).contains("did not run"), "{denied}");
    let kept = mcp.run(json!({"code": "x"}));
    assert!(text_of(&kept).contains("Out[4]: 41"), "{kept}");

    // reset starts a fresh session: x is gone.
    let fresh = mcp.run(json!({"code": "x", "reset": true}));
    assert_eq!(fresh["isError"], true, "{fresh}");
    let text = text_of(&fresh);
    assert!(
        text.contains("fresh session") && text.contains("NameError"),
        "{text}"
    );
    assert!(!session_workers_below(&state).is_empty());

    // The connection's end ends its session: no worker, no state directory.
    drop(mcp.input);
    let status = mcp.child.wait().unwrap();
    assert!(status.success(), "{status}");
    assert!(
        session_workers_below(&state).is_empty(),
        "{:?}",
        session_workers_below(&state)
    );
    let left: Vec<_> = std::fs::read_dir(&state)
        .map(|entries| entries.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(
        left.iter()
            .all(|n| !n.to_string_lossy().starts_with("mcp-")),
        "{left:?}"
    );
}

/// A FIFO in the work dir can hold no file operation (issue 25): the kernel refuses to make one
/// (seccomp refuses `mknodat` of a FIFO whatever the policy, issue 24), so a cell that tries gets
/// EPERM, downloading the name is 404 at once, an upload to it is a regular file, nothing waits,
/// and the next cell runs. (The driver also opens session files non-blocking and regular only.)
#[test]
fn a_fifo_in_the_work_dir_holds_no_file_operation() {
    // `os.mkfifo` is outside the default policy's `os` members: a policy with that rule off.
    let dir = tempfile::tempdir().expect("tempdir");
    let rules = dir.path().join("fifo.toml");
    std::fs::write(
        &rules,
        "extends = \"default\"\n[policy]\nname = \"fifo\"\n[actions]\nIMP101 = \"off\"\n",
    )
    .expect("rules");
    let server = Server::start(Options {
        extra_policies: vec![("fifo".to_owned(), rules)],
        ..Options::default()
    });
    let socket = server.unix();
    let id = create(&server, None, &json!({"policy": "fifo"}));
    let made = execute(
        &server,
        None,
        &id,
        "import os\nos.mkfifo('pipe')\nos.path.exists('pipe')",
    );
    assert_eq!(made["status"], "error", "{made}");
    assert_eq!(made["error"]["name"], "PermissionError", "{made}");
    assert!(
        made["error"]["value"]
            .as_str()
            .unwrap_or("")
            .contains("[Errno 1]"),
        "the kernel's EPERM: {made}"
    );
    let path = format!("/v1/sessions/{id}/files/pipe");
    let started = std::time::Instant::now();
    let got = request(&socket, "GET", &path, None, None);
    assert_eq!(got.status, 404, "{}", got.text());
    let put = request(&socket, "PUT", &path, None, Some(b"x"));
    assert_eq!(put.status, 200, "{}", put.text());
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the file operations waited on the FIFO for {:?}",
        started.elapsed()
    );
    let next = execute(&server, None, &id, "1 + 1");
    assert_eq!(next["status"], "ok", "{next}");
    assert_eq!(next["result"]["text/plain"], "2", "{next}");
    let ended = request(&socket, "DELETE", &format!("/v1/sessions/{id}"), None, None);
    assert_eq!(ended.status, 200);
}

/// Issue 25: a session upload's body is staged on disk as it arrives and goes into the jail a
/// piece at a time, under a run slot. Eight concurrent 12 MiB uploads into four sessions (raw
/// `PUT` and base64 `POST`): every file arrives whole, and the server's peak memory grows by less
/// than 64 MiB (before, the body, its base64 and a worker's copy were all held: eleven 15 MiB
/// uploads cost +508 MiB); each session's worker holds one piece at a time. Then, with one run slot and no
/// queue, an upload whose body is still arriving holds that slot: a run is turned away (429)
/// until the upload ends, and nothing is left in the staging directory.
#[test]
fn uploads_are_staged_on_disk_under_a_run_slot_with_bounded_memory() {
    const SIZE: usize = 12 << 20;
    let server = Server::start(Options {
        max_request_bytes: 20 << 20,
        max_concurrent_runs: 8,
        queue_size: 16,
        sessions: Some("max_sessions = 4\nmax_sessions_per_client = 4\n".into()),
        ..Options::default()
    });
    let socket = server.unix();
    let ids: Vec<String> = (0..4)
        .map(|_| create(&server, Some(TOKEN), &json!({})))
        .collect();
    let pid = server.pid();
    let before = support::memory_kib(pid, "VmRSS");
    let workers: Vec<(u32, u64)> = session_workers(&server.state_dir)
        .into_iter()
        .map(|worker| (worker, support::memory_kib(worker, "VmRSS")))
        .collect();
    assert_eq!(workers.len(), 4, "one worker per session");
    // Bytes that do not compress or repeat (a pseudo-random stream).
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let content: Vec<u8> = (0..SIZE)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect();
    let encoded = b64(&content);
    std::thread::scope(|scope| {
        let uploads: Vec<_> = (0..8)
            .map(|k| {
                let (id, socket, content, encoded) = (&ids[k % 4], &socket, &content, &encoded);
                scope.spawn(move || {
                    let files = format!("/v1/sessions/{id}/files");
                    if k % 2 == 0 {
                        let path = format!("{files}/up-{k}.bin");
                        request(socket, "PUT", &path, Some(TOKEN), Some(content))
                    } else {
                        let body =
                            json!({"name": format!("up-{k}.bin"), "content_base64": encoded});
                        post_json(socket, &files, Some(TOKEN), &body)
                    }
                })
            })
            .collect();
        for (k, upload) in uploads.into_iter().enumerate() {
            let answer = upload.join().expect("client");
            assert_eq!(answer.status, 200, "upload {k}: {}", answer.text());
            assert_eq!(answer.json()["size"], SIZE as u64, "upload {k}");
        }
    });
    let peak = support::memory_kib(pid, "VmHWM");
    assert!(
        peak < before + 64 * 1024,
        "the server's memory grew from {before} KiB to a peak of {peak} KiB"
    );
    for (worker, rss) in workers {
        let worker_peak = support::memory_kib(worker, "VmHWM");
        assert!(
            worker_peak < rss + 32 * 1024,
            "session worker {worker} grew from {rss} KiB to a peak of {worker_peak} KiB"
        );
    }
    for k in [0, 1, 6, 7] {
        let got = request(
            &socket,
            "GET",
            &format!("/v1/sessions/{}/files/up-{k}.bin", ids[k % 4]),
            Some(TOKEN),
            None,
        );
        assert_eq!(got.status, 200, "download {k}: {}", got.text());
        assert!(got.body == content, "upload {k} did not arrive whole");
    }
    let staged = std::fs::read_dir(server.state_dir.join("uploads"))
        .map(|dir| dir.count())
        .unwrap_or(0);
    assert_eq!(staged, 0, "staged files left behind");
    drop(server);

    // One run slot, no queue: a slow upload holds the slot.
    let server = Server::start(Options {
        max_concurrent_runs: 1,
        queue_size: 0,
        ..Options::default()
    });
    let socket = server.unix();
    let id = create(&server, Some(TOKEN), &json!({}));
    let length = 1 << 20;
    let mut stream = support::connect(&socket);
    let head = format!(
        "PUT /v1/sessions/{id}/files/slow.bin HTTP/1.1\r\nHost: warden\r\nConnection: close\r\n\
         Authorization: Bearer {TOKEN}\r\nContent-Length: {length}\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).expect("head");
    stream
        .write_all(&vec![b'a'; length / 2])
        .expect("half the body");
    let run_while_uploading = || {
        post_json(
            &socket,
            "/v1/run",
            Some(TOKEN),
            &json!({"code": "print(1)"}),
        )
    };
    let turned_away = wait_until(Duration::from_secs(10), || {
        run_while_uploading().status == 429
    });
    assert!(
        turned_away,
        "a run was admitted while an upload held the only slot"
    );
    stream.write_all(&vec![b'b'; length / 2]).expect("the rest");
    let mut raw = Vec::new();
    std::io::Read::read_to_end(&mut stream, &mut raw).expect("answer");
    let answer = support::parse_raw_response(&raw);
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert_eq!(answer.json()["size"], length as u64);
    let ran = run_while_uploading();
    assert_eq!(ran.status, 200, "{}", ran.text());
    assert_eq!(ran.json()["stdout"], "1\n", "{}", ran.text());
}

/// Issue 25: by default one client may hold half the sessions, so one token cannot take every
/// session and leave the others with 429 until its sessions idle out; another client still gets one.
#[test]
fn one_client_cannot_take_every_session_by_default() {
    let server = Server::start(Options {
        sessions: Some("max_sessions = 4\n".into()),
        ..Options::default()
    });
    let socket = server.unix();
    let mine: Vec<String> = (0..2)
        .map(|_| create(&server, Some(TOKEN), &json!({})))
        .collect();
    let third = post_json(&socket, "/v1/sessions", Some(TOKEN), &json!({}));
    assert_eq!(third.status, 429, "{}", third.text());
    let listed = request(&socket, "GET", "/v1/sessions", Some(TOKEN), None).json();
    assert_eq!(listed["max_sessions_per_client"], 2, "{listed}");
    let other = post_json(
        &socket,
        "/v1/sessions",
        Some(MULTI_TOKEN),
        &json!({"policy": "strict"}),
    );
    assert_eq!(
        other.status,
        200,
        "another client is locked out: {}",
        other.text()
    );
    for id in mine {
        let ended = request(
            &socket,
            "DELETE",
            &format!("/v1/sessions/{id}"),
            Some(TOKEN),
            None,
        );
        assert_eq!(ended.status, 200, "{}", ended.text());
    }
}
