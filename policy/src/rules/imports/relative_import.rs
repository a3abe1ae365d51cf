//! IMP103 relative-import.
//!
//! There is nothing to check beyond the statement: the checker reports every `from .… import` it
//! walks (`Checker::import_from`).

use ruff_text_size::Ranged;

use crate::checker::Checker;
use crate::parse::ast;
use crate::rules::Rule;

pub(crate) const DOC: &str = r#"# IMP103 relative-import

## What it does
Denies relative imports (`from . import x`, `from ..pkg import y`).

## Why is this bad?
The program is a single script; a relative import only makes sense if it can load files it or someone else
wrote next to it, which is a way to run code the checker never saw.

## Example
```python
from . import helpers
```
Put the code in the program itself.

## Evasions handled
- Any level of dots, with or without a module name.

## Known gaps
- Absolute imports of files written by the program are prevented by the interpreter running isolated
  (`-I`: the script's directory is not on `sys.path`), not by this rule.
"#;

pub(crate) fn report(checker: &mut Checker<'_>, import: &ast::StmtImportFrom) {
    let dots = ".".repeat(import.level as usize);
    let module = import.module.as_ref().map_or("", |m| m.id.as_str());
    checker.report(
        Rule::RelativeImport,
        import.range(),
        format!("relative import `from {dots}{module} import …`"),
        "the program runs as a single script: define the code inline instead",
    );
}
