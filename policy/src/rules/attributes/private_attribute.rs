//! ATTR302 private-attribute.

use ruff_text_size::TextRange;

use crate::checker::Checker;
use crate::names;
use crate::rules::Rule;
use crate::semantic::{Origin, QualName};

pub(crate) const DOC: &str = r#"# ATTR302 private-attribute

## What it does
Denies private names (`_x`) of imported modules and packages: `random._os`, `np._core`, `pd._libs`,
`from random import _os`.

## Why is this bad?
Private module attributes are implementation details, and the standard library's private re-exports
(`random._os` is `os`) lead straight to modules the policy does not allow.

## Example
```python
import random
random._os.system("id")
```
Use the module's public API.

## Evasions handled
- Import aliases, assignment aliases, `from m import _x`, `getattr(m, "_x")`.

## Known gaps
- Private attributes of ordinary objects (`self._cache`, `df._data`) are allowed: the checker does not
  know types, and user classes rely on them.
"#;

pub(crate) fn check_reference(checker: &mut Checker<'_>, name: &QualName, range: TextRange) {
    if name.origin != Origin::Import {
        return;
    }
    if let Some(private) = name.path.split('.').skip(1).find(|s| names::is_private(s)) {
        checker.report(
            Rule::PrivateAttribute,
            range,
            format!("private name `{private}` of `{}`", name.path),
            "use the module's public API; private module internals are not available",
        );
    }
}
