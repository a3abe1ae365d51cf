//! `warden run --no-policy` and `warden doctor` as commands: the result record, exit codes, errors that
//! name what failed, files in and out of the work dir.

use super::support;
use warden_test_support::both_modes;
use warden_test_support::require_root;

use std::time::Duration;

use support::{command_as, run, run_with_timeout, As, Options};

fn warden(who: As, args: &[&str]) -> support::Output {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    run_with_timeout(command_as(who, &args), Duration::from_secs(60))
}

both_modes! {
    /// The result record carries the fields of the record contract (docs/architecture.md), with the layers that were in force.
    fn the_result_record_has_the_design_fields(who: As) {
        let run = run(who, "print('hi')\n", Options::default());
        assert_eq!(run.exit_code, 0);
        let record = &run.record;
        for field in ["status", "exit_code", "signal", "stdout", "stderr", "stdout_truncated", "stderr_truncated",
                      "check", "validation", "usage", "files", "layers"] {
            assert!(record.get(field).is_some(), "missing {field}: {record}");
        }
        assert_eq!(record["status"], "ok");
        assert_eq!(record["stdout"], "hi\n");
        assert_eq!(record["layers"]["namespaces"], serde_json::json!(["user", "mount", "pid", "net", "ipc", "uts", "cgroup"]));
        assert_eq!(record["layers"]["seccomp"], true);
        assert_eq!(record["layers"]["rlimits"], true);
        assert!(record["layers"]["landlock"].as_str().unwrap_or("").starts_with("abi-"));
        let cgroup = record["layers"]["cgroup"].as_str().unwrap_or("");
        match who {
            As::Root => assert!(cgroup == "v1" || cgroup == "v2", "{cgroup}"),
            As::User => assert_eq!(cgroup, "none"),
        }
        for field in ["wall_ms", "cpu_ms", "memory_peak_bytes"] {
            assert!(record["usage"][field].is_u64(), "usage.{field}: {record}");
        }
    }
}

both_modes! {
    /// Exit codes: 1 when the program fails, with its traceback in stderr.
    fn a_failing_program_exits_1_with_its_traceback(who: As) {
        let run = run(who, "import sys\nprint('partial')\nraise ValueError('boom')\n", Options::default());
        assert_eq!(run.exit_code, 1);
        assert_eq!(run.status(), "error");
        assert_eq!(run.record["exit_code"], 1);
        assert!(run.stderr().contains("ValueError: boom"), "{}", run.stderr());
        assert!(run.stderr().contains("raise ValueError('boom')"), "tracebacks show the program's lines: {}", run.stderr());
        assert_eq!(run.stdout(), "partial\n");
    }
}

#[test]
fn a_shell_script_shim_interpreter_is_refused_with_a_clear_error() {
    require_root!();
    let dir = support::shared_tempdir();
    let shim = dir.path().join("python3");
    std::fs::write(&shim, "#!/bin/sh\nexec /usr/bin/python3 \"$@\"\n").expect("write shim");
    let rules = format!(
        "[policy]\nname = \"shim\"\n[runtime]\ninterpreter = \"{}\"\n",
        shim.display()
    );
    let run = run(
        As::Root,
        "print(1)\n",
        Options {
            rules: Some(&rules),
            ..Options::default()
        },
    );
    assert_ne!(run.exit_code, 0);
    assert_eq!(run.status(), "setup_failed");
    let error = run.message();
    assert!(
        error.contains("is a script") && error.contains(&shim.display().to_string()),
        "{error}"
    );
}

#[test]
fn a_required_cgroup_without_delegation_fails_closed_for_an_ordinary_user() {
    require_root!();
    let rules = "[policy]\nname = \"needs-cgroup\"\n[jail]\nrequired = [\"namespaces\", \"seccomp\", \"landlock\", \"cgroup\", \"rlimits\"]\n";
    let run = run(
        As::User,
        "print('must not run')\n",
        Options {
            rules: Some(rules),
            ..Options::default()
        },
    );
    assert_ne!(run.exit_code, 0);
    assert_eq!(run.status(), "setup_failed");
    let error = run.message();
    assert!(
        error.contains("required layer `cgroup`") && error.contains("delegated"),
        "{error}"
    );
    assert_eq!(run.stdout(), "");
}

both_modes! {
    /// `warden doctor` reports every layer and passes with a policy requiring the default layers.
    fn doctor_reports_every_layer(who: As) {
        let dir = support::shared_tempdir();
        let rules = dir.path().join("rules.toml");
        std::fs::write(&rules, support::rules_for(who, support::BASE_RULES)).expect("rules");
        let out = warden(who, &["doctor", "--json", "--rules", rules.to_str().unwrap_or_default()]);
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("doctor json");
        assert_eq!(out.status, 0, "{report}");
        let layers = report["layers"].as_array().cloned().unwrap_or_default();
        let names: Vec<&str> = layers.iter().filter_map(|l| l["layer"].as_str()).collect();
        assert_eq!(names, ["namespaces", "seccomp", "landlock", "cgroup", "rlimits"]);
        assert_eq!(report["smoke_run"]["ok"], true, "{report}");
        assert_eq!(report["interpreter"]["ok"], true);
    }
}

#[test]
fn doctor_fails_when_a_required_layer_is_missing() {
    require_root!();
    let dir = support::shared_tempdir();
    let rules = dir.path().join("rules.toml");
    std::fs::write(
        &rules,
        "[policy]\nname = \"x\"\n[jail]\nrequired = [\"cgroup\"]\n",
    )
    .expect("rules");
    let out = warden(
        As::User,
        &[
            "doctor",
            "--json",
            "--rules",
            rules.to_str().unwrap_or_default(),
        ],
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("doctor json");
    assert_eq!(out.status, 1, "{report}");
    assert_eq!(
        report["missing_required_layers"],
        serde_json::json!(["cgroup"])
    );
}

both_modes! {
    /// Inputs are copied into the work dir; files the program writes come back through --output-dir.
    fn inputs_and_outputs_cross_the_work_dir(who: As) {
        use std::os::unix::fs::PermissionsExt;
        let dir = support::shared_tempdir();
        let input = dir.path().join("data.csv");
        std::fs::write(&input, "a,b\n1,2\n").expect("input");
        std::fs::set_permissions(&input, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let out_dir = dir.path().join("out");
        let program = r#"
import os
print(open("data.csv").read().strip().replace("\n", "|"))
os.makedirs("charts", exist_ok=True)
open("charts/result.txt", "w").write("42\n")
os.symlink("/etc/passwd", "link")
try:
    open("data.csv", "a").write("tamper")
    print("INPUT WRITABLE")
except OSError as e:
    print("INPUT READ-ONLY", type(e).__name__)
"#;
        let options = Options {
            extra_args: vec![
                "--input".into(), input.display().to_string(),
                "--output-dir".into(), out_dir.display().to_string(),
            ],
            ..Options::default()
        };
        if who == As::User {
            // The test user must be able to create the output dir.
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).expect("chmod");
        }
        let run = run(who, program, options);
        assert_eq!(run.status(), "ok", "{:?}", run.record);
        assert!(run.stdout().contains("a,b|1,2"), "{}", run.stdout());
        assert!(run.stdout().contains("INPUT READ-ONLY"), "{}", run.stdout());
        assert_eq!(std::fs::read_to_string(out_dir.join("charts/result.txt")).ok().as_deref(), Some("42\n"));
        assert!(!out_dir.join("link").exists(), "a symlink crossed out of the jail");
        // ... and the record says so, as an entry with its reason (issue 11).
        assert_eq!(run.record["files_refused"][0]["path"], "link", "{:?}", run.record);
        assert_eq!(run.record["files_refused"][0]["reason"], "symlink", "{:?}", run.record);
        let files = run.record["files"].as_array().cloned().unwrap_or_default();
        assert_eq!(files.len(), 1, "{files:?}");
        assert_eq!(files[0]["path"], "charts/result.txt");
        assert_eq!(std::fs::read_to_string(&input).ok().as_deref(), Some("a,b\n1,2\n"), "the host input changed");
    }
}

#[test]
fn the_program_can_be_read_from_standard_input() {
    require_root!();
    let mut command = command_as(As::Root, &["run".into(), "--no-policy".into(), "-".into()]);
    command
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = command.spawn().expect("spawn");
    if let Some(mut stdin) = child.stdin.take() {
        use std::io::Write;
        stdin.write_all(b"print(6 * 7)\n").expect("write");
    }
    let out = child.wait_with_output().expect("wait");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "42\n");
    assert!(String::from_utf8_lossy(&out.stderr).contains("warden: ok"));
}
