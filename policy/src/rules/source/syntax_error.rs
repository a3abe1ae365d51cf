//! SYN001 syntax-error.
//!
//! Only the documentation lives here. The check is the parse itself (`parse::parse` answers
//! `Parsed::Invalid`) and the finding is made by the crate's entry point (`lib.rs`, `check_text`):
//! a program that does not parse never reaches the checker that calls the other rules.

pub(crate) const DOC: &str = r#"# SYN001 syntax-error

## What it does
Denies a program that does not parse as Python, and points at the first syntax error.

## Why is this bad?
warden can only judge code it has parsed. Code that CPython would also reject is harmless, but code that
warden's parser rejects and CPython accepts would be a place to hide a payload, so nothing unparsed runs.

## Example
```python
print("total" 3)
```
Fix the syntax error at the reported line and column.

## Evasions handled
- Parser differentials: the same decoded text is parsed here and run by the interpreter.
- Errors anywhere in the file deny the whole file (no partial checking).

## Known gaps
- Only the first syntax error is reported.
"#;
