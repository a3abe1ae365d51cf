//! SYN002 unsupported-syntax.
//!
//! Only the documentation lives here. The parser finds the syntax the target Python lacks
//! (`parse::parse`, `Parsed::Module { unsupported, .. }`) and the crate's entry point (`lib.rs`,
//! `check_text`) adds a finding for each after the checker has run.

pub(crate) const DOC: &str = r#"# SYN002 unsupported-syntax

## What it does
Denies syntax that parses but that the policy's target Python (`policy.target_python`, default 3.11)
cannot run, such as PEP 701 f-strings (`f"{d["k"]}"`) or PEP 695 type parameters on 3.11.

## Why is this bad?
The program would fail with a `SyntaxError` in the jail. Reporting it before running tells the model
exactly which construct to rewrite and saves a run.

## Example
```python
print(f"{row["name"]}")   # 3.12+ only
```
Use `f"{row['name']}"` instead.

## Evasions handled
- The parser accepts the newest grammar, so newer syntax cannot hide other findings.

## Known gaps
- Syntax removed in newer versions is not reported for older targets.
"#;
