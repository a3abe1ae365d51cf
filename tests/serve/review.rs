//! Review over the API: a program the policy sends to review is held with an id, a person with the
//! right to approve approves or rejects it (over HTTP with an approver's token, or with
//! `warden review` on the server's socket), and its submitter runs it by id, once. An approval
//! is void for another program, another caller, a changed policy, after a rejection and after it
//! expires; the audit log names the approver. Over MCP, the tool result says the cell awaits
//! approval and how to run it once approved. Real servers, real jails.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use warden_test_support::require_root;

use super::support::{
    post_json, request, sha256_hex, Endpoint, Options, Server, MULTI_TOKEN, STRICT_TOKEN, TOKEN,
};

/// The secret of a token that may approve (`approve = true`).
const APPROVER: &str = "approver-token-5e0d";

/// A program the `review` policy sends to review (DYN403, `globals()`), and its output.
const REVIEWED: &str = "names = sorted(globals())\nprint('reviewed', len(names) > 0)\n";

fn approver_config(extra: &str) -> String {
    format!(
        "[[tokens]]\nname = \"approver\"\nsha256 = \"{}\"\npolicies = [\"default\"]\napprove = true\n{extra}",
        sha256_hex(APPROVER)
    )
}

fn submit(endpoint: &Endpoint, token: Option<&str>, code: &str, policy: &str) -> Value {
    let response = post_json(
        endpoint,
        "/v1/run",
        token,
        &json!({"code": code, "policy": policy}),
    );
    assert_eq!(response.status, 200, "{}", response.text());
    let record = response.json();
    assert_eq!(record["status"], "review_required", "{record}");
    assert_eq!(record["review"]["status"], "pending", "{record}");
    record
}

fn review_id(record: &Value) -> String {
    let id = record["review"]["id"]
        .as_str()
        .expect("a review id")
        .to_owned();
    assert_eq!(id.len(), 32, "{record}");
    id
}

fn post(endpoint: &Endpoint, path: &str, token: Option<&str>, body: &Value) -> (u16, Value) {
    let response = post_json(endpoint, path, token, body);
    (response.status, response.json())
}

fn get(endpoint: &Endpoint, path: &str, token: Option<&str>) -> (u16, Value) {
    let response = request(endpoint, "GET", path, token, None);
    (response.status, response.json())
}

fn error_code(answer: &Value) -> &str {
    answer["error"]["code"].as_str().unwrap_or("")
}

#[test]
fn an_approved_program_runs_once_for_its_submitter_and_the_approver_is_audited() {
    require_root!();
    let server = Server::start(Options {
        tcp: true,
        extra_config: Some(approver_config("")),
        ..Options::default()
    });
    let tcp = server.tcp();

    // A review decision holds the program and says so.
    let record = submit(&tcp, Some(TOKEN), REVIEWED, "review");
    let id = review_id(&record);
    assert_eq!(record["stdout"], "", "nothing ran: {record}");
    assert!(
        record["message"].as_str().unwrap().contains(&id),
        "{record}"
    );

    // The submitter sees its review; another client does not, not even by id.
    let (status, list) = get(&tcp, "/v1/reviews", Some(TOKEN));
    assert_eq!(status, 200, "{list}");
    assert_eq!(list["approver"], false);
    assert_eq!(list["reviews"][0]["id"], id.as_str(), "{list}");
    assert_eq!(
        list["reviews"][0]["findings"][0]["rule"], "DYN403",
        "{list}"
    );
    let (status, other) = get(&tcp, "/v1/reviews", Some(STRICT_TOKEN));
    assert_eq!(status, 200);
    assert_eq!(other["reviews"], json!([]), "{other}");
    let (status, _) = get(&tcp, &format!("/v1/reviews/{id}"), Some(STRICT_TOKEN));
    assert_eq!(status, 404);

    // Nothing runs before a person approves; a token without the right cannot approve.
    let run_path = format!("/v1/reviews/{id}/run");
    let (status, answer) = post(&tcp, &run_path, Some(TOKEN), &json!({}));
    assert_eq!(
        (status, error_code(&answer)),
        (409, "review_pending"),
        "{answer}"
    );
    let approve_path = format!("/v1/reviews/{id}/approve");
    let (status, answer) = post(&tcp, &approve_path, Some(TOKEN), &json!({}));
    assert_eq!(
        (status, error_code(&answer)),
        (403, "forbidden"),
        "{answer}"
    );

    // The approver sees every review with its program, and approves.
    let (status, shown) = get(&tcp, &format!("/v1/reviews/{id}"), Some(APPROVER));
    assert_eq!(status, 200, "{shown}");
    assert_eq!(shown["code"], REVIEWED);
    assert_eq!(shown["program_sha256"], sha256_hex(REVIEWED));
    assert_eq!(shown["policy"]["name"], "review");
    let (status, approved) = post(&tcp, &approve_path, Some(APPROVER), &json!({}));
    assert_eq!(status, 200, "{approved}");
    assert_eq!(approved["status"], "approved");
    assert!(
        approved["decided_by"]
            .as_str()
            .unwrap()
            .starts_with("token:approver"),
        "{approved}"
    );
    let (status, answer) = post(&tcp, &approve_path, Some(APPROVER), &json!({}));
    assert_eq!(
        (status, error_code(&answer)),
        (409, "review_approved"),
        "{answer}"
    );

    // Another caller, even one that may use the policy, gets 404; another program is refused.
    let (status, answer) = post(&tcp, &run_path, Some(MULTI_TOKEN), &json!({}));
    assert_eq!(status, 404, "{answer}");
    let (status, answer) = post(
        &tcp,
        &run_path,
        Some(TOKEN),
        &json!({"code": "import os\nprint(sorted(globals()))\n"}),
    );
    assert_eq!(
        (status, error_code(&answer)),
        (409, "review_mismatch"),
        "{answer}"
    );

    // The submitter runs it by id: the record of the run, with the approval.
    let (status, ran) = post(&tcp, &run_path, Some(TOKEN), &json!({"code": REVIEWED}));
    assert_eq!(status, 200, "{ran}");
    assert_eq!(ran["status"], "ok", "{ran}");
    assert_eq!(ran["stdout"], "reviewed True\n");
    assert_eq!(ran["check"]["decision"], "review");
    assert_eq!(ran["approval"]["method"], "review");
    assert!(
        ran["approval"]["by"]
            .as_str()
            .unwrap()
            .starts_with("token:approver"),
        "{ran}"
    );
    assert_eq!(ran["review"]["status"], "used", "{ran}");
    assert_eq!(ran["program_sha256"], sha256_hex(REVIEWED));

    // Once.
    let (status, answer) = post(&tcp, &run_path, Some(TOKEN), &json!({}));
    assert_eq!(
        (status, error_code(&answer)),
        (409, "review_used"),
        "{answer}"
    );

    // The audit log: submitted, approved by whom (and the refused attempt), run with the approver.
    let audit = server.audit_lines();
    let line = |endpoint: &str, status: &str| {
        audit
            .iter()
            .find(|l| l["endpoint"] == endpoint && l["status"] == status)
            .unwrap_or_else(|| panic!("no {endpoint} {status} line: {audit:#?}"))
            .clone()
    };
    let submitted = line("run", "review_required");
    assert_eq!(
        submitted["review"],
        id.as_str(),
        "the run's line names its review"
    );
    assert_eq!(submitted["code_sha256"], sha256_hex(REVIEWED));
    assert!(
        audit.iter().all(|l| l["endpoint"] != "review_submit"),
        "one line per request"
    );
    let refused = line("review_approve", "forbidden");
    assert!(refused["approver"]
        .as_str()
        .unwrap()
        .starts_with("token:agent-a"));
    let approval = line("review_approve", "ok");
    assert_eq!(approval["review"], id.as_str());
    assert!(
        approval["approver"]
            .as_str()
            .unwrap()
            .starts_with("token:approver"),
        "{approval}"
    );
    let run = line("review_run", "ok");
    assert_eq!(run["review"], id.as_str());
    assert_eq!(run["decision"], "review");
    assert!(run["approver"]
        .as_str()
        .unwrap()
        .starts_with("token:approver"));
    assert!(run["client"].as_str().unwrap().starts_with("token:agent-a"));
    let used = line("review_run", "review_used");
    assert_eq!(used["review"], id.as_str());
}

/// `warden review ...` against the server's socket; its exit code and standard output.
fn warden_review(socket: &Path, args: &[&str]) -> (i32, String, String) {
    let output = warden_test_support::warden()
        .arg("review")
        .args(args)
        .arg("--socket")
        .arg(socket)
        .output()
        .expect("run warden review");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn the_local_operator_lists_shows_approves_and_rejects_and_expired_or_rejected_reviews_never_run() {
    require_root!();
    let server = Server::start(Options {
        tcp: true,
        extra_config: Some(approver_config("\n[review]\nttl_ms = 10000\n")),
        ..Options::default()
    });
    let socket = server.unix();
    let rejected = review_id(&submit(&socket, None, REVIEWED, "review"));
    let expiring = review_id(&submit(
        &socket,
        None,
        "print(len(dir()))\nprint(sorted(globals())[0])\n",
        "review",
    ));

    let (code, out, err) = warden_review(&server.socket, &["list"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(&rejected) && out.contains(&expiring), "{out}");
    assert!(out.contains("pending") && out.contains("DYN403"), "{out}");
    let (code, out, err) = warden_review(&server.socket, &["show", &rejected]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(REVIEWED) && out.contains("DYN403"), "{out}");
    let (code, out, err) = warden_review(&server.socket, &["list", "--json"]);
    assert_eq!(code, 0, "{err}");
    let listed: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        listed["approver"], true,
        "the server's uid on its socket is an operator"
    );

    // Rejected: it never runs, and the submitter learns why.
    let (code, out, err) = warden_review(
        &server.socket,
        &["reject", &rejected, "--reason", "reads globals"],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("rejected"), "{out}");
    let (status, answer) = post(
        &socket,
        &format!("/v1/reviews/{rejected}/run"),
        None,
        &json!({}),
    );
    assert_eq!(
        (status, error_code(&answer)),
        (409, "review_rejected"),
        "{answer}"
    );
    let (_, shown) = get(&socket, &format!("/v1/reviews/{rejected}"), None);
    assert_eq!(shown["reason"], "reads globals");
    let (code, _, err) = warden_review(&server.socket, &["approve", &rejected]);
    assert_eq!(code, 1, "a rejected review cannot be approved: {err}");
    assert!(err.contains("review_rejected"), "{err}");

    // Approved, then expired before it ran: refused.
    let (code, out, err) = warden_review(&server.socket, &["approve", &expiring]);
    assert_eq!(code, 0, "{out}{err}");
    let expired = super::support::wait_until(Duration::from_secs(30), || {
        get(&socket, &format!("/v1/reviews/{expiring}"), None).1["status"] == "expired"
    });
    assert!(expired, "the review did not expire after review.ttl_ms");
    let (status, answer) = post(
        &socket,
        &format!("/v1/reviews/{expiring}/run"),
        None,
        &json!({}),
    );
    assert_eq!(
        (status, error_code(&answer)),
        (409, "review_expired"),
        "{answer}"
    );

    // An unknown id, and a client over TCP that may not approve.
    let (code, _, err) = warden_review(&server.socket, &["approve", &"0".repeat(32)]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("not_found"), "{err}");
    let (code, _, err) = warden_review(&server.socket, &["approve", "../metrics"]);
    assert_eq!(code, 2, "{err}");
    let fresh = review_id(&submit(&socket, None, REVIEWED, "review"));
    let (status, answer) = post(
        &server.tcp(),
        &format!("/v1/reviews/{fresh}/approve"),
        Some(STRICT_TOKEN),
        &json!({}),
    );
    assert_eq!(status, 403, "{answer}");
}

/// The `review` policy's rules, as the test server writes them, with `marker` in a comment.
fn review_rules(marker: &str) -> String {
    let default =
        std::fs::read_to_string(warden_test_support::repo().join("rules/default.toml")).unwrap();
    default
        .replacen("name = \"default\"", "name = \"edited-test\"", 1)
        .replace("[actions]\n", "[actions]\nDYN403 = \"review\"\n")
        + &format!("# {marker}\n")
}

#[test]
fn reviews_survive_a_restart_and_a_changed_policy_voids_an_approval() {
    require_root!();
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("edited.toml");
    std::fs::write(&rules, review_rules("first")).unwrap();
    let state = dir.path().join("state");
    let options = Options {
        state_dir: Some(state.clone()),
        extra_policies: vec![("edited".to_owned(), rules.clone())],
        ..Options::default()
    };
    let mut server = Server::start(options.clone());
    let socket = server.unix();
    let kept = review_id(&submit(&socket, None, REVIEWED, "edited"));
    let voided = review_id(&submit(
        &socket,
        None,
        "print(sorted(globals())[-1])\n",
        "edited",
    ));
    for id in [&kept, &voided] {
        let (status, answer) = post(
            &socket,
            &format!("/v1/reviews/{id}/approve"),
            None,
            &json!({}),
        );
        assert_eq!(status, 200, "{answer}");
    }
    server.stop();

    // The same rules after a restart: the approval holds (the store is on disk).
    let server = Server::start(options.clone());
    let socket = server.unix();
    let (status, ran) = post(
        &socket,
        &format!("/v1/reviews/{kept}/run"),
        None,
        &json!({}),
    );
    assert_eq!(status, 200, "{ran}");
    assert_eq!(ran["status"], "ok", "{ran}");
    assert_eq!(ran["stdout"], "reviewed True\n");
    drop(server);

    // Edited rules (another digest): the approval is void.
    std::fs::write(&rules, review_rules("second")).unwrap();
    let server = Server::start(options);
    let socket = server.unix();
    let (status, answer) = post(
        &socket,
        &format!("/v1/reviews/{voided}/run"),
        None,
        &json!({}),
    );
    assert_eq!(
        (status, error_code(&answer)),
        (409, "review_void"),
        "{answer}"
    );
    let (_, shown) = get(&socket, &format!("/v1/reviews/{voided}"), None);
    assert_eq!(shown["status"], "void", "{shown}");
}

/// A minimal MCP client over stdio (newline-delimited JSON-RPC), enough to call tools.
struct Mcp {
    child: std::process::Child,
    input: std::process::ChildStdin,
    output: BufReader<std::process::ChildStdout>,
    next: u64,
}

impl Mcp {
    fn start(config: &Path) -> Mcp {
        let mut child = warden_test_support::warden()
            .args(["mcp", "--config"])
            .arg(config)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
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
        mcp.call(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "review-test", "version": "1"}}),
        );
        mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        mcp
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.input, "{message}").unwrap();
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

    /// A tool's text and whether it is an error.
    fn tool(&mut self, name: &str, arguments: Value) -> (String, bool) {
        let result = self.call("tools/call", json!({"name": name, "arguments": arguments}));
        let text = result["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        (text, result["isError"] == true)
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn over_mcp_a_cell_that_needs_review_says_so_and_runs_by_id_once_approved() {
    require_root!();
    let server = Server::start(Options::default());
    // `warden mcp` with the server's state directory (so they share the reviews) and its
    // `review` policy as the default.
    let config = server.dir.path().join("mcp.toml");
    std::fs::write(
        &config,
        format!(
            "[server]\nstate_dir = {:?}\naudit_log = \"off\"\ndefault_policy = \"review\"\n\
             [policies]\nreview = {:?}\n",
            server.state_dir,
            server.dir.path().join("review.toml")
        ),
    )
    .unwrap();
    let mut mcp = Mcp::start(&config);
    let tools = mcp.call("tools/list", json!({}));
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        names.contains(&"review_status") && names.contains(&"run_reviewed"),
        "{names:?}"
    );

    let (text, is_error) = mcp.tool("run_python", json!({"code": REVIEWED}));
    assert!(is_error, "{text}");
    assert!(
        text.contains("did not run") && text.contains("DYN403") && text.contains("awaits approval"),
        "{text}"
    );
    let id = text
        .split("as review ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .expect("the review id in the text")
        .to_owned();
    assert!(
        text.contains("review_status") && text.contains("run_reviewed"),
        "{text}"
    );
    let (status, _) = mcp.tool("review_status", json!({"id": id}));
    assert!(status.contains("pending"), "{status}");
    let (early, is_error) = mcp.tool("run_reviewed", json!({"id": id}));
    assert!(is_error && early.contains("review_pending"), "{early}");

    // The operator approves on the server's socket; the model runs it by id, once.
    let (code, _) = post(
        &server.unix(),
        &format!("/v1/reviews/{id}/approve"),
        None,
        &json!({}),
    );
    assert_eq!(code, 200);
    let (status, _) = mcp.tool("review_status", json!({"id": id}));
    assert!(status.contains("approved"), "{status}");
    let (ran, is_error) = mcp.tool("run_reviewed", json!({"id": id}));
    assert!(!is_error, "{ran}");
    assert!(
        ran.contains("status ok") && ran.contains("reviewed True"),
        "{ran}"
    );
    let (again, is_error) = mcp.tool("run_reviewed", json!({"id": id}));
    assert!(is_error && again.contains("review_used"), "{again}");
    // Another MCP connection is another client: the review is not its own.
    let mut other = Mcp::start(&config);
    let (text, is_error) = other.tool("review_status", json!({"id": id}));
    assert!(is_error && text.contains("not_found"), "{text}");
}

#[test]
fn the_store_is_bounded_in_count_and_size_and_a_decided_review_makes_room() {
    require_root!();
    let server = Server::start(Options {
        extra_config: Some(
            "[review]\nmax_reviews = 2\nmax_bytes = 400\nmax_reviews_per_client = 2\n".to_owned(),
        ),
        ..Options::default()
    });
    let socket = server.unix();
    let run = |code: &str| {
        let response = post_json(
            &socket,
            "/v1/run",
            None,
            &json!({"code": code, "policy": "review"}),
        );
        assert_eq!(response.status, 200, "{}", response.text());
        response.json()
    };
    let first = review_id(&run(REVIEWED));
    review_id(&run("print(sorted(globals())[1])\n"));
    // Full: the record says why nothing was held.
    let full = run("print(sorted(globals())[2])\n");
    assert_eq!(full["status"], "review_required");
    assert_eq!(full["review"], Value::Null, "{full}");
    assert!(
        full["message"]
            .as_str()
            .unwrap()
            .contains("review.max_reviews"),
        "{full}"
    );
    // Too large to hold.
    let large = run(&format!(
        "# {}\nprint(sorted(globals()))\n",
        "x".repeat(500)
    ));
    assert_eq!(large["review"], Value::Null, "{large}");
    assert!(
        large["message"]
            .as_str()
            .unwrap()
            .contains("review.max_bytes"),
        "{large}"
    );
    // A rejected review is the first to go when room is needed.
    let (status, _) = post(
        &socket,
        &format!("/v1/reviews/{first}/reject"),
        None,
        &json!({}),
    );
    assert_eq!(status, 200);
    review_id(&run("print(sorted(globals())[3])\n"));
    let (_, list) = get(&socket, "/v1/reviews", None);
    let ids: Vec<&str> = list["reviews"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["id"].as_str())
        .collect();
    assert_eq!(ids.len(), 2, "{list}");
    assert!(!ids.contains(&first.as_str()), "{list}");
}

/// Issue 25, point 7: one client cannot fill the review store for the others. Its share
/// (`review.max_reviews_per_client`) counts the reviews waiting (pending or approved); past it its
/// run says why nothing was held, and another client's program is still held.
#[test]
fn one_client_cannot_fill_the_review_store() {
    require_root!();
    let server = Server::start(Options {
        extra_config: Some("[review]\nmax_reviews = 8\nmax_reviews_per_client = 2\n".to_owned()),
        ..Options::default()
    });
    let socket = server.unix();
    let run = |token: Option<&str>, n: usize| {
        let response = post_json(
            &socket,
            "/v1/run",
            token,
            &json!({"code": format!("print(sorted(globals())[{n}])\n"), "policy": "review"}),
        );
        assert_eq!(response.status, 200, "{}", response.text());
        response.json()
    };
    review_id(&run(Some(TOKEN), 1));
    review_id(&run(Some(TOKEN), 2));
    let refused = run(Some(TOKEN), 3);
    assert_eq!(refused["status"], "review_required", "{refused}");
    assert_eq!(refused["review"], Value::Null, "{refused}");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("review.max_reviews_per_client"),
        "{refused}"
    );
    // Another client still gets its program held.
    review_id(&run(Some(MULTI_TOKEN), 4));
}
