//! REF202 banned-method.

use ruff_text_size::Ranged;

use crate::checker::Checker;
use crate::parse::ast;
use crate::rules::Rule;

pub(crate) const DOC: &str = r#"# REF202 banned-method

## What it does
Denies attribute access to a method name listed in `references.deny_methods`, whatever the receiver:
`df.to_pickle(...)`, `pd.DataFrame.to_clipboard`, `obj.read_pickle`.

## Why is this bad?
The checker does not know the type of `df`, so a method such as `DataFrame.to_pickle` or
`DataFrame.to_clipboard` (which spawns a process) can only be banned by its name.

## Example
```python
df.to_pickle("out.pkl")
```
Use `df.to_csv("out.csv")` or `df.to_parquet("out.parquet")`.

## Evasions handled
- Loads, stores and deletes of the attribute, called or not, through any receiver expression.

## Known gaps
- Reached with a computed name through `getattr` (reported by ATTR304 instead) or by `getattr` with a
  literal name (reported here only when the literal equals a banned name).
"#;

pub(crate) fn check(checker: &mut Checker<'_>, attribute: &ast::ExprAttribute) {
    let name = attribute.attr.id.as_str();
    report_if_banned(checker, name, attribute.range());
}

pub(crate) fn report_if_banned(
    checker: &mut Checker<'_>,
    name: &str,
    range: ruff_text_size::TextRange,
) {
    if checker.policy.denied_methods.contains(name) {
        checker.report(
            Rule::BannedMethod,
            range,
            format!("method `.{name}` is banned by the policy"),
            "use an allowed method; for saving data prefer `to_csv` or `to_parquet` in the work dir",
        );
    }
}
