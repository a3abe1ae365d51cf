//! DYN402 dynamic-import.

use ruff_text_size::TextRange;

use crate::checker::Checker;
use crate::rules::Rule;
use crate::semantic::QualName;

pub(crate) const DOC: &str = r#"# DYN402 dynamic-import

## What it does
Denies every reference to ways of loading a module by name at run time: `__import__`, `importlib`,
`sys.modules`, `pkgutil.resolve_name`, `pydoc.locate`, and `logging.config` (whose `dictConfig` calls
factories named by strings).

## Why is this bad?
An import by name bypasses the import allowlist: `__import__("o" + "s")` loads `os` without an import
statement. LangChain's CVE-2023-44467 hid `__import__` in a lambda default.

## Example
```python
mod = __import__("math")
```
Use an import statement: `import math`.

## Evasions handled
- References in any position (defaults, decorators, containers), aliases, `from importlib import
  import_module as im`.

## Known gaps
- A module object reached through an allowed package's attributes is REX501's business.
"#;

const NAMES: &[&str] = &[
    "builtins.__import__",
    "builtins.__loader__",
    "builtins.__spec__",
    "importlib",
    "sys.modules",
    "pkgutil",
    "pydoc",
    "logging.config",
    "zipimport",
];

pub(crate) fn check_reference(checker: &mut Checker<'_>, name: &QualName, range: TextRange) {
    if let Some(matched) = NAMES
        .iter()
        .find(|pattern| super::under(&name.path, pattern))
    {
        checker.report(
            Rule::DynamicImport,
            range,
            format!("`{}` loads modules by name (`{matched}`)", name.path),
            "use an import statement for an allowed module",
        );
    }
}
