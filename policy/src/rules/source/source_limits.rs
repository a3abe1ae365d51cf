//! SYN004 source-limits.
//!
//! Only the documentation lives here: each bound is checked where it can be, before the work it
//! protects. The size in `source::decode` (reported by `lib.rs`, `source_error`); nesting in the
//! token scan before parsing (`parse.rs`, `too_deep`, reported by `lib.rs`, `check_text`); node count
//! and depth during the walk (`Checker::enter`); and a checker that could not finish (`lib.rs`,
//! `check_on_worker`).

pub(crate) const DOC: &str = r#"# SYN004 source-limits

## What it does
Denies programs larger than `source.max_bytes`, nested deeper than `source.max_depth` (brackets, blocks,
prefix operators, operator chains) or with more than `source.max_nodes` syntax nodes.

## Why is this bad?
Deeply nested input can exhaust the stack of a recursive parser or checker, and huge inputs can exhaust
time. CPython itself refuses most such programs ("too many nested parentheses"). Bounding them keeps
the gate fast and crash-free.

## Example
```python
x = ((((((((((((((((((((((((1))))))))))))))))))))))))  # ...repeated thousands of times
```
Use intermediate variables.

## Evasions handled
- Nesting is measured on tokens before the parser runs, so the parser never recurses without bound.

## Known gaps
- The location of a nesting error found by the token scan is approximate.
"#;
