//! End-to-end tests of `warden corpus run`: real runs of the binary over small corpora, in the real
//! jail. A loosened policy, a benign regression, an escape and a runtime layer that does not stop
//! what a case expects must each fail the run with a readable mismatch; malformed corpora are
//! refused with the file and line.
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
    assert_eq!(
        report["passes"],
        serde_json::json!(["policy", "runtime", "jail", "full"])
    );
    let cases = report["cases"].as_array().expect("cases");
    let case = |id: &str| {
        cases
            .iter()
            .find(|c| c["id"] == id)
            .unwrap_or_else(|| panic!("no case {id}"))
    };
    // The runtime pass: the static layer off, the hooks on.
    let system = case("j-os-system");
    assert_eq!(
        system["runtime"]["stopped_by"]["layer"], "runtime",
        "{system}"
    );
    assert_eq!(
        system["runtime"]["stopped_by"]["rule"], "PROC801",
        "{system}"
    );
    assert_eq!(system["stopped_by_runtime"], true);
    assert!(system["runtime"].get("same_run_as").is_none(), "{system}");
    // Allowed statically: the full pipeline's run stands for the runtime pass.
    assert_eq!(
        case("jail-canary-read-dynamic")["runtime"]["same_run_as"],
        "full"
    );
    let stopped = cases
        .iter()
        .filter(|c| c["stopped_by_runtime"] == true)
        .count();
    assert_eq!(report["summary"]["attacks_stopped_by_runtime"], stopped);
    assert!(stopped >= 1);
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
    assert!(
        xml.contains("<property name=\"stopped_by_runtime\" value=")
            && xml.contains("stopped by runtime PROC801 (os.system)"),
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
    // Denied by the policy, it still goes through the runtime pass (the policy off, hooks on).
    let denied = report["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .find(|c| c["id"] == "stats-denied")
        .expect("case");
    assert!(denied["runtime"]["status"].is_string(), "{denied}");
    assert!(denied["full"].is_null(), "{denied}");
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
    // This stand-in has no runtime hooks (no --no-hooks): the runtime pass is skipped, and said so.
    assert!(
        out.contains("this warden has no runtime hooks")
            && out.contains("runtime pass was skipped"),
        "{out}"
    );
    let line = out
        .lines()
        .find(|l| l.contains("jail-fake-escape"))
        .expect("case line");
    assert!(line.contains("runtime:– "), "{line}");
    assert!(!out.contains("stopped by the runtime layer alone"), "{out}");
}

/// A stand-in for warden with runtime hooks: `warden run` without `--no-hooks` "stops" a program
/// whose source has a `# fake-runtime-stop: RULE` line the way the runtime layer would (a record
/// with `stopped_by` runtime RULE, nothing run), and runs any other program unconfined, so that
/// the runner must see its effects. Its policy allows everything.
const HOOKED_WARDEN: &str = r#"#!/usr/bin/env python3
import json, re, subprocess, sys, tempfile
args = sys.argv[1:]
if args[:1] == ["check"]:
    for path in [a for a in args if a.endswith(".py")]:
        print(json.dumps({"path": path, "decision": "allow", "findings": []}))
    sys.exit(0)
if "--help" in args:
    print("Usage: warden run [OPTIONS] <PROGRAM>\n  --no-policy\n  --no-hooks\n  --json")
    sys.exit(0)
source = sys.stdin.read() if args[-1] == "-" else open(args[-1]).read()
check = {"decision": "skipped" if "--no-policy" in args else "allow", "findings": []}
stop = re.search(r"^# fake-runtime-stop: (\w+)$", source, re.M)
if stop and "--no-hooks" not in args:
    rule = stop.group(1)
    print(json.dumps({"status": "error", "exit_code": 1, "stdout": "", "check": check,
                      "stderr": "warden.PolicyViolation: warden[%s] os.system: stopped" % rule,
                      "stopped_by": {"layer": "runtime", "rule": rule, "event": "os.system"}}))
    sys.exit(0)
scratch = tempfile.mkdtemp()
done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, cwd=scratch)
subprocess.run(["rm", "-rf", scratch])
print(json.dumps({"status": "ok" if done.returncode == 0 else "error", "exit_code": done.returncode,
                  "stdout": done.stdout, "stderr": done.stderr, "check": check}))
"#;

/// An attack case for [`HOOKED_WARDEN`]: allowed by its policy, `expect-runtime` when given, the
/// stand-in's stop line when given.
fn fake_attack(dir: &Path, id: &str, expect_runtime: Option<&str>, stop: Option<&str>, body: &str) {
    let mut text = format!(
        "# warden-case: {id}\n# group: {}\n# technique: test-only\n# variant: plain\n\
         # expect-static: allow\n# expect-rules: none\n# expect-jail: contained\n",
        if id.starts_with("jail-") { "JAIL" } else { "J" }
    );
    if let Some(rule) = expect_runtime {
        text.push_str(&format!("# expect-runtime: {rule}\n"));
    }
    if let Some(rule) = stop {
        text.push_str(&format!("# fake-runtime-stop: {rule}\n"));
    }
    text.push_str(body);
    write(dir, &format!("corpus/{}.py", id.replace('-', "_")), &text);
}

#[test]
fn the_runtime_pass_judges_stopped_by_and_expect_runtime() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fake = write(dir.path(), "fake-warden", HOOKED_WARDEN);
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let harmless = "print('harmless')\n";
    fake_attack(
        dir.path(),
        "j-fake-stopped",
        Some("PROC801"),
        Some("PROC801"),
        harmless,
    );
    fake_attack(
        dir.path(),
        "j-fake-wrong-rule",
        Some("PROC801"),
        Some("NET802"),
        harmless,
    );
    fake_attack(
        dir.path(),
        "j-fake-not-stopped",
        Some("NET802"),
        None,
        harmless,
    );
    fake_attack(
        dir.path(),
        "j-fake-unpromised",
        None,
        Some("DES804"),
        harmless,
    );
    fake_attack(
        dir.path(),
        "jail-fake-runtime-escape",
        None,
        None,
        "open('/tmp/warden-escape-runtime-test', 'w').write('x')\n",
    );
    write(
        dir.path(),
        "corpus/stats_fake_ok.py",
        "# warden-case: stats-fake-ok\n# group: BENIGN\n# technique: prints OK\n\
         # expect-static: allow\n# expect-output: OK: 6\nprint('OK:', sum([1, 2, 3]))\n",
    );
    write(
        dir.path(),
        "corpus/stats_fake_hooked.py",
        "# warden-case: stats-fake-hooked\n# group: BENIGN\n# technique: stopped by the hooks\n\
         # expect-static: allow\n# expect-output: OK\n# fake-runtime-stop: IMP101\nprint('OK')\n",
    );
    let fake_arg = fake.display().to_string();
    let corpus_dir = dir.path().join("corpus").display().to_string();
    let junit = dir.path().join("junit.xml");
    let junit_arg = junit.display().to_string();
    // One case at a time: the escape case's file would be seen by the other cases' host checks.
    let output = corpus_run(&[
        "--warden",
        &fake_arg,
        "--jobs",
        "1",
        "--passes",
        "policy,runtime,jail",
        "--format",
        "json",
        "--junit",
        &junit_arg,
        &corpus_dir,
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let report = json(&output);
    assert!(!Path::new("/tmp/warden-escape-runtime-test").exists());
    assert_eq!(
        report["passes"],
        serde_json::json!(["policy", "runtime", "jail"])
    );
    let summary = &report["summary"];
    assert_eq!(summary["attacks"], 5, "{summary}");
    // Stopped by the runtime layer: with the promised rule, with another (a mismatch, but
    // stopped), and without a promise.
    assert_eq!(summary["attacks_stopped_by_runtime"], 3, "{summary}");
    assert_eq!(summary["runtime_mismatches"], 2, "{summary}");
    assert_eq!(summary["runtime_false_positives"], 1, "{summary}");
    assert_eq!(summary["false_positives"], 1, "{summary}");
    assert_eq!(summary["escapes"], 1, "{summary}");
    let j = summary["attack_matrix"]
        .as_array()
        .expect("matrix")
        .iter()
        .find(|r| r["group"] == "J")
        .expect("row J");
    assert_eq!(
        (j["cases"].as_u64(), j["stopped_by_runtime"].as_u64()),
        (Some(4), Some(3))
    );
    let cases = report["cases"].as_array().expect("cases");
    let case = |id: &str| {
        cases
            .iter()
            .find(|c| c["id"] == id)
            .unwrap_or_else(|| panic!("no case {id}"))
    };
    let messages = |id: &str| -> Vec<String> {
        case(id)["mismatches"]
            .as_array()
            .expect("mismatches")
            .iter()
            .map(|m| {
                format!(
                    "[{}] {}: {}",
                    m["pass"],
                    m["kind"],
                    m["message"].as_str().unwrap_or("")
                )
            })
            .collect()
    };
    let stopped = case("j-fake-stopped");
    assert_eq!(stopped["outcome"], "pass", "{stopped}");
    assert_eq!(stopped["stopped_by_runtime"], true);
    assert_eq!(stopped["runtime"]["stopped_by"]["rule"], "PROC801");
    assert_eq!(
        stopped["jail"]["status"], "ok",
        "the jail pass runs without hooks"
    );
    assert_eq!(
        messages("j-fake-wrong-rule"),
        ["[\"runtime\"] \"runtime\": expected the runtime layer to stop it with PROC801, but it was stopped by runtime NET802 (os.system)"]
    );
    assert_eq!(case("j-fake-wrong-rule")["stopped_by_runtime"], true);
    let missed = messages("j-fake-not-stopped");
    assert!(
        missed.len() == 1
            && missed[0].contains("expected the runtime layer to stop it with NET802, but no layer stopped it (status ok"),
        "{missed:?}"
    );
    assert_eq!(case("j-fake-not-stopped")["stopped_by_runtime"], false);
    // Without expect-runtime a stop is counted and promises nothing.
    assert_eq!(case("j-fake-unpromised")["outcome"], "pass");
    assert_eq!(case("j-fake-unpromised")["stopped_by_runtime"], true);
    // An effect in the runtime pass is an escape, as in the jail pass.
    let escape = messages("jail-fake-runtime-escape");
    assert!(
        escape.iter().any(|m| m.starts_with("[\"runtime\"] \"escape\": no-path /tmp/warden-escape*: appeared on the host: /tmp/warden-escape-runtime-test (removed)")),
        "{escape:?}"
    );
    assert_eq!(
        case("jail-fake-runtime-escape")["stopped_by_runtime"],
        false
    );
    assert_eq!(case("stats-fake-ok")["outcome"], "pass");
    assert_eq!(case("stats-fake-ok")["runtime"]["status"], "ok");
    let hooked = messages("stats-fake-hooked");
    assert!(
        hooked.len() == 1
            && hooked[0].starts_with("[\"runtime\"] \"false_positive\": benign code was stopped by the runtime layer (runtime IMP101 (os.system)) in the runtime pass"),
        "{hooked:?}"
    );
    let xml = std::fs::read_to_string(&junit).expect("junit written");
    assert!(
        xml.contains("<property name=\"stopped_by_runtime\" value=\"3\"/>")
            && xml.contains("<property name=\"runtime_false_positives\" value=\"1\"/>")
            && xml.contains("<failure type=\"Runtime\""),
        "{xml}"
    );

    // The runtime pass alone, in the human report: its column, its figures, nothing else.
    let output = corpus_run(&[
        "--warden",
        &fake_arg,
        "--passes",
        "runtime",
        "--only",
        "j-fake-stopped",
        "--only",
        "stats-fake-ok",
        &corpus_dir,
    ]);
    let out = text(&output);
    assert_eq!(output.status.code(), Some(0), "{out}");
    let line = out
        .lines()
        .find(|l| l.contains("j-fake-stopped"))
        .expect("case line");
    assert!(
        line.contains("runtime:PROC801") && !line.contains("jail:") && !line.contains("policy:"),
        "{line}"
    );
    let header = out
        .lines()
        .find(|l| l.starts_with("Attacks"))
        .expect("matrix");
    assert!(
        header.contains("runtime") && !header.contains("jail"),
        "{header}"
    );
    assert!(
        out.contains("(1 stopped by the runtime layer alone, 0 escapes)")
            && out.contains("passes runtime"),
        "{out}"
    );
    let benign = out
        .lines()
        .find(|l| l.starts_with("Benign"))
        .expect("benign table");
    assert!(benign.contains("rt FP"), "{benign}");

    // The Markdown matrix has the runtime column between policy and jail.
    let output = corpus_run(&[
        "--warden",
        &fake_arg,
        "--format",
        "markdown",
        "--only",
        "j-fake-stopped",
        &corpus_dir,
    ]);
    let out = text(&output);
    assert_eq!(output.status.code(), Some(0), "{out}");
    assert!(
        out.contains("| corpus | group | cases | policy | runtime | jail | both | stopped | escapes | time (sum) |"),
        "{out}"
    );
    assert!(
        out.contains("stopped by the runtime layer alone 1 (100%)"),
        "{out}"
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
        out.contains("| algorithmic | 1 | 1 | 1 (100%) | 0 | 0 | 0 | 0 |"),
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

    // The runtime layer alone: the static layer off, the hooks on.
    let output = corpus_run(&["--passes", "runtime", "--only", "j-os-system", &attacks]);
    let out = text(&output);
    assert_eq!(output.status.code(), Some(0), "{out}");
    let line = out
        .lines()
        .find(|l| l.contains("j-os-system"))
        .expect("case line");
    assert!(
        line.contains("runtime:PROC801") && !line.contains("jail:") && !line.contains("full:"),
        "{out}"
    );
    assert!(
        out.contains("(1 stopped by the runtime layer alone, 0 escapes)")
            && out.contains("passes runtime"),
        "{out}"
    );
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

/// Attack sessions (`# session: cells`) run their cells in one `warden repl` per pass and are judged
/// from the host side like one-shot attacks: shipped session cases hold in every pass, and a session
/// whose runtime expectation is wrong fails the run, naming the layer that stopped it.
#[test]
fn attack_sessions_run_cell_by_cell_in_every_pass() {
    require_root!();
    let sessions = repo().join("corpus/attacks/sessions");
    let count = std::fs::read_dir(&sessions)
        .expect("corpus/attacks/sessions")
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "py"))
        .count();
    assert!(count >= 10, "only {count} session cases");
    let output = corpus_run(&[
        "--format",
        "json",
        "--only",
        "d-session-bind-module-then-use",
        "--only",
        "i-session-path-parent-then-read",
        &sessions.display().to_string(),
    ]);
    let report = json(&output);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert_eq!(report["summary"]["attacks"], 2, "{report}");
    assert_eq!(
        report["summary"]["attacks_stopped_by_runtime"], 2,
        "{report}"
    );
    assert_eq!(report["summary"]["escapes"], 0, "{report}");

    // A wrong expectation of the runtime layer is a mismatch, and the layer that did stop the
    // session (read from the cell that raised) is named.
    let dir = shared_tempdir();
    let case = std::fs::read_to_string(sessions.join("d_session_bind_module_then_use.py"))
        .expect("case")
        .replace("# expect-runtime: PROC801", "# expect-runtime: NET802");
    write(dir.path(), "d_session_bind_module_then_use.py", &case);
    let output = corpus_run(&["--passes", "runtime", &dir.path().display().to_string()]);
    let out = text(&output);
    assert_eq!(output.status.code(), Some(1), "{out}");
    assert!(
        out.contains("expected the runtime layer to stop it with NET802")
            && out.contains("runtime PROC801 (os.system)"),
        "{out}"
    );
}

/// The pool pass through a real `warden serve`: a few attacks (network, host canary, a process,
/// state left for the next run, a session) each run in a pooled jail (`"warm": true`), contained,
/// and the server and its directory are gone once the run is over.
#[test]
fn the_pool_pass_runs_attacks_warm_through_warden_serve_and_leaves_nothing() {
    require_root!();
    let mut args: Vec<String> = ["--format", "json", "--passes", "pool"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    for id in [
        "jail-tcp-loopback",
        "jail-canary-read-dynamic",
        "j-os-system",
        "jail-tmp-state-persist",
        "d-session-bind-module-then-use",
    ] {
        args.extend(["--only".to_owned(), id.to_owned()]);
    }
    args.push(repo().join("corpus/attacks").display().to_string());
    let child = warden()
        .args(["corpus", "run"])
        .args(&args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run warden corpus");
    let pid = child.id();
    let output = child.wait_with_output().expect("wait");
    let report = json(&output);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let summary = &report["summary"];
    assert_eq!(report["passes"], serde_json::json!(["pool"]), "{report}");
    assert_eq!(summary["attacks"], 5, "{report}");
    assert_eq!(summary["attacks_through_pool"], 5, "{report}");
    assert_eq!(summary["attacks_contained_in_pool"], 5, "{report}");
    assert_eq!(summary["attacks_warm_in_pool"], 5, "{report}");
    assert_eq!(summary["attacks_cold_in_pool"], 0, "{report}");
    assert_eq!(summary["escapes"], 0, "{report}");
    assert_eq!(
        summary["pool_left_behind"],
        serde_json::json!([]),
        "{report}"
    );
    for case in report["cases"].as_array().expect("cases") {
        let pool = &case["pool"];
        assert_eq!(pool["warm"], true, "{case}");
        // Judged from the host side: the baseline's checks are there, and they held.
        let checks = pool["checks"].as_array().expect("checks");
        for effect in [
            "contained",
            "canary-unread",
            "env-secret-hidden",
            "no-survivor",
        ] {
            assert!(
                checks
                    .iter()
                    .any(|c| c["effect"] == effect && c["verdict"] == "held"),
                "{effect} not held: {case}"
            );
        }
        assert!(
            case["runtime"].is_null() && case["jail"].is_null(),
            "{case}"
        );
    }
    // No server of this run, and no run directory, is left.
    let prefix = format!("warden-corpus-{pid}-");
    let left: Vec<String> = std::fs::read_dir("/var/tmp")
        .expect("/var/tmp")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(&prefix))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let servers: Vec<String> = std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(&prefix) && c.contains("serve"))
        .collect();
    assert!(servers.is_empty(), "{servers:?}");
}

/// A stand-in for `warden serve` that runs programs unconfined over the same HTTP API, and
/// answers `"warm": false` for a program with a `# fake-cold` line: the pool pass must report the
/// escape from the host side and fail the cold run.
const FAKE_SERVE_WARDEN: &str = r##"#!/usr/bin/env python3
import http.server, json, os, re, socketserver, subprocess, sys, tempfile
args = sys.argv[1:]
if "--help" in args:
    print("Usage: warden run [OPTIONS] <PROGRAM>\n  --no-policy\n  --no-hooks\n  --json\n  --output-dir")
    sys.exit(0)
if args[:2] == ["rules", "explain"]:
    print("SYN001   syntax-error       source   high deny")
    print("IMP101   import-not-allowed imports  high deny")
    sys.exit(0)

def unconfined(source):
    scratch = tempfile.mkdtemp()
    done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, cwd=scratch)
    subprocess.run(["rm", "-rf", scratch])
    return {"status": "ok" if done.returncode == 0 else "error", "exit_code": done.returncode,
            "stdout": done.stdout, "stderr": done.stderr, "files": [],
            "check": {"decision": "allow", "findings": []}}

if args[:1] == ["run"]:
    path = args[-1]
    print(json.dumps(unconfined(open(path).read())))
    sys.exit(0)
if args[:1] == ["serve"]:
    config = open(args[args.index("--config") + 1]).read()
    socket_path = json.loads(re.search(r"^socket = (.*)$", config, re.M).group(1))
    hits = {"n": 0}

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def answer(self, status, body):
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            self.answer(200, 'warden_pool_ready{policy="corpus-pool"} 1\nwarden_pool_busy 0\n'
                        'warden_pool_hits_total{policy="corpus-pool",kind="run"} %d\n' % hits["n"])

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            record = unconfined(body["code"])
            record["warm"] = "# fake-cold" not in body["code"]
            hits["n"] += record["warm"]
            self.answer(200, json.dumps(record))

        def log_message(self, *_):
            pass

    server = socketserver.UnixStreamServer(socket_path, Handler)
    print("warden: serving on unix:%s (a stand-in)" % socket_path, file=sys.stderr, flush=True)
    server.serve_forever()
sys.exit(2)
"##;

#[test]
fn the_pool_pass_reports_escapes_and_fails_cold_runs() {
    require_root!();
    let dir = tempfile::tempdir().expect("tempdir");
    let fake = write(dir.path(), "fake-warden", FAKE_SERVE_WARDEN);
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let header = |id: &str, effects: &str| {
        format!(
            "# warden-case: {id}\n# group: JAIL\n# technique: test-only\n# variant: plain\n\
             # expect-static: deny\n# expect-rules: none\n# expect-jail: {effects}\n"
        )
    };
    write(
        dir.path(),
        "corpus/jail_fake_pool_escape.py",
        &format!(
            "{}import os\nprint(open('/root/warden-canary').read())\n\
             print(os.environ.get('WARDEN_CORPUS_SECRET'))\n\
             open('/tmp/warden-escape-pool-test', 'w').write('x')\n",
            header(
                "jail-fake-pool-escape",
                "canary-unread; no-path /tmp/warden-escape*"
            )
        ),
    );
    write(
        dir.path(),
        "corpus/jail_fake_pool_cold.py",
        &format!(
            "{}# fake-cold\nprint(1)\n",
            header("jail-fake-pool-cold", "contained")
        ),
    );
    let corpus = dir.path().join("corpus").display().to_string();
    let output = corpus_run(&[
        "--warden",
        &fake.display().to_string(),
        "--passes",
        "pool",
        &corpus,
    ]);
    let out = text(&output);
    assert_eq!(output.status.code(), Some(1), "{out}");
    for evidence in [
        "[pool] Escape: canary-unread: the secret of /root/warden-canary appeared in the program's stdout",
        "[pool] Escape: env-secret-hidden: the secret in warden's environment appeared in the program's stdout",
        "[pool] Escape: no-path /tmp/warden-escape*: appeared on the host: /tmp/warden-escape-pool-test (removed)",
        "[pool] Cold: the program did not run in a pooled jail (\"warm\": false, status ok)",
    ] {
        assert!(out.contains(evidence), "missing {evidence:?} in:\n{out}");
    }
    assert!(!Path::new("/tmp/warden-escape-pool-test").exists());
    assert!(
        !out.contains("warden-canary-"),
        "the secret must not be printed: {out}"
    );
    let line = |id: &str| {
        out.lines()
            .find(|l| l.contains(id))
            .unwrap_or_default()
            .to_owned()
    };
    assert!(
        line("jail-fake-pool-escape").contains("pool:ok/warm"),
        "{out}"
    );
    assert!(
        line("jail-fake-pool-cold").contains("pool:ok/cold"),
        "{out}"
    );
}
