//! End-to-end tests of `warden run`: every status of the result record, files in and out, output
//! validation, review approval, caller limits, and bad input. Real programs in the real jail with the
//! default runtime (installed by scripts/setup.sh).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::Path;
use std::process::{Output, Stdio};

use serde_json::Value;
use warden_test_support::{repo, warden};

struct Run {
    code: i32,
    record: Value,
    stderr: String,
}

fn run_program(source: &str, extra: &[&str], dir: &Path) -> Run {
    let program = dir.join("program.py");
    std::fs::write(&program, source).expect("write program");
    let output = warden()
        .arg("run")
        .arg("--json")
        .args(extra)
        .arg(&program)
        .output()
        .expect("run warden");
    parse(output)
}

fn parse(output: Output) -> Run {
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let record = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|err| panic!("record is not JSON ({err}): {stdout}\nstderr: {stderr}"));
    Run {
        code: output.status.code().expect("exit code"),
        record,
        stderr,
    }
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("tempdir")
}

#[test]
fn ok_the_example_produces_schema_valid_json_and_a_chart() {
    let dir = tempdir();
    let out = dir.path().join("out");
    let example = repo().join("examples/sales");
    let output = warden()
        .args(["run", "--json", "--input"])
        .arg(example.join("sales.csv"))
        .arg("--schema")
        .arg(example.join("schema.json"))
        .arg("--output-dir")
        .arg(&out)
        .arg(example.join("analysis.py"))
        .output()
        .expect("run");
    let run = parse(output);
    assert_eq!(run.code, 0, "{}", run.record);
    let r = &run.record;
    assert_eq!(r["status"], "ok");
    assert_eq!(r["exit_code"], 0);
    assert_eq!(r["check"]["decision"], "allow");
    assert_eq!(
        r["validation"],
        serde_json::json!({"valid": true, "errors": [], "result": "stdout"})
    );
    let answer: Value =
        serde_json::from_str(r["stdout"].as_str().expect("stdout")).expect("stdout is JSON");
    assert_eq!(answer["rows"], 240);
    let files = r["files"].as_array().expect("files");
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(files[0]["path"], "revenue_by_region.png");
    let png = std::fs::read(out.join("revenue_by_region.png")).expect("chart copied");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(files[0]["bytes"], png.len());
    assert_eq!(
        r["layers"]["landlock"]
            .as_str()
            .map(|s| s.starts_with("abi-")),
        Some(true)
    );
    assert!(r["usage"]["wall_ms"].as_u64().is_some());
    // The input is not collected back as an output.
    assert!(!out.join("sales.csv").exists());
}

#[test]
fn denied_programs_never_run_and_carry_findings_with_hints() {
    let dir = tempdir();
    let marker = dir.path().join("ran");
    let source = format!(
        "open({:?}, 'w').write('x')\nimport subprocess\n",
        marker.display().to_string()
    );
    let run = run_program(&source, &[], dir.path());
    assert_eq!(run.code, 1);
    assert_eq!(run.record["status"], "denied");
    assert_eq!(run.record["check"]["decision"], "deny");
    let rules: Vec<&str> = run.record["check"]["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f["rule"].as_str())
        .collect();
    assert!(rules.contains(&"IMP101"), "{rules:?}");
    assert!(run.record["check"]["findings"][0]["hint"]
        .as_str()
        .is_some_and(|h| !h.is_empty()));
    assert_eq!(run.record["exit_code"], Value::Null);
    assert!(!marker.exists(), "a denied program ran");
}

#[test]
fn review_requires_approval_and_records_it() {
    let dir = tempdir();
    let rules = dir.path().join("review.toml");
    let text = std::fs::read_to_string(repo().join("rules/default.toml"))
        .expect("read")
        .replace("[actions]\n", "[actions]\nDYN403 = \"review\"\n");
    std::fs::write(&rules, text).expect("write");
    let rules_arg = rules.display().to_string();
    let source = "names = sorted(globals())\nprint('reviewed', len(names) > 0)\n";
    let run = run_program(source, &["--rules", &rules_arg], dir.path());
    assert_eq!(run.code, 1);
    assert_eq!(run.record["status"], "review_required");
    assert_eq!(run.record["check"]["decision"], "review");
    assert_eq!(run.record["stdout"], "");
    let approved = run_program(source, &["--rules", &rules_arg, "--approve"], dir.path());
    assert_eq!(approved.code, 0, "{}", approved.record);
    assert_eq!(approved.record["status"], "ok");
    assert_eq!(approved.record["stdout"], "reviewed True\n");
    assert_eq!(approved.record["approval"]["method"], "flag");
}

#[test]
fn runtime_errors_carry_the_python_error_without_host_paths() {
    let dir = tempdir();
    let run = run_program(
        "import pandas as pd\nx = {'a': 1}\nprint(x['b'])\n",
        &[],
        dir.path(),
    );
    assert_eq!(run.code, 1);
    let r = &run.record;
    assert_eq!(r["status"], "error");
    assert_eq!(r["exit_code"], 1);
    assert_eq!(r["error"]["name"], "KeyError");
    assert_eq!(r["error"]["value"], "'b'");
    let stderr = r["stderr"].as_str().expect("stderr");
    assert!(stderr.contains("Traceback"), "{stderr}");
    let host_dir = dir.path().display().to_string();
    assert!(
        !stderr.contains(&host_dir),
        "traceback reveals the host path {host_dir}: {stderr}"
    );
    assert!(
        !stderr.contains("warden-work-"),
        "traceback reveals the host work dir: {stderr}"
    );
}

#[test]
fn an_error_message_of_several_lines_is_kept_whole() {
    let dir = tempdir();
    let run = run_program("raise ValueError(\"a\\nb\")\n", &[], dir.path());
    assert_eq!(run.record["status"], "error");
    assert_eq!(run.record["error"]["name"], "ValueError", "{}", run.record);
    assert_eq!(run.record["error"]["value"], "a\nb");
}

#[test]
fn timeout_kills_the_program() {
    let dir = tempdir();
    let run = run_program(
        "while True:\n    pass\n",
        &["--wall-time-ms", "1500", "--cpu-time-ms", "1500"],
        dir.path(),
    );
    assert_eq!(run.code, 1);
    assert_eq!(run.record["status"], "timeout");
    assert!(run.record["usage"]["wall_ms"].as_u64().expect("wall") < 10_000);
}

#[test]
fn memory_limit_is_reported() {
    let dir = tempdir();
    let run = run_program(
        "import numpy as np\nblocks = []\nwhile True:\n    blocks.append(np.ones(16 * 1024 * 1024))\n",
        &["--memory-mib", "256"],
        dir.path(),
    );
    assert_eq!(run.code, 1);
    assert_eq!(run.record["status"], "memory_limit", "{}", run.record);
}

#[test]
fn output_limit_truncates_and_is_reported() {
    let dir = tempdir();
    let run = run_program(
        "for i in range(100000):\n    print('x' * 100)\n",
        &["--stdout-bytes", "10000"],
        dir.path(),
    );
    assert_eq!(run.code, 1);
    assert_eq!(run.record["status"], "output_limit");
    assert_eq!(run.record["stdout_truncated"], true);
    assert!(run.record["stdout"].as_str().expect("stdout").len() <= 10_000);
}

#[test]
fn output_invalid_reports_instance_and_schema_paths() {
    let dir = tempdir();
    let schema = dir.path().join("schema.json");
    std::fs::write(
        &schema,
        r#"{"type": "object", "required": ["total"], "properties": {"total": {"type": "number", "minimum": 0}}}"#,
    )
    .expect("write");
    let schema_arg = schema.display().to_string();
    let run = run_program(
        "import json\nprint(json.dumps({'total': -5}))\n",
        &["--schema", &schema_arg],
        dir.path(),
    );
    assert_eq!(run.code, 1);
    assert_eq!(run.record["status"], "output_invalid");
    let error = &run.record["validation"]["errors"][0];
    assert_eq!(error["instance_path"], "/total");
    assert_eq!(error["schema_path"], "/properties/total/minimum");
    let not_json = run_program(
        "print('total: 5')\n",
        &["--schema", &schema_arg],
        dir.path(),
    );
    assert_eq!(not_json.record["status"], "output_invalid");
    assert!(not_json.record["validation"]["errors"][0]["message"]
        .as_str()
        .expect("msg")
        .contains("not one JSON document"));
}

#[test]
fn setup_failure_when_the_interpreter_is_a_shell_shim() {
    let dir = tempdir();
    let shim = dir.path().join("python3");
    std::fs::write(&shim, "#!/bin/sh\nexec /usr/bin/python3 \"$@\"\n").expect("write");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let rules = dir.path().join("shim.toml");
    // The runtime's name in `[runtime]` (the last `name =` of the file) becomes the shim.
    let default = std::fs::read_to_string(repo().join("rules/default.toml")).expect("read");
    let at = default
        .rfind("\nname = \"default\"\n")
        .expect("[runtime] name")
        + 1;
    let text = format!(
        "{}interpreter = {:?}{}",
        &default[..at],
        shim.display().to_string(),
        &default[at + "name = \"default\"".len()..]
    );
    assert!(text.contains("[runtime]") && text.rfind("interpreter =") > text.find("[runtime]"));
    std::fs::write(&rules, text).expect("write");
    let run = run_program(
        "print(1)\n",
        &["--rules", &rules.display().to_string()],
        dir.path(),
    );
    assert_eq!(run.code, 1);
    assert_eq!(run.record["status"], "setup_failed");
    assert!(
        run.record["message"]
            .as_str()
            .expect("message")
            .contains("shim")
            || run.record["message"]
                .as_str()
                .expect("message")
                .contains("ELF"),
        "{}",
        run.record
    );
}

#[test]
fn caller_limits_only_tighten() {
    let dir = tempdir();
    // Asking for more time than the policy allows keeps the policy's limit (30 s): a 1 s sleep is fine,
    // and a tighter limit than the sleep stops it.
    let loose = run_program(
        "import time\ntime.sleep(1)\nprint('done')\n",
        &["--wall-time-ms", "999999999"],
        dir.path(),
    );
    assert_eq!(loose.record["status"], "ok");
    // The record says what the run got, and that the request was not granted.
    let limits = &loose.record["limits"];
    assert_eq!(limits["wall_time_ms"], 30000, "{limits}");
    assert_eq!(limits["capped"][0]["limit"], "wall_time_ms", "{limits}");
    assert_eq!(limits["capped"][0]["requested"], 999_999_999_u64);
    assert_eq!(limits["capped"][0]["applied"], 30000);
    let tight = run_program(
        "import time\ntime.sleep(5)\n",
        &["--wall-time-ms", "500"],
        dir.path(),
    );
    assert_eq!(tight.record["status"], "timeout");
    assert_eq!(tight.record["limits"]["wall_time_ms"], 500);
    assert_eq!(tight.record["limits"]["capped"], serde_json::json!([]));
}

#[test]
fn no_policy_runs_denied_code_in_the_jail_only() {
    let dir = tempdir();
    let source = "import subprocess\nprint('still jailed')\n";
    // The static layer is skipped; the runtime layer still stops the import, and says so.
    let hooked = run_program(source, &["--no-policy"], dir.path());
    assert_eq!(hooked.code, 1, "{}", hooked.record);
    assert_eq!(hooked.record["check"]["decision"], "skipped");
    assert_eq!(hooked.record["status"], "error");
    assert_eq!(hooked.record["stopped_by"]["layer"], "runtime");
    assert_eq!(hooked.record["stopped_by"]["rule"], "IMP101");
    assert_eq!(hooked.record["stdout"], "");
    // With the runtime layer off too, only the jail is left.
    let jailed = run_program(source, &["--no-policy", "--no-hooks"], dir.path());
    assert_eq!(jailed.code, 0, "{}", jailed.record);
    assert_eq!(jailed.record["stdout"], "still jailed\n");
    assert_eq!(jailed.record["layers"]["runtime_hooks"], false);
    assert_eq!(jailed.record["stopped_by"], Value::Null);
}

#[test]
fn bad_input_gets_a_clear_error_and_loses_nothing() {
    let dir = tempdir();
    // Missing program.
    let missing = warden()
        .args(["run"])
        .arg(dir.path().join("nope.py"))
        .output()
        .expect("run");
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("nope.py"));
    // A directory as program.
    let directory = warden()
        .args(["run"])
        .arg(dir.path())
        .output()
        .expect("run");
    assert_eq!(directory.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&directory.stderr).contains("is a directory"));
    // An output dir with files in it is refused, and its files are untouched.
    let out = dir.path().join("out");
    std::fs::create_dir(&out).expect("mkdir");
    std::fs::write(out.join("keep.txt"), "precious").expect("write");
    let program = dir.path().join("p.py");
    std::fs::write(&program, "open('new.txt', 'w').write('x')\n").expect("write");
    let busy = warden()
        .args(["run", "--output-dir"])
        .arg(&out)
        .arg(&program)
        .output()
        .expect("run");
    assert_eq!(busy.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&busy.stderr).contains("not empty"));
    assert_eq!(
        std::fs::read_to_string(out.join("keep.txt")).expect("kept"),
        "precious"
    );
    assert!(!out.join("new.txt").exists());
    // An input that is a symlink to a host secret is not followed.
    let secret = dir.path().join("secret.txt");
    std::fs::write(&secret, "TOP-SECRET-VALUE").expect("write");
    let link = dir.path().join("data.csv");
    std::os::unix::fs::symlink(&secret, &link).expect("symlink");
    let linked = warden()
        .args(["run", "--json", "--input"])
        .arg(&link)
        .arg(&program)
        .output()
        .expect("run");
    assert_eq!(linked.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&linked.stderr).contains("symlink"));
    assert!(!String::from_utf8_lossy(&linked.stdout).contains("TOP-SECRET-VALUE"));
    // Invalid schema and invalid rules are configuration errors.
    let schema = dir.path().join("bad-schema.json");
    std::fs::write(&schema, r#"{"type": 12}"#).expect("write");
    let bad_schema = warden()
        .args(["run", "--schema"])
        .arg(&schema)
        .arg(&program)
        .output()
        .expect("run");
    assert_eq!(bad_schema.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad_schema.stderr).contains("schema"));
    let rules = dir.path().join("bad.toml");
    std::fs::write(&rules, "[policy]\nname = \"x\"\nbogus = 1\n").expect("write");
    let bad_rules = warden()
        .args(["run", "--rules"])
        .arg(&rules)
        .arg(&program)
        .output()
        .expect("run");
    assert_eq!(bad_rules.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad_rules.stderr).contains("bogus"));
}

#[test]
fn a_huge_program_on_stdin_is_denied_not_buffered_forever() {
    let mut child = warden()
        .args(["run", "--json", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        let chunk = "x = 1\n".repeat(10_000);
        for _ in 0..400 {
            if stdin.write_all(chunk.as_bytes()).is_err() {
                break;
            }
        }
    });
    let output = child.wait_with_output().expect("wait");
    writer.join().expect("writer");
    let run = parse(output);
    assert_eq!(run.code, 1);
    assert_eq!(run.record["status"], "denied");
    assert_eq!(run.record["check"]["findings"][0]["rule"], "SYN004");
    let _ = run.stderr;
}

#[test]
fn charts_render_headless_with_matplotlib() {
    let dir = tempdir();
    let out = dir.path().join("charts");
    let out_arg = out.display().to_string();
    let source = "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [2, 4, 1])\nplt.savefig('chart.png')\nprint('saved')\n";
    let run = run_program(source, &["--output-dir", &out_arg], dir.path());
    assert_eq!(run.code, 0, "{}", run.record);
    assert_eq!(run.record["files"][0]["path"], "chart.png");
    assert!(out.join("chart.png").exists());
}

#[test]
fn a_program_that_ended_in_time_is_not_a_timeout_however_long_the_copy_back() {
    // 65,534 empty files (the work dir's inode cap) take seconds to copy back, after the program
    // ended well within its wall-clock limit: that is too many output files, not a timeout.
    let dir = tempdir();
    let run = run_program(
        "from pathlib import Path\nout = Path('many')\nout.mkdir()\ni = 0\ntry:\n    while True:\n        (out / f'f{i}').touch()\n        i += 1\nexcept OSError as err:\n    print(i, err.errno)\n",
        &["--wall-time-ms", "20000"],
        dir.path(),
    );
    assert_eq!(run.record["status"], "output_limit", "{}", run.record);
    assert_eq!(run.record["limits_hit"], serde_json::json!([]));
    assert!(run.record["stdout"]
        .as_str()
        .expect("stdout")
        .ends_with(" 28\n"));
    assert!(run.record["message"]
        .as_str()
        .expect("message")
        .contains("files"));
}

/// "Allowed means importable" (issue 12): every module the shipped policies allow imports inside the
/// jail with the policy's runtime. `warden runtime check` imports them there and exits 1 when one does
/// not; this is what CI runs for rules/default.toml and rules/strict.toml.
#[test]
fn every_module_the_shipped_policies_allow_imports_in_the_jail() {
    for policy in ["rules/default.toml", "rules/strict.toml"] {
        let output = warden()
            .args(["runtime", "check", "--json", "--rules"])
            .arg(repo().join(policy))
            .output()
            .expect("run warden runtime check");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let facts: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|err| {
            panic!(
                "{policy}: no JSON ({err}): {stdout}\n{}",
                String::from_utf8_lossy(&output.stderr)
            )
        });
        let imports = facts["imports"].as_object().expect("imports");
        let failed: Vec<String> = imports
            .iter()
            .filter(|(_, result)| *result != "ok")
            .map(|(name, result)| format!("{name}: {result}"))
            .collect();
        assert!(
            failed.is_empty(),
            "{policy} allows modules its runtime cannot import:\n{}",
            failed.join("\n")
        );
        assert!(output.status.success(), "{policy}: {stdout}");
        assert!(
            imports.len() >= 20,
            "{policy}: only {} modules",
            imports.len()
        );
    }
}

/// A policy that allows a module its runtime does not have: `warden doctor` reports it and exits 1,
/// `warden serve --check-config` refuses it (exit 2) and names the module.
#[test]
fn doctor_and_serve_check_config_refuse_a_policy_whose_allowed_modules_do_not_import() {
    let dir = tempdir();
    let strict = std::fs::read_to_string(repo().join("rules/strict.toml")).expect("strict.toml");
    let rules = strict.replacen(
        "allow = [\n",
        "allow = [\n    \"warden_no_such_module\", \"warden_no_such_package.*\",\n",
        1,
    );
    assert_ne!(rules, strict, "strict.toml's allow list moved");
    let rules_path = dir.path().join("missing.toml");
    std::fs::write(&rules_path, rules).expect("write rules");

    let doctor = warden()
        .args(["doctor", "--json", "--rules"])
        .arg(&rules_path)
        .output()
        .expect("run warden doctor");
    let report: Value = serde_json::from_slice(&doctor.stdout).expect("doctor JSON");
    assert_eq!(doctor.status.code(), Some(1), "{report}");
    let error = report["allowed_imports"]["error"].as_str().expect("error");
    assert!(
        error.contains("warden_no_such_module") && error.contains("warden_no_such_package"),
        "{error}"
    );

    let config = dir.path().join("serve.toml");
    std::fs::write(
        &config,
        format!(
            "[server]\ndefault_policy = \"missing\"\n[policies]\nmissing = {:?}\n",
            rules_path.display().to_string()
        ),
    )
    .expect("write config");
    let check = warden()
        .args(["serve", "--check-config", "--config"])
        .arg(&config)
        .output()
        .expect("run warden serve --check-config");
    let stderr = String::from_utf8_lossy(&check.stderr);
    assert_eq!(check.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("policy missing") && stderr.contains("warden_no_such_module"),
        "{stderr}"
    );

    // The shipped strict policy passes both.
    let doctor = warden()
        .args(["doctor", "--json", "--rules"])
        .arg(repo().join("rules/strict.toml"))
        .output()
        .expect("run warden doctor");
    let report: Value = serde_json::from_slice(&doctor.stdout).expect("doctor JSON");
    assert_eq!(
        report["allowed_imports"]["ok"],
        Value::Bool(true),
        "{report}"
    );
}

/// A rules file extending the default policy with `extra` (TOML), in `dir`.
fn rules_with(dir: &Path, name: &str, extra: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, format!("extends = \"default\"\n{extra}")).expect("write rules");
    path.display().to_string()
}

/// Runs `source` saved as `dir/name`, with `extra` arguments.
fn run_named(name: &str, source: &str, extra: &[&str], dir: &Path) -> Run {
    let program = dir.join(name);
    std::fs::write(&program, source).expect("write program");
    let output = warden()
        .current_dir(dir)
        .args(["run", "--json"])
        .args(extra)
        .arg(name)
        .output()
        .expect("run warden");
    parse(output)
}

/// Issue 16: matplotlib's font lookup (fontconfig, through `fc-list` when processes are allowed)
/// finds a configuration in the jail: nothing about Fontconfig reaches the text the model reads.
#[test]
fn a_matplotlib_run_prints_no_fontconfig_error() {
    let dir = tempdir();
    let source = "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.plot([1, 2, 3])\nax.set_title('sales by region')\nax.text(0.5, 0.5, 'north')\nfig.savefig('a.png')\nprint('saved')\n";
    let processes = rules_with(dir.path(), "procs.toml", "[processes]\nallow = true\n");
    for extra in [vec![], vec!["--no-policy", "--rules", processes.as_str()]] {
        let run = run_program(source, &extra, dir.path());
        assert_eq!(run.record["status"], "ok", "{extra:?}: {}", run.record);
        let stderr = run.record["stderr"].as_str().expect("stderr");
        assert!(!stderr.contains("Fontconfig"), "{extra:?}: {stderr}");
        assert_eq!(stderr, "", "{extra:?}");
    }
    // fontconfig itself reads the jail's configuration (the program's own import of subprocess is
    // the runtime layer's to deny: without it here).
    let run = run_program(
        "import subprocess\nr = subprocess.run(['fc-match', 'sans'], capture_output=True, text=True)\nprint(r.returncode, r.stderr)\n",
        &["--no-policy", "--no-hooks", "--rules", &processes],
        dir.path(),
    );
    assert_eq!(run.record["status"], "ok", "{}", run.record);
    let stdout = run.record["stdout"].as_str().expect("stdout");
    assert!(!stdout.contains("Fontconfig"), "{stdout}");
    assert!(stdout.starts_with("0 "), "{stdout}");
}

/// Issue 16: a traceback starts in the user's code, under the user's file name (`<stdin>` for
/// standard input), in stderr and in the record's `error`; no frame of warden's bootstrap.
#[test]
fn tracebacks_name_the_users_file_and_no_warden_frame() {
    let dir = tempdir();
    let run = run_named(
        "analysis.py",
        "import warnings\ntotal = 1\nwarnings.warn('careful')\nratio = total / 0\n",
        &[],
        dir.path(),
    );
    assert_eq!(run.record["status"], "error", "{}", run.record);
    let stderr = run.record["stderr"].as_str().expect("stderr");
    let traceback = run.record["error"]["traceback"]
        .as_str()
        .expect("traceback");
    for text in [stderr, traceback] {
        assert!(
            text.contains("File \"analysis.py\", line 4, in <module>"),
            "{text}"
        );
        assert!(
            text.contains("ratio = total / 0"),
            "the line is shown: {text}"
        );
        for internal in ["/run/warden", "<string>", "bootstrap", "main.py"] {
            assert!(!text.contains(internal), "{internal} in {text}");
        }
    }
    assert!(
        stderr.starts_with("analysis.py:3: UserWarning: careful\n"),
        "{stderr}"
    );
    // The runtime layer's denial reads the same.
    let denied = run_named(
        "job.py",
        "import os\nos.system('id')\n",
        &["--no-policy"],
        dir.path(),
    );
    assert_eq!(
        denied.record["stopped_by"]["layer"], "runtime",
        "{}",
        denied.record
    );
    let traceback = denied.record["error"]["traceback"]
        .as_str()
        .expect("traceback");
    assert!(
        traceback.contains("File \"job.py\", line 2, in <module>\n    os.system('id')"),
        "{traceback}"
    );
    assert!(!traceback.contains("/run/warden"), "{traceback}");
    // Standard input.
    let mut child = warden()
        .args(["run", "--json", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"x = 1\nprint(x[0])\n")
        .expect("write");
    let run = parse(child.wait_with_output().expect("wait"));
    let traceback = run.record["error"]["traceback"]
        .as_str()
        .expect("traceback");
    assert!(
        traceback.contains("File \"<stdin>\", line 2, in <module>\n    print(x[0])"),
        "{traceback}"
    );
    // The human report shows the same.
    let human = warden()
        .current_dir(dir.path())
        .args(["run", "analysis.py"])
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&human.stderr);
    assert!(text.contains("File \"analysis.py\", line 4"), "{text}");
}

/// Issue 16: `validation` is null when no schema applies; a denied run says why in `message`.
#[test]
fn validation_is_null_without_a_schema_and_denied_runs_have_a_message() {
    let dir = tempdir();
    let run = run_program("print('hi')\n", &[], dir.path());
    assert_eq!(run.record["status"], "ok");
    assert_eq!(run.record["validation"], Value::Null, "{}", run.record);
    let denied = run_program("import socket\n", &[], dir.path());
    assert_eq!(denied.record["status"], "denied");
    assert_eq!(denied.record["validation"], Value::Null);
    let message = denied.record["message"].as_str().expect("message");
    assert!(message.contains("IMP101"), "{message}");
}

/// Issue 16: the files a program wrote before a limit kill come back marked partial, and so does
/// its output up to the kill; timeouts, memory and output limits alike.
#[test]
fn files_written_before_a_limit_kill_come_back_marked_partial() {
    let dir = tempdir();
    let start = "open('early.txt', 'w').write('x' * 1000)\nprint('started', flush=True)\n";
    for (status, tail, extra) in [
        ("timeout", "while True:\n    pass\n", vec!["--wall-time-ms", "2000"]),
        (
            "memory_limit",
            "import numpy as np\nblocks = []\nimport time\ntime.sleep(0.3)\nwhile True:\n    blocks.append(np.ones(16 * 1024 * 1024))\n",
            vec!["--memory-mib", "256"],
        ),
        (
            "output_limit",
            "import time\ntime.sleep(0.3)\nwhile True:\n    print('y' * 100)\n",
            vec!["--stdout-bytes", "5000"],
        ),
    ] {
        let out = dir.path().join(status);
        let out_arg = out.display().to_string();
        let mut args = extra.clone();
        args.extend(["--output-dir", out_arg.as_str()]);
        let run = run_program(&format!("{start}{tail}"), &args, dir.path());
        let r = &run.record;
        assert_eq!(r["status"], status, "{r}");
        assert!(r["stdout"].as_str().expect("stdout").starts_with("started\n"), "{r}");
        assert_eq!(r["files"][0]["path"], "early.txt", "{status}: {r}");
        assert_eq!(r["files"][0]["partial"], true, "{status}: {r}");
        assert_eq!(r["files"][0]["bytes"], 1000, "{status}: {r}");
        assert_eq!(std::fs::read(out.join("early.txt")).expect("delivered").len(), 1000);
    }
    // A run that ended on its own: nothing is partial.
    let run = run_program(start, &[], dir.path());
    assert_eq!(run.record["files"][0]["partial"], false, "{}", run.record);
    assert_eq!(run.record["files_refused"], serde_json::json!([]));
}

/// Issue 11's leftover: each file refused at copy-back is an entry of `files_refused` with its
/// reason (a symlink, not a regular file, over the size or count cap), not only words in `message`.
/// The work dir holds no more than the byte cap, so the file over it is sparse (counted by its
/// length).
#[test]
fn refused_output_files_are_listed_with_their_reason() {
    let dir = tempdir();
    let rules = rules_with(
        dir.path(),
        "caps.toml",
        "[processes]\nallow = true\n[limits]\noutput_files = 3\noutput_mib = 1\n",
    );
    // The kernel refuses FIFOs and device nodes whatever the policy (issue 24); a socket bound to a
    // path is the file that is not regular (local sockets need a policy that allows processes).
    let source = "import os, socket\nos.symlink('/etc/passwd', 'link')\nsocket.socket(socket.AF_UNIX).bind('pipe')\nopen('big.bin', 'wb').truncate(2 * 1024 * 1024)\nfor i in range(5):\n    open(f'f{i}.txt', 'w').write('x')\n";
    // The copy-back is judged on its own: with the runtime layer on, `os.symlink` to a host path
    // is refused before a link exists (FILE701).
    let run = run_program(
        source,
        &["--no-policy", "--no-hooks", "--rules", &rules],
        dir.path(),
    );
    let r = &run.record;
    assert_eq!(r["status"], "output_limit", "{r}");
    let refused: Vec<(String, String)> = r["files_refused"]
        .as_array()
        .expect("files_refused")
        .iter()
        .map(|f| {
            assert!(f["detail"].as_str().is_some_and(|d| !d.is_empty()), "{f}");
            (
                f["path"].as_str().expect("path").to_owned(),
                f["reason"].as_str().expect("reason").to_owned(),
            )
        })
        .collect();
    let reason_of = |path: &str| {
        refused
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, reason)| reason.as_str())
    };
    assert_eq!(reason_of("link"), Some("symlink"), "{refused:?}");
    assert_eq!(reason_of("pipe"), Some("not_regular"), "{refused:?}");
    assert_eq!(reason_of("big.bin"), Some("byte_cap"), "{refused:?}");
    assert_eq!(
        refused
            .iter()
            .filter(|(_, reason)| reason == "file_cap")
            .count(),
        2,
        "{refused:?}"
    );
    assert_eq!(r["files"].as_array().expect("files").len(), 3, "{r}");
    assert!(
        r["message"]
            .as_str()
            .expect("message")
            .contains("link not returned"),
        "{r}"
    );
}

/// Issue 16: a program may deliver its result on the last line of stdout or in `result.json`, so
/// a debug print does not fail validation; when the result is missing, the error says which way
/// applied and how to use the others.
#[test]
fn the_result_may_come_from_the_last_line_or_result_json() {
    let dir = tempdir();
    let schema = dir.path().join("schema.json");
    std::fs::write(
        &schema,
        r#"{"type": "object", "required": ["total"], "properties": {"total": {"type": "number"}}}"#,
    )
    .expect("write");
    let schema = schema.display().to_string();
    let printed = "import json\nprint('debug: summing')\nprint(json.dumps({'total': 3}))\n";
    let filed =
        "import json\nprint('debug: summing')\njson.dump({'total': 4}, open('result.json', 'w'))\n";
    let whole = run_program(printed, &["--schema", &schema], dir.path());
    assert_eq!(whole.record["status"], "output_invalid");
    let message = whole.record["validation"]["errors"][0]["message"]
        .as_str()
        .expect("message");
    assert!(message.contains("(result = stdout)"), "{message}");
    assert!(
        message.contains("--result stdout|last-line|file"),
        "{message}"
    );
    assert!(
        message.contains("result = last_line") && message.contains("result = file"),
        "{message}"
    );
    let last = run_program(
        printed,
        &["--schema", &schema, "--result", "last-line"],
        dir.path(),
    );
    assert_eq!(last.code, 0, "{}", last.record);
    assert_eq!(
        last.record["validation"],
        serde_json::json!({"valid": true, "errors": [], "result": "last_line"})
    );
    let file = run_program(
        filed,
        &["--schema", &schema, "--result", "file"],
        dir.path(),
    );
    assert_eq!(file.code, 0, "{}", file.record);
    assert_eq!(file.record["validation"]["result"], "file");
    // The schema still judges what was delivered.
    let wrong = run_program(
        "import json\njson.dump({'total': 'x'}, open('result.json', 'w'))\n",
        &["--schema", &schema, "--result", "file"],
        dir.path(),
    );
    assert_eq!(wrong.record["status"], "output_invalid");
    assert_eq!(
        wrong.record["validation"]["errors"][0]["instance_path"],
        "/total"
    );
    let missing = run_program(
        printed,
        &["--schema", &schema, "--result", "file"],
        dir.path(),
    );
    assert_eq!(missing.record["status"], "output_invalid");
    let message = missing.record["validation"]["errors"][0]["message"]
        .as_str()
        .expect("message");
    assert!(message.contains("result.json was not written"), "{message}");
    assert!(
        message.contains("(result = file)") && message.contains("result = last_line"),
        "{message}"
    );
    // A symlink is not a result (the jail's side alone: the runtime layer would refuse the link).
    let linked = run_program(
        "import os\nos.symlink('/etc/passwd', 'result.json')\n",
        &[
            "--no-policy",
            "--no-hooks",
            "--schema",
            &schema,
            "--result",
            "file",
        ],
        dir.path(),
    );
    assert_eq!(
        linked.record["status"], "output_invalid",
        "{}",
        linked.record
    );
    // The rules file's `[output] result`, and the command line over it.
    let rules = rules_with(
        dir.path(),
        "last.toml",
        "[output]\nresult = \"last_line\"\n",
    );
    let by_rules = run_program(
        printed,
        &["--schema", &schema, "--rules", &rules],
        dir.path(),
    );
    assert_eq!(by_rules.record["status"], "ok", "{}", by_rules.record);
    let overridden = run_program(
        printed,
        &["--schema", &schema, "--rules", &rules, "--result", "stdout"],
        dir.path(),
    );
    assert_eq!(overridden.record["status"], "output_invalid");
    // Unknown values are errors, on the command line and in the rules file.
    let bad = warden()
        .args(["run", "--result", "lastline", "-"])
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("expected stdout, last-line or file"));
    let bad_rules = rules_with(dir.path(), "bad.toml", "[output]\nresult = \"last-line\"\n");
    let bad = warden()
        .args(["run", "--rules", &bad_rules, "-"])
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert_eq!(bad.status.code(), Some(2));
    let text = String::from_utf8_lossy(&bad.stderr);
    assert!(
        text.contains("output.result") && text.contains("\"last_line\""),
        "{text}"
    );
}

/// The default runtime's interpreter, run on the host without warden: what a program prints
/// unconfined, in `dir` as its working directory.
fn unconfined(source: &str, dir: &Path) -> String {
    let python = Path::new("/var/lib/warden/runtimes/default/venv/bin/python3");
    assert!(
        python.exists(),
        "the default runtime is installed by scripts/setup.sh"
    );
    let program = dir.join("unconfined.py");
    std::fs::write(&program, source).expect("write program");
    let output = std::process::Command::new(python)
        .arg(&program)
        .current_dir(dir)
        .env("MPLBACKEND", "agg")
        .env("OMP_NUM_THREADS", "1")
        .env("OPENBLAS_NUM_THREADS", "1")
        .stdin(Stdio::null())
        .output()
        .expect("run the runtime's python");
    assert!(
        output.status.success(),
        "unconfined: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Issue 26: the modules the default policy allows since it was re-derived from its principle
/// (glob, sqlite3 with a database file in the work dir, Pillow, argparse, pytz, dateutil, tomllib,
/// regex, codecs) and the class reads it allows (`__mro__`, `mro()`) pass the check and print in the
/// jail what they print unconfined.
#[test]
fn newly_allowed_modules_run_as_unconfined() {
    let source = r#"import argparse, codecs, glob, sqlite3, tomllib
import regex
import pytz
from dateutil import parser, relativedelta
from PIL import Image
from abc import ABC, abstractmethod

with codecs.open("notes.txt", "w", encoding="utf-8") as f:
    f.write("café\n")
for name in ("a.csv", "b.csv"):
    with open(name, "w") as f:
        f.write("x\n1\n")
print(sorted(glob.glob("*.csv")), codecs.open("notes.txt", encoding="utf-8").read().strip())

con = sqlite3.connect("sales.db")
con.execute("CREATE TABLE s (region TEXT, amount REAL)")
con.executemany("INSERT INTO s VALUES (?, ?)", [("north", 3.5), ("south", 2.0), ("north", 1.5)])
con.commit()
print(con.execute("SELECT region, SUM(amount) FROM s GROUP BY region ORDER BY region").fetchall())
con.close()
memory = sqlite3.connect(":memory:")
print(memory.execute("SELECT 6 * 7").fetchone())

image = Image.new("RGB", (4, 3), (255, 0, 0))
image.save("red.png")
print(Image.open("red.png").size, Image.open("red.png").getpixel((0, 0)))

cli = argparse.ArgumentParser(description="demo")
cli.add_argument("--n", type=int, default=3)
print(cli.parse_args([]).n, cli.parse_args(["--n", "5"]).n)
print(tomllib.loads('title = "report"\n[limits]\nrows = 10\n'))
print(regex.findall(r"\p{L}+", "naïve café 42"))
tz = pytz.timezone("Europe/Paris")
print(tz.localize(parser.parse("2024-03-10 12:00")).isoformat())
print(parser.parse("2024-01-31") + relativedelta.relativedelta(months=1))

class Shape(ABC):
    @abstractmethod
    def area(self): ...
class Square(Shape):
    def area(self):
        return 4
print([c.__name__ for c in Square.__mro__], [c.__name__ for c in Square.mro()], Square().__class__.__name__)
"#;
    let dir = tempdir();
    let run = run_program(source, &[], dir.path());
    assert_eq!(run.record["check"]["decision"], "allow", "{}", run.record);
    assert_eq!(run.record["status"], "ok", "{}", run.record);
    let expected = unconfined(source, tempdir().path());
    assert_eq!(run.record["stdout"], expected.as_str());
    assert!(
        expected.contains("[('north', 5.0), ('south', 2.0)]"),
        "{expected}"
    );
    assert!(
        expected.contains("['Square', 'Shape', 'ABC', 'object']"),
        "{expected}"
    );
}

/// Issue 26: what stays denied of the newly allowed modules, statically and at run time.
#[test]
fn the_dangerous_parts_of_sqlite3_and_pil_stay_denied() {
    let dir = tempdir();
    // Statically: extensions, viewers, expression strings.
    for (source, rule) in [
        (
            "import sqlite3\ncon = sqlite3.connect('a.db')\ncon.enable_load_extension(True)\n",
            "REF202",
        ),
        (
            "import sqlite3\ncon = sqlite3.connect('a.db')\ncon.load_extension('x.so')\n",
            "REF202",
        ),
        ("from PIL import ImageShow\n", "IMP101"),
        (
            "from PIL import ImageMath\nImageMath.unsafe_eval('a + 1', a=1)\n",
            "REF201",
        ),
        (
            "import sqlite3\nsqlite3.connect('/etc/warden-test.db')\n",
            "FILE702",
        ),
    ] {
        let run = run_program(source, &[], dir.path());
        assert_eq!(run.code, 1, "{source}: {}", run.record);
        let rules: Vec<&str> = run.record["check"]["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .filter_map(|f| f["rule"].as_str())
            .collect();
        assert!(rules.contains(&rule), "{source}: {}", run.record);
    }
    // At run time (the static layer skipped): a database outside the write roots, by a path or
    // a URI, and loading an extension.
    for (source, rule) in [
        (
            "import sqlite3\nsqlite3.connect('/etc/warden-test.db')\n",
            "FILE702",
        ),
        (
            "import sqlite3\nsqlite3.connect('file:/etc/warden-test.db?mode=ro', uri=True)\n",
            "FILE701",
        ),
        (
            "import sqlite3\nsqlite3.connect('file:%2Fetc%2Fx.db', uri=True)\n",
            "FILE702",
        ),
        (
            "import sqlite3\ncon = sqlite3.connect(':memory:')\ncon.enable_load_extension(True)\n",
            "NAT803",
        ),
    ] {
        let run = run_program(source, &["--no-policy"], dir.path());
        assert_eq!(run.record["status"], "error", "{source}: {}", run.record);
        assert_eq!(
            run.record["stopped_by"]["layer"], "runtime",
            "{source}: {}",
            run.record
        );
        assert_eq!(
            run.record["stopped_by"]["rule"], rule,
            "{source}: {}",
            run.record
        );
    }
    assert!(!Path::new("/etc/warden-test.db").exists());
}

/// Issue 26: joblib's `n_jobs != 1` (here scikit-learn's GridSearchCV and cross_val_score with
/// `n_jobs=-1`) runs in the jail, in threads, with the unconfined result; `matplotlib.get_backend()`
/// answers `agg` while `plt.show()` still returns the figure.
#[test]
fn joblib_parallel_work_and_the_matplotlib_backend_as_unconfined() {
    let source = r#"import numpy as np
from sklearn.datasets import load_iris
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.tree import DecisionTreeClassifier
import matplotlib
import matplotlib.pyplot as plt

X, y = load_iris(return_X_y=True)
search = GridSearchCV(DecisionTreeClassifier(random_state=0), {"max_depth": [1, 2, 3]}, cv=3, n_jobs=-1)
search.fit(X, y)
print(search.best_params_, round(search.best_score_, 4))
print(np.round(cross_val_score(DecisionTreeClassifier(random_state=0), X, y, cv=3, n_jobs=2), 4))
print(matplotlib.get_backend().lower(), plt.get_backend().lower())
plt.plot([1, 2, 3])
plt.show()
"#;
    let dir = tempdir();
    let out = dir.path().join("out");
    let out_arg = out.display().to_string();
    let run = run_program(source, &["--output-dir", &out_arg], dir.path());
    assert_eq!(run.record["status"], "ok", "{}", run.record);
    assert_eq!(run.record["stopped_by"], Value::Null, "{}", run.record);
    let expected = unconfined(source, tempdir().path());
    assert_eq!(run.record["stdout"], expected.as_str());
    assert!(expected.contains("agg agg"), "{expected}");
    assert!(out.join("figure-1.png").exists(), "{}", run.record);
}

/// Issue 26: `input()` is denied by name with words that say why (standard input is empty), and a
/// write hint names where the policy lets the program write, statically and at run time.
#[test]
fn input_and_write_hints_say_what_the_policy_allows() {
    let dir = tempdir();
    let run = run_program("name = input('name? ')\nprint(name)\n", &[], dir.path());
    assert_eq!(run.code, 1, "{}", run.record);
    let finding = &run.record["check"]["findings"][0];
    assert_eq!(finding["rule"], "REF201", "{}", run.record);
    assert!(
        finding["message"]
            .as_str()
            .unwrap()
            .contains("standard input, which is empty"),
        "{finding}"
    );

    let readonly = rules_with(
        dir.path(),
        "readonly.toml",
        "[remove.files]\nwrite = [\".\", \"/tmp\"]\n",
    );
    let run = run_program(
        "import sys\nname = sys.argv[0] + '.out'\nopen(name[-5:], 'w').write('x')\n",
        &["--rules", &readonly],
        dir.path(),
    );
    let hints: Vec<&str> = run.record["check"]["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f["hint"].as_str())
        .collect();
    assert!(
        hints.iter().any(|h| h.contains("write no files")),
        "{}",
        run.record
    );
    // At run time, under the default policy's roots.
    let run = run_program(
        "import sys\nopen('/' + 'etc/warden-x', 'w')\n",
        &["--no-policy"],
        dir.path(),
    );
    assert_eq!(
        run.record["stopped_by"]["rule"], "FILE702",
        "{}",
        run.record
    );
    let stderr = run.record["stderr"].as_str().expect("stderr");
    assert!(
        stderr.contains("this policy lets the program write only under /work (the work dir: relative paths), /tmp"),
        "{stderr}"
    );
}
