//! End-to-end tests of `warden corpus run`: real runs of the binary over small corpora, in the real
//! jail. A loosened policy, a benign regression and an escape must each fail the run with a
//! readable mismatch; malformed corpora are refused with the file and line.
//!
//! The full corpus is not run here (it takes minutes); CI runs it once through
//! `scripts/corpus-report.sh --ci` (see corpus/README.md).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;
use warden_test_support::jail::{shared_tempdir, test_user, TEST_USER};
use warden_test_support::{repo, require_root, warden};

fn corpus_run(args: &[&str]) -> Output {
    warden()
        .args(["corpus", "run"])
        .args(args)
        .output()
        .expect("run warden corpus")
}

fn text(output: &Output) -> String {
    format!(
        "{}\n--- stderr ---\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn json(output: &Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|err| panic!("not JSON ({err}): {}", text(output)))
}

fn write(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(&path, body).expect("write");
    path
}

/// A few real attacks of the shipped corpus, chosen for speed: network, host files, persistence, a
/// computed path the policy cannot judge.
const SMOKE: [&str; 5] = [
    "jail-tcp-loopback",
    "jail-canary-read-dynamic",
    "jail-tmp-state-persist",
    "j-os-system",
    "i-open-write-etc",
];

fn smoke_args(extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = extra.iter().map(|s| (*s).to_owned()).collect();
    for id in SMOKE {
        args.push("--only".to_owned());
        args.push(id.to_owned());
    }
    args.push(repo().join("corpus/attacks").display().to_string());
    args
}

#[test]
fn shipped_attacks_are_denied_and_contained_with_the_default_policy() {
    let dir = tempfile::tempdir().expect("tempdir");
    let junit = dir.path().join("ci/junit.xml");
    let junit_arg = junit.display().to_string();
    let args = smoke_args(&["--format", "json", "--junit", &junit_arg]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = corpus_run(&args);
    let report = json(&output);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert_eq!(report["summary"]["attacks"], 5);
    assert_eq!(report["summary"]["escapes"], 0);
    assert_eq!(report["summary"]["attacks_contained_by_jail"], 5);
    let cases = report["cases"].as_array().expect("cases");
    let dynamic = cases
        .iter()
        .find(|c| c["id"] == "jail-canary-read-dynamic")
        .expect("case");
    assert_eq!(dynamic["denied_statically"], false, "FILE704 only warns");
    let checks = dynamic["jail"]["checks"].as_array().expect("checks");
    assert!(checks
        .iter()
        .any(|c| c["effect"] == "canary-unread" && c["verdict"] == "held"));
    let xml = std::fs::read_to_string(&junit).expect("junit written");
    assert!(
        xml.contains("<testsuites name=\"warden corpus\" tests=\"5\" failures=\"0\""),
        "{xml}"
    );
}

#[test]
fn a_loosened_policy_fails_the_run_with_a_readable_mismatch() {
    // The default rules, except that `os.system` becomes an allowed member of `os`.
    let default = std::fs::read_to_string(repo().join("rules/default.toml")).expect("rules");
    let loosened = default.replacen(
        "os = [\n    \"path\",",
        "os = [\n    \"system\", \"path\",",
        1,
    );
    assert_ne!(
        loosened, default,
        "the rules file changed shape: update this test"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let rules = write(dir.path(), "loosened.toml", &loosened);
    let rules_arg = rules.display().to_string();
    let attacks = repo().join("corpus/attacks").display().to_string();
    let output = corpus_run(&["--rules", &rules_arg, "--only", "j-os-system", &attacks]);
    let out = text(&output);
    assert_eq!(output.status.code(), Some(1), "{out}");
    assert!(out.contains("j-os-system"), "{out}");
    assert!(
        out.contains("expected the policy to deny it, got `allow`"),
        "{out}"
    );
    // The jail still holds: the mismatch is the policy's, not an escape.
    assert!(out.contains("0 escapes"), "{out}");
}

#[test]
fn a_benign_regression_and_a_false_positive_fail_the_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(
        dir.path(),
        "stats_mean_ok.py",
        "# warden-case: stats-mean-ok\n# group: BENIGN\n# technique: mean of a list\n\
         # expect-static: allow\n# expect-output: OK: mean 2.0\n\
         import statistics\nprint(f\"OK: mean {statistics.mean([1.0, 2.0, 3.0])}\")\n",
    );
    write(
        dir.path(),
        "stats_mean_changed.py",
        "# warden-case: stats-mean-changed\n# group: BENIGN\n# technique: prints something else\n\
         # expect-static: allow\n# expect-output: OK: mean 2.0\n\
         import statistics\nprint(f\"OK: median {statistics.median([1, 2, 3])}\")\n",
    );
    write(
        dir.path(),
        "stats_crash.py",
        "# warden-case: stats-crash\n# group: BENIGN\n# technique: raises\n\
         # expect-static: allow\n# expect-output: OK\nraise ValueError('boom')\n",
    );
    write(
        dir.path(),
        "stats_denied.py",
        "# warden-case: stats-denied\n# group: BENIGN\n# technique: uses subprocess\n\
         # expect-static: allow\n# expect-output: OK\nimport subprocess\nprint('OK')\n",
    );
    let dir_arg = dir.path().display().to_string();
    let output = corpus_run(&["--format", "json", &dir_arg]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let report = json(&output);
    assert_eq!(report["summary"]["benign"], 4);
    assert_eq!(report["summary"]["benign_passed"], 1);
    assert_eq!(report["summary"]["false_positives"], 1);
    assert_eq!(report["summary"]["regressions"], 2);
    let message = |id: &str| {
        report["cases"]
            .as_array()
            .expect("cases")
            .iter()
            .find(|c| c["id"] == id)
            .map(|c| {
                c["mismatches"][0]["message"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned()
            })
            .expect("case")
    };
    assert!(message("stats-mean-changed").contains("stdout lacks \"OK: mean 2.0\""));
    assert!(message("stats-crash").contains("status error"));
    assert!(message("stats-denied").contains("benign code was deny by the policy"));
}

/// A stand-in for warden whose "jail" runs programs unconfined: the runner must see the escapes on
/// the host. The attack below is written for this test and harmless (it reads the runner's own
/// canary, connects to the runner's own listener, writes a `warden-escape` file the runner removes).
const FAKE_WARDEN: &str = r#"#!/usr/bin/env python3
import json, os, subprocess, sys, tempfile
args = sys.argv[1:]
if args[:1] == ["check"]:
    for path in [a for a in args if a.endswith(".py")]:
        print(json.dumps({"path": path, "decision": "allow", "findings": []}))
    sys.exit(0)
if "--help" in args:
    print("Usage: warden run [OPTIONS] <PROGRAM>")
    sys.exit(0)
program = os.path.abspath(args[-1]) if args[-1] != "-" else "-"
# The program's files land in a scratch dir of its own, as in a real work dir.
scratch = tempfile.mkdtemp()
if program == "-":
    program_text = sys.stdin.read()
    done = subprocess.run([sys.executable, "-c", program_text], capture_output=True, text=True, cwd=scratch)
else:
    done = subprocess.run([sys.executable, program], capture_output=True, text=True, cwd=scratch)
subprocess.run(["rm", "-rf", scratch])
print(json.dumps({"status": "ok" if done.returncode == 0 else "error", "exit_code": done.returncode,
                  "stdout": done.stdout, "stderr": done.stderr,
                  "layers": {"namespaces": [], "seccomp": False}}))
"#;

#[test]
fn an_unconfined_run_is_reported_as_escapes_from_the_host_side() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fake = write(dir.path(), "fake-warden", FAKE_WARDEN);
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let case = write(
        dir.path(),
        "corpus/jail_fake_escape.py",
        "# warden-case: jail-fake-escape\n# group: JAIL\n# technique: test-only escape\n\
         # variant: plain\n# expect-static: deny\n# expect-rules: none\n\
         # expect-jail: canary-unread; env-secret-hidden; no-connect tcp4:127.0.0.1:5758; no-path /tmp/warden-escape*; layer ns:net\n\
         import os, socket\n\
         print(open('/root/warden-canary').read())\n\
         print(os.environ.get('WARDEN_CORPUS_SECRET'))\n\
         socket.create_connection(('127.0.0.1', 5758), timeout=3).sendall(b'hello host')\n\
         open('/tmp/warden-escape-corpus-test', 'w').write('x')\n",
    );
    let fake_arg = fake.display().to_string();
    let corpus_dir = case.parent().expect("dir").display().to_string();
    let output = corpus_run(&["--warden", &fake_arg, &corpus_dir]);
    let out = text(&output);
    assert_eq!(output.status.code(), Some(1), "{out}");
    for evidence in [
        "canary-unread: the secret of /root/warden-canary appeared in the program's stdout",
        "env-secret-hidden: the secret in warden's environment appeared in the program's stdout",
        "no-connect tcp4:127.0.0.1:5758: 1 event(s)",
        "\"hello host\"",
        "no-path /tmp/warden-escape*: appeared on the host: /tmp/warden-escape-corpus-test (removed)",
        "layer ns:net: the result record does not report ns:net",
        "expected the policy to deny it, got `allow`",
    ] {
        assert!(out.contains(evidence), "missing {evidence:?} in:\n{out}");
    }
    assert!(!Path::new("/tmp/warden-escape-corpus-test").exists());
    assert!(
        !out.contains("warden-canary-"),
        "the canary's secret must not be printed: {out}"
    );
}

#[test]
fn a_malformed_corpus_is_refused_with_file_and_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(
        dir.path(),
        "jail_bad.py",
        "# warden-case: jail-bad\n# group: JAIL\n# technique: t\n# variant: plain\n\
         # expect-static: deny\n# expect-rules: none\n# expect-jail: no-conect tcp4:127.0.0.1:1\nx = 1\n",
    );
    write(dir.path(), "no_header.py", "print(1)\n");
    let dir_arg = dir.path().display().to_string();
    let output = corpus_run(&[&dir_arg, "/nonexistent/corpus"]);
    let out = text(&output);
    assert_eq!(output.status.code(), Some(2), "{out}");
    assert!(out.contains("jail_bad.py:7: expect-jail: in `no-conect tcp4:127.0.0.1:1`: unknown effect `no-conect`"), "{out}");
    assert!(
        out.contains("no_header.py:1: the header has no `warden-case:` line"),
        "{out}"
    );
    assert!(out.contains("/nonexistent/corpus: "), "{out}");
}

#[test]
fn index_corpora_are_read_like_the_shared_ones() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(
        dir.path(),
        "cases/he_1.py",
        "def add(a, b):\n    return a + b\n\nassert add(2, 3) == 5\n",
    );
    write(
        dir.path(),
        "cases/he_2.py",
        "assert sorted([3, 1]) == [1, 3]\nprint('fine')\n",
    );
    write(dir.path(), "cases/net.py", "print('never run')\n");
    write(
        dir.path(),
        "index.jsonl",
        "{\"id\": \"he_1\", \"file\": \"cases/he_1.py\", \"expected\": \"benign\", \"category\": \"algorithmic\"}\n\
         {\"id\": \"he_2\", \"file\": \"cases/he_2.py\", \"expected\": \"benign\", \"expect_output\": \"fine\"}\n\
         {\"id\": \"net\", \"file\": \"cases/net.py\", \"expected\": \"benign\", \"needs_network\": true}\n",
    );
    let dir_arg = dir.path().display().to_string();
    let output = corpus_run(&["--format", "markdown", &dir_arg]);
    let out = text(&output);
    assert_eq!(output.status.code(), Some(0), "{out}");
    assert!(out.contains("## Benign code"), "{out}");
    assert!(
        out.contains("| algorithmic | 1 | 1 | 1 (100%) | 0 | 0 | 0 |"),
        "{out}"
    );
}

#[test]
fn passes_choose_what_runs_and_what_the_report_shows() {
    // The policy alone: nothing runs.
    let args = smoke_args(&["--passes", "policy", "--format", "json"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = corpus_run(&args);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let report = json(&output);
    assert_eq!(report["passes"], serde_json::json!(["policy"]));
    for case in report["cases"].as_array().expect("cases") {
        assert!(case["policy"]["decision"].is_string(), "{case}");
        assert!(case["jail"].is_null() && case["full"].is_null(), "{case}");
    }

    // The jail alone: the per-case line, the matrix and the totals show that pass only.
    let attacks = repo().join("corpus/attacks").display().to_string();
    let output = corpus_run(&["--passes", "jail", "--only", "jail-tcp-loopback", &attacks]);
    let out = text(&output);
    assert_eq!(output.status.code(), Some(0), "{out}");
    let line = out
        .lines()
        .find(|l| l.contains("jail-tcp-loopback"))
        .expect("case line");
    assert!(
        line.contains("jail:") && !line.contains("policy:") && !line.contains("full:"),
        "{out}"
    );
    let header = out
        .lines()
        .find(|l| l.starts_with("Attacks"))
        .expect("matrix");
    assert!(
        header.contains("jail") && header.contains("escapes"),
        "{out}"
    );
    for absent in ["policy", "both", "stopped"] {
        assert!(!header.contains(absent), "{absent} in {header}");
    }
    assert!(
        out.contains("(1 contained by the jail alone, 0 escapes)") && out.contains("passes jail"),
        "{out}"
    );
    assert!(!out.contains("denied statically"), "{out}");
}

/// A stand-in for warden that reports, as a benign program's output, who it runs as: `RUNAS-OK`
/// when it is not root, has no supplementary group, owns its HOME (= TMPDIR), can create its
/// output directory and read the program.
const WHOAMI_WARDEN: &str = r#"#!/usr/bin/env python3
import json, os, sys
args = sys.argv[1:]
if args[:1] == ["check"]:
    for path in [a for a in args if a.endswith(".py")]:
        print(json.dumps({"path": path, "decision": "allow", "findings": []}))
    sys.exit(0)
if "--help" in args:
    print("Usage: warden run [OPTIONS] [--output-dir <DIR>] <PROGRAM>")
    sys.exit(0)
if args[-1] == "-":
    sys.stdin.read()
    print(json.dumps({"status": "ok", "exit_code": 0, "stdout": "", "stderr": ""}))
    sys.exit(0)
problems = []
if os.getuid() == 0 or os.geteuid() == 0:
    problems.append("runs as root")
if set(os.getgroups()) - {os.getgid()}:
    problems.append("supplementary groups %s" % os.getgroups())
home = os.environ.get("HOME", "")
if not home or os.stat(home).st_uid != os.getuid() or os.environ.get("TMPDIR") != home:
    problems.append("HOME %r TMPDIR %r" % (home, os.environ.get("TMPDIR")))
if "--output-dir" in args:
    os.makedirs(args[args.index("--output-dir") + 1])
open(args[-1]).read()
print(json.dumps({"status": "ok", "exit_code": 0, "stderr": "",
                  "stdout": "RUNAS-OK\n" if not problems else "RUNAS-BAD " + "; ".join(problems)}))
"#;

#[test]
fn run_as_starts_every_warden_call_as_the_user_and_refuses_unreadable_cases() {
    require_root!();
    test_user();
    // World-readable: the test user runs the stand-in and reads the case.
    let dir = shared_tempdir();
    let fake = write(dir.path(), "fake-warden", WHOAMI_WARDEN);
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let case = write(
        dir.path(),
        "corpus/whoami_report.py",
        "# warden-case: whoami-report\n# group: BENIGN\n# technique: stand-in reports its user\n\
         # expect-static: allow\n# expect-output: RUNAS-OK\nprint('never run')\n",
    );
    std::fs::set_permissions(&case, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let fake_arg = fake.display().to_string();
    let corpus_dir = dir.path().join("corpus").display().to_string();
    let output = corpus_run(&[
        "--warden",
        &fake_arg,
        "--run-as",
        TEST_USER,
        "--format",
        "json",
        &corpus_dir,
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let report = json(&output);
    assert_eq!(report["run_as"], TEST_USER);
    assert_eq!(report["summary"]["benign_passed"], 1, "{}", text(&output));

    // A case the user cannot read stops the run before anything runs.
    std::fs::set_permissions(&case, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let output = corpus_run(&["--warden", &fake_arg, "--run-as", TEST_USER, &corpus_dir]);
    let out = text(&output);
    assert_eq!(output.status.code(), Some(2), "{out}");
    assert!(
        out.contains(&format!(
            "{TEST_USER} cannot read 1 case file(s) (--run-as)"
        )) && out.contains("whoami_report.py"),
        "{out}"
    );
}
