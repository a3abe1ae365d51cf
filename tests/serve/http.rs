//! `warden serve` end to end: the HTTP API over the Unix socket and over TCP (with and without a valid
//! token), every status of the result record, malformed requests, admission control, the audit log,
//! graceful shutdown, and SIGKILL in the middle of runs followed by a restart that reaps.

use super::support;
use warden_test_support::require_root;

use super::jail;

use std::time::Duration;

use base64::Engine;
use serde_json::{json, Value};
use support::{post_json, request, Endpoint, Options, Server, STRICT_TOKEN, TOKEN};

fn run(endpoint: &Endpoint, body: Value) -> Value {
    let response = post_json(endpoint, "/v1/run", None, &body);
    assert_eq!(response.status, 200, "{}", response.text());
    response.json()
}

#[test]
fn every_status_of_the_result_record_over_the_unix_socket() {
    require_root!();
    let mut server = Server::start(Options::default());
    let socket = server.unix();
    // The socket has the configured mode and group: file permissions decide who may connect.
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let meta = std::fs::metadata(&server.socket).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o660);
        let nogroup = std::process::Command::new("getent")
            .args(["group", "nogroup"])
            .output()
            .unwrap();
        let gid: u32 = String::from_utf8_lossy(&nogroup.stdout)
            .split(':')
            .nth(2)
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(meta.gid(), gid);
    }

    // ok, with an input file in and a file out.
    let csv = base64::engine::general_purpose::STANDARD.encode("x\n1\n2\n3\n");
    let ok = run(
        &socket,
        json!({
            "code": "import csv, json\nrows = list(csv.DictReader(open('data.csv')))\n\
                     open('total.txt', 'w').write(str(sum(int(r['x']) for r in rows)))\n\
                     print(json.dumps({'rows': len(rows)}))\n",
            "inputs": [{"name": "data.csv", "content_base64": csv}],
            "schema": {"type": "object", "required": ["rows"]},
        }),
    );
    assert_eq!(ok["status"], "ok", "{ok}");
    assert_eq!(ok["stdout"], "{\"rows\": 3}\n");
    assert_eq!(ok["validation"]["valid"], true);
    let files = ok["files"].as_array().unwrap();
    assert_eq!(files.len(), 1, "only the new file comes back: {ok}");
    assert_eq!(files[0]["path"], "total.txt");
    assert_eq!(files[0]["content_base64"], "Ng==");
    assert_eq!(ok["policy"]["registered_as"], "default");
    assert_eq!(ok["layers"]["seccomp"], true);

    // denied: never runs, carries findings.
    let denied = run(
        &socket,
        json!({"code": "import subprocess\nsubprocess.run(['id'])\n"}),
    );
    assert_eq!(denied["status"], "denied");
    assert_eq!(denied["check"]["findings"][0]["rule"], "IMP101");
    assert_eq!(denied["stdout"], "");

    // review_required under the `review` policy.
    let review = run(
        &socket,
        json!({"code": "print(sorted(globals())[0])\n", "policy": "review"}),
    );
    assert_eq!(review["status"], "review_required", "{review}");
    assert_eq!(review["policy"]["registered_as"], "review");

    // error with the Python exception.
    let error = run(&socket, json!({"code": "print('before')\n1/0\n"}));
    assert_eq!(error["status"], "error");
    assert_eq!(error["error"]["name"], "ZeroDivisionError");
    assert_eq!(error["stdout"], "before\n");

    // timeout, with a caller limit that tightens the policy's.
    let timeout = run(
        &socket,
        json!({"code": "while True:\n    pass\n", "limits": {"wall_time_ms": 1000}}),
    );
    assert_eq!(timeout["status"], "timeout", "{timeout}");
    assert!(timeout["usage"]["wall_ms"].as_u64().unwrap() < 5_000);

    // A caller cannot loosen a limit: asking for more than the policy gives changes nothing.
    let loosen = run(
        &socket,
        json!({"code": "print(1)\n", "limits": {"wall_time_ms": 999_999_999}}),
    );
    assert_eq!(loosen["status"], "ok");

    // memory_limit.
    let memory = run(
        &socket,
        json!({
            "code": "import numpy as np\nblocks = []\nwhile True:\n    blocks.append(np.ones(16 * 1024 * 1024))\n",
            "limits": {"memory_mib": 256},
        }),
    );
    assert_eq!(memory["status"], "memory_limit", "{memory}");

    // output_limit.
    let flood = run(
        &socket,
        json!({"code": "for i in range(100000):\n    print('x' * 100)\n", "limits": {"stdout_bytes": 10000}}),
    );
    assert_eq!(flood["status"], "output_limit");
    assert_eq!(flood["stdout_truncated"], true);
    assert!(flood["stdout"].as_str().unwrap().len() <= 10_000);

    // output_invalid.
    let invalid = run(
        &socket,
        json!({"code": "print('not json')\n", "schema": {"type": "object"}}),
    );
    assert_eq!(invalid["status"], "output_invalid");
    assert_eq!(invalid["validation"]["valid"], false);

    // The audit log has one line per request, with the policy digest and the decision.
    let audit = server.audit_lines();
    assert_eq!(audit.len(), 9, "{audit:?}");
    let denied_line = audit.iter().find(|l| l["status"] == "denied").unwrap();
    assert_eq!(denied_line["rules"], json!(["IMP101"]));
    assert_eq!(denied_line["decision"], "deny");
    assert!(denied_line["client"]
        .as_str()
        .unwrap()
        .starts_with("uid:0 pid:"));
    assert_eq!(denied_line["policy_sha256"].as_str().unwrap().len(), 64);
    assert_eq!(denied_line["code_sha256"].as_str().unwrap().len(), 64);

    // Metrics count the runs by status and the denials by rule.
    let metrics = request(&socket, "GET", "/metrics", None, None).text();
    assert_eq!(
        support::metric(&metrics, "warden_runs_total{status=\"ok\"}"),
        Some(2.0)
    );
    assert_eq!(
        support::metric(&metrics, "warden_policy_denials_total{rule=\"IMP101\"}"),
        Some(1.0)
    );
    assert_eq!(
        support::metric(&metrics, "warden_run_duration_seconds_count"),
        Some(9.0)
    );

    let status = server.stop();
    assert!(status.success());
    assert_nothing_left(&server);
}

/// Issue 16: over HTTP too, a program delivers its result on the last line of stdout or in
/// `result.json` (the body's `result`), `validation` is null when no schema applies, files written
/// before a kill come back marked partial, and a denied run says why in `message`.
#[test]
fn the_run_body_says_where_the_result_is_and_the_record_is_clean() {
    require_root!();
    let server = Server::start(Options::default());
    let socket = server.unix();
    let schema = json!({"type": "object", "required": ["total"]});
    let printed = "import json\nprint('debug')\nprint(json.dumps({'total': 3}))\n";
    let whole = run(&socket, json!({"code": printed, "schema": schema}));
    assert_eq!(whole["status"], "output_invalid", "{whole}");
    let message = whole["validation"]["errors"][0]["message"]
        .as_str()
        .unwrap();
    assert!(
        message.contains("(result = stdout)") && message.contains("result = last_line"),
        "{message}"
    );
    let last = run(
        &socket,
        json!({"code": printed, "schema": schema, "result": "last_line"}),
    );
    assert_eq!(last["status"], "ok", "{last}");
    assert_eq!(last["validation"]["result"], "last_line");
    let filed = run(
        &socket,
        json!({
            "code": "import json\nprint('debug')\njson.dump({'total': 4}, open('result.json', 'w'))\n",
            "schema": schema,
            "result": "file",
        }),
    );
    assert_eq!(filed["status"], "ok", "{filed}");
    assert_eq!(filed["validation"]["result"], "file");
    let plain = run(&socket, json!({"code": "print(1)\n"}));
    assert_eq!(plain["validation"], Value::Null, "{plain}");
    let killed = run(
        &socket,
        json!({
            "code": "open('early.txt', 'w').write('x')\nprint('started', flush=True)\nwhile True:\n    pass\n",
            "limits": {"wall_time_ms": 1500},
        }),
    );
    assert_eq!(killed["status"], "timeout", "{killed}");
    assert_eq!(killed["stdout"], "started\n");
    assert_eq!(killed["files"][0]["partial"], true, "{killed}");
    let denied = run(&socket, json!({"code": "import socket\n"}));
    assert_eq!(denied["status"], "denied");
    assert!(
        denied["message"].as_str().unwrap().contains("IMP101"),
        "{denied}"
    );
}

#[test]
fn malformed_requests_get_4xx_with_a_json_error() {
    require_root!();
    let mut server = Server::start(Options {
        max_request_bytes: 64 * 1024,
        ..Options::default()
    });
    let socket = server.unix();
    let bad_bodies = [
        json!({"cod": "x"}),
        json!({"code": "1", "policy": "nope"}),
        json!({"code": "1", "inputs": [{"name": "../x", "content_base64": ""}]}),
        json!({"code": "1", "inputs": [{"name": "a", "content_base64": "!!"}]}),
        json!({"code": "1", "schema": {"type": 5}}),
        json!({"code": "1", "limits": {"pids": 1}}),
        json!({"code": "1", "result": "last-line"}),
    ];
    let mut cases: Vec<(Response, u16, &str)> = bad_bodies
        .iter()
        .map(|body| {
            (
                post_json(&socket, "/v1/run", None, body),
                400,
                "bad_request",
            )
        })
        .collect();
    cases.extend([
        (
            request(&socket, "POST", "/v1/run", None, Some(b"{not json")),
            400,
            "bad_request",
        ),
        (
            post_json(
                &socket,
                "/v1/run",
                None,
                &json!({"code": "x".repeat(100 * 1024)}),
            ),
            413,
            "too_large",
        ),
        (
            request(&socket, "GET", "/v1/run", None, None),
            405,
            "method_not_allowed",
        ),
        (
            request(&socket, "GET", "/v2/anything", None, None),
            404,
            "not_found",
        ),
    ]);
    for (i, (response, status, code)) in cases.iter().enumerate() {
        assert_eq!(response.status, *status, "case {i}: {}", response.text());
        assert_eq!(response.json()["error"]["code"], *code, "case {i}");
    }
    // Every request turned away is counted, by the code its answer carries, and the build is named.
    let metrics = request(&socket, "GET", "/metrics", None, None).text();
    for code in [
        "bad_request",
        "too_large",
        "method_not_allowed",
        "not_found",
    ] {
        let expected = cases.iter().filter(|(_, _, c)| *c == code).count();
        assert_eq!(
            support::metric(
                &metrics,
                &format!("warden_requests_rejected_total{{reason=\"{code}\"}}")
            ),
            Some(expected as f64),
            "{code}:\n{metrics}"
        );
    }
    assert!(
        metrics
            .lines()
            .any(|l| l.starts_with("warden_build_info{version=")),
        "{metrics}"
    );
    // No client can supply a policy: a policy text is an unknown field.
    let supplied = post_json(
        &socket,
        "/v1/run",
        None,
        &json!({"code": "1", "policy_text": "[policy]\nname='x'"}),
    );
    assert_eq!(supplied.status, 400);
    server.stop();
    assert_nothing_left(&server);
}

use support::Response;

#[test]
fn tcp_requires_a_valid_token_and_tokens_limit_policies() {
    require_root!();
    let mut server = Server::start(Options {
        tcp: true,
        ..Options::default()
    });
    let tcp = server.tcp();
    let program = json!({"code": "print(6 * 7)\n"});

    // Without a token, or with a wrong one: 401 everywhere but /healthz.
    for token in [None, Some("wrong-token"), Some("")] {
        for (method, path) in [
            ("POST", "/v1/run"),
            ("POST", "/v1/check"),
            ("GET", "/v1/policies"),
            ("GET", "/metrics"),
        ] {
            let body = serde_json::to_vec(&program).unwrap();
            let response = request(
                &tcp,
                method,
                path,
                token,
                (method == "POST").then_some(&body[..]),
            );
            assert_eq!(
                response.status,
                401,
                "{method} {path} with {token:?}: {}",
                response.text()
            );
            assert_eq!(response.header("www-authenticate"), Some("Bearer"));
        }
    }
    assert_eq!(request(&tcp, "GET", "/healthz", None, None).status, 200);

    // With the token: a result, and the token's name (never its secret) in the audit log.
    let ok = post_json(&tcp, "/v1/run", Some(TOKEN), &program);
    assert_eq!(ok.status, 200, "{}", ok.text());
    assert_eq!(ok.json()["stdout"], "42\n");
    let check = post_json(
        &tcp,
        "/v1/check",
        Some(TOKEN),
        &json!({"code": "import socket\n"}),
    );
    assert_eq!(check.status, 200);
    assert_eq!(check.json()["decision"], "deny");

    // The token may use `default` and `review`, not `strict`; the strict token only `strict`.
    let forbidden = post_json(
        &tcp,
        "/v1/run",
        Some(TOKEN),
        &json!({"code": "1", "policy": "strict"}),
    );
    assert_eq!(forbidden.status, 403, "{}", forbidden.text());
    let strict = post_json(
        &tcp,
        "/v1/run",
        Some(STRICT_TOKEN),
        &json!({"code": "print(1)", "policy": "strict"}),
    );
    assert_eq!(strict.status, 200, "{}", strict.text());
    assert_eq!(strict.json()["policy"]["registered_as"], "strict");
    // Without `policy`, a token that may not use the server's default gets its only policy.
    let strict_default = post_json(&tcp, "/v1/run", Some(STRICT_TOKEN), &program);
    assert_eq!(strict_default.status, 200, "{}", strict_default.text());
    assert_eq!(strict_default.json()["policy"]["registered_as"], "strict");

    // Each client sees only its policies, with what a model needs to know.
    let listed = request(&tcp, "GET", "/v1/policies", Some(TOKEN), None).json();
    let names: Vec<&str> = listed["policies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["default", "review"]);
    let default = &listed["policies"][0];
    assert!(default["allowed_imports"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m == "pandas"));
    assert!(default["limits"]["wall_time_ms"].as_u64().unwrap() > 0);
    assert_eq!(default["sha256"].as_str().unwrap().len(), 64);
    assert_eq!(default["layers"]["seccomp"], true, "{default}");
    assert!(
        default["layers"]["cgroup"]
            .as_str()
            .unwrap()
            .starts_with('v'),
        "{default}"
    );

    // The Unix socket does not need a token (its file mode decides), but a bad one is refused.
    let unix = server.unix();
    assert_eq!(
        request(&unix, "GET", "/v1/policies", None, None).json()["policies"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    assert_eq!(
        request(&unix, "GET", "/v1/policies", Some("bad"), None).status,
        401
    );

    let audit = std::fs::read_to_string(&server.audit).unwrap();
    assert!(audit.contains("token:agent-a"), "{audit}");
    assert!(audit.contains("token:strict-agent"));
    assert!(
        !audit.contains(TOKEN) && !audit.contains(STRICT_TOKEN),
        "a secret reached the audit log"
    );
    assert!(audit.contains("\"status\":\"forbidden\""));
    server.stop();
    assert_nothing_left(&server);
}

#[test]
fn at_capacity_requests_get_429_or_503_with_retry_after() {
    require_root!();
    let mut server = Server::start(Options {
        max_concurrent_runs: 1,
        queue_size: 1,
        queue_timeout_ms: 500,
        ..Options::default()
    });
    let socket = server.unix();
    // One run holds the only slot for a few seconds.
    let holder = in_background(
        &socket,
        json!({"code": "import time\ntime.sleep(4)\nprint('held')\n"}),
    );
    wait_for_metric(&socket, "warden_runs_in_flight", 1.0, 20);
    // A second waits in the queue and gives up after 500 ms (503); while it waits, a third finds
    // the queue full (429).
    let waiter = in_background(&socket, json!({"code": "print(2)"}));
    wait_for_metric(&socket, "warden_queue_depth", 1.0, 5);
    let full = post_json(&socket, "/v1/run", None, &json!({"code": "print(3)"}));
    assert_eq!(full.status, 429, "{}", full.text());
    assert_eq!(full.header("retry-after"), Some("1"));
    assert_eq!(full.json()["error"]["code"], "queue_full");
    let waited = waiter.join().unwrap();
    assert_eq!(waited.status, 503, "{}", waited.text());
    assert!(waited.header("retry-after").is_some());
    assert_eq!(waited.json()["error"]["code"], "queue_timeout");
    assert_eq!(holder.join().unwrap().json()["stdout"], "held\n");
    // Checks are not runs: they are answered while the run slots are busy.
    let check = post_json(&socket, "/v1/check", None, &json!({"code": "print(1)"}));
    assert_eq!(check.status, 200);
    let metrics = request(&socket, "GET", "/metrics", None, None).text();
    assert_eq!(
        support::metric(
            &metrics,
            "warden_requests_rejected_total{reason=\"queue_full\"}"
        ),
        Some(1.0)
    );
    server.stop();
    assert_nothing_left(&server);
}

#[test]
fn sigterm_lets_running_runs_finish_and_turns_new_ones_away() {
    require_root!();
    let mut server = Server::start(Options {
        max_concurrent_runs: 1,
        ..Options::default()
    });
    let socket = server.unix();
    let running = in_background(
        &socket,
        json!({"code": "import time\ntime.sleep(2)\nprint('finished')\n"}),
    );
    wait_for_metric(&socket, "warden_runs_in_flight", 1.0, 20);
    let queued = in_background(&socket, json!({"code": "print('never')\n"}));
    wait_for_metric(&socket, "warden_queue_depth", 1.0, 10);
    let status = server.stop();
    assert!(status.success(), "{status:?}");
    assert_eq!(running.join().unwrap().json()["stdout"], "finished\n");
    let turned_away = queued.join().unwrap();
    assert_eq!(turned_away.status, 503, "{}", turned_away.text());
    assert_eq!(turned_away.json()["error"]["code"], "shutting_down");
    assert!(turned_away.header("retry-after").is_some());
    assert!(!server.socket.exists(), "the socket file was left behind");
    assert_nothing_left(&server);
}

#[test]
fn a_client_that_hangs_up_cancels_its_run() {
    require_root!();
    let mut server = Server::start(Options::default());
    let socket = server.unix();
    {
        use std::io::Write;
        let body = serde_json::to_vec(&json!({"code": "import time\ntime.sleep(60)\n"})).unwrap();
        let mut stream = std::os::unix::net::UnixStream::connect(&server.socket).unwrap();
        write!(
            stream,
            "POST /v1/run HTTP/1.1\r\nHost: warden\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .unwrap();
        stream.write_all(&body).unwrap();
        wait_for_metric(&socket, "warden_runs_in_flight", 1.0, 20);
        assert!(support::wait_until(
            Duration::from_secs(20),
            || support::descendants(server.pid()).len() >= 3
        ));
    }
    // The connection is gone: the worker and its jail are killed, the slot is free again.
    wait_for_metric(&socket, "warden_runs_in_flight", 0.0, 10);
    assert!(
        support::wait_until(Duration::from_secs(10), || support::descendants(
            server.pid()
        )
        .is_empty()),
        "the cancelled run's processes survived"
    );
    let audit = server.audit_lines();
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0]["status"], "cancelled");
    server.stop();
    assert_nothing_left(&server);
}

#[test]
fn idle_connections_cannot_take_more_than_max_connections() {
    require_root!();
    let mut server = Server::start(Options {
        max_connections: 2,
        ..Options::default()
    });
    let socket = server.unix();
    let idle: Vec<_> = (0..2)
        .map(|_| std::os::unix::net::UnixStream::connect(&server.socket).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    // A third connection waits in the backlog (the server holds no descriptor for it)...
    let (tx, rx) = std::sync::mpsc::channel();
    let waiting = {
        let socket = socket.clone();
        std::thread::spawn(move || {
            let _ = tx.send(request(&socket, "GET", "/healthz", None, None).status);
        })
    };
    assert!(
        rx.recv_timeout(Duration::from_millis(1000)).is_err(),
        "a third connection was served while two idle ones held every slot"
    );
    // ...and is served as soon as a slot frees.
    drop(idle);
    assert_eq!(rx.recv_timeout(Duration::from_secs(10)).unwrap(), 200);
    waiting.join().unwrap();
    server.stop();
    assert_nothing_left(&server);
}

/// Issue 25, point 7: connections that have not authenticated a request have a budget of their
/// own and a short deadline: clients holding idle connections without credentials never take the
/// slots of an authenticated client, and lose theirs after the deadline.
#[test]
fn unauthenticated_connections_cannot_starve_authenticated_ones() {
    use std::io::{Read, Write};
    require_root!();
    let mut server = Server::start(Options {
        tcp: true,
        max_connections: 4,
        // Without the unauthenticated budget, idle connections would hold their slots this long.
        header_timeout_ms: Some(30_000),
        admission: Some(
            "max_unauthenticated_connections = 2\nunauthenticated_timeout_ms = 1500\n".to_owned(),
        ),
        ..Options::default()
    });
    let tcp = server.tcp();
    let address = server.tcp.unwrap();
    // An authenticated client's keep-alive connection, proved once.
    let mut kept = std::net::TcpStream::connect(address).unwrap();
    kept.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let ask = |stream: &mut std::net::TcpStream| {
        write!(
            stream,
            "GET /v1/sessions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n\r\n"
        )
        .unwrap();
        let mut answer = [0u8; 4096];
        let n = stream.read(&mut answer).unwrap();
        String::from_utf8_lossy(&answer[..n]).into_owned()
    };
    let first = ask(&mut kept);
    assert!(first.starts_with("HTTP/1.1 200"), "{first}");
    // Clients without credentials open idle connections: two are accepted (their budget), the
    // rest wait in the kernel's backlog; none takes the authenticated client's slot.
    let idle: Vec<_> = (0..6)
        .map(|_| std::net::TcpStream::connect(address).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let started = std::time::Instant::now();
    let again = ask(&mut kept);
    assert!(again.starts_with("HTTP/1.1 200"), "{again}");
    assert!(started.elapsed() < Duration::from_secs(1));
    // Within the deadline (and the backlog's turns after it), a new authenticated request gets
    // through: the idle ones were closed.
    let served = request(&tcp, "GET", "/v1/policies", Some(TOKEN), None);
    assert_eq!(served.status, 200, "{}", served.text());
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    // The first idle connections were closed by the server (they read end-of-file).
    let mut first = idle.into_iter().next().unwrap();
    first
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut byte = [0u8; 1];
    assert_eq!(first.read(&mut byte).unwrap_or(0), 0);
    let metrics = request(&tcp, "GET", "/metrics", Some(TOKEN), None).text();
    assert!(
        metrics.contains("reason=\"unauthenticated_timeout\""),
        "{metrics}"
    );
    server.stop();
    assert_nothing_left(&server);
}

#[test]
fn sigterm_kills_runs_that_outlast_the_grace_period() {
    require_root!();
    let mut server = Server::start(Options {
        shutdown_grace_ms: 500,
        ..Options::default()
    });
    let socket = server.unix();
    let running = in_background(&socket, json!({"code": "import time\ntime.sleep(60)\n"}));
    wait_for_metric(&socket, "warden_runs_in_flight", 1.0, 20);
    let tree = support::descendants(server.pid());
    assert!(!tree.is_empty());
    let started = std::time::Instant::now();
    server.stop();
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "shutdown took {:?}",
        started.elapsed()
    );
    let _ = running.join();
    for (pid, start) in tree {
        assert!(
            support::wait_until(Duration::from_secs(5), || !support::alive(pid, &start)),
            "process {pid} outlived the server"
        );
    }
    assert_nothing_left(&server);
}

#[test]
fn sigkill_mid_run_leaves_no_process_and_the_next_start_reaps() {
    require_root!();
    let state = tempfile::Builder::new()
        .prefix("warden-serve-state-")
        .tempdir()
        .unwrap();
    let mut server = Server::start(Options {
        state_dir: Some(state.path().to_owned()),
        ..Options::default()
    });
    let socket = server.unix();
    let clients: Vec<_> = (0..2)
        .map(|_| {
            let socket = socket.clone();
            std::thread::spawn(move || {
                let body =
                    serde_json::to_vec(&json!({"code": "import time\ntime.sleep(60)\n"})).unwrap();
                // The connection dies with the server: no response is expected.
                std::panic::catch_unwind(|| request(&socket, "POST", "/v1/run", None, Some(&body)))
                    .ok()
            })
        })
        .collect();
    wait_for_metric(&socket, "warden_runs_in_flight", 2.0, 30);
    // Wait until both jails run Python (a worker and its jail init and program under each).
    assert!(support::wait_until(
        Duration::from_secs(30),
        || support::descendants(server.pid()).len() >= 6
    ));
    let tree = support::descendants(server.pid());
    let workers: Vec<u32> = tree.iter().map(|(pid, _)| *pid).collect();
    server.kill();
    for (pid, start) in &tree {
        assert!(
            support::wait_until(Duration::from_secs(10), || !support::alive(*pid, start)),
            "process {pid} outlived the SIGKILLed server"
        );
    }
    for client in clients {
        let _ = client.join();
    }
    // What a killed server cannot clean: its job directories (and the run cgroups of its workers).
    assert!(
        !support::job_dirs(state.path()).is_empty(),
        "the test did not kill mid-run"
    );

    let mut restarted = Server::start(Options {
        state_dir: Some(state.path().to_owned()),
        ..Options::default()
    });
    assert!(
        support::job_dirs(state.path()).is_empty(),
        "stale job directories survived a restart"
    );
    // Run cgroups of the dead workers go at start-up, or within seconds if a worker was still
    // finishing dying then.
    let stale = |cgroup: &std::path::PathBuf| {
        let name = cgroup.file_name().unwrap().to_string_lossy().into_owned();
        workers
            .iter()
            .any(|w| name.starts_with(&format!("run-{w}-")))
    };
    assert!(
        support::wait_until(Duration::from_secs(10), || !support::run_cgroups()
            .iter()
            .any(stale)),
        "stale cgroups survived a restart: {:?}",
        support::run_cgroups()
            .into_iter()
            .filter(|c| stale(c))
            .collect::<Vec<_>>()
    );
    // And it works.
    assert_eq!(
        run(&restarted.unix(), json!({"code": "print('again')"}))["stdout"],
        "again\n"
    );
    restarted.stop();
    assert_nothing_left(&restarted);
}

#[test]
fn the_systemd_units_capability_set_is_enough() {
    require_root!();
    // The unit's CapabilityBoundingSet, read from the unit file itself.
    let unit = std::fs::read_to_string(support::repo().join("deploy/warden.service")).unwrap();
    let caps: Vec<String> = unit
        .lines()
        .find_map(|l| l.strip_prefix("CapabilityBoundingSet="))
        .expect("the unit sets CapabilityBoundingSet")
        .split_whitespace()
        .map(|c| format!("+{}", c.trim_start_matches("CAP_").to_lowercase()))
        .collect();
    assert!(
        !caps.iter().any(|c| c == "+sys_admin"),
        "the unit should not need CAP_SYS_ADMIN"
    );
    let mut server = Server::start(Options {
        bounding_set: Some(format!("-all,{}", caps.join(","))),
        ..Options::default()
    });
    let socket = server.unix();
    let ok = run(
        &socket,
        json!({"code": "import json\nprint(json.dumps({'x': 1}))\n"}),
    );
    assert_eq!(ok["status"], "ok", "{ok}");
    assert_eq!(ok["layers"]["seccomp"], true);
    assert!(
        ok["layers"]["landlock"]
            .as_str()
            .unwrap()
            .starts_with("abi-"),
        "{ok}"
    );
    assert!(
        ok["layers"]["cgroup"].as_str().unwrap().starts_with('v'),
        "{ok}"
    );
    // Killing a run that outlives its limit needs CAP_KILL (the program runs as another id).
    let timeout = run(
        &socket,
        json!({"code": "while True:\n    pass\n", "limits": {"wall_time_ms": 800}}),
    );
    assert_eq!(timeout["status"], "timeout");
    server.stop();
    assert_nothing_left(&server);
}

#[test]
fn an_interpreter_lost_after_start_gives_setup_failed() {
    require_root!();
    // A policy whose interpreter is a symlink to the system Python; valid when the server starts.
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("python3");
    std::os::unix::fs::symlink("/usr/bin/python3", &link).unwrap();
    let rules = std::fs::read_to_string(support::repo().join("rules/strict.toml"))
        .unwrap()
        .replace(
            "interpreter = \"/usr/bin/python3\"",
            &format!("interpreter = {:?}", link.display().to_string()),
        );
    assert!(rules.contains(&link.display().to_string()));
    let rules_path = dir.path().join("linked.toml");
    std::fs::write(&rules_path, rules).unwrap();
    let mut server = Server::start(Options {
        extra_policies: vec![("linked".to_owned(), rules_path)],
        ..Options::default()
    });
    let socket = server.unix();
    let ok = run(&socket, json!({"code": "print(1)", "policy": "linked"}));
    assert_eq!(ok["status"], "ok", "{ok}");
    // Each run plans its jail again: a host that can no longer provide it fails closed.
    std::fs::remove_file(&link).unwrap();
    let failed = run(&socket, json!({"code": "print(1)", "policy": "linked"}));
    assert_eq!(failed["status"], "setup_failed", "{failed}");
    assert!(
        failed["message"].as_str().unwrap().contains("python3"),
        "{failed}"
    );
    assert_eq!(failed["stdout"], "");
    server.stop();
    assert_nothing_left(&server);
}

#[test]
fn an_unprivileged_server_runs_jails_and_reports_the_layers_in_force() {
    require_root!();
    let (uid, gid) = jail::test_user();
    let mut server = Server::start(Options {
        user: Some((uid, gid)),
        ..Options::default()
    });
    let socket = server.unix();
    let ok = run(
        &socket,
        json!({"code": "import json\nprint(json.dumps({'x': 1}))\n"}),
    );
    assert_eq!(ok["status"], "ok", "{ok}");
    // No delegated cgroup for this user: the record says so, and rlimits stand in.
    assert_eq!(ok["layers"]["cgroup"], "none", "{ok}");
    let listed = request(&socket, "GET", "/v1/policies", None, None).json();
    assert_eq!(
        listed["policies"][0]["layers"]["cgroup"], "none",
        "{listed}"
    );
    // The listing reports the runtime layer runs get (it said `false` while every run had it).
    assert_eq!(ok["layers"]["runtime_hooks"], true, "{ok}");
    for layer in ["runtime_hooks", "exec_ban"] {
        assert_eq!(
            listed["policies"][0]["layers"][layer], ok["layers"][layer],
            "{layer}: {listed}"
        );
    }
    assert_eq!(ok["layers"]["rlimits"], true);
    assert_eq!(ok["layers"]["seccomp"], true);
    let timeout = run(
        &socket,
        json!({"code": "while True:\n    pass\n", "limits": {"wall_time_ms": 800}}),
    );
    assert_eq!(timeout["status"], "timeout");
    let audit = server.audit_lines();
    assert!(
        audit[0]["client"].as_str().unwrap().starts_with("uid:0 "),
        "{audit:?}"
    );
    server.stop();
    assert_nothing_left(&server);
}

#[test]
fn a_policy_the_host_cannot_enforce_stops_the_server_from_starting() {
    require_root!();
    let dir = tempfile::tempdir().unwrap();
    let rules = std::fs::read_to_string(support::repo().join("rules/strict.toml"))
        .unwrap()
        .replace(
            "interpreter = \"/usr/bin/python3\"",
            "interpreter = \"/nonexistent/python3\"",
        );
    std::fs::write(dir.path().join("broken.toml"), rules).unwrap();
    std::fs::write(
        dir.path().join("serve.toml"),
        format!(
            "[server]\nsocket = \"{}\"\nstate_dir = \"{}\"\n[policies]\nbroken = \"broken.toml\"\n",
            dir.path().join("s.sock").display(),
            dir.path().join("state").display()
        ),
    )
    .unwrap();
    let output = std::process::Command::new(warden_test_support::warden_bin())
        .args(["serve", "--config"])
        .arg(dir.path().join("serve.toml"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("policy broken cannot run on this host"),
        "{stderr}"
    );
    assert!(!dir.path().join("s.sock").exists());
    let unknown_key = dir.path().join("bad.toml");
    std::fs::write(&unknown_key, "[server]\nsocket_path = \"/tmp/x\"\n").unwrap();
    let output = std::process::Command::new(warden_test_support::warden_bin())
        .args(["serve", "--check-config", "--config"])
        .arg(&unknown_key)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("socket_path"));
}

/// The token a client needs on `endpoint` (none on the socket).
fn token_for(endpoint: &Endpoint) -> Option<&'static str> {
    match endpoint {
        Endpoint::Unix(_) => None,
        Endpoint::Tcp(_) => Some(TOKEN),
    }
}

/// Sends a run's head announcing `length` body bytes, then the body in 256 KiB pieces every 20 ms
/// until the server answers and closes. Returns the answer, the body bytes sent, and how long the
/// answer took.
fn slow_body(
    endpoint: &Endpoint,
    token: Option<&str>,
    length: usize,
) -> (support::Response, usize, Duration) {
    use std::io::{ErrorKind, Read, Write};
    let mut stream = support::connect(endpoint);
    let mut head = format!(
        "POST /v1/run HTTP/1.1\r\nHost: warden\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {length}\r\n"
    );
    if let Some(token) = token {
        head.push_str(&format!("Authorization: Bearer {token}\r\n"));
    }
    head.push_str("\r\n");
    let started = std::time::Instant::now();
    stream.write_all(head.as_bytes()).unwrap();
    stream.set_nonblocking(true);
    let piece = vec![b' '; 256 * 1024];
    let (mut sent, mut raw, mut buf) = (0usize, Vec::new(), [0u8; 4096]);
    let (mut answered, mut closed) = (None, false);
    loop {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                answered.get_or_insert_with(|| started.elapsed());
                raw.extend_from_slice(&buf[..n]);
                continue;
            }
            Err(err) if err.kind() == ErrorKind::WouldBlock => {}
            Err(_) => break,
        }
        if sent < length && !closed {
            match stream.write(&piece[..piece.len().min(length - sent)]) {
                Ok(n) => sent += n,
                Err(err) if err.kind() == ErrorKind::WouldBlock => {}
                // The server closed its end: nothing more goes out (`sent` stays what did), and
                // what it answered is still to be read.
                Err(_) => closed = true,
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no answer and no close after two minutes"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let answered = answered.unwrap_or_else(|| panic!("no answer (sent {sent} bytes)"));
    (support::parse_raw_response(&raw), sent, answered)
}

#[test]
fn unauthenticated_bodies_are_never_read() {
    require_root!();
    let mut server = Server::start(Options {
        tcp: true,
        max_request_bytes: 16 << 20,
        ..Options::default()
    });
    let pid = server.pid();
    let before = support::memory_kib(pid, "VmRSS");
    // 16 clients per listener announce a 16 MiB body and send it slowly: over TCP without a token,
    // on the socket with a wrong one. Before the fix the server buffered every body before looking
    // at the token (16 x 16 MiB = 256 MiB per listener).
    let clients: Vec<_> = [(server.unix(), Some("wrong-token")), (server.tcp(), None)]
        .into_iter()
        .flat_map(|(endpoint, token)| {
            (0..16).map(move |_| {
                let endpoint = endpoint.clone();
                std::thread::spawn(move || slow_body(&endpoint, token, 16 << 20))
            })
        })
        .collect();
    for client in clients {
        let (response, sent, answered) = client.join().unwrap();
        assert_eq!(response.status, 401, "{}", response.text());
        assert_eq!(response.json()["error"]["code"], "unauthorized");
        assert!(
            answered < Duration::from_secs(5),
            "the 401 took {answered:?}"
        );
        assert!(sent < 16 << 20, "the whole body went out before the 401");
    }
    let peak = support::memory_kib(pid, "VmHWM");
    assert!(
        peak < before + 32 * 1024,
        "the server's memory grew from {before} KiB to a peak of {peak} KiB"
    );
    let metrics = request(&server.unix(), "GET", "/metrics", None, None).text();
    assert_eq!(
        support::metric(
            &metrics,
            "warden_requests_rejected_total{reason=\"unauthorized\"}"
        ),
        Some(32.0)
    );
    // An authenticated client's body is still read (and one over the cap refused at its head);
    // a head over the server's 16 KiB buffer is refused before anyone is authenticated.
    for endpoint in [server.unix(), server.tcp()] {
        use std::io::{Read, Write};
        let mut huge = support::connect(&endpoint);
        huge.set_read_timeout(Some(Duration::from_secs(10)));
        let _ = huge.write_all(
            format!(
                "GET /healthz HTTP/1.1\r\nHost: warden\r\nX-Filler: {}\r\n\r\n",
                "a".repeat(64 * 1024)
            )
            .as_bytes(),
        );
        let mut raw = Vec::new();
        let _ = huge.read_to_end(&mut raw);
        assert!(
            raw.starts_with(b"HTTP/1.1 431"),
            "{}",
            String::from_utf8_lossy(&raw)
        );
        let (response, _, _) = slow_body(&endpoint, token_for(&endpoint), 17 << 20);
        assert_eq!(response.status, 413, "{}", response.text());
        let ok = post_json(
            &endpoint,
            "/v1/run",
            token_for(&endpoint),
            &json!({"code": "print(1)"}),
        );
        assert_eq!(ok.status, 200, "{}", ok.text());
    }
    server.stop();
    assert_nothing_left(&server);
}

#[test]
fn idle_and_slow_connections_are_closed_and_lock_no_one_out() {
    use std::io::{ErrorKind, Read, Write};
    require_root!();
    let mut server = Server::start(Options {
        tcp: true,
        max_connections: 4,
        header_timeout_ms: Some(1000),
        body_timeout_ms: Some(1000),
        ..Options::default()
    });
    // Whether the server closed `stream` within `limit` (after anything it sent).
    let closed_within = |stream: &mut support::Stream, limit: Duration| {
        stream.set_read_timeout(Some(limit));
        let mut sink = Vec::new();
        match stream.read_to_end(&mut sink) {
            Ok(_) => true,
            Err(err) => err.kind() == ErrorKind::ConnectionReset,
        }
    };
    for endpoint in [server.unix(), server.tcp()] {
        let token = token_for(&endpoint);
        // Twice as many connections as the listener holds: half send nothing, half half a head.
        let mut idle: Vec<support::Stream> = (0..8)
            .map(|i| {
                let mut stream = support::connect(&endpoint);
                if i % 2 == 1 {
                    stream
                        .write_all(b"GET /v1/policies HTTP/1.1\r\nHost: warden\r\n")
                        .unwrap();
                }
                stream
            })
            .collect();
        std::thread::sleep(Duration::from_millis(200));
        // A real client behind them is served once the header timeout has closed two rounds of
        // them (before the fix: never).
        let started = std::time::Instant::now();
        let served = request(&endpoint, "GET", "/v1/policies", token, None);
        assert_eq!(served.status, 200, "{}", served.text());
        assert!(
            started.elapsed() < Duration::from_secs(8),
            "served after {:?}",
            started.elapsed()
        );
        for (i, stream) in idle.iter_mut().enumerate() {
            assert!(
                closed_within(stream, Duration::from_secs(5)),
                "idle connection {i} on {endpoint:?} is still open"
            );
        }
        // A keep-alive connection that goes idle after a request is closed after the timeout too.
        let mut kept = support::connect(&endpoint);
        kept.write_all(b"GET /healthz HTTP/1.1\r\nHost: warden\r\n\r\n")
            .unwrap();
        kept.set_read_timeout(Some(Duration::from_secs(10)));
        let mut first = [0u8; 512];
        let n = kept.read(&mut first).unwrap();
        assert!(first[..n].starts_with(b"HTTP/1.1 200"));
        let idle_since = std::time::Instant::now();
        assert!(closed_within(&mut kept, Duration::from_secs(5)));
        assert!(idle_since.elapsed() >= Duration::from_millis(700));
        // A body that stops arriving: 408 once the body timeout passes.
        let mut slow = support::connect(&endpoint);
        let mut head =
            "POST /v1/run HTTP/1.1\r\nHost: warden\r\nContent-Length: 1000\r\n".to_owned();
        if let Some(token) = token {
            head.push_str(&format!("Authorization: Bearer {token}\r\n"));
        }
        slow.write_all(format!("{head}\r\n{{\"code\": ").as_bytes())
            .unwrap();
        slow.set_read_timeout(Some(Duration::from_secs(10)));
        let mut raw = Vec::new();
        let _ = slow.read_to_end(&mut raw);
        let response = support::parse_raw_response(&raw);
        assert_eq!(response.status, 408, "{}", response.text());
        assert_eq!(response.json()["error"]["code"], "body_timeout");
    }
    server.stop();
    assert_nothing_left(&server);
}

/// The deepest schema the bounds admit (gateway/src/validate.rs): every `$ref` in one chain, each
/// target nested in `allOf`s as deep as allowed, ending in `required: ["x"]`.
fn deepest_admitted_schema() -> Value {
    let mut defs = serde_json::Map::new();
    for i in 0..16 {
        let mut node = if i < 15 {
            json!({"$ref": format!("#/$defs/d{}", i + 1)})
        } else {
            json!({"type": "object", "required": ["x"]})
        };
        for _ in 0..14 {
            node = json!({"allOf": [node]});
        }
        defs.insert(format!("d{i}"), node);
    }
    json!({"$ref": "#/$defs/d0", "$defs": defs})
}

#[test]
fn client_schemas_are_bounded_and_compiled_only_once_admitted() {
    require_root!();
    let mut server = Server::start(Options {
        tcp: true,
        max_concurrent_runs: 1,
        queue_size: 0,
        ..Options::default()
    });
    let socket = server.unix();
    for endpoint in [server.unix(), server.tcp()] {
        let token = token_for(&endpoint);
        let post = |schema: Value, code: &str| {
            post_json(
                &endpoint,
                "/v1/run",
                token,
                &json!({"code": code, "schema": schema}),
            )
        };
        // Over the bounds: 400 with the reason, at once.
        let chain: serde_json::Map<String, Value> = (0..100)
            .map(|i| {
                (
                    format!("d{i}"),
                    json!({"$ref": format!("#/$defs/d{}", i + 1)}),
                )
            })
            .chain([("d100".to_owned(), json!({"type": "object"}))])
            .collect();
        let mut deep = json!({"type": "object"});
        for _ in 0..40 {
            deep = json!({"not": deep});
        }
        let patterns: serde_json::Map<String, Value> = (0..40)
            .map(|i| (format!("p{i}"), json!({"pattern": format!("^{i}")})))
            .collect();
        for (schema, reason) in [
            (json!({"enum": ["x".repeat(70_000)]}), "bytes"),
            (deep, "deeper"),
            (json!({"$ref": "#/$defs/d0", "$defs": chain}), "$ref"),
            (
                json!({"properties": {"a": {"$ref": "#"}}}),
                "refers to itself",
            ),
            (json!({"properties": patterns}), "regular expressions"),
        ] {
            let response = post(schema, "print(1)");
            assert_eq!(response.status, 400, "{}", response.text());
            let message = response.json()["error"]["message"]
                .as_str()
                .unwrap()
                .to_owned();
            assert!(message.contains(reason), "{message}");
        }
        // The deepest schema within the bounds compiles and validates in the worker: a record
        // (the output lacks `x`), never a worker that overflowed its stack.
        let deepest = post(deepest_admitted_schema(), "print('{\"y\": 1}')");
        assert_eq!(deepest.status, 200, "{}", deepest.text());
        assert_eq!(
            deepest.json()["status"],
            "output_invalid",
            "{}",
            deepest.text()
        );

        // Compiled only once a run slot is held: while the only slot is busy (and there is no
        // queue), a schema that only compiling finds wrong is turned away with 429, not 400.
        let holder = {
            let endpoint = endpoint.clone();
            std::thread::spawn(move || {
                post_json(
                    &endpoint,
                    "/v1/run",
                    token_for(&endpoint),
                    &json!({"code": "import time\ntime.sleep(3)\nprint('held')\n"}),
                )
            })
        };
        wait_for_metric(&socket, "warden_runs_in_flight", 1.0, 20);
        let busy = post(json!({"type": 5}), "print(1)");
        assert_eq!(busy.status, 429, "{}", busy.text());
        assert_eq!(holder.join().unwrap().json()["stdout"], "held\n");
        let admitted = post(json!({"type": 5}), "print(1)");
        assert_eq!(admitted.status, 400, "{}", admitted.text());
        assert!(admitted.text().contains("invalid output schema"));
    }
    server.stop();
    assert_nothing_left(&server);
}

#[test]
fn input_files_are_capped_in_number_and_bytes() {
    require_root!();
    let mut server = Server::start(Options {
        tcp: true,
        max_input_files: Some(8),
        max_input_bytes: Some(1000),
        ..Options::default()
    });
    let file = |i: usize, size: usize| json!({"name": format!("f{i}"), "content_base64": base64::engine::general_purpose::STANDARD.encode("x".repeat(size))});
    let list = "import os\nprint(len([n for n in os.listdir('.') if n.startswith('f')]))\n";
    for endpoint in [server.unix(), server.tcp()] {
        let token = token_for(&endpoint);
        let post = |inputs: Vec<Value>| {
            post_json(
                &endpoint,
                "/v1/run",
                token,
                &json!({"code": list, "inputs": inputs}),
            )
        };
        // At both caps: runs.
        let at_caps = post((0..8).map(|i| file(i, 125)).collect());
        assert_eq!(at_caps.status, 200, "{}", at_caps.text());
        assert_eq!(at_caps.json()["stdout"], "8\n", "{}", at_caps.text());
        // One file or one byte more: 400 naming the setting.
        let too_many = post((0..9).map(|i| file(i, 1)).collect());
        assert_eq!(too_many.status, 400, "{}", too_many.text());
        assert!(too_many.text().contains("admission.max_input_files"));
        let too_big = post(vec![file(0, 500), file(1, 501)]);
        assert_eq!(too_big.status, 400, "{}", too_big.text());
        assert!(too_big.text().contains("admission.max_input_bytes"));
        // Ten thousand tiny files (before: ~17 s of the worker's time before the jail's clocks
        // started, holding a run slot) are refused at once.
        let started = std::time::Instant::now();
        let flood = post((0..10_000).map(|i| file(i, 1)).collect());
        assert_eq!(flood.status, 400, "{}", flood.text());
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
    }
    let metrics = request(&server.unix(), "GET", "/metrics", None, None).text();
    assert_eq!(
        support::metric(&metrics, "warden_run_duration_seconds_count"),
        Some(2.0),
        "only the two runs at the caps ran"
    );
    server.stop();
    assert_nothing_left(&server);
}

/// Every string value in `value` (object keys excluded).
fn string_values(value: &Value) -> Vec<String> {
    match value {
        Value::String(text) => vec![text.clone()],
        Value::Array(items) => items.iter().flat_map(string_values).collect(),
        Value::Object(map) => map.values().flat_map(string_values).collect(),
        _ => Vec::new(),
    }
}

#[test]
fn a_restricted_token_never_learns_the_servers_default_policy() {
    require_root!();
    let mut server = Server::start(Options {
        tcp: true,
        ..Options::default()
    });
    for endpoint in [server.unix(), server.tcp()] {
        // A token for `strict` only: its list, and its default, are its own.
        let listed = request(&endpoint, "GET", "/v1/policies", Some(STRICT_TOKEN), None);
        assert_eq!(listed.status, 200, "{}", listed.text());
        let listed = listed.json();
        assert_eq!(listed["default"], "strict", "{listed}");
        assert_eq!(listed["policies"].as_array().unwrap().len(), 1);
        assert_eq!(listed["policies"][0]["name"], "strict");
        assert_eq!(listed["policies"][0]["default"], true);
        assert!(
            !string_values(&listed).iter().any(|s| s == "default"),
            "the server's default policy is named to a token that may not use it: {listed}"
        );
        // Without `policy`, its only policy.
        for path in ["/v1/run", "/v1/check"] {
            let unnamed = post_json(
                &endpoint,
                path,
                Some(STRICT_TOKEN),
                &json!({"code": "print(1)"}),
            );
            assert_eq!(unnamed.status, 200, "{}", unnamed.text());
            assert_eq!(
                unnamed.json()["policy"]["name"],
                "strict",
                "{}",
                unnamed.text()
            );
        }
        // A policy outside its set: the same 403 whether or not the server has one by that name.
        let answer = |policy: &str| {
            let response = post_json(
                &endpoint,
                "/v1/run",
                Some(STRICT_TOKEN),
                &json!({"code": "print(1)", "policy": policy}),
            );
            assert_eq!(response.status, 403, "{}", response.text());
            response.json()["error"]["message"]
                .as_str()
                .unwrap()
                .replace(policy, "NAME")
        };
        assert_eq!(answer("default"), answer("no-such-policy"));

        // A token for `review` and `strict` (not the default) must name one.
        let listed = request(
            &endpoint,
            "GET",
            "/v1/policies",
            Some(support::MULTI_TOKEN),
            None,
        )
        .json();
        assert_eq!(listed["default"], Value::Null, "{listed}");
        assert!(
            !string_values(&listed).iter().any(|s| s == "default"),
            "{listed}"
        );
        for path in ["/v1/run", "/v1/check"] {
            let unnamed = post_json(
                &endpoint,
                path,
                Some(support::MULTI_TOKEN),
                &json!({"code": "print(1)"}),
            );
            assert_eq!(unnamed.status, 400, "{}", unnamed.text());
            let message = unnamed.json()["error"]["message"]
                .as_str()
                .unwrap()
                .to_owned();
            assert!(
                message.contains("name a policy")
                    && message.contains("\"review\"")
                    && message.contains("\"strict\""),
                "{message}"
            );
            assert!(!message.contains("default"), "{message}");
        }
        let named = post_json(
            &endpoint,
            "/v1/run",
            Some(support::MULTI_TOKEN),
            &json!({"code": "print(1)", "policy": "review"}),
        );
        assert_eq!(named.status, 200, "{}", named.text());

        // A token that may use the default sees it as such.
        let listed = request(&endpoint, "GET", "/v1/policies", Some(TOKEN), None).json();
        assert_eq!(listed["default"], "default");
    }
    server.stop();
    assert_nothing_left(&server);
}

/// Posts a run on its own thread; the response comes with `join`.
fn in_background(socket: &Endpoint, body: Value) -> std::thread::JoinHandle<Response> {
    let socket = socket.clone();
    std::thread::spawn(move || post_json(&socket, "/v1/run", None, &body))
}

/// Waits until the server's metric `name` has `value` (a run in flight, a request queued).
fn wait_for_metric(socket: &Endpoint, name: &str, value: f64, seconds: u64) {
    let reached = support::wait_until(Duration::from_secs(seconds), || {
        let metrics = request(socket, "GET", "/metrics", None, None).text();
        support::metric(&metrics, name) == Some(value)
    });
    assert!(reached, "{name} never reached {value}");
}

/// No job directory or jail mount outlives a stopped server, and its socket file is gone.
fn assert_nothing_left(server: &Server) {
    assert!(
        support::job_dirs(&server.state_dir).is_empty(),
        "job directories were left behind"
    );
    assert!(!server.socket.exists(), "the socket file was left behind");
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    assert!(
        !mountinfo.contains("/warden/root"),
        "a jail mount is visible on the host"
    );
}

#[test]
fn every_refused_request_is_counted_and_the_build_is_named() {
    use std::io::{Read, Write};
    require_root!();
    let mut server = Server::start(Options {
        tcp: true,
        ..Options::default()
    });
    let (socket, tcp) = (server.unix(), server.tcp());
    // Refused by the router: no token, a wrong token, another client's (or no) session, an
    // unknown MCP session.
    assert_eq!(request(&tcp, "GET", "/v1/policies", None, None).status, 401);
    assert_eq!(
        request(&tcp, "GET", "/v1/policies", Some("not-a-token"), None).status,
        401
    );
    assert_eq!(
        request(&socket, "GET", "/v1/sessions/no-such-session", None, None).status,
        404
    );
    let mut stream = support::connect(&socket);
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nMcp-Session-Id: nope\r\n\
         Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    assert_eq!(support::parse_raw_response(&raw).status, 404);
    // Refused by hyper before the router: a head over 16 KiB, a head that is not HTTP.
    for (bytes, status) in [
        (
            format!(
                "GET /healthz HTTP/1.1\r\nHost: warden\r\nX-Big: {}\r\n\r\n",
                "a".repeat(20_000)
            ),
            431,
        ),
        ("NOT HTTP AT ALL\r\n\r\n".to_owned(), 400),
    ] {
        let mut stream = support::connect(&socket);
        stream.set_read_timeout(Some(Duration::from_secs(10)));
        let _ = stream.write_all(bytes.as_bytes());
        let mut raw = Vec::new();
        let _ = stream.read_to_end(&mut raw);
        assert_eq!(
            support::parse_raw_response(&raw).status,
            status,
            "{}",
            String::from_utf8_lossy(&raw)
        );
    }
    // hyper's refusals are counted when their connection ends, just after the client read them.
    let expected = [
        ("unauthorized", 2.0),
        ("not_found", 2.0),
        ("header_too_large", 1.0),
        ("bad_request", 1.0),
    ];
    let counted = |metrics: &str, reason: &str| {
        support::metric(
            metrics,
            &format!("warden_requests_rejected_total{{reason=\"{reason}\"}}"),
        )
    };
    let mut metrics = String::new();
    for _ in 0..50 {
        metrics = request(&socket, "GET", "/metrics", None, None).text();
        if expected
            .iter()
            .all(|(reason, count)| counted(&metrics, reason) == Some(*count))
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    for (reason, count) in expected {
        assert_eq!(
            counted(&metrics, reason),
            Some(count),
            "{reason}:\n{metrics}"
        );
    }
    // The build: its version and the commit it was built from.
    let info = metrics
        .lines()
        .find(|l| l.starts_with("warden_build_info{"))
        .unwrap_or_else(|| panic!("no warden_build_info:\n{metrics}"));
    let commit = info
        .split("commit=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("no commit label: {info}"));
    assert!(
        commit.len() == 12 && commit.chars().all(|c| c.is_ascii_hexdigit()),
        "the commit of a build from a git checkout: {info}"
    );
    assert!(
        info.contains(&format!("version=\"{}\"", env!("CARGO_PKG_VERSION"))),
        "{info}"
    );
    server.stop();
    assert_nothing_left(&server);
}

/// The server's static checks use the identity index `warden runtime check` writes, as the CLI's do:
/// a second path to a banned object (`seaborn.utils.urlopen` is `urllib.request.urlopen`) is denied
/// by `/v1/check` and by `/v1/run` before anything runs.
#[test]
fn the_server_judges_second_paths_by_the_identity_index() {
    require_root!();
    let output = warden_test_support::warden()
        .args(["runtime", "check", "--json"])
        .output()
        .expect("warden runtime check");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let facts: Value = serde_json::from_slice(&output.stdout).expect("facts");
    assert_eq!(
        facts["aliases"]["seaborn.utils.urlopen"], "urllib.request.urlopen",
        "{}",
        facts["aliases"]
    );
    let mut server = Server::start(Options::default());
    let socket = server.unix();
    let code = "import seaborn.utils as su\nfetch = su.urlopen\nprint(fetch)\n";
    let check = post_json(&socket, "/v1/check", None, &json!({"code": code}));
    assert_eq!(check.status, 200, "{}", check.text());
    let check = check.json();
    assert_eq!(check["decision"], "deny", "{check}");
    assert!(
        check["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .any(|f| f["message"]
                .as_str()
                .unwrap_or("")
                .contains("urllib.request.urlopen")),
        "{check}"
    );
    let record = run(&socket, json!({"code": code}));
    assert_eq!(record["status"], "denied", "{record}");
    server.stop();
}
