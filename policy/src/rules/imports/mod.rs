//! Import rules: what the program may import, and what it reaches through imported modules.
//!
//! The checker calls them at import statements (`Checker::import`, `Checker::import_from`) and, for
//! the names those statements bind and every name used in code, through its one table of reference
//! rules (`checker::REFERENCE_RULES`).

pub(crate) mod import_not_allowed;
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
    format!("use only allowed modules: {}", list.join(", "))
}
