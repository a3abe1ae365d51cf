//! IMP101 import-not-allowed.

use ruff_text_size::TextRange;

use crate::checker::Checker;
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

/// `from module import member`: allowed when `module` is, or when `module.member` is an allowed module
/// (`from os import path` with `os.path` allowed).
pub(crate) fn check_member(
    checker: &mut Checker<'_>,
    module: &str,
    member: &str,
    range: TextRange,
) {
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
