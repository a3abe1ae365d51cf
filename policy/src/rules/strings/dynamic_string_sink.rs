//! STR602 dynamic-string-sink.
//!
//! The check itself is in `string_sink.rs` (`check_call`): this rule is the branch of STR601's check
//! where the expression string is not a literal, and both need the same call recognised.

use ruff_text_size::TextRange;

use crate::checker::Checker;
use crate::rules::Rule;

pub(crate) const DOC: &str = r#"# STR602 dynamic-string-sink

## What it does
Warns (by default) when `DataFrame.query` or `DataFrame.eval` is given an expression string built at run
time (an f-string, a concatenation, a variable the checker cannot resolve to literals). The same for model
formulas (`smf.ols(f"y ~ {x}", df)`) and strings built at run time given to sympy functions.

## Why is this bad?
The string may contain `@` references or calls that STR601 would deny if it could see them. Models
often build queries with f-strings, so the default is a warning; strict policies can set it to `deny`.

## Example
```python
df.query(f"price > {limit}")
```
Prefer a boolean mask: `df[df["price"] > limit]`.

## Evasions handled
- Names bound only to string literals are resolved and judged by STR601 instead.

## Known gaps
- The jail is what contains a malicious computed query.
"#;

pub(crate) fn report(checker: &mut Checker<'_>, method: &str, range: TextRange) {
    checker.report(
        Rule::DynamicStringSink,
        range,
        format!("`.{method}()` with an expression built at run time"),
        "prefer boolean masks (`df[df[\"a\"] > x]`) over expression strings",
    );
}
