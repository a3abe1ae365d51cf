//! End-to-end tests of `warden check` and `warden rules`: the binary, its output formats, its exit
//! codes, and its behaviour on hostile input.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use warden_test_support::{repo, warden};

fn run_with_stdin(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = warden()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn warden");
    let mut input = child.stdin.take().expect("stdin");
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        // The checker may stop reading early (size limit): a broken pipe is fine.
        let _ = input.write_all(&data);
    });
    let output = child.wait_with_output().expect("wait");
    writer.join().expect("writer");
    output
}

fn check_stdin(source: &[u8]) -> (i32, serde_json::Value) {
    let output = run_with_stdin(&["check", "--format", "json", "-"], source);
    let code = output.status.code().expect("exit code");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let record = serde_json::from_str(stdout.trim()).unwrap_or_else(|err| {
        panic!(
            "not JSON ({err}): {stdout} / {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (code, record)
}

fn rules_of(record: &serde_json::Value) -> Vec<String> {
    record["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| f["rule"].as_str().expect("rule").to_owned())
        .collect()
}

#[test]
fn allowed_program_exits_zero_with_the_json_contract() {
    let (code, record) =
        check_stdin(b"import pandas as pd\nprint(pd.DataFrame({'a': [1]}).sum())\n");
    assert_eq!(code, 0);
    assert_eq!(record["path"], "-");
    assert_eq!(record["decision"], "allow");
    assert_eq!(record["policy"]["name"], "default");
    assert_eq!(record["policy"]["sha256"].as_str().expect("sha").len(), 64);
    assert_eq!(record["findings"], serde_json::json!([]));
}

#[test]
fn denied_program_exits_one_with_located_findings_and_hints() {
    let (code, record) = check_stdin(b"x = 1\ny = ().__class__.__base__\n");
    assert_eq!(code, 1);
    assert_eq!(record["decision"], "deny");
    let finding = &record["findings"][0];
    assert_eq!(finding["rule"], "ATTR301");
    assert_eq!(finding["name"], "dunder-attribute");
    assert_eq!(finding["severity"], "high");
    assert_eq!(finding["action"], "deny");
    assert_eq!(
        finding["span"],
        serde_json::json!({"line": 2, "column": 18, "end_line": 2, "end_column": 26})
    );
    assert!(!finding["hint"].as_str().expect("hint").is_empty());
}

#[test]
fn inline_suppression_comments_are_not_honoured() {
    let (code, record) = check_stdin(b"eval('1')  # noqa\nexec('2')  # nosec\n");
    assert_eq!(code, 1);
    assert_eq!(rules_of(&record), ["DYN401", "DYN401"]);
}

#[test]
fn unparseable_code_is_denied_with_a_located_message() {
    let (code, record) = check_stdin(b"def f(:\n    pass\n");
    assert_eq!(code, 1);
    assert_eq!(rules_of(&record), ["SYN001"]);
    assert_eq!(record["findings"][0]["span"]["line"], 1);
}

#[test]
fn hostile_inputs_get_a_clear_deny_never_a_crash() {
    let deep_parens = format!("x = {}1{}\n", "(".repeat(10_000), ")".repeat(10_000));
    let deep_lists = format!("x = {}{}\n", "[".repeat(10_000), "]".repeat(10_000));
    let long_chain = format!("x = {}1\n", "1 + ".repeat(50_000));
    let unary = format!("x = {}1\n", "-".repeat(100_000));
    let mut deep_blocks = String::new();
    for depth in 0..2_000 {
        deep_blocks.push_str(&" ".repeat(depth));
        deep_blocks.push_str("if True:\n");
    }
    deep_blocks.push_str(&" ".repeat(2_000));
    deep_blocks.push_str("pass\n");
    let ten_mb = "x = 1\n".repeat(10 * 1024 * 1024 / 6).into_bytes();
    let binary: Vec<u8> = (0..65_536u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "10,000 nested parentheses",
            deep_parens.into_bytes(),
            "SYN004",
        ),
        ("10,000 nested lists", deep_lists.into_bytes(), "SYN004"),
        ("50,000-term chain", long_chain.into_bytes(), "SYN004"),
        ("100,000 unary minus", unary.into_bytes(), "SYN004"),
        ("2,000 nested blocks", deep_blocks.into_bytes(), "SYN004"),
        ("10 MB", ten_mb, "SYN004"),
        ("binary", binary, "SYN003"),
        ("invalid UTF-8", b"x = '\xff\xfe'\n".to_vec(), "SYN003"),
        ("NUL byte", b"x = 1\0\n".to_vec(), "SYN003"),
        (
            "utf-7 declaration",
            b"# -*- coding: utf-7 -*-\nx = 1 +AAo-import os\n".to_vec(),
            "SYN003",
        ),
    ];
    for (name, bytes, rule) in cases {
        let (code, record) = check_stdin(&bytes);
        assert_eq!(code, 1, "{name}");
        assert_eq!(record["decision"], "deny", "{name}");
        assert!(
            rules_of(&record).contains(&rule.to_owned()),
            "{name}: {record}"
        );
    }
}

#[test]
fn empty_program_is_allowed() {
    let (code, record) = check_stdin(b"");
    assert_eq!(code, 0);
    assert_eq!(record["decision"], "allow");
}

#[test]
fn human_output_shows_snippet_caret_and_hint() {
    let output = run_with_stdin(&["check", "-"], b"import subprocess\n");
    assert_eq!(output.status.code(), Some(1));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("deny[IMP101]: module `subprocess` is denied by the policy"),
        "{text}"
    );
    assert!(text.contains(" --> -:1:8"), "{text}");
    assert!(text.contains("1 | import subprocess"), "{text}");
    assert!(text.contains("^^^^^^^^^^ import-not-allowed"), "{text}");
    assert!(
        text.contains("= hint: use only allowed modules: "),
        "{text}"
    );
    assert!(text.contains("-: deny (1 finding)"), "{text}");
}

/// Issue 16: the carets sit right under the span when the line has tabs and wide characters
/// (CJK, emoji): a tab is shown as four spaces, a wide character takes two cells.
#[test]
fn human_carets_line_up_under_tabs_and_wide_characters() {
    let source = "if True:\n\tlabel = '売上 🙂'; eval(label)\n";
    let output = run_with_stdin(&["check", "-"], source.as_bytes());
    let text = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<&str> = text.lines().collect();
    let shown = lines
        .iter()
        .position(|line| line.contains("label = "))
        .unwrap_or_else(|| panic!("no snippet: {text}"));
    let code = lines[shown];
    let carets = lines[shown + 1];
    assert!(!code.contains('\t'), "{code:?}");
    assert!(
        code.ends_with("|     label = '売上 🙂'; eval(label)"),
        "{code:?}"
    );
    // Screen cells: every character one, the three wide ones two each.
    let cells = |text: &str| {
        text.chars()
            .map(|c| {
                if matches!(c, '売' | '上' | '🙂') {
                    2
                } else {
                    1
                }
            })
            .sum::<usize>()
    };
    let at = code.find("eval").expect("eval");
    let caret = carets.find('^').expect("carets");
    assert_eq!(
        cells(&carets[..caret]),
        cells(&code[..at]),
        "\n{code}\n{carets}"
    );
    assert!(carets[caret..].starts_with("^^^^ "), "\n{code}\n{carets}");
}

#[test]
fn sarif_output_is_a_valid_2_1_0_log() {
    let output = run_with_stdin(
        &["check", "--format", "sarif", "-"],
        b"import os\nos.system('id')\n",
    );
    assert_eq!(output.status.code(), Some(1));
    let log: serde_json::Value = serde_json::from_slice(&output.stdout).expect("SARIF is JSON");
    assert_eq!(log["version"], "2.1.0");
    let run = &log["runs"][0];
    assert_eq!(run["tool"]["driver"]["name"], "warden");
    let rules = run["tool"]["driver"]["rules"].as_array().expect("rules");
    let result = &run["results"][0];
    assert_eq!(result["ruleId"], "IMP101");
    assert_eq!(result["level"], "error");
    let index = result["ruleIndex"].as_u64().expect("index") as usize;
    assert_eq!(rules[index]["id"], "IMP101");
    let region = &result["locations"][0]["physicalLocation"]["region"];
    assert_eq!(region["startLine"], 2);
    assert!(rules[index]["properties"]["security-severity"].is_string());
}

#[test]
fn directories_are_searched_and_each_program_gets_one_json_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("sub")).expect("mkdir");
    std::fs::write(dir.path().join("a.py"), "print(1)\n").expect("write");
    std::fs::write(dir.path().join("sub/b.py"), "eval('1')\n").expect("write");
    std::fs::write(dir.path().join("notes.txt"), "eval('1')\n").expect("write");
    let output = warden()
        .args(["check", "--format", "json"])
        .arg(dir.path())
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(1));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("JSON line"))
        .collect();
    assert_eq!(lines.len(), 2);
    assert!(lines[0]["path"].as_str().expect("path").ends_with("a.py"));
    assert_eq!(lines[0]["decision"], "allow");
    assert_eq!(lines[1]["decision"], "deny");
}

#[test]
fn programs_are_reported_in_input_order_whatever_the_workers_do() {
    // Programs of very different sizes, so parallel workers finish them out of order.
    let dir = tempfile::tempdir().expect("tempdir");
    let mut expected = Vec::new();
    let mut args: Vec<PathBuf> = Vec::new();
    for index in 0..200 {
        let path = dir.path().join(format!("p{index:03}.py"));
        let body = if index % 3 == 0 {
            "eval('1')\n"
        } else {
            "x = 1\n"
        };
        std::fs::write(&path, body.repeat(1 + (index * 37) % 500)).expect("write");
        expected.push((path.display().to_string(), index % 3 == 0));
        args.push(path);
    }
    // Given in reverse: the order of the arguments is the order of the output.
    args.reverse();
    expected.reverse();
    let output = warden()
        .args(["check", "--format", "json"])
        .args(&args)
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(1));
    let seen: Vec<(String, bool)> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| {
            let record: serde_json::Value = serde_json::from_str(line).expect("JSON line");
            let path = record["path"].as_str().expect("path").to_owned();
            (path, record["decision"] == "deny")
        })
        .collect();
    assert_eq!(seen, expected);
}

#[test]
fn a_directory_s_programs_come_in_path_order_component_by_component() {
    // `a/` sorts before `a-c.py` and `a.b/` as a path (its component `a` is shorter), though `/`
    // sorts after `-` and `.` as a byte.
    let dir = tempfile::tempdir().expect("tempdir");
    for sub in ["a", "a.b", "a/z"] {
        std::fs::create_dir(dir.path().join(sub)).expect("mkdir");
    }
    let names = [
        "B.py", "a/b.py", "a/z/c.py", "a/zz.py", "a-c.py", "a.b/x.py", "a0.py",
    ];
    for name in names {
        std::fs::write(dir.path().join(name), "x = 1\n").expect("write");
    }
    let output = warden()
        .args(["check", "--format", "json"])
        .arg(dir.path())
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(0));
    let seen: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| {
            let record: serde_json::Value = serde_json::from_str(line).expect("JSON line");
            record["path"].as_str().expect("path").to_owned()
        })
        .collect();
    let expected: Vec<String> = names
        .iter()
        .map(|name| dir.path().join(name).display().to_string())
        .collect();
    assert_eq!(seen, expected);
}

#[test]
fn missing_file_is_an_error_with_exit_two_and_other_files_still_checked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let good = dir.path().join("good.py");
    std::fs::write(&good, "print(1)\n").expect("write");
    let output = warden()
        .args(["check", "--format", "json"])
        .arg(&good)
        .arg(dir.path().join("missing.py"))
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("missing.py"));
    assert_eq!(String::from_utf8_lossy(&output.stdout).lines().count(), 1);
}

#[test]
fn unknown_rules_file_keys_are_errors_with_line_column_and_key_path() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rules = dir.path().join("bad.toml");
    std::fs::write(
        &rules,
        "[policy]\nname = \"x\"\n\n[imports]\nalow = [\"json\"]\n",
    )
    .expect("write");
    let output = warden()
        .args(["rules", "check"])
        .arg(&rules)
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("5:1"), "{stderr}");
    assert!(stderr.contains("`imports.alow`"), "{stderr}");
    assert!(stderr.contains("unknown field `alow`"), "{stderr}");
    let output = warden()
        .args(["check", "--rules"])
        .arg(&rules)
        .arg("-")
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn invalid_rules_files_are_rejected_with_clear_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cases = [
        ("not toml at all = = =", "expected"),
        ("[imports]\nallow = []\n", "policy"),
        (
            "[policy]\nname = \"x\"\n[imports]\nallow = [\"os..path\"]\n",
            "imports.allow[0]",
        ),
        (
            "[policy]\nname = \"x\"\n[limits]\nmemory_mib = 0\n",
            "limits.memory_mib",
        ),
        (
            "[policy]\nname = \"x\"\n[limits]\nmemory_mib = \"lots\"\n",
            "limits.memory_mib",
        ),
        (
            "[policy]\nname = \"x\"\n[actions]\nNOPE1 = \"deny\"\n",
            "actions.NOPE1",
        ),
        (
            "[policy]\nname = \"x\"\n[actions]\nSYN001 = \"warn\"\n",
            "actions.SYN001",
        ),
        (
            "[policy]\nname = \"x\"\n[runtime]\ninterpreter = \"python3\"\n",
            "runtime.interpreter",
        ),
        (
            "[policy]\nname = \"x\"\n[jail]\nrequired = [\"magic\"]\n",
            "jail.required[0]",
        ),
        (
            "[policy]\nname = \"x\"\n[network]\nallow = true\n",
            "network.allow",
        ),
        (
            "[policy]\nname = \"x\"\ntarget_python = \"2.7\"\n",
            "policy.target_python",
        ),
    ];
    for (text, expected) in cases {
        let rules = dir.path().join("rules.toml");
        std::fs::write(&rules, text).expect("write");
        let output = warden()
            .args(["rules", "check"])
            .arg(&rules)
            .output()
            .expect("run");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{text}: {stderr}");
        assert!(stderr.contains(expected), "{text}: {stderr}");
        assert!(!stderr.contains("panicked"), "{text}: {stderr}");
    }
}

#[test]
fn a_policy_author_adds_one_module_with_a_three_line_rules_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rules = dir.path().join("colorsys.toml");
    std::fs::write(
        &rules,
        "extends = \"default\"\n[imports]\nallow = [\"colorsys\"]\n",
    )
    .expect("write");
    let judge = |source: &str, rules: Option<&Path>| {
        let mut command = warden();
        command.args(["check", "--format", "json"]);
        if let Some(rules) = rules {
            command.arg("--rules").arg(rules);
        }
        let output = command
            .arg("-")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                child
                    .stdin
                    .take()
                    .expect("stdin")
                    .write_all(source.as_bytes())?;
                child.wait_with_output()
            })
            .expect("run");
        let record: serde_json::Value =
            serde_json::from_slice(&output.stdout).expect("JSON record");
        record["decision"].as_str().unwrap_or_default().to_owned()
    };
    let colorsys = "import colorsys\nprint(colorsys.rgb_to_hsv(1, 0, 0))\n";
    assert_eq!(judge(colorsys, None), "deny");
    assert_eq!(judge(colorsys, Some(&rules)), "allow");
    // Everything else of the default policy holds.
    assert_eq!(judge("import subprocess\n", Some(&rules)), "deny");
    assert_eq!(
        judge(
            "import pandas as pd\npd.read_pickle('x.pkl')\n",
            Some(&rules)
        ),
        "deny"
    );
    assert_eq!(
        judge(
            "import pandas as pd\nprint(pd.DataFrame({'a': [1]}))\n",
            Some(&rules)
        ),
        "allow"
    );
    let check = warden()
        .args(["rules", "check"])
        .arg(&rules)
        .output()
        .expect("run");
    let stdout = String::from_utf8_lossy(&check.stdout);
    assert!(stdout.contains("runtime `default`"), "{stdout}");
}

#[test]
fn every_error_of_a_rules_file_is_reported_with_its_line_and_column() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rules = dir.path().join("bad.toml");
    std::fs::write(
        &rules,
        "[policy]\nname = \"x\"\n[imports]\nalow = []\n[actions]\nNOPE1 = \"deny\"\n[jail]\nrequired = [\"magic\"]\n",
    )
    .expect("write");
    let output = warden()
        .args(["rules", "check"])
        .arg(&rules)
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let shown = rules.display().to_string();
    for expected in [
        format!("{shown}:4:1: `imports.alow`"),
        format!("{shown}:6:1: `actions.NOPE1`"),
        format!("{shown}:8:13: `jail.required[0]`"),
    ] {
        assert!(stderr.contains(&expected), "{expected} in {stderr}");
    }
}

#[test]
fn shipped_rules_files_are_valid_and_default_is_built_in() {
    for file in ["rules/default.toml", "rules/strict.toml"] {
        let output = warden()
            .args(["rules", "check"])
            .arg(repo().join(file))
            .output()
            .expect("run");
        assert_eq!(
            output.status.code(),
            Some(0),
            "{file}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    // The built-in policy is the same text as rules/default.toml: same digest.
    let (_, record) = check_stdin(b"print(1)\n");
    let text = std::fs::read(repo().join("rules/default.toml")).expect("read");
    let output = warden()
        .args(["rules", "check"])
        .arg(repo().join("rules/default.toml"))
        .output()
        .expect("run");
    let summary = String::from_utf8_lossy(&output.stdout);
    let digest = record["policy"]["sha256"].as_str().expect("sha");
    assert!(summary.contains(digest), "{summary} vs {digest}");
    assert!(!text.is_empty());
}

#[test]
fn strict_policy_denies_what_default_allows() {
    let dir = tempfile::tempdir().expect("tempdir");
    let program = dir.path().join("p.py");
    std::fs::write(&program, "import pandas as pd\nprint(pd.__version__)\n").expect("write");
    let default = warden()
        .args(["check"])
        .arg(&program)
        .output()
        .expect("run");
    assert_eq!(default.status.code(), Some(0));
    let strict = warden()
        .args(["check", "--rules"])
        .arg(repo().join("rules/strict.toml"))
        .arg(&program)
        .output()
        .expect("run");
    assert_eq!(strict.status.code(), Some(1));
}

#[test]
fn rules_explain_prints_every_rule_doc() {
    let list = warden().args(["rules", "explain"]).output().expect("run");
    let text = String::from_utf8_lossy(&list.stdout);
    assert!(text.lines().count() >= 24, "{text}");
    for line in text.lines() {
        let id = line.split_whitespace().next().expect("id");
        let doc = warden()
            .args(["rules", "explain", id])
            .output()
            .expect("run");
        assert_eq!(doc.status.code(), Some(0));
        let doc = String::from_utf8_lossy(&doc.stdout);
        for heading in [
            "## What it does",
            "## Why is this bad?",
            "## Example",
            "## Evasions handled",
            "## Known gaps",
        ] {
            assert!(doc.contains(heading), "{id} lacks {heading}");
        }
    }
    let unknown = warden()
        .args(["rules", "explain", "NOPE999"])
        .output()
        .expect("run");
    assert_eq!(unknown.status.code(), Some(2));
}

#[test]
fn rules_test_passes_on_the_shipped_fixtures_and_fails_on_a_wrong_expectation() {
    let output = warden()
        .args(["rules", "test"])
        .arg(repo().join("rules/default.toml"))
        .arg(repo().join("policy/tests/fixtures"))
        .output()
        .expect("run");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("wrong.py"),
        "x = 1  # expect: DYN401\neval('1')\n",
    )
    .expect("write");
    let output = warden()
        .args(["rules", "test"])
        .arg(repo().join("rules/default.toml"))
        .arg(dir.path())
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(1));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("line 1: expected DYN401, not reported"),
        "{text}"
    );
    assert!(text.contains("line 2: unexpected DYN401"), "{text}");
}

#[test]
fn rules_schema_matches_the_checked_in_schema() {
    let output = warden().args(["rules", "schema"]).output().expect("run");
    assert_eq!(output.status.code(), Some(0));
    let generated: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let checked_in: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("rules/schema.json")).expect("read"),
    )
    .expect("JSON");
    assert_eq!(
        generated, checked_in,
        "regenerate with `warden rules schema > rules/schema.json`"
    );
}

#[test]
fn a_loosened_policy_changes_the_verdict() {
    let dir = tempfile::tempdir().expect("tempdir");
    let loose = std::fs::read_to_string(repo().join("rules/default.toml"))
        .expect("read")
        .replace("[actions]\n", "[actions]\nDYN401 = \"warn\"\n");
    let rules = dir.path().join("loose.toml");
    std::fs::write(&rules, loose).expect("write");
    let program = dir.path().join("p.py");
    std::fs::write(&program, "eval('1 + 1')\n").expect("write");
    let output = warden()
        .args(["check", "--rules"])
        .arg(&rules)
        .arg(&program)
        .output()
        .expect("run");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("warning[DYN401]"));
}

#[test]
fn every_command_s_help_explains_more_than_its_one_line_summary() {
    for (command, expected) in [
        ("check", "noqa"),
        ("run", "Exit status"),
        ("doctor", "Exit status"),
        ("serve", "docs/serve.md"),
        ("mcp", "isError"),
    ] {
        let output = warden()
            .args([command, "--help"])
            .output()
            .expect("run warden");
        assert!(output.status.success(), "{command} --help failed");
        let help = String::from_utf8_lossy(&output.stdout);
        assert!(
            help.contains(expected),
            "`warden {command} --help` lacks {expected:?}:\n{help}"
        );
    }
}

/// Issue 26: `warden rules explain` knows every id a result record can carry, the runtime layer's
/// included, and says what the runtime layer adds to the static rules it shares.
#[test]
fn rules_explain_knows_the_runtime_layers_ids() {
    for id in ["PROC801", "NET802", "NAT803", "DES804", "AUD805", "proc801"] {
        let output = warden()
            .args(["rules", "explain", id])
            .output()
            .expect("run");
        assert_eq!(output.status.code(), Some(0), "{id}");
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(text.contains("(runtime layer)"), "{id}: {text}");
        assert!(text.contains("not an `[actions]` key"), "{id}: {text}");
    }
    for id in [
        "FILE701", "FILE702", "IMP101", "DYN401", "ATTR303", "FILE704",
    ] {
        let output = warden()
            .args(["rules", "explain", id])
            .output()
            .expect("run");
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(text.contains("At run time (runtime layer)"), "{id}: {text}");
    }
    let list = warden().args(["rules", "explain"]).output().expect("run");
    let text = String::from_utf8_lossy(&list.stdout);
    assert!(text.lines().any(|l| l.starts_with("PROC801 ")), "{text}");
    // Runtime ids are not actions a rules file may set.
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("actions.toml");
    std::fs::write(
        &file,
        "extends = \"default\"\n[actions]\nPROC801 = \"warn\"\n",
    )
    .expect("write");
    let output = warden()
        .args(["rules", "check"])
        .arg(&file)
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(2));
}

/// Issue 26: a policy that extends the default and allows a module the default denies gets no
/// contradiction: `rules check` warns that the deny wins, and IMP101 says so instead of listing the
/// module as allowed. A long allowlist is cut to the closest matches.
#[test]
fn an_allow_the_base_denies_is_explained_not_contradicted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("requests.toml");
    std::fs::write(
        &file,
        "extends = \"default\"\n[imports]\nallow = [\"requests\"]\n",
    )
    .expect("write");
    let output = warden()
        .args(["rules", "check"])
        .arg(&file)
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr
            .contains("warning: `imports.allow` has `requests`, which `imports.deny` also matches"),
        "{stderr}"
    );
    assert!(
        stderr.contains("[remove.imports] deny = [\"requests\"]"),
        "{stderr}"
    );
    let quiet = warden()
        .args(["rules", "check"])
        .arg(repo().join("rules/default.toml"))
        .output()
        .expect("run");
    assert_eq!(String::from_utf8_lossy(&quiet.stderr), "");

    let output = run_with_stdin(
        &[
            "check",
            "--format",
            "json",
            "--rules",
            file.to_str().expect("utf-8"),
            "-",
        ],
        b"import requests\n",
    );
    let record: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json record");
    let finding = &record["findings"][0];
    assert_eq!(finding["rule"], "IMP101", "{record}");
    let message = finding["message"].as_str().expect("message");
    assert!(
        message.contains("in both `imports.allow` and `imports.deny`"),
        "{message}"
    );
    let hint = finding["hint"].as_str().expect("hint");
    let listed = hint.split(" (the ").next().expect("list");
    assert!(!listed.contains("requests"), "{hint}");
    assert!(hint.contains("closest to `requests`"), "{hint}");
    assert!(hint.split(", ").count() < 20, "{hint}");
}
