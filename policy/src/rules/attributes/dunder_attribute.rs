//! ATTR301 dunder-attribute.

use ruff_text_size::TextRange;

use crate::checker::Checker;
use crate::names;
use crate::parse::ast;
use crate::rules::Rule;

pub(crate) const DOC: &str = r#"# ATTR301 dunder-attribute

## What it does
Denies dunder names (`__x__`) outside a short allowlist (`attributes.allow_dunder`, e.g. `__name__`,
`__doc__`, `__init__`) wherever an attribute name can hide: attribute nodes (load, store, delete,
augmented assignment), names (`__builtins__`), string literals used as attribute names or mapping keys
(`getattr(x, "__class__")`, `d["__builtins__"]`), dotted strings (`attrgetter("a.__class__")`),
`str.format`/`format_map` field paths (`"{0.__class__}"`), match class-pattern keywords
(`case str(__class__=c)`), and methods defined in a class body outside
`attributes.allow_dunder_definitions`.

## Why is this bad?
Dunder attributes are the road from any object to the interpreter's internals:
`().__class__.__base__.__subclasses__()` reaches every class, and `__init__.__globals__` of one of them
holds `os`. Almost every published escape of an in-process Python sandbox uses them.

## Example
```python
for cls in ().__class__.__base__.__subclasses__():
    ...
```
Data-analysis code never needs these; use the object's public API.

## Evasions handled
- Dunder methods called by name (`x.__getattribute__("…")`), identifiers in look-alike Unicode letters
  (matched after NFKC normalisation, as CPython does), dunder names inside format strings
  (RestrictedPython CVE-2023-41039) and match patterns, string keys.
- Defining hooks that run implicitly (`__del__`, `__reduce__`, `__getattr__`…) in a class body.

## Known gaps
- Names built at run time (`"__cl" + "ass__"`) are only visible where they are used (`getattr` with a
  computed name: ATTR304).
"#;

fn allowed(checker: &Checker<'_>, name: &str) -> bool {
    checker.policy.allow_dunder.contains(name)
}

/// An attribute name (already NFKC-normalised).
pub(crate) fn check_attribute(checker: &mut Checker<'_>, name: &str, range: TextRange) {
    if names::is_dunder(name) && !allowed(checker, name) {
        report(checker, name, range);
    }
}

/// A bare name: `__builtins__`, `__loader__`. `__import__` is left to DYN402. Class bodies may also
/// bind the dunders they may define (`__slots__ = …`).
pub(crate) fn check_name(checker: &mut Checker<'_>, name: &ast::ExprName) {
    let id = name.id.as_str();
    if !names::is_dunder(id) || allowed(checker, id) || id == "__import__" {
        return;
    }
    if checker.in_class_scope()
        && name.ctx.is_store()
        && checker.policy.allow_dunder_definitions.contains(id)
    {
        return;
    }
    report(checker, id, name.range);
}

/// A method defined in a class body.
pub(crate) fn check_definition(checker: &mut Checker<'_>, name: &ast::Identifier) {
    let id = name.id.as_str();
    if !names::is_dunder(id)
        || checker.policy.allow_dunder_definitions.contains(id)
        || matches!(id, "__init_subclass__" | "__class_getitem__" | "__set_name__")
    {
        return;
    }
    checker.report(
        Rule::DunderAttribute,
        name.range,
        format!("defining `{id}` installs a hook the interpreter calls implicitly"),
        "define only ordinary methods and the common protocol methods (__init__, __repr__, __eq__, …)",
    );
}

fn report(checker: &mut Checker<'_>, name: &str, range: TextRange) {
    checker.report(
        Rule::DunderAttribute,
        range,
        format!("dunder attribute `{name}` is not allowed"),
        "use the object's public API; interpreter internals are not available",
    );
}
