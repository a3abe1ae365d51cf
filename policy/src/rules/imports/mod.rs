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
    imports.hint_for(module, || make_allowed_hint(imports.hint_modules(), module))
}

fn make_allowed_hint(list: &[String], module: &str) -> String {
    if list.is_empty() {
        return "this policy allows no imports: use the builtins".to_owned();
    }
    if list.len() <= LONG_LIST {
        return format!("{ALLOWED_HINT_PREFIX}{}", list.join(", "));
    }
    let total = list.len();
    let closest = closest(module, list.iter().map(String::as_str), CLOSEST);
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
/// one containing the other first, then by edit distance, then by name. Module names are ASCII
/// (anything else compares as it is); two rows of scratch serve every candidate.
fn closest<'a>(
    wanted: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    count: usize,
) -> Vec<&'a str> {
    let wanted = wanted.to_ascii_lowercase();
    let root = wanted.split('.').next().unwrap_or_default();
    let mut rows = (Vec::new(), Vec::new());
    let mut lower = String::new();
    let mut scored: Vec<(usize, &str)> = candidates
        .into_iter()
        .map(|candidate| {
            lower.clear();
            lower.extend(candidate.chars().map(|c| c.to_ascii_lowercase()));
            let contains = !lower.is_empty()
                && (lower.contains(root) || (lower.len() > 1 && root.contains(lower.as_str())));
            if contains {
                return (0, candidate);
            }
            let mut distance = edit_distance_in(root, &lower, &mut rows);
            if wanted.len() != root.len() {
                distance = distance.min(edit_distance_in(&wanted, &lower, &mut rows));
            }
            (1 + distance, candidate)
        })
        .collect();
    scored.sort_unstable();
    scored.truncate(count);
    scored.into_iter().map(|(_, name)| name).collect()
}

/// Levenshtein distance over bytes (module names are ASCII).
#[cfg(test)]
fn edit_distance(a: &str, b: &str) -> usize {
    edit_distance_in(a, b, &mut (Vec::new(), Vec::new()))
}

/// [`edit_distance`] with the two rows of the table in `rows`, reused from call to call.
fn edit_distance_in(a: &str, b: &str, rows: &mut (Vec<usize>, Vec<usize>)) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let (previous, current) = rows;
    previous.clear();
    previous.extend(0..=b.len());
    for (i, &x) in a.iter().enumerate() {
        current.clear();
        current.push(i + 1);
        for (j, &y) in b.iter().enumerate() {
            let value = (previous[j] + usize::from(x != y))
                .min(previous[j + 1] + 1)
                .min(current[j] + 1);
            current.push(value);
        }
        std::mem::swap(previous, current);
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
