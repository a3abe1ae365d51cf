//! IMP102 star-import.
//!
//! There is nothing to check beyond the statement: the checker reports every `from m import *` it
//! walks (`Checker::import_from`).

use ruff_text_size::TextRange;

use crate::checker::Checker;
use crate::rules::Rule;

pub(crate) const DOC: &str = r#"# IMP102 star-import

## What it does
Denies `from module import *`.

## Why is this bad?
A star import binds names the checker cannot see, so later references cannot be resolved to qualified
names: `from numpy import *` may bring names that shadow builtins or re-export other modules.

## Example
```python
from math import *
print(sqrt(2))
```
Import the names you use: `from math import sqrt`.

## Evasions handled
- Star imports of allowed modules are denied too: the problem is resolution, not the module.

## Known gaps
- None.
"#;

pub(crate) fn report(checker: &mut Checker<'_>, module: &str, range: TextRange) {
    checker.report(
        Rule::StarImport,
        range,
        format!("`from {module} import *` binds names the checker cannot resolve"),
        format!("import the names you need explicitly: `from {module} import name1, name2`"),
    );
}
