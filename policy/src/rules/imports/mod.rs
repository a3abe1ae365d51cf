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

/// The hint listing what may be imported instead of `module`: the allowed modules (a pattern the
/// policy also denies is not one: a deny wins), and of a long list only the closest to `module`.
pub(crate) fn allowed_hint(checker: &Checker<'_>, module: &str) -> String {
    let imports = &checker.policy.imports;
    let allowed = imports.allowed_list();
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
        .filter(|pattern| {
            let segments: Vec<&str> = pattern.split('.').collect();
            imports.verdict(&segments) != crate::settings::ModuleVerdict::Denied
        })
        .collect();
    let list: Vec<&str> = shown.into_iter().collect();
    if list.is_empty() {
        return "this policy allows no imports: use the builtins".to_owned();
    }
    if list.len() <= LONG_LIST {
        return format!("{ALLOWED_HINT_PREFIX}{}", list.join(", "));
    }
    let total = list.len();
    let closest = closest(module, list, CLOSEST);
    format!(
        "{ALLOWED_HINT_PREFIX}{}, … (the {CLOSEST} closest to `{module}` of {total}; `GET /v1/policies` and the rules file list them all)",
        closest.join(", ")
    )
}

/// Allowlists longer than this are cut to the closest matches in hints.
const LONG_LIST: usize = 16;
/// How many allowed modules a cut hint names.
const CLOSEST: usize = 8;

/// The `count` entries of `candidates` closest to `wanted` (its top-level name and the whole path):
/// one containing the other first, then by edit distance, then by name.
fn closest<'a>(wanted: &str, candidates: Vec<&'a str>, count: usize) -> Vec<&'a str> {
    let wanted = wanted.to_ascii_lowercase();
    let root = wanted.split('.').next().unwrap_or_default().to_owned();
    let mut scored: Vec<(usize, &str)> = candidates
        .into_iter()
        .map(|candidate| {
            let lower = candidate.to_ascii_lowercase();
            let contains = !lower.is_empty()
                && (lower.contains(root.as_str()) || (lower.len() > 1 && root.contains(&lower)));
            let distance = edit_distance(&root, &lower).min(edit_distance(&wanted, &lower));
            (if contains { 0 } else { 1 + distance }, candidate)
        })
        .collect();
    scored.sort();
    scored.truncate(count);
    scored.into_iter().map(|(_, name)| name).collect()
}

/// Levenshtein distance over bytes (module names are ASCII).
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, &x) in a.iter().enumerate() {
        let mut current = vec![i + 1; b.len() + 1];
        for (j, &y) in b.iter().enumerate() {
            current[j + 1] = (previous[j] + usize::from(x != y))
                .min(previous[j + 1] + 1)
                .min(current[j] + 1);
        }
        previous = current;
    }
    previous[b.len()]
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

    /// Issue 26: a long allowlist is cut to the modules closest to the one denied (each denied module
    /// gets its own), and a long list of members is still given once per report.
    #[test]
    fn hints_name_the_closest_allowed_modules_and_members_once() {
        let policy = Policy::builtin_default().unwrap_or_else(|err| panic!("{err}"));
        let program = "import requests\nimport subprocess\nimport socket\nimport sys\nsys.path\nsys.modules\nimport pandass\n";
        let report = crate::check(program.as_bytes(), &policy);
        let hints: Vec<&str> = report
            .findings
            .iter()
            .filter(|f| f.rule == Rule::ImportNotAllowed)
            .map(|f| f.hint.as_str())
            .collect();
        assert_eq!(hints.len(), 6, "{hints:?}");
        for hint in [hints[0], hints[1], hints[2], hints[5]] {
            let listed = hint.split(" (the ").next().unwrap_or_default();
            assert!(listed.starts_with("use only allowed modules: "), "{hint}");
            assert!(listed.split(", ").count() <= 9, "{hint}");
        }
        assert!(hints[0].contains("closest to `requests`"), "{}", hints[0]);
        assert!(hints[5].contains(": pandas,"), "{}", hints[5]);
        assert!(
            hints[3].contains("argv") && hints[4].contains("line 5"),
            "{hints:?}"
        );
    }

    #[test]
    fn closeness_prefers_containment_then_edit_distance() {
        let names = vec![
            "numpy",
            "pandas",
            "re",
            "regex",
            "scipy",
            "sqlite3",
            "statistics",
        ];
        assert_eq!(super::closest("pandass", names.clone(), 1), vec!["pandas"]);
        assert_eq!(
            super::closest("regexp", names.clone(), 2),
            vec!["re", "regex"]
        );
        assert_eq!(super::edit_distance("scipy", "spicy"), 2);
        assert_eq!(super::closest("sqlite", names, 1), vec!["sqlite3"]);
    }
}
