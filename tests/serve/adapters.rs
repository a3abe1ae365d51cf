//! The Python client and the agent-framework adapters (clients/python/) against a real
//! `warden serve` with real jails: the client's own tests (clients/python/tests/test_client.py) run
//! on the system interpreter, which has nothing but the standard library, and each adapter's tests
//! run the framework's own agent loop (smolagents `CodeAgent`, AutoGen `CodeExecutorAgent`, a
//! LangChain agent from `create_agent`) with a scripted model, in the venv scripts/adapters-venv.sh
//! makes from clients/python/requirements-adapters.lock (the real packages from PyPI, pinned and
//! hashed). Every named Python test must be reported as passed: none may be skipped or go missing.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::support::{sha256_hex, Options, Server, STRICT_TOKEN, TOKEN};
use warden_test_support::repo;

/// The adapters' venv interpreter. scripts/setup.sh makes the venv; the script is idempotent (a
/// stamp of the lock's hash) and takes a lock, so calling it here makes it only when it is missing
/// or stale.
fn adapters_python() -> PathBuf {
    let output = Command::new(repo().join("scripts/adapters-venv.sh"))
        .output()
        .expect("run scripts/adapters-venv.sh");
    assert!(
        output.status.success(),
        "scripts/adapters-venv.sh failed (the adapters' venv could not be made):\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let python = PathBuf::from(stdout.lines().last().expect("the venv's python").trim());
    assert!(python.exists(), "{} is missing", python.display());
    python
}

/// The secret of a token that may approve reviews, for the client's review methods.
const APPROVER_TOKEN: &str = "adapters-approver-token-93b1";

/// The server's settings: both listeners, these `[sessions]` lines, and an approver's token.
fn options(sessions: &str) -> Options {
    Options {
        tcp: true,
        sessions: Some(sessions.to_owned()),
        extra_config: Some(format!(
            "[[tokens]]\nname = \"approver\"\nsha256 = \"{}\"\npolicies = [\"default\"]\napprove = true\n",
            sha256_hex(APPROVER_TOKEN)
        )),
        ..Options::default()
    }
}

/// Runs one module of clients/python/tests with `python` against a fresh server; every test in
/// `expected` must pass, and nothing may be skipped.
fn run_python_tests(python: &Path, module: &str, options: Options, expected: &[&str]) {
    let server = Server::start(options);
    let dir = repo().join("clients/python");
    let output = Command::new(python)
        .args(["-m", "unittest", "-v", module])
        .current_dir(&dir)
        .env("PYTHONPATH", &dir)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("WARDEN_TEST_SOCKET", &server.socket)
        .env("WARDEN_TEST_TCP", server.tcp.expect("tcp").to_string())
        .env("WARDEN_TEST_TOKEN", TOKEN)
        .env("WARDEN_TEST_STRICT_TOKEN", STRICT_TOKEN)
        .env("WARDEN_TEST_APPROVER_TOKEN", APPROVER_TOKEN)
        // No network and no telemetry: the models are scripted.
        .env("HF_HUB_OFFLINE", "1")
        .env("LANGSMITH_TRACING", "false")
        .env("LANGCHAIN_TRACING_V2", "false")
        .env_remove("WARDEN_URL")
        .env_remove("WARDEN_TOKEN")
        .output()
        .expect("run the Python tests");
    let report = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{module} failed (exit {:?}):\n{report}\nstdout:\n{stdout}\nserver:\n{}",
        output.status.code(),
        server.stderr.lock().map(|s| s.clone()).unwrap_or_default()
    );
    assert!(
        !report.contains("skipped"),
        "{module}: a test was skipped:\n{report}"
    );
    let lines: Vec<&str> = report.lines().collect();
    for name in expected {
        // `name (module.Class.name) ... ok`, or `... ` then a library's log lines and `ok` on a
        // line of its own before the next test's line.
        let passed = lines.iter().enumerate().any(|(at, line)| {
            line.starts_with(&format!("{name} ("))
                && (line.ends_with("... ok")
                    || lines[at + 1..]
                        .iter()
                        .take_while(|next| !next.contains(" ... "))
                        .any(|next| next.trim() == "ok"))
        });
        assert!(
            passed,
            "{module}: {name} did not pass (or did not run):\n{report}"
        );
    }
    assert!(
        report.contains(&format!("Ran {} tests", expected.len())),
        "{module}: not exactly the {} expected tests ran:\n{report}",
        expected.len()
    );
}

#[test]
fn the_python_client_speaks_the_whole_api_on_the_standard_library_alone() {
    // One run slot and a queue of one, so a third run is refused (429 queue_full); one session at
    // a time, ended after 4 s idle. The Retry-After tests wait for both.
    run_python_tests(
        Path::new("/usr/bin/python3"),
        "tests.test_client",
        Options {
            max_concurrent_runs: 1,
            queue_size: 1,
            // A node, so that the client meets 410 session_lost and 421 wrong_node.
            env: vec![("WARDEN_NODE".to_owned(), "client-test-node".to_owned())],
            ..options("max_sessions = 1\nidle_timeout_ms = 4000\n")
        },
        &[
            "test_unix_socket_without_a_token",
            "test_the_address_and_token_come_from_the_environment",
            "test_tcp_needs_its_token",
            "test_no_server_is_a_connection_error",
            "test_a_connection_error_is_retried_until_the_server_is_there",
            "test_a_bad_address_is_refused_at_once",
            "test_a_run_with_inputs_and_files",
            "test_a_denied_run_is_a_record_with_findings_and_hints",
            "test_a_raising_run_gives_its_traceback",
            "test_limits_tighten_and_a_timeout_is_a_record",
            "test_check_without_running",
            "test_unknown_policy_and_forbidden_policy",
            "test_a_full_queue_answers_429_and_the_client_retries_after_it",
            "test_the_client_timeout_raises_a_typed_error",
            "test_state_files_streaming_and_end",
            "test_an_error_keeps_the_session",
            "test_another_clients_session_is_not_found",
            "test_a_lost_session_raises_session_gone_with_the_servers_message",
            "test_a_session_of_another_node_is_wrong_node",
            "test_retry_after_is_honoured_on_the_session_cap",
            "test_mapping",
            "test_output_is_bounded_keeping_head_and_tail_and_saying_what_was_cut",
            "test_a_traceback_is_shown_once_after_the_output_naming_main_py",
            "test_schema_errors_name_the_instance_path_and_the_requirement",
            "test_the_limit_hit_is_named_with_its_value",
            "test_displays_values_and_figures_reach_the_model",
            "test_a_session_that_ended_says_its_variables_are_gone",
            "test_a_review_says_its_id_and_how_approval_works_and_the_client_drives_it",
            "test_sessions_are_listed_and_described",
        ],
    );
}

#[test]
fn smolagents_code_agent_runs_every_step_in_a_warden_session() {
    run_python_tests(
        &adapters_python(),
        "tests.test_smolagents",
        options("max_sessions = 2\n"),
        &[
            "test_steps_share_a_session_a_denial_reaches_the_model_and_final_answer_returns",
            "test_a_raising_step_sends_its_output_and_traceback",
            "test_variables_reach_the_session",
            "test_final_answer_passes_except_exception_and_non_json_values_come_back_as_repr",
            "test_host_tools_are_refused_before_the_model_is_asked",
            "test_tools_sent_as_source_run_in_the_session",
            "test_a_step_error_carries_its_cell",
            "test_output_is_bounded_figures_are_observation_images_and_a_lost_session_is_said",
            "test_a_cell_the_policy_sends_to_review_says_how_to_go_on",
        ],
    );
}

#[test]
fn autogen_code_executor_agent_runs_its_blocks_in_warden() {
    run_python_tests(
        &adapters_python(),
        "tests.test_autogen",
        options("max_sessions = 2\n"),
        &[
            "test_state_persists_a_denial_reaches_the_model_and_the_retry_succeeds",
            "test_without_a_model_the_agent_executes_blocks_it_is_sent",
            "test_the_executor_is_an_autogen_component_without_its_token",
            "test_one_shot_runs_and_cancellation",
            "test_figures_reach_the_model_as_images_and_a_denial_is_framed_as_a_denial",
            "test_bounded_output_and_a_lost_session",
        ],
    );
}

#[test]
fn a_langchain_agent_calls_warden_as_a_tool() {
    run_python_tests(
        &adapters_python(),
        "tests.test_langchain",
        options("max_sessions = 2\n"),
        &[
            "test_calls_share_a_session_and_a_denial_reaches_the_model_as_a_tool_error",
            "test_a_raising_call_returns_its_traceback_and_one_shot_runs_keep_no_state",
            "test_an_unreachable_server_is_a_tool_error_not_a_crash",
            "test_bounded_text_figures_as_content_blocks_and_a_lost_session_said",
            "test_a_denial_and_a_limit_are_tool_errors_that_say_what_to_change",
        ],
    );
}

/// Every file under `dir` (relative paths), to see that a build wrote nothing there.
fn tree(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(at) = pending.pop() {
        for entry in std::fs::read_dir(&at).expect("read the tree").flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path.clone());
            }
            found.push(path.strip_prefix(dir).expect("under dir").to_path_buf());
        }
    }
    found.sort();
    found
}

#[test]
fn the_client_installs_from_a_wheel_built_without_writing_into_the_checkout() {
    let source = repo().join("clients/python");
    let before = tree(&source);
    let dir = tempfile::tempdir().expect("tempdir");
    let built = Command::new("/usr/bin/python3")
        .arg(source.join("build_wheel.py"))
        .arg("--out")
        .arg(dir.path().join("wheels"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("run build_wheel.py");
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let stdout = String::from_utf8_lossy(&built.stdout);
    let wheel = PathBuf::from(stdout.lines().last().expect("the wheel's path").trim());
    assert_eq!(
        wheel.file_name().and_then(|n| n.to_str()),
        Some("warden_client-0.1.0-py3-none-any.whl"),
        "{stdout}"
    );
    // The same sources give the same bytes.
    let again = Command::new("/usr/bin/python3")
        .arg(source.join("build_wheel.py"))
        .arg("--out")
        .arg(dir.path().join("again"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("run build_wheel.py");
    assert!(again.status.success());
    assert_eq!(
        std::fs::read(&wheel).expect("the wheel"),
        std::fs::read(
            dir.path()
                .join("again")
                .join(wheel.file_name().expect("name"))
        )
        .expect("the second wheel"),
        "the wheel is not reproducible"
    );
    // Installed with pip into a fresh venv, offline, it imports from there with its metadata.
    let venv = dir.path().join("venv");
    let made = Command::new("/usr/bin/python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .output()
        .expect("make a venv");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let installed = Command::new(venv.join("bin/python3"))
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-index",
            "--no-deps",
            "--disable-pip-version-check",
        ])
        .arg(&wheel)
        .output()
        .expect("pip install the wheel");
    assert!(
        installed.status.success(),
        "{}",
        String::from_utf8_lossy(&installed.stderr)
    );
    let check = Command::new(venv.join("bin/python3"))
        .args([
            "-c",
            "import importlib, importlib.metadata as m, warden_client\n\
             r = importlib.import_module('warden_client.render')\n\
             meta = m.metadata('warden-client')\n\
             print(warden_client.__file__)\n\
             print(meta['Version'], sorted(meta.get_all('Provides-Extra')), r.DEFAULT_TEXT_BUDGET)",
        ])
        .current_dir(dir.path())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env_remove("PYTHONPATH")
        .output()
        .expect("import the installed client");
    let said = String::from_utf8_lossy(&check.stdout);
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
    assert!(said.starts_with(&venv.display().to_string()), "{said}");
    assert!(
        said.contains("0.1.0 ['autogen', 'langchain', 'smolagents'] 20000"),
        "{said}"
    );
    assert_eq!(before, tree(&source), "the build wrote into clients/python");
}
