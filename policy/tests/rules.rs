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
