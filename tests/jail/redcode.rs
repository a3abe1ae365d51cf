//! The `block_or_contain` cases of RedCode-Exec (../shared/corpora/redcode_exec) run in the real jail
//! alone (the static policy off, and the runtime hooks too in a warden that has them), as root and as
//! the unprivileged test user, through the corpus runner (`warden-corpus run --passes jail [--run-as
//! warden-test]`): one harness for the corpus and for this test. The runner recreates what each case
//! targets on the host — listeners on the ports it connects to, a process named as the one it hunts,
//! canaries where it reads, snapshots of the files it copies, writes or deletes — watches
//! `/etc/passwd`, `/etc/shadow`, `/etc/gshadow` and `/root/.bashrc` for every case, and checks from
//! the host afterwards (corpus/README.md, "External corpora"). This test reads the runner's JSON
//! report. `warden-corpus` must be built (`cargo nextest run --workspace` builds it; with `-p warden`,
//! build it first: `cargo build -p warden-corpus`).

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use warden_test_support::jail::{rules_for, shared_tempdir, test_user, As, TEST_USER};
use warden_test_support::{bin, require_root, warden_bin};

/// Small limits: the cases that loop, sleep or grow memory end fast.
const RULES: &str = r#"
[policy]
name = "redcode"
[limits]
wall_time_ms = 3000
cpu_time_ms = 3000
memory_mib = 256
pids = 32
stdout_bytes = 65536
stderr_bytes = 65536
"#;

fn corpus_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("WARDEN_REDCODE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpora/redcode_exec")
        });
    dir.join("index.jsonl").is_file().then_some(dir)
}

/// How many rows of the index are `block_or_contain`.
fn block_or_contain(dir: &Path) -> usize {
    let index = std::fs::read_to_string(dir.join("index.jsonl")).expect("index");
    index
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|row| row["gateway_expectation"] == "block_or_contain")
        .count()
}

/// Runs the corpus runner over RedCode with the jail pass only (as `run_as` when given) and checks
/// its report: every `block_or_contain` case ran in the jail and every host-side check held.
fn contained_by_the_jail_alone(run_as: Option<&str>) {
    let Some(dir) = corpus_dir() else {
        eprintln!(
            "skipped: the RedCode corpus is not at ../shared/corpora/redcode_exec (set WARDEN_REDCODE_DIR)"
        );
        return;
    };
    // Before the runner snapshots /etc/passwd: creating the user later would change it.
    test_user();
    let expected = block_or_contain(&dir);
    assert!(
        expected >= 500,
        "expected the 516 block_or_contain cases, found {expected}"
    );
    // World-readable: the test user reads the rules.
    let work = shared_tempdir();
    let rules = work.path().join("rules.toml");
    // The test user has no memory cgroup on a host that did not delegate one: its rules accept the
    // best effort, as in the jail's other tests.
    let who = if run_as.is_some() { As::User } else { As::Root };
    std::fs::write(&rules, rules_for(who, RULES)).expect("write rules");
    std::fs::set_permissions(&rules, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let report_path = work.path().join("report.json");
    let mut command = Command::new(bin("warden-corpus"));
    command
        // Four at a time, as before the runner: most cases wait (connections, sleeps, timeouts).
        .args(["run", "--passes", "jail", "--jobs", "4", "--format", "json"])
        .arg("--output")
        .arg(&report_path)
        .arg("--rules")
        .arg(&rules)
        .arg("--warden")
        .arg(warden_bin());
    if let Some(user) = run_as {
        command.args(["--run-as", user]);
    }
    let output = command.arg(&dir).output().expect("run warden-corpus");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let report: Value = std::fs::read(&report_path)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_else(|| panic!("no report (exit code {:?}): {stderr}", output.status.code()));
    let cases = report["cases"].as_array().expect("cases");
    let attacks: Vec<&Value> = cases.iter().filter(|c| c["kind"] == "attack").collect();
    let failures: Vec<String> = attacks
        .iter()
        .flat_map(|c| {
            c["mismatches"].as_array().into_iter().flatten().map(|m| {
                format!(
                    "{} [{}] {}: {}",
                    c["id"].as_str().unwrap_or("?"),
                    m["pass"].as_str().unwrap_or("?"),
                    m["kind"].as_str().unwrap_or("?"),
                    m["message"].as_str().unwrap_or("?")
                )
            })
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} mismatch(es):\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(report["passes"], serde_json::json!(["jail"]));
    assert_eq!(report["run_as"].as_str(), run_as);
    let summary = &report["summary"];
    assert_eq!(summary["attacks"], expected);
    assert_eq!(summary["attacks_contained_by_jail"], expected);
    for figure in ["escapes", "unverifiable", "failed"] {
        assert_eq!(summary[figure], 0, "{figure}");
    }
    assert_eq!(attacks.len(), expected);

    // Every case ran in the jail, and the host checks the old harness made were all made: the
    // secrets, the accounts and root's .bashrc for every case; the listeners and the processes the
    // cases hunt for where they target them.
    let mut statuses: BTreeMap<&str, BTreeMap<&str, usize>> = BTreeMap::new();
    let mut held: BTreeMap<String, usize> = BTreeMap::new();
    for case in &attacks {
        let id = case["id"].as_str().unwrap_or("?");
        assert_eq!(case["contained"], true, "{id}");
        let jail = &case["jail"];
        let status = jail["status"]
            .as_str()
            .unwrap_or_else(|| panic!("{id}: no record"));
        *statuses
            .entry(case["group"].as_str().unwrap_or("?"))
            .or_default()
            .entry(status)
            .or_default() += 1;
        for check in jail["checks"].as_array().expect("checks") {
            let verdict = check["verdict"].as_str().unwrap_or("?");
            assert!(
                verdict == "held" || verdict == "not_applicable",
                "{id}: {check}"
            );
            if verdict == "held" {
                *held
                    .entry(check["effect"].as_str().unwrap_or("?").to_owned())
                    .or_default() += 1;
            }
        }
    }
    for (effect, at_least) in [
        ("contained", expected),
        ("canary-unread", expected),
        ("no-survivor", expected),
        ("host-process-survives", expected),
        ("no-read /etc/shadow", expected),
        ("no-read /etc/gshadow", expected),
        ("unchanged /etc/passwd", expected),
        ("unchanged /etc/shadow", expected),
        ("unchanged /root/.bashrc", expected),
        ("no-connect tcp4:127.0.0.1:5758", 30),
        ("no-connect tcp4:127.0.0.1:5389", 30),
        ("no-connect tcp4:127.0.0.1:5388", 30),
        ("host-process-survives sshd", 1),
        ("host-process-survives dockerd", 1),
        ("host-process-survives containerd", 1),
        ("no-path /usr/copy_file", 30),
        ("no-path /boot/important_file", 1),
    ] {
        let count = held.get(effect).copied().unwrap_or(0);
        assert!(
            count >= at_least,
            "`{effect}` held for {count} case(s), expected at least {at_least}"
        );
    }
    eprintln!(
        "RedCode-Exec block_or_contain: {} cases in the jail alone as {}, all contained (host checks passed)",
        attacks.len(),
        run_as.unwrap_or("root")
    );
    for (category, counts) in statuses {
        eprintln!("  {category:<55} {counts:?}");
    }
}

#[test]
fn redcode_cases_are_contained_by_the_jail_alone_as_root() {
    require_root!();
    contained_by_the_jail_alone(None);
}

#[test]
fn redcode_cases_are_contained_by_the_jail_alone_as_an_unprivileged_user() {
    require_root!();
    contained_by_the_jail_alone(Some(TEST_USER));
}
