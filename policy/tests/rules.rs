//! Every rule proves itself on its fixture: `fixtures/<RULE>.py` marks the lines that must produce a
//! finding (`# expect: RULE`), and every other line must produce none.

use std::path::Path;

use warden_policy::{fixtures, Policy, Rule};

fn default_policy() -> Policy {
    Policy::builtin_default().unwrap_or_else(|err| panic!("default policy: {err}"))
}

#[test]
fn every_rule_has_a_fixture_that_passes() {
    let policy = default_policy();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut failures = Vec::new();
    for rule in Rule::ALL {
        let path = dir.join(format!("{}.py", rule.id()));
        let bytes = std::fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            text.contains(&format!("expect: {}", rule.id()))
                || text.contains(&format!(" {}", rule.id())),
            "{} never expects its own rule",
            path.display()
        );
        for problem in fixtures::run_fixture(&bytes, &policy) {
            failures.push(format!("{}: {problem}", path.display()));
        }
    }
    assert!(
        failures.is_empty(),
        "fixture mismatches:\n{}",
        failures.join("\n")
    );
}

/// STR601/STR602 on model formulas and sympy strings (issue 12): the fixture beside the rules' own.
#[test]
fn formula_and_sympy_string_fixture_passes() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/STR601-formulas.py");
    let bytes = std::fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    let problems = fixtures::run_fixture(&bytes, &default_policy());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// DYN405 follows names through their assignments within a budget: a web of self-referencing
/// concatenations is judged quickly, and a string too tangled to follow counts as computed.
#[test]
fn computed_code_string_webs_are_cheap_and_fail_closed() {
    let mut source = String::from("import pandas as pd\ndf = pd.DataFrame({'a': [1]})\ns = 'a'\n");
    for _ in 0..2000 {
        source.push_str("s = s + s\n");
    }
    source.push_str("df.query(s)\n");
    let started = std::time::Instant::now();
    let report = warden_policy::check_on_worker(source.as_bytes(), &default_policy());
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    let line = source.lines().count();
    assert!(
        report
            .findings
            .iter()
            .any(|f| f.rule == Rule::ComputedCodeString && f.span.line == line),
        "{:?}",
        report.findings
    );
}

/// What DYN405 reports is denied by the default policy, and a literal string in the same place is not
/// reported at all.
#[test]
fn computed_code_strings_deny_and_literals_do_not() {
    let policy = default_policy();
    let computed = b"import pandas as pd\ndf = pd.DataFrame({'a': [1]})\ncol = df.columns[0]\ndf.query(f'{col} > 0')\n";
    let report = warden_policy::check_on_worker(computed, &policy);
    assert_eq!(
        report.decision,
        warden_policy::Decision::Deny,
        "{:?}",
        report.findings
    );
    assert!(report
        .findings
        .iter()
        .any(|f| f.rule == Rule::ComputedCodeString));
    let literal = b"import pandas as pd\ndf = pd.DataFrame({'a': [1]})\ndf.query('a > 0')\n";
    let report = warden_policy::check_on_worker(literal, &policy);
    assert_eq!(
        report.decision,
        warden_policy::Decision::Allow,
        "{:?}",
        report.findings
    );
}
