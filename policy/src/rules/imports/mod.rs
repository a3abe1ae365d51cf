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

/// The list of allowed modules is long: a report gives it once, in its first finding that has it,
/// and the later ones point there.
pub(crate) fn shorten_repeated_hints(findings: &mut [crate::finding::Finding]) {
    let mut listed = false;
    for finding in findings {
        if finding.hint.starts_with(ALLOWED_HINT_PREFIX) {
            if listed {
                finding.hint = "use only allowed modules (the first IMP101 finding of this report lists them; so does `GET /v1/policies`)".to_owned();
            }
            listed = true;
        }
    }
}
