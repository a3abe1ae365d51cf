//! Several nodes (issue 28, point 1): servers started with `WARDEN_NODE` name their node and their
//! boot epoch in session ids, answer `421 wrong_node` naming the owner for another node's session,
//! `410 session_lost` for their own sessions of an earlier life (a restart on the same state
//! directory), and 404, as one server does, for ids that never existed or are another client's.
//! No router: the answers of the nodes themselves (scripts/scale-out-test.sh puts HAProxy in front).

use serde_json::{json, Value};

use super::support::{post_json, request, Endpoint, Options, Server, STRICT_TOKEN, TOKEN};

fn node(name: &str, state_dir: Option<std::path::PathBuf>) -> Server {
    Server::start(Options {
        env: vec![("WARDEN_NODE".to_owned(), name.to_owned())],
        state_dir,
        ..Options::default()
    })
}

/// The id's parts: 32 hex digits, the boot epoch, the node.
fn parts(id: &str) -> (String, u64, String) {
    let (head, node) = id.split_once('.').expect("the id names a node");
    let (hex, epoch) = head.split_once('-').expect("the id names an epoch");
    assert!(
        hex.len() == 32 && hex.bytes().all(|b| b.is_ascii_hexdigit()),
        "{id}"
    );
    (
        hex.to_owned(),
        epoch.parse().expect("a decimal epoch"),
        node.to_owned(),
    )
}

fn create(endpoint: &Endpoint) -> String {
    let created = post_json(endpoint, "/v1/sessions", Some(TOKEN), &json!({}));
    assert_eq!(created.status, 200, "{}", created.text());
    created.json()["id"].as_str().expect("id").to_owned()
}

fn execute(endpoint: &Endpoint, id: &str, code: &str) -> (u16, Value) {
    let answer = post_json(
        endpoint,
        &format!("/v1/sessions/{id}/execute"),
        Some(TOKEN),
        &json!({ "code": code }),
    );
    (answer.status, answer.json())
}

fn get(endpoint: &Endpoint, id: &str, token: &str) -> (u16, Value) {
    let answer = request(
        endpoint,
        "GET",
        &format!("/v1/sessions/{id}"),
        Some(token),
        None,
    );
    (answer.status, answer.json())
}

#[test]
fn nodes_name_themselves_in_ids_and_answer_421_410_or_404_for_sessions_they_do_not_hold() {
    warden_test_support::require_root!();
    let state = tempfile::Builder::new()
        .prefix("warden-node-state-")
        .tempdir()
        .expect("tempdir");
    let mut a = node("node-a.zone-1", Some(state.path().join("a")));
    let b = node("node-b", None);
    let (on_a, on_b) = (a.unix(), b.unix());

    // The health check says which node answers.
    let health = request(&on_a, "GET", "/healthz", None, None).json();
    assert_eq!(health["node"], "node-a.zone-1", "{health}");

    // A session on a: its id names a's node and this life's epoch, and it keeps its state.
    let id = create(&on_a);
    let (hex, epoch, named) = parts(&id);
    assert_eq!(named, "node-a.zone-1", "{id}");
    let (status, first) = execute(&on_a, &id, "x = 41");
    assert_eq!((status, &first["status"]), (200, &json!("ok")), "{first}");
    let (_, second) = execute(&on_a, &id, "x + 1");
    assert_eq!(second["result"]["text/plain"], "42", "{second}");

    // Node b does not hold it: 421 naming a, for every request about it (never 404).
    let (status, body) = get(&on_b, &id, TOKEN);
    assert_eq!(status, 421, "{body}");
    assert_eq!(body["error"]["code"], "wrong_node", "{body}");
    assert_eq!(body["error"]["node"], "node-a.zone-1", "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("node-a.zone-1")),
        "{body}"
    );
    let (status, body) = execute(&on_b, &id, "x");
    assert_eq!(
        (status, &body["error"]["code"]),
        (421, &json!("wrong_node"))
    );
    let deleted = request(
        &on_b,
        "DELETE",
        &format!("/v1/sessions/{id}"),
        Some(TOKEN),
        None,
    );
    assert_eq!(deleted.status, 421, "{}", deleted.text());

    // On a, 404 as before for what never existed (this life's epoch, a fresh id) and for another
    // client's session.
    let never = format!("{}-{epoch}.node-a.zone-1", "0".repeat(32));
    let (status, body) = get(&on_a, &never, TOKEN);
    assert_eq!((status, &body["error"]["code"]), (404, &json!("not_found")));
    let (status, body) = get(&on_a, &id, STRICT_TOKEN);
    assert_eq!((status, &body["error"]["code"]), (404, &json!("not_found")));

    // Stateless runs on both nodes.
    for endpoint in [&on_a, &on_b] {
        let run = post_json(
            endpoint,
            "/v1/run",
            Some(TOKEN),
            &json!({"code": "print(6 * 7)"}),
        );
        assert_eq!(run.status, 200, "{}", run.text());
        assert_eq!(run.json()["stdout"], "42\n", "{}", run.text());
    }

    // a restarts on the same state directory (the server is killed, as in a crash): its session
    // is gone, and a says so with 410 session_lost, for the owner and anyone else alike (the
    // answer comes from the id alone).
    a.kill();
    let a = node("node-a.zone-1", Some(state.path().join("a")));
    let on_a = a.unix();
    for token in [TOKEN, STRICT_TOKEN] {
        let (status, body) = get(&on_a, &id, token);
        assert_eq!(status, 410, "{body}");
        assert_eq!(body["error"]["code"], "session_lost", "{body}");
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("restarted") && message.contains("new session"),
            "{body}"
        );
    }
    let (status, body) = execute(&on_a, &id, "x");
    assert_eq!(
        (status, &body["error"]["code"]),
        (410, &json!("session_lost"))
    );
    // b still points at a.
    assert_eq!(get(&on_b, &id, TOKEN).0, 421);

    // The new life has a later epoch; its own unknown ids are still 404.
    let renewed = create(&on_a);
    let (renewed_hex, renewed_epoch, renewed_node) = parts(&renewed);
    assert_ne!(renewed_hex, hex);
    assert_eq!(renewed_node, "node-a.zone-1");
    assert!(renewed_epoch > epoch, "{renewed_epoch} <= {epoch}");
    let (status, _) = execute(&on_a, &renewed, "x = 1");
    assert_eq!(status, 200);
    let never = format!("{}-{renewed_epoch}.node-a.zone-1", "0".repeat(32));
    assert_eq!(get(&on_a, &never, TOKEN).0, 404);
    let deleted = request(
        &on_a,
        "DELETE",
        &format!("/v1/sessions/{renewed}"),
        Some(TOKEN),
        None,
    );
    assert_eq!(deleted.status, 200, "{}", deleted.text());
}
