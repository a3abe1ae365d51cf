//! Names reach the rules in two ways — bound by an import and used in code — and both must reach the
//! same rules. A rule that judges qualified names but is consulted on one way only lets
//! `from pandas import read_pickle` through while catching `pd.read_pickle`, or the reverse.

use std::collections::BTreeSet;

use super::{ReferenceKind, REFERENCE_RULES};
use crate::rules::Rule;
use crate::Policy;

/// Reference rules deliberately not consulted for names bound by imports, and why. Every other rule
/// in `REFERENCE_RULES` must judge imports too.
const NOT_AT_IMPORTS: &[(Rule, &str)] = &[
    (
        Rule::ImportNotAllowed,
        "the import statement itself is judged by `import_not_allowed::check_module`/`check_member`",
    ),
    (
        Rule::ComputedAttribute,
        "binding `getattr` by an import is not a use as a value; each later use is judged",
    ),
];

/// Rules that judge syntax nodes, strings or paths, never a qualified name. Every rule is either here or
/// in `CASES`, so a new rule has to say which it is.
const NOT_REFERENCE_RULES: &[Rule] = &[
    Rule::SyntaxError,
    Rule::UnsupportedSyntax,
    Rule::SourceEncoding,
    Rule::SourceLimits,
    Rule::StarImport,
    Rule::RelativeImport,
    Rule::BannedMethod,
    Rule::FrameAttribute,
    Rule::ClassHook,
    Rule::ComputedCodeString,
    Rule::ModuleNamedAttribute,
    Rule::DynamicStringSink,
    Rule::PathNotReadable,
    Rule::PathNotWritable,
    Rule::UrlAccess,
    Rule::DynamicPath,
];

/// For every reference rule, a name `module.member` it reports under the default policy: reached as
/// `from module import member` and as `module.member` after `import module`.
const CASES: &[(Rule, &str, &str)] = &[
    (Rule::DunderAttribute, "pandas", "__dict__"),
    (Rule::ImportNotAllowed, "os", "system"),
    (Rule::ReexportedModule, "pandas.io.stata", "os"),
    (Rule::PrivateAttribute, "numpy", "_core"),
    (Rule::BannedReference, "pandas", "read_pickle"),
    (Rule::DynamicCode, "builtins", "exec"),
    (Rule::DynamicImport, "importlib", "import_module"),
    (Rule::Reflection, "builtins", "globals"),
    (Rule::ComputedAttribute, "operator", "attrgetter"),
    (Rule::StringSink, "pandas", "eval"),
];

fn consulted(kinds: &[ReferenceKind]) -> BTreeSet<Rule> {
    REFERENCE_RULES
        .iter()
        .filter(|entry| kinds.iter().any(|kind| entry.kinds.contains(kind)))
        .map(|entry| entry.rule)
        .collect()
}

fn exempt_at_imports() -> BTreeSet<Rule> {
    NOT_AT_IMPORTS.iter().map(|(rule, _)| *rule).collect()
}

/// True when checking `program` reports `rule` on exactly the text `at`.
fn reports(policy: &Policy, program: &str, rule: Rule, at: &str) -> bool {
    crate::check(program.as_bytes(), policy)
        .findings
        .iter()
        .any(|f| f.rule == rule && program.get(f.span.start_byte..f.span.end_byte) == Some(at))
}

#[test]
fn imports_and_uses_consult_the_same_reference_rules() {
    let at_imports = consulted(&[ReferenceKind::Import]);
    let in_code = consulted(&[ReferenceKind::Call, ReferenceKind::Value]);
    let exempt = exempt_at_imports();
    let expected: BTreeSet<Rule> = in_code.difference(&exempt).copied().collect();
    assert_eq!(
        at_imports, expected,
        "reference rules consulted for imported names differ from those consulted for names used in \
         code; a rule judged on one way only must be listed in NOT_AT_IMPORTS with its reason"
    );
    for rule in &exempt {
        assert!(
            in_code.contains(rule) && !at_imports.contains(rule),
            "{rule} is listed in NOT_AT_IMPORTS but is not a reference rule skipped at imports"
        );
    }
}

#[test]
fn every_rule_is_classified_and_every_reference_rule_has_a_case() {
    let table: Vec<Rule> = REFERENCE_RULES.iter().map(|entry| entry.rule).collect();
    let unique: BTreeSet<Rule> = table.iter().copied().collect();
    assert_eq!(
        unique.len(),
        table.len(),
        "a rule is listed twice in REFERENCE_RULES"
    );
    let cases: BTreeSet<Rule> = CASES.iter().map(|(rule, _, _)| *rule).collect();
    assert_eq!(
        cases, unique,
        "every rule in REFERENCE_RULES needs a case, and a rule with a case must be called from \
         REFERENCE_RULES, not from one path directly"
    );
    for rule in Rule::ALL {
        assert!(
            cases.contains(rule) != NOT_REFERENCE_RULES.contains(rule),
            "{rule} must be either a reference rule with a case in CASES or listed in \
             NOT_REFERENCE_RULES"
        );
    }
}

#[test]
fn every_reference_rule_reports_a_name_both_imported_and_used() {
    let policy = Policy::builtin_default().unwrap_or_else(|err| panic!("default policy: {err}"));
    let exempt = exempt_at_imports();
    let mut failures = Vec::new();
    for &(rule, module, member) in CASES {
        let used = format!("import {module}\n{module}.{member}\n");
        if !reports(&policy, &used, rule, &format!("{module}.{member}")) {
            failures.push(format!(
                "{rule}: not reported for the use `{module}.{member}`"
            ));
        }
        let imported = format!("from {module} import {member}\n");
        let reported = reports(&policy, &imported, rule, member);
        // Exempt rules are not consulted at imports; IMP101 still reports the statement itself.
        if !reported && !exempt.contains(&rule) {
            failures.push(format!(
                "{rule}: not reported for the import `from {module} import {member}`"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A second path to a banned object, found by `warden runtime check` (the identity index), is judged
/// as the banned object in every position, and the finding says which object it is; without the
/// index the same program is allowed (the path's name says nothing).
#[test]
fn a_second_path_to_a_banned_object_is_judged_as_that_object() {
    let mut policy =
        Policy::builtin_default().unwrap_or_else(|err| panic!("default policy: {err}"));
    let programs = [
        "import seaborn.utils as su\nsu.urlopen('http://127.0.0.1:5758/')\n",
        "from seaborn.utils import urlopen\n",
        "import mpmath.libmp.backend\nf = mpmath.libmp.backend.exec_\n",
        "import jinja2.sandbox\nenv = jinja2.sandbox.Environment()\n",
    ];
    for program in programs {
        let report = crate::check(program.as_bytes(), &policy);
        assert_eq!(
            report.decision,
            crate::Decision::Allow,
            "without an index: {program}\n{:?}",
            report.findings
        );
    }
    policy.aliases = std::sync::Arc::new(crate::names::Aliases::new([
        (
            "seaborn.utils.urlopen".to_owned(),
            "urllib.request.urlopen".to_owned(),
        ),
        (
            "mpmath.libmp.backend.exec_".to_owned(),
            "builtins.exec".to_owned(),
        ),
        (
            "jinja2.sandbox.Environment".to_owned(),
            "jinja2.Environment".to_owned(),
        ),
    ]));
    let expected = [
        (Rule::ImportNotAllowed, "urllib.request.urlopen"),
        (Rule::ImportNotAllowed, "urllib.request.urlopen"),
        (Rule::DynamicCode, "builtins.exec"),
        (Rule::BannedReference, "jinja2.Environment"),
    ];
    for (program, (rule, banned)) in programs.iter().zip(expected) {
        let report = crate::check(program.as_bytes(), &policy);
        assert_eq!(report.decision, crate::Decision::Deny, "{program}");
        assert!(
            report
                .findings
                .iter()
                .any(|f| f.rule == rule && f.message.contains(&format!("is `{banned}`"))),
            "{program}: no {rule} naming `{banned}`: {:?}",
            report.findings
        );
    }
}
