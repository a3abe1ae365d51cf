//! `warden check --format sarif`: the log satisfies the OASIS SARIF 2.1.0 JSON Schema (fetched by
//! scripts/sarif-schema.sh, not kept in the repository) and the rules the schema cannot express,
//! fingerprints survive edits elsewhere in the file, and documentation links name files of this
//! repository.

use std::path::PathBuf;

use serde_json::Value;
use warden_policy::render::sarif::{self, FINGERPRINT};
use warden_policy::{Policy, Rule};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(PathBuf::from)
        .unwrap_or_default()
}

fn log_of(programs: &[(&str, &str)]) -> Value {
    let policy = Policy::builtin_default().unwrap_or_else(|err| panic!("{err}"));
    let reports: Vec<(String, warden_policy::Report)> = programs
        .iter()
        .map(|(path, text)| {
            let report = warden_policy::check(text.as_bytes(), &policy);
            ((*path).to_owned(), report)
        })
        .collect();
    serde_json::from_str(&sarif::render(&reports)).unwrap_or_else(|err| panic!("{err}"))
}

fn results(log: &Value) -> &Vec<Value> {
    log["runs"][0]["results"]
        .as_array()
        .unwrap_or_else(|| panic!("no results: {log:#}"))
}

/// (rule id, start line, fingerprint) of each result.
fn fingerprints(log: &Value) -> Vec<(String, u64, String)> {
    results(log)
        .iter()
        .map(|result| {
            let print = result["partialFingerprints"][FINGERPRINT]
                .as_str()
                .unwrap_or_else(|| panic!("no fingerprint: {result:#}"));
            (
                result["ruleId"].as_str().unwrap_or_default().to_owned(),
                result["locations"][0]["physicalLocation"]["region"]["startLine"]
                    .as_u64()
                    .unwrap_or_default(),
                print.to_owned(),
            )
        })
        .collect()
}

/// The OASIS schema, from scripts/sarif-schema.sh (which fetches it the first time).
fn oasis_schema() -> Value {
    let output = std::process::Command::new(repo().join("scripts/sarif-schema.sh"))
        .output()
        .unwrap_or_else(|err| panic!("scripts/sarif-schema.sh: {err}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let path = stdout.lines().last().unwrap_or_default();
    assert!(
        output.status.success() && !path.is_empty(),
        "scripts/sarif-schema.sh could not provide the SARIF schema: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|err| panic!("{path}: {err}"));
    serde_json::from_str(&text).unwrap_or_else(|err| panic!("{path}: {err}"))
}

#[test]
fn the_log_satisfies_the_oasis_sarif_schema() {
    let schema = oasis_schema();
    let validator = jsonschema::validator_for(&schema).unwrap_or_else(|err| panic!("{err}"));
    let log = log_of(&[
        ("a.py", PROGRAM),
        ("b.py", "print(1)\n"),
        ("c.py", "def f(:\n"),
        ("d.py", "\tx = f.__globals__  # a tab and w\u{ee}de text\n"),
    ]);
    let errors: Vec<String> = validator
        .iter_errors(&log)
        .map(|err| format!("{}: {err}", err.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    // The schema is strict enough to matter: a result without a message is refused.
    let mut broken = log.clone();
    if let Some(result) = broken["runs"][0]["results"][0].as_object_mut() {
        result.remove("message");
    }
    assert!(!validator.is_valid(&broken));
}

const PROGRAM: &str = "import socket\nx = f.__globals__\ny = f.__globals__\nexec('1')\n";

#[test]
fn the_log_has_the_structure_sarif_2_1_0_requires() {
    let log = log_of(&[("./a.py", PROGRAM), ("b.py", "print(1)\n")]);
    assert_eq!(log["version"], "2.1.0");
    let runs = log["runs"].as_array().unwrap_or_else(|| panic!("{log:#}"));
    assert_eq!(runs.len(), 1);
    let driver = &runs[0]["tool"]["driver"];
    assert_eq!(driver["name"], "warden");
    let rules = driver["rules"]
        .as_array()
        .unwrap_or_else(|| panic!("{log:#}"));
    assert_eq!(rules.len(), Rule::ALL.len());
    for rule in rules {
        assert!(rule["id"].is_string(), "{rule:#}");
        assert!(rule["shortDescription"]["text"].is_string(), "{rule:#}");
        assert!(rule["helpUri"].is_string(), "{rule:#}");
    }
    let results = results(&log);
    assert!(results.len() >= 4, "{log:#}");
    for result in results {
        let index = result["ruleIndex"].as_u64().unwrap_or(u64::MAX) as usize;
        assert_eq!(rules[index]["id"], result["ruleId"], "{result:#}");
        assert!(
            ["error", "warning", "note"].contains(&result["level"].as_str().unwrap_or("")),
            "{result:#}"
        );
        assert!(result["message"]["text"].is_string(), "{result:#}");
        let location = &result["locations"][0]["physicalLocation"];
        assert_eq!(location["artifactLocation"]["uri"], "a.py");
        let region = &location["region"];
        for key in ["startLine", "startColumn", "endLine", "endColumn"] {
            assert!(region[key].as_u64().unwrap_or(0) >= 1, "{key}: {result:#}");
        }
        let fingerprints = result["partialFingerprints"]
            .as_object()
            .unwrap_or_else(|| panic!("{result:#}"));
        assert!(fingerprints.values().all(Value::is_string), "{result:#}");
    }
}

#[test]
fn fingerprints_survive_lines_added_above_and_reindentation() {
    let before = fingerprints(&log_of(&[("a.py", PROGRAM)]));
    let edited = format!("# a comment\n\n{}", PROGRAM.replace("y = ", "y  =  "));
    let after = fingerprints(&log_of(&[("a.py", &edited)]));
    assert_eq!(before.len(), after.len());
    for (old, new) in before.iter().zip(&after) {
        assert_eq!(old.0, new.0);
        assert_eq!(old.1 + 2, new.1, "the finding moved two lines down");
        assert_eq!(old.2, new.2, "{old:?} -> {new:?}");
    }
}

#[test]
fn fingerprints_tell_findings_apart() {
    let prints = fingerprints(&log_of(&[(
        "a.py",
        "x = f.__globals__\nx = f.__globals__\nz = f.__globals__\n",
    )]));
    assert_eq!(prints.len(), 3, "{prints:?}");
    // The same rule on two identical lines, and on a different line: three fingerprints.
    assert_ne!(prints[0].2, prints[1].2);
    assert_ne!(prints[0].2, prints[2].2);
    assert_ne!(prints[1].2, prints[2].2);
    // The same line in another run: the same fingerprint.
    let again = fingerprints(&log_of(&[("a.py", "x = f.__globals__\n")]));
    assert_eq!(again[0].2, prints[0].2);
    // Two rules on one line: two fingerprints.
    let two = fingerprints(&log_of(&[("a.py", "exec(f.__globals__)\n")]));
    assert_eq!(two.len(), 2, "{two:?}");
    assert_ne!(two[0].0, two[1].0);
    assert_ne!(two[0].2, two[1].2);
}

#[test]
fn documentation_links_name_files_of_this_repository() {
    let workspace = std::fs::read_to_string(repo().join("Cargo.toml")).unwrap_or_default();
    let repository = workspace
        .lines()
        .find_map(|line| line.strip_prefix("repository = "))
        .map(|value| value.trim_matches('"').to_owned())
        .unwrap_or_else(|| panic!("no repository in Cargo.toml"));
    let log = log_of(&[("a.py", PROGRAM)]);
    let driver = &log["runs"][0]["tool"]["driver"];
    let mut uris = vec![driver["informationUri"].as_str().unwrap_or("").to_owned()];
    for rule in driver["rules"].as_array().unwrap_or(&Vec::new()) {
        uris.push(rule["helpUri"].as_str().unwrap_or("").to_owned());
    }
    let prefix = format!("{repository}/blob/main/");
    for uri in uris {
        let path = uri
            .strip_prefix(&prefix)
            .unwrap_or_else(|| panic!("{uri} is not under {prefix}"));
        assert!(repo().join(path).is_file(), "{uri}: {path} does not exist");
    }
    assert_eq!(
        driver["informationUri"],
        format!("{prefix}{}", sarif::TOOL_DOC)
    );
    let doc = std::fs::read_to_string(repo().join(sarif::rule_doc_path(Rule::DunderAttribute)))
        .unwrap_or_default();
    assert!(
        doc.contains("What it does"),
        "the rule's file holds its DOC"
    );
}
