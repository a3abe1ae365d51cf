//! Import rules: what the program may import, and what it reaches through imported modules.

pub(crate) mod import_not_allowed;
pub(crate) mod reexported_module;
pub(crate) mod relative_import;
pub(crate) mod star_import;

use crate::checker::Checker;
use crate::parse::ast;
use crate::semantic::{Origin, QualName};
use ruff_text_size::Ranged;

/// `import a.b.c [as d]`.
pub(crate) fn check_import(checker: &mut Checker<'_>, import: &ast::StmtImport) {
    for alias in &import.names {
        let path = alias.name.id.as_str();
        import_not_allowed::check_module(checker, path, alias.range());
        let name = QualName {
            path: path.to_owned(),
            origin: Origin::Import,
        };
        checker_reference_of_import(checker, &name, alias);
    }
}

/// `from m import a [as b]`, `from . import a`, `from m import *`.
pub(crate) fn check_import_from(checker: &mut Checker<'_>, import: &ast::StmtImportFrom) {
    if import.level > 0 {
        relative_import::report(checker, import);
        return;
    }
    let Some(module) = &import.module else { return };
    let module = module.id.as_str();
    for alias in &import.names {
        let member = alias.name.id.as_str();
        if member == "*" {
            star_import::report(checker, module, alias.range());
            import_not_allowed::check_module(checker, module, alias.range());
            continue;
        }
        let full = format!("{module}.{member}");
        import_not_allowed::check_member(checker, module, member, alias.range());
        let name = QualName {
            path: full,
            origin: Origin::Import,
        };
        checker_reference_of_import(checker, &name, alias);
    }
}

/// The imported name is also a reference: `from pandas import read_pickle` is as banned as its use.
fn checker_reference_of_import(checker: &mut Checker<'_>, name: &QualName, alias: &ast::Alias) {
    let range = alias.range();
    crate::rules::attributes::dunder_attribute::check_reference(checker, name, range);
    reexported_module::check_reference(checker, name, range);
    crate::rules::attributes::private_attribute::check_reference(checker, name, range);
    crate::rules::references::banned_reference::check(checker, name, range);
    crate::rules::dynamic::dynamic_code::check(checker, name, range);
    crate::rules::dynamic::dynamic_import::check(checker, name, range);
    crate::rules::dynamic::reflection::check(checker, name, range);
    crate::rules::strings::string_sink::check_reference(checker, name, range);
}

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
