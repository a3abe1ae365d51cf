//! IMP101 import-not-allowed.

use ruff_text_size::{Ranged, TextRange};

use crate::checker::Checker;
use crate::parse::ast;
use crate::rules::Rule;
use crate::semantic::{Origin, QualName};
use crate::settings::ModuleVerdict;

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

## Known gaps
- Modules loaded without an import statement are other rules' business (`__import__`, `importlib`:
  DYN402; re-exports: REX501).
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
    let why = match verdict {
        ModuleVerdict::Denied => "is denied by the policy",
        _ => "is not on the policy's import allowlist",
    };
    let hint = super::allowed_hint(checker);
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
        let hint = super::allowed_hint(checker);
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
