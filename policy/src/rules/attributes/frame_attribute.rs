//! ATTR303 frame-attribute.

use ruff_text_size::TextRange;

use crate::checker::Checker;
use crate::names;
use crate::rules::Rule;

pub(crate) const DOC: &str = r#"# ATTR303 frame-attribute

## What it does
Denies the attributes of frames, tracebacks, generators, coroutines and code objects (`gi_frame`,
`cr_frame`, `ag_frame`, `f_back`, `f_globals`, `f_builtins`, `f_locals`, `tb_frame`, `tb_next`,
`co_code`…) in every position an attribute name can hide (see ATTR301).

## Why is this bad?
A frame's `f_globals` and `f_builtins` are the globals of running code; from a generator
(`(x for x in []).gi_frame.f_back.f_globals`) or an exception (`e.__traceback__.tb_frame`) they lead to
the real builtins of the caller, past any restriction on names.

## Example
```python
g = (i for i in [1])
g.gi_frame.f_back.f_globals
```
Data-analysis code never needs frames; remove the introspection.

## Evasions handled
- Attribute nodes, `getattr` literals, dotted strings, format fields, match class-pattern keywords.

## Known gaps
- Computed names (ATTR304); `sys._getframe` and `inspect.currentframe` are caught as modules that are
  not allowed (IMP101) or as reflection (DYN403).
"#;

pub(crate) fn check(checker: &mut Checker<'_>, name: &str, range: TextRange) {
    if names::is_frame_attribute(name) {
        checker.report(
            Rule::FrameAttribute,
            range,
            format!("frame/traceback/code attribute `{name}` is not allowed"),
            "remove the introspection; frames and code objects are not available",
        );
    }
}
