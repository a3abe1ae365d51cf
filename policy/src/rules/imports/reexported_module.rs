//! REX501 reexported-module.

use ruff_text_size::TextRange;

use crate::checker::Checker;
use crate::rules::Rule;
use crate::semantic::{Origin, QualName};

pub(crate) const DOC: &str = r#"# REX501 reexported-module

## What it does
Denies attribute chains through an allowed package that reach a module the policy denies, such as
`pd.io.stata.os`, `pd.core.common.builtins`, `pd.errors.ctypes`, `np.matrixlib.defmatrix.sys` or
`numpy.ma.core.inspect`.

## Why is this bad?
Packages import standard modules for their own use, and every module they import is an attribute of
theirs. Allowing `pandas` would otherwise allow `os` through `pandas.io.stata.os` (Agenta
CVE-2026-27952 used such paths).

## Example
```python
import pandas as pd
pd.io.stata.os.system("id")
```
Use the package's public data API instead.

## Evasions handled
- Any depth of chain, through import aliases (`import pandas as p`), assignment aliases
  (`s = pd.io.stata; s.os`), `getattr(pd.io.stata, "os")` and `from pandas.io.stata import os`.
- Any segment of the chain named like a denied module (`imports.deny` entries without `.*`) or a
  module allowed only in part (`imports.members`, e.g. `os`), unless the prefix up to it is itself
  explicitly allowed (e.g. `os.path`).

- Attributes of any receiver named in `attributes.deny_names` with leading underscores: objects keep
  modules as private attributes (`err.obj._os` after an `AttributeError` hands back `random`,
  `ndarray.ctypes._ctypes`); and names in that list that are not modules (`x.popen`, `x.CodeType`),
  with or without underscores. The public name of a module on an object the checker cannot resolve
  (`row.os`) is REX502's (a warning: a column named `os` is data).

## Known gaps
- Only denied module names are recognised; a re-export of a module that is merely not allowed (not
  denied) under another name is not. Computed attribute names are ATTR304's business.
"#;

/// An attribute of any receiver named in `attributes.deny_names` (`err.obj._os`, `arr.ctypes._ctypes`,
/// `x.popen`). A public name of a guarded module (`row.os`) on a receiver the checker cannot resolve may
/// well be a data column: that is REX502's (a warning); on a receiver that resolves to an imported name
/// (`receiver_is_module`) the chain itself is judged by [`check_reference`].
pub(crate) fn check_attribute_name(
    checker: &mut Checker<'_>,
    name: &str,
    range: TextRange,
    receiver_is_module: bool,
) {
    let bare = name.trim_start_matches('_');
    if bare.is_empty() || !checker.policy.denied_attribute_names.contains(bare) {
        return;
    }
    let module_name = checker.policy.imports.guarded_roots().contains(bare);
    if module_name && bare == name {
        if !receiver_is_module {
            super::module_named_attribute::report(checker, name, range);
        }
        return;
    }
    checker.report(
        Rule::ReexportedModule,
        range,
        format!("attribute `{name}` is denied on any object (`attributes.deny_names`: objects expose modules and process spawners this way)"),
        "use the object's public API; modules held by objects are not available",
    );
}

pub(crate) fn check_reference(checker: &mut Checker<'_>, name: &QualName, range: TextRange) {
    if name.origin != Origin::Import {
        return;
    }
    let segments = name.segments();
    for index in 1..segments.len() {
        let segment = segments[index];
        if !checker.policy.imports.guarded_roots().contains(segment) {
            continue;
        }
        let prefix = &segments[..=index];
        if checker.policy.imports.explicitly_allowed(prefix) {
            continue;
        }
        // Only a chain through an allowed module is a re-export (`timeit.timeit` is IMP101's business).
        let through_allowed = (1..=index).any(|len| {
            checker.policy.imports.verdict(&segments[..len])
                == crate::settings::ModuleVerdict::Allowed
        });
        if !through_allowed {
            return;
        }
        let via = segments[..index].join(".");
        checker.report(
            Rule::ReexportedModule,
            range,
            format!("`{}` reaches the module `{segment}` through `{via}`, bypassing the import rules", prefix.join(".")),
            "use the package's documented API; modules a package imports for itself are not allowed",
        );
        return;
    }
}
