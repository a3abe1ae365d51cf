//! FILE704 dynamic-path.
//!
//! The check itself is in `files/mod.rs`: this rule is what is left when the checker cannot compute
//! a path given to a file API (or only a prefix that does not say where it points), and only the
//! code that computes paths for FILE701–FILE703 knows that.

use ruff_text_size::TextRange;

use crate::checker::Checker;
use crate::rules::Rule;

pub(crate) const DOC: &str = r#"# FILE704 dynamic-path

## What it does
Reports a path the checker cannot compute (built at run time) given to a file API. Its action is set by
`files.dynamic_path` in the rules file (default `warn`).

## Why is this bad?
A computed path may point anywhere. The checker cannot tell, so it says so; the jail's Landlock ruleset
enforces the roots whatever the path turns out to be.

## Example
```python
open(name)
```
Use a literal relative path when you can: `open("data.csv")`.

## Evasions handled
- Variables bound only to literals, joins of literals and f-string prefixes are not dynamic: they are
  judged by FILE701/FILE702.

## Known gaps
- This rule only reports; containment is the jail's.
"#;

/// `hint` names where the policy lets the program read or write (the access the API makes).
pub(crate) fn report(checker: &mut Checker<'_>, api: &str, hint: String, range: TextRange) {
    checker.report(
        Rule::DynamicPath,
        range,
        format!("`{api}` is given a path computed at run time"),
        format!("prefer literal relative paths; {hint}"),
    );
}
