//! The default policy against real code: warden's own corpus, smolagents' escapes, DS-1000 and
//! HumanEval. Attacks must be denied (unless their header says the static layer cannot see them),
//! benign code must be allowed. Exceptions are listed here with the reason each is a real danger.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use warden_policy::{Decision, Policy, Report};

fn policy() -> Policy {
    Policy::builtin_default().unwrap_or_else(|err| panic!("default policy: {err}"))
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn shared_corpora() -> PathBuf {
    repo().join("../shared/corpora")
}

fn check(path: &Path, policy: &Policy) -> Report {
    let bytes = std::fs::read(path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    warden_policy::check_on_worker(&bytes, policy)
}

fn python_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|err| panic!("{}: {err}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .collect();
    files.sort();
    files
}

/// `# key: value` header lines at the top of a corpus case.
fn header(path: &Path) -> BTreeMap<String, String> {
    let bytes = std::fs::read(path).unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes);
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix('#') else {
            break;
        };
        if let Some((key, value)) = rest.split_once(':') {
            out.entry(key.trim().to_owned())
                .or_insert_with(|| value.trim().to_owned());
        }
    }
    out
}

fn decision_name(decision: Decision) -> &'static str {
    decision.as_str()
}

fn summary(report: &Report) -> String {
    report
        .findings
        .iter()
        .map(|f| format!("{}:{} {}", f.rule.id(), f.span.line, f.message))
        .collect::<Vec<_>>()
        .join("; ")
}

#[test]
fn corpus_attacks_get_their_expected_static_verdict_and_rules() {
    let policy = policy();
    let mut files = python_files(&repo().join("corpus/attacks"));
    assert!(files.len() >= 100, "only {} attack cases", files.len());
    // The runtime layer's cases carry the same static expectations.
    for dir in ["runtime2", "runtime3"] {
        files.extend(python_files(&repo().join("corpus/attacks").join(dir)));
    }
    let mut failures = Vec::new();
    for path in &files {
        let head = header(path);
        // Without the identity index (`warden runtime check`) the policy judges names alone:
        // `expect-static-names` is that verdict when it differs (corpus/README.md).
        let names_only = head.get("expect-static-names");
        let expected = names_only
            .or(head.get("expect-static"))
            .map(String::as_str)
            .unwrap_or("deny");
        let report = check(path, &policy);
        if decision_name(report.decision) != expected {
            failures.push(format!(
                "{}: expected {expected}, got {} [{}]",
                path.display(),
                report.decision.as_str(),
                summary(&report)
            ));
            continue;
        }
        if let Some(rules) = head.get("expect-rules").filter(|_| names_only.is_none()) {
            let wanted: Vec<&str> = rules
                .split([' ', ','])
                .filter(|r| !r.is_empty() && *r != "none")
                .collect();
            let found = wanted
                .iter()
                .any(|id| report.findings.iter().any(|f| f.rule.id() == *id));
            if !wanted.is_empty() && !found {
                failures.push(format!(
                    "{}: none of {wanted:?} reported [{}]",
                    path.display(),
                    summary(&report)
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn corpus_benign_cases_are_allowed() {
    let policy = policy();
    let files = python_files(&repo().join("corpus/benign"));
    assert!(files.len() >= 100, "only {} benign cases", files.len());
    let failures: Vec<String> = files
        .iter()
        .filter_map(|path| {
            let report = check(path, &policy);
            (report.decision != Decision::Allow)
                .then(|| format!("{}: {}", path.display(), summary(&report)))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "benign cases not allowed:\n{}",
        failures.join("\n")
    );
}

/// The smolagents escape and probe cases are denied; its ordinary cases are allowed.
#[test]
fn smolagents_escapes_are_denied_and_ordinary_code_allowed() {
    let policy = policy();
    let dir = shared_corpora().join("smolagents_escapes");
    let index = std::fs::read_to_string(dir.join("index.jsonl"))
        .unwrap_or_else(|err| panic!("index: {err}"));
    let mut failures = Vec::new();
    let mut count = 0;
    for line in index.lines().filter(|l| !l.trim().is_empty()) {
        let row: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|err| panic!("{err}"));
        let file = row["file"].as_str().unwrap_or_default();
        let tier = row["tier"].as_str().unwrap_or_default();
        let report = check(&dir.join(file), &policy);
        let expected = if tier == "ordinary" {
            Decision::Allow
        } else {
            Decision::Deny
        };
        count += 1;
        if report.decision != expected {
            failures.push(format!(
                "{file} ({tier}): got {} [{}]",
                report.decision.as_str(),
                summary(&report)
            ));
        }
    }
    assert_eq!(count, 46);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// DS-1000 programs that the default policy denies, each for a real danger (not convenience).
const DS1000_DENIED: &[(&str, &str)] = &[
    (
        "ds1000_0088.py",
        "eval() of DataFrame cell contents: code from data",
    ),
    (
        "ds1000_0104.py",
        "eval() of DataFrame cell contents: code from data",
    ),
    (
        "ds1000_0819.py",
        "sklearn.datasets.fetch_california_housing downloads from the network",
    ),
    ("ds1000_0930.py", "pickle: deserialisation runs code"),
    (
        "ds1000_0993.py",
        "torch.load unpickles: deserialisation runs code",
    ),
];

/// Packages DS-1000 uses that the default runtime does not ship, so the default policy does not allow
/// them ("allowed means importable", issue 12): a program denied only for importing one of these is a
/// runtime decision, not a false denial.
const NOT_IN_THE_DEFAULT_RUNTIME: &[&str] = &["torch", "tensorflow", "gensim"];

/// True when every denying finding is IMP101 on a module of [`NOT_IN_THE_DEFAULT_RUNTIME`].
fn denied_only_for_packages_the_runtime_lacks(report: &Report) -> bool {
    let denying: Vec<_> = report
        .findings
        .iter()
        .filter(|f| f.action == warden_policy::Action::Deny)
        .collect();
    !denying.is_empty()
        && denying.iter().all(|f| {
            f.rule == warden_policy::Rule::ImportNotAllowed
                && NOT_IN_THE_DEFAULT_RUNTIME
                    .iter()
                    .any(|package| f.message.contains(&format!("`{package}")))
        })
}

#[test]
fn ds1000_programs_are_allowed_except_documented_dangers() {
    let policy = policy();
    let files = python_files(&shared_corpora().join("ds1000/programs"));
    assert_eq!(files.len(), 1000);
    let mut failures = Vec::new();
    for path in &files {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let report = check(path, &policy);
        if denied_only_for_packages_the_runtime_lacks(&report) {
            continue;
        }
        let expected = if DS1000_DENIED.iter().any(|(file, _)| *file == name) {
            Decision::Deny
        } else {
            Decision::Allow
        };
        if report.decision != expected {
            failures.push(format!(
                "{name}: got {} [{}]",
                report.decision.as_str(),
                summary(&report)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn humaneval_cases_are_allowed_except_eval() {
    let policy = policy();
    let files = python_files(&shared_corpora().join("humaneval/cases"));
    assert_eq!(files.len(), 164);
    let mut failures = Vec::new();
    for path in &files {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let report = check(path, &policy);
        // HumanEval/160 builds an expression string and eval()s it: code from data.
        let expected = if name == "humaneval_160.py" {
            Decision::Deny
        } else {
            Decision::Allow
        };
        if report.decision != expected {
            failures.push(format!(
                "{name}: got {} [{}]",
                report.decision.as_str(),
                summary(&report)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
