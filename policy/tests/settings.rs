//! Rules files: `extends` and its merge semantics, the defaults a minimal file gets, and errors that
//! are all reported, each with its line and column.

use warden_policy::settings::InterpreterSource;
use warden_policy::{Decision, Policy, Rule, RulesError};

fn policy(text: &str) -> Policy {
    Policy::from_toml(text, None).unwrap_or_else(|err| panic!("{err}"))
}

fn error(text: &str) -> RulesError {
    match Policy::from_toml(text, None) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(err) => err,
    }
}

fn default_policy() -> Policy {
    Policy::builtin_default().unwrap_or_else(|err| panic!("{err}"))
}

fn decision(policy: &Policy, program: &str) -> Decision {
    warden_policy::check(program.as_bytes(), policy).decision
}

#[test]
fn a_three_line_file_adds_one_module_and_keeps_everything_else_of_default() {
    // `html` is in the default policy now; `colorsys` plays its part.
    let html = policy("extends = \"default\"\n[imports]\nallow = [\"colorsys\"]\n");
    let default = Policy::builtin_default().unwrap_or_else(|err| panic!("{err}"));
    let program = "import colorsys\nprint(colorsys.rgb_to_hsv(1, 0, 0))\n";
    assert_eq!(decision(&default, program), Decision::Deny);
    assert_eq!(decision(&html, program), Decision::Allow);
    assert_eq!(decision(&html, "import subprocess\n"), Decision::Deny);
    assert_eq!(
        decision(&html, "import pandas as pd\npd.read_pickle('x')\n"),
        Decision::Deny
    );
    assert_eq!(html.interpreter, default.interpreter);
    assert_eq!(html.allow_dunder, default.allow_dunder);
    assert_eq!(html.limits, default.limits);
    assert_eq!(html.required_layers, default.required_layers);
    assert_eq!(html.imports.allow.len(), default.imports.allow.len() + 1);
    assert_eq!(html.name, "default-extended");
    assert_ne!(html.sha256, default.sha256);
}

#[test]
fn lists_are_added_remove_takes_entries_out_and_scalars_override() {
    let text = r#"
extends = "default"
[policy]
name = "analysis-plus"
[imports]
deny = ["html"]
[imports.members]
os = ["getpid"]
[limits]
wall_time_ms = 5000
memory_enforcement = "best-effort"
[files]
read = ["/data"]
[remove.imports]
deny = ["timeit"]
[remove.imports.members]
os = ["walk"]
[remove.references]
deny_methods = ["to_clipboard"]
"#;
    let custom = policy(text);
    assert_eq!(custom.name, "analysis-plus");
    assert_eq!(custom.limits.wall_time_ms, 5000);
    assert_eq!(custom.limits.cpu_time_ms, 30_000);
    assert_ne!(
        custom.memory_enforcement,
        default_policy().memory_enforcement
    );
    assert_eq!(custom.files.read, ["/work", "/tmp", "/data"]);
    let os = &custom.imports.members["os"];
    assert!(os.contains("getpid") && os.contains("path") && !os.contains("walk"));
    assert!(!custom.denied_methods.contains("to_clipboard"));
    assert!(custom.denied_methods.contains("to_pickle"));
    assert_eq!(
        decision(&custom, "import timeit\n"),
        Decision::Deny,
        "timeit is denied but was never allowed"
    );
    assert_eq!(decision(&custom, "import html\n"), Decision::Deny);
}

#[test]
fn removing_what_the_base_does_not_have_is_an_error() {
    let err = error("extends = \"default\"\n[remove.imports]\ndeny = [\"nope\"]\n");
    assert_eq!(err.key.as_deref(), Some("remove.imports.deny[0]"));
    assert_eq!((err.line, err.column), (Some(3), Some(9)));
    let err = error("[policy]\nname = \"x\"\n[remove.imports]\ndeny = [\"timeit\"]\n");
    assert!(err.to_string().contains("needs `extends`"), "{err}");
}

#[test]
fn the_extending_file_decides_file704_whichever_key_it_uses() {
    let by_action = policy("extends = \"default\"\n[actions]\nFILE704 = \"deny\"\n");
    assert_eq!(
        by_action.action_for(Rule::DynamicPath),
        Some(warden_policy::Action::Deny)
    );
    let dir = tempdir();
    let base = dir.path().join("base.toml");
    std::fs::write(
        &base,
        "[policy]\nname = \"b\"\n[actions]\nFILE704 = \"deny\"\n",
    )
    .unwrap_or_else(|err| panic!("{err}"));
    let child = format!(
        "extends = {:?}\n[files]\ndynamic_path = \"off\"\n",
        base.display().to_string()
    );
    assert_eq!(policy(&child).action_for(Rule::DynamicPath), None);
    let err = error(
        "[policy]\nname = \"x\"\n[files]\ndynamic_path = \"warn\"\n[actions]\nFILE704 = \"deny\"\n",
    );
    assert_eq!(err.key.as_deref(), Some("actions.FILE704"));
    assert_eq!(err.line, Some(6));
}

#[test]
fn a_base_file_is_found_next_to_the_file_and_its_changes_change_the_digest() {
    let temp = tempdir();
    let dir = temp.path().to_owned();
    let base = dir.join("base.toml");
    std::fs::write(
        &base,
        "[policy]\nname = \"base\"\n[imports]\nallow = [\"math\"]\n",
    )
    .unwrap_or_else(|err| panic!("{err}"));
    let child = "extends = \"base.toml\"\n[imports]\nallow = [\"json\"]\n";
    let first = Policy::from_toml(child, Some(&dir)).unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(first.name, "base-extended");
    assert_eq!(decision(&first, "import math, json\n"), Decision::Allow);
    std::fs::write(
        &base,
        "[policy]\nname = \"base\"\n[imports]\nallow = [\"re\"]\n",
    )
    .unwrap_or_else(|err| panic!("{err}"));
    let second = Policy::from_toml(child, Some(&dir)).unwrap_or_else(|err| panic!("{err}"));
    assert_ne!(first.sha256, second.sha256);
    std::fs::write(&base, "extends = \"child.toml\"\n").unwrap_or_else(|err| panic!("{err}"));
    std::fs::write(dir.join("child.toml"), child).unwrap_or_else(|err| panic!("{err}"));
    let err = Policy::from_file(&dir.join("child.toml"))
        .err()
        .unwrap_or_else(|| panic!("a cycle"));
    assert!(err.to_string().contains("cycle"), "{err}");
    std::fs::write(&base, "[policy]\nname = \"base\"\n[imports]\nalow = []\n")
        .unwrap_or_else(|err| panic!("{err}"));
    let err = Policy::from_toml(child, Some(&dir))
        .err()
        .unwrap_or_else(|| panic!("a bad base"));
    assert_eq!(err.key.as_deref(), Some("extends"));
    assert_eq!(err.line, Some(1));
    assert!(
        err.to_string().contains("base.toml") && err.to_string().contains("alow"),
        "{err}"
    );
}

#[test]
fn a_minimal_file_keeps_the_dunder_allowlists_and_says_its_interpreter() {
    let minimal = policy("[policy]\nname = \"minimal\"\n[imports]\nallow = [\"math\"]\n");
    let default = Policy::builtin_default().unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(minimal.allow_dunder, default.allow_dunder);
    assert_eq!(
        minimal.allow_dunder_definitions,
        default.allow_dunder_definitions
    );
    assert_eq!(
        decision(
            &minimal,
            "import math\nif __name__ == \"__main__\":\n    print(math.pi)\n"
        ),
        Decision::Allow
    );
    assert_eq!(
        minimal.interpreter,
        InterpreterSource::Path("/usr/bin/python3".to_owned())
    );
    let empty = policy("[policy]\nname = \"e\"\n[attributes]\nallow_dunder = []\n");
    assert!(empty.allow_dunder.is_empty());
}

#[test]
fn every_error_of_a_file_is_reported_with_its_place() {
    let text = "[policy]\nname = \"bad\"\n[imports]\nalow = [\"x\"]\nallow = [\"os..path\"]\n[limits]\nmemory_mib = \"lots\"\nwall_time_ms = 0\n[actions]\nNOPE1 = \"deny\"\n[jail]\nrequired = [\"magic\", \"seccomp\", \"moon\"]\n";
    let err = error(text);
    let found: Vec<(Option<usize>, Option<usize>, Option<&str>)> = err
        .all()
        .map(|e| (e.line, e.column, e.key.as_deref()))
        .collect();
    assert_eq!(
        found,
        [
            (Some(4), Some(1), Some("imports.alow")),
            (Some(5), Some(10), Some("imports.allow[0]")),
            (Some(7), Some(1), Some("limits.memory_mib")),
            (Some(8), Some(1), Some("limits.wall_time_ms")),
            (Some(10), Some(1), Some("actions.NOPE1")),
            (Some(12), Some(13), Some("jail.required[0]")),
            (Some(12), Some(33), Some("jail.required[2]")),
        ]
    );
    assert_eq!(err.to_string().lines().count(), 7);
}

#[test]
fn a_file_without_extends_still_needs_a_name() {
    let err = error("[imports]\nallow = []\n");
    assert_eq!(err.key.as_deref(), Some("policy.name"));
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap_or_else(|err| panic!("{err}"))
}

#[test]
fn preload_takes_only_imports_the_policy_allows() {
    assert_eq!(
        default_policy().preload,
        ["numpy", "pandas", "matplotlib.pyplot"]
    );
    let minimal = policy("[policy]\nname = \"m\"\n[imports]\nallow = [\"math\"]\n");
    assert!(
        minimal.preload.is_empty(),
        "nothing is preloaded unless asked"
    );
    let ok = policy("extends = \"default\"\n[runtime]\npreload = [\"pandas\", \"scipy.stats\"]\n");
    assert_eq!(ok.preload, ["pandas", "scipy.stats"]);
    for (bad, why) in [
        ("pickle", "denied"),
        ("colorsys", "not in [imports] allow"),
        ("pandas..core", "not a module name"),
    ] {
        let text = format!("extends = \"default\"\n[runtime]\npreload = [\"{bad}\"]\n");
        let err = error(&text).to_string();
        assert!(
            err.contains("runtime.preload") && err.contains(why),
            "{bad}: {err}"
        );
    }
    let err = error("extends = \"default\"\n[runtime]\npreloads = [\"pandas\"]\n").to_string();
    assert!(err.contains("preloads"), "unknown keys stay errors: {err}");
}

/// What a server hands its workers: the same policy, read back without TOML, for the built-in
/// policies and a file that extends one with every section set.
#[test]
fn resolved_rules_read_back_into_the_same_policy() {
    let dir = tempfile::tempdir().unwrap_or_else(|err| panic!("{err}"));
    let base = dir.path().join("base.toml");
    std::fs::write(
        &base,
        "extends = \"default\"\n[imports]\nallow = [\"colorsys\"]\n",
    )
    .unwrap_or_else(|err| panic!("{err}"));
    let own = r#"extends = "base.toml"
[policy]
name = "mine"
description = "every section"
[source]
max_bytes = 50000
[imports]
deny = ["ftplib"]
[references]
deny = ["os.getcwd"]
[files]
read = ["data"]
write = ["out"]
[network]
allow = false
[processes]
allow = true
[actions]
FILE704 = "warn"
[limits]
wall_time_ms = 5000
memory_mib = 256
[runtime]
preload = ["numpy"]
[remove.imports]
allow = ["colorsys"]
"#;
    let texts = [
        (warden_policy::settings::DEFAULT_RULES, None),
        (include_str!("../../rules/strict.toml"), None),
        (own, Some(dir.path())),
    ];
    for (text, base_dir) in texts {
        let expected = Policy::from_toml(text, base_dir).unwrap_or_else(|err| panic!("{err}"));
        let (parsed, json) =
            Policy::from_toml_with_json(text, base_dir).unwrap_or_else(|err| panic!("{err}"));
        let read =
            Policy::from_resolved_json(&json, base_dir).unwrap_or_else(|err| panic!("{err}"));
        assert!(same_values(&parsed, &expected));
        assert!(same_values(&read, &expected), "{read:?}\n{expected:?}");
        assert_eq!(read.sha256, expected.sha256);
        assert_eq!(read.limits, expected.limits);
        for program in [
            "import colorsys\n",
            "import ftplib\n",
            "import os\nos.getcwd()\n",
            "open('data/x.csv').read()\n",
            "open('/etc/passwd').read()\n",
            "import subprocess\nsubprocess.run(['ls'])\n",
            "import pandas as pd\nprint(pd.DataFrame({'a': [1]}).sum())\n",
        ] {
            assert_eq!(
                decision(&read, program),
                decision(&expected, program),
                "{program}"
            );
        }
    }
    // The built-in policy, read from the JSON the build made of it, is the one its text gives.
    let builtin = default_policy();
    let expected = policy(warden_policy::settings::DEFAULT_RULES);
    assert!(same_values(&builtin, &expected));
    assert_eq!(builtin.sha256, expected.sha256);
    // Invalid text is refused as `from_toml` refuses it; broken JSON is an error, never a panic.
    assert!(Policy::from_toml_with_json("[imports]\nallow = 3\n", None).is_err());
    assert!(Policy::from_resolved_json("{\"sha256\": \"x\"}", None).is_err());
    assert!(Policy::from_resolved_json("not json", None).is_err());
}

/// Whether two policies hold the same values: their debug forms as multisets of characters (the
/// policy's hash maps list their entries in no fixed order).
fn same_values(a: &Policy, b: &Policy) -> bool {
    let chars = |policy: &Policy| {
        let mut chars: Vec<char> = format!("{policy:?}").chars().collect();
        chars.sort_unstable();
        chars
    };
    chars(a) == chars(b)
}

/// Issue 26 allowed files and archives in the default policy; the strict policy (its own file, no
/// `extends`) still denies every one of them, and the default still denies what has no sink.
#[test]
fn strict_still_denies_the_files_and_archives_the_default_allows() {
    let strict = policy(include_str!("../../rules/strict.toml"));
    let default = default_policy();
    for module in [
        "shutil",
        "tarfile",
        "zipfile",
        "tempfile",
        "shlex",
        "errno",
        "mimetypes",
    ] {
        let program = format!("import {module}\n");
        assert_eq!(decision(&strict, &program), Decision::Deny, "{module}");
        assert_eq!(decision(&default, &program), Decision::Allow, "{module}");
    }
    for program in [
        "import os\nprint(os.environ)\n",
        "import os\nos.getenv('HOME')\n",
        "import zipfile\nzipfile.PyZipFile('x.zip', 'w')\n",
        "import shutil\nshutil.os.system('id')\n",
    ] {
        assert_eq!(decision(&default, program), Decision::Deny, "{program}");
    }
}
