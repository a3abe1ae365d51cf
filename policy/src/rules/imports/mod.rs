//! Import rules: what the program may import, and what it reaches through imported modules.
//!
//! The checker calls them at import statements (`Checker::import`, `Checker::import_from`) and, for
//! the names those statements bind and every name used in code, through its one table of reference
//! rules (`checker::REFERENCE_RULES`).

pub(crate) mod import_not_allowed;
pub(crate) mod module_named_attribute;
pub(crate) mod reexported_module;
pub(crate) mod relative_import;
pub(crate) mod star_import;

use crate::checker::Checker;

/// The hint listing what may be imported.
pub(crate) fn allowed_hint(checker: &Checker<'_>) -> String {
    let allowed = checker.policy.imports.allowed_list();
    // `numpy` and `numpy.*` show as `numpy`; an allowed submodule alone shows in full (`os.path`).
    let shown: std::collections::BTreeSet<&str> = allowed
        .iter()
        .map(|pattern| pattern.strip_suffix(".*").unwrap_or(pattern))
        .filter(|pattern| {
            !pattern.contains('.')
                || !allowed
                    .iter()
                    .any(|a| pattern.starts_with(&format!("{a}.")))
        })
        .collect();
    let list: Vec<&str> = shown.into_iter().collect();
    format!("{ALLOWED_HINT_PREFIX}{}", list.join(", "))
}

const ALLOWED_HINT_PREFIX: &str = "use only allowed modules: ";

/// Hints longer than this are given once per report.
const LONG_HINT: usize = 80;

/// The lists in IMP101's hints are long (the allowed modules; a module's allowed members): a report
/// gives each once, in the first finding that has it, and the later ones point there.
pub(crate) fn shorten_repeated_hints(findings: &mut [crate::finding::Finding]) {
    let mut given: Vec<(String, usize)> = Vec::new();
    for finding in findings {
        if finding.rule != crate::rules::Rule::ImportNotAllowed || finding.hint.len() <= LONG_HINT {
            continue;
        }
        match given.iter().find(|(hint, _)| *hint == finding.hint) {
            Some((hint, line)) => {
                finding.hint = if hint.starts_with(ALLOWED_HINT_PREFIX) {
                    format!("use only allowed modules: the IMP101 finding at line {line} lists them (so does `GET /v1/policies`)")
                } else {
                    format!("as for the IMP101 finding at line {line}")
                };
            }
            None => given.push((finding.hint.clone(), finding.span.line)),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{Policy, Rule};

    #[test]
    fn a_report_lists_the_allowed_modules_once() {
        let policy = Policy::builtin_default().unwrap_or_else(|err| panic!("{err}"));
        let program = "import requests\nimport subprocess\nimport socket\nimport sys\nsys.path\nsys.modules\n";
        let report = crate::check(program.as_bytes(), &policy);
        let hints: Vec<&str> = report
            .findings
            .iter()
            .filter(|f| f.rule == Rule::ImportNotAllowed)
            .map(|f| f.hint.as_str())
            .collect();
        assert_eq!(hints.len(), 5, "{hints:?}");
        assert_eq!(hints.iter().filter(|h| h.contains("pandas")).count(), 1);
        assert!(hints[1].contains("line 1") && hints[2].contains("line 1"));
        assert!(hints[3].contains("argv") && hints[4].contains("line 5"));
    }
}
