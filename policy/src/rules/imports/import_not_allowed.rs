//! IMP101 import-not-allowed.

use std::collections::BTreeMap;

use ruff_text_size::{Ranged, TextRange};

use crate::checker::Checker;
use crate::parse::ast;
use crate::rules::Rule;
use crate::semantic::{Origin, QualName};
use crate::settings::{ImportRules, ModuleVerdict, PatternSet};

pub(crate) const DOC: &str = r#"# IMP101 import-not-allowed

## What it does
Denies importing a module that the policy's `imports.allow` does not list, or that `imports.deny` lists
(a deny always wins), and any use of a module attribute outside what was allowed.

## Why is this bad?
Most escapes need a module the analysis does not: `os`, `subprocess`, `socket`, `ctypes`, `pickle`. An
allowlist keeps the program to the data stack the policy was written for.

## Example
```python
import subprocess
subprocess.run(["id"])
```
Use only the allowed modules; the hint lists them.

## Evasions handled
- Submodule semantics: `numpy` allows only `numpy`; `numpy.*` allows its submodules; a deny such as
  `numpy.ctypeslib` wins over `numpy.*`, also when reached as an attribute (`np.ctypeslib`).
- `import os.path` binds `os`: with only `os.path` allowed, `os.system` is reported at its use.
- Modules allowed only in part (`imports.members`, e.g. `os` and `builtins` in the default policy): a
  member outside the list (`os.system`, `builtins.exec`) is reported wherever it is referenced, also as
  `from os import system`.
- Aliases: `import os as o`, `from os import system as s`, `m = np; m.ctypeslib`.

- `sys.setrecursionlimit` (an allowed member of `sys` in the default policy) takes a literal limit up
  to 1000000 (`10**6` counts as a literal); a computed or higher limit is reported here.
- `from __future__ import annotations` (and the other future features but `barry_as_FLUFL`) is a
  compiler directive, allowed under every policy; `import __future__` is an import like any other.

- A module allowed only in part appears only as `module.<member>`: a module listed in
  `imports.members` (`os`, `sys`, `builtins`…) or one with a denied member (`pandas` for
  `pandas.read_pickle`, `numpy` for `numpy.ctypeslib`, `sklearn.datasets` for `fetch_openml`) used as a
  value — passed to a function (`run(os)`, `vars(os)`, `getattr(os, name)`), stored (`[os]`,
  `obj.m = os`, `(m := os)`, a class attribute, a `global` or `nonlocal` name), returned or yielded,
  a default value — is reported: what the value reaches afterwards (`m.system`) is out of the checker's
  sight. Assigning it to a local or module name (`o = os`, `for m in (os, sys)`), which the checker
  follows to every use, `getattr(os, "path")` with a literal, and tests (`if np is None`, `not np`)
  are not uses of the value.

## Known gaps
- Modules loaded without an import statement are other rules' business (`__import__`, `importlib`:
  DYN402; re-exports: REX501).
- A module that only re-exports a guarded module under a public name (`pandas.io.stata.os`) is not
  "allowed in part" for the policy: passed as a value, its `.os` is REX502's (a warning).
"#;

/// `import path`: the module itself must be allowed.
pub(crate) fn check_module(checker: &mut Checker<'_>, path: &str, range: TextRange) {
    let segments: Vec<&str> = path.split('.').collect();
    let verdict = checker.policy.imports.verdict(&segments);
    if verdict != ModuleVerdict::Allowed {
        report_module(checker, path, verdict, range, true);
    }
}

/// The features `from __future__ import …` may name: compiler directives, not imports of anything.
/// `barry_as_FLUFL` is left out on purpose: it changes how `!=` and `<>` parse, which the checker's
/// parser does not follow.
const FUTURE_FEATURES: &[&str] = &[
    "annotations",
    "generator_stop",
    "nested_scopes",
    "generators",
    "division",
    "absolute_import",
    "with_statement",
    "print_function",
    "unicode_literals",
];

/// `from module import member`: allowed when `module` is, or when `module.member` is an allowed module
/// (`from os import path` with `os.path` allowed). `from __future__ import annotations` and the other
/// future features are compiler directives, allowed whatever the allowlist says.
pub(crate) fn check_member(
    checker: &mut Checker<'_>,
    module: &str,
    member: &str,
    range: TextRange,
) {
    if module == "__future__" && FUTURE_FEATURES.contains(&member) {
        return;
    }
    let mut full: Vec<&str> = module.split('.').collect();
    let module_verdict = checker.policy.imports.verdict(&full);
    full.push(member);
    let member_verdict = checker.policy.imports.verdict(&full);
    if member_verdict == ModuleVerdict::Denied {
        report_module(checker, &full.join("."), member_verdict, range, true);
    } else if module_verdict != ModuleVerdict::Allowed && member_verdict != ModuleVerdict::Allowed {
        report_module(checker, module, module_verdict, range, true);
    } else if member_verdict != ModuleVerdict::Allowed {
        check_members(checker, &full, range);
    }
}

/// A module allowed only in part (`imports.members`): the next segment must be an allowed member or an
/// allowed submodule.
fn check_members(checker: &mut Checker<'_>, segments: &[&str], range: TextRange) -> bool {
    for index in 0..segments.len().saturating_sub(1) {
        let module = segments[..=index].join(".");
        let member = segments[index + 1];
        if checker.policy.imports.member_allowed(&module, member) == Some(false)
            && checker.policy.imports.verdict(&segments[..=index + 1]) != ModuleVerdict::Allowed
        {
            let allowed: Vec<&str> = checker
                .policy
                .imports
                .members
                .get(&module)
                .map(|m| m.iter().map(String::as_str).collect())
                .unwrap_or_default();
            checker.report(
                Rule::ImportNotAllowed,
                range,
                format!("`{module}.{member}` is not an allowed member of `{module}`"),
                format!(
                    "`{module}` is allowed only in part; its allowed members are: {}",
                    allowed.join(", ")
                ),
            );
            return true;
        }
    }
    false
}

/// The highest recursion limit a program may set. CPython 3.11 keeps Python-to-Python calls off the
/// C stack, so deep recursion costs memory (bounded by the jail) rather than a crash; above this, C
/// recursion (repr, comparisons, json of nested data) overflows the stack first.
const MAX_RECURSION_LIMIT: u128 = 1_000_000;

/// `sys.setrecursionlimit(n)`: an allowed member of `sys` whose argument must be a literal (or a
/// product or power of literals, `10**6`) up to [`MAX_RECURSION_LIMIT`].
pub(crate) fn check_call(checker: &mut Checker<'_>, call: &ast::ExprCall, callee: &[QualName]) {
    if !callee.iter().any(|q| q.path == "sys.setrecursionlimit") {
        return;
    }
    let limit = match (&call.arguments.args[..], call.arguments.keywords.is_empty()) {
        ([limit], true) => constant_int(limit),
        _ => None,
    };
    if limit.is_none_or(|limit| limit > MAX_RECURSION_LIMIT) {
        checker.report(
            Rule::ImportNotAllowed,
            call.range(),
            format!("`sys.setrecursionlimit` is allowed only with a literal limit up to {MAX_RECURSION_LIMIT}"),
            "write the limit as a number (e.g. `sys.setrecursionlimit(10**5)`), or make the recursion iterative",
        );
    }
}

/// The value of an integer literal, or of `+`, `*`, `**` and `<<` over integer literals.
fn constant_int(expr: &ast::Expr) -> Option<u128> {
    match expr {
        ast::Expr::NumberLiteral(number) => match &number.value {
            ast::Number::Int(int) => int.as_u64().map(u128::from),
            _ => None,
        },
        ast::Expr::BinOp(binary) => {
            let (left, right) = (constant_int(&binary.left)?, constant_int(&binary.right)?);
            match binary.op {
                ast::Operator::Add => left.checked_add(right),
                ast::Operator::Mult => left.checked_mul(right),
                ast::Operator::Pow => left.checked_pow(u32::try_from(right).ok()?),
                ast::Operator::LShift => (right < 64)
                    .then(|| left.checked_shl(right as u32))
                    .flatten(),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Reports a module; at import statements (`remember`) later uses of it are not reported again.
fn report_module(
    checker: &mut Checker<'_>,
    path: &str,
    verdict: ModuleVerdict,
    range: TextRange,
    remember: bool,
) {
    if remember {
        checker.denied_imports.insert(path.to_owned());
    }
    let segments: Vec<&str> = path.split('.').collect();
    let why = match verdict {
        // Allowed and denied at once (`extends = "default"` with `allow = ["requests"]`): say which
        // wins and how to change it, rather than deny a module the hint would list.
        ModuleVerdict::Denied if checker.policy.imports.allow.any_matches(&segments) => {
            "is denied by the policy: it is in both `imports.allow` and `imports.deny`, and a deny \
             wins (an extending file takes it out with `[remove.imports] deny`)"
        }
        ModuleVerdict::Denied => "is denied by the policy",
        _ => "is not on the policy's import allowlist",
    };
    let hint = super::allowed_hint(checker, path);
    checker.report(
        Rule::ImportNotAllowed,
        range,
        format!("module `{path}` {why}"),
        hint,
    );
}

/// A use of an imported name: some prefix of the dotted path must be an allowed module, and none denied.
pub(crate) fn check_reference(checker: &mut Checker<'_>, name: &QualName, range: TextRange) {
    if name.origin != Origin::Import || name.path.starts_with('.') {
        return;
    }
    let segments = name.segments();
    let mut allowed = false;
    for len in 1..=segments.len() {
        let prefix = &segments[..len];
        if !checker.denied_imports.is_empty() && checker.denied_imports.contains(&prefix.join("."))
        {
            return;
        }
        match checker.policy.imports.verdict(prefix) {
            ModuleVerdict::Denied => {
                report_module(
                    checker,
                    &prefix.join("."),
                    ModuleVerdict::Denied,
                    range,
                    false,
                );
                return;
            }
            ModuleVerdict::Allowed => allowed = true,
            ModuleVerdict::NotAllowed => {}
        }
    }
    if allowed {
        check_members(checker, &segments, range);
    } else {
        let root = segments.first().copied().unwrap_or_default();
        let hint = super::allowed_hint(checker, root);
        checker.report(
            Rule::ImportNotAllowed,
            range,
            format!(
                "`{}` is reached through module `{root}`, which is not allowed",
                name.path
            ),
            hint,
        );
    }
}

/// The modules (and other names reached through allowed modules) that the policy allows only in part,
/// each with why: the keys of `imports.members`, and every proper prefix of an `imports.deny` or
/// `references.deny` entry that is itself reachable (`pandas` and `pandas.io` for `pandas.io.pickle`);
/// a `x.*` entry denies every member of `x`, so `x` counts too.
///
/// Built once, when the policy is loaded (`Policy::partly_allowed`): it depends on the policy alone.
pub(crate) fn partly_allowed_modules(
    imports: &ImportRules,
    denied_references: &PatternSet,
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for module in imports.members.keys() {
        out.insert(
            module.clone(),
            "only the members listed in `imports.members` are allowed".to_owned(),
        );
    }
    let denied = imports
        .deny
        .iter()
        .map(|pattern| (pattern, "imports.deny"))
        .chain(
            denied_references
                .iter()
                .map(|pattern| (pattern, "references.deny")),
        );
    for (pattern, list) in denied {
        let segments: Vec<&str> = pattern.segments().iter().map(String::as_str).collect();
        let members_of = if pattern.is_exact() {
            segments.len().saturating_sub(1)
        } else {
            segments.len()
        };
        for len in 1..=members_of {
            let prefix = &segments[..len];
            if reachable(imports, prefix) {
                out.entry(prefix.join("."))
                    .or_insert_with(|| format!("`{pattern}` is denied by `{list}`"));
            }
        }
    }
    out
}

/// True when a reference to `path` passes the import rules: some prefix is allowed and none denied.
fn reachable(imports: &ImportRules, path: &[&str]) -> bool {
    let mut allowed = false;
    for len in 1..=path.len() {
        match imports.verdict(&path[..len]) {
            ModuleVerdict::Denied => return false,
            ModuleVerdict::Allowed => allowed = true,
            ModuleVerdict::NotAllowed => {}
        }
    }
    allowed
}

/// A module allowed only in part, met as a value (not as `module.member`, not in a position the
/// checker follows): what the value reaches later is out of sight.
pub(crate) fn check_module_value(
    checker: &mut Checker<'_>,
    candidates: &[QualName],
    range: TextRange,
) {
    for name in candidates {
        if name.origin != Origin::Import {
            continue;
        }
        let Some(reason) = checker.policy.partly_allowed.get(&name.path) else {
            continue;
        };
        let message = format!(
            "module `{}` is used as a value: it is allowed only in part ({reason}), so it may appear only as `{}.<member>`",
            name.path, name.path
        );
        checker.report(
            Rule::ImportNotAllowed,
            range,
            message,
            format!(
                "use its members where you need them (`{}.<member>`); passing, storing or returning the module itself hides which members are reached",
                name.path
            ),
        );
        return;
    }
}
