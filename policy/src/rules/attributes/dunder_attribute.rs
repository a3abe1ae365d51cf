//! ATTR301 dunder-attribute.

use ruff_text_size::TextRange;

use crate::checker::Checker;
use crate::names;
use crate::parse::ast;
use crate::rules::Rule;
use crate::semantic::{Origin, QualName};

pub(crate) const DOC: &str = r#"# ATTR301 dunder-attribute

## What it does
Denies dunder names (`__x__`) outside a short allowlist (`attributes.allow_dunder`, e.g. `__name__`,
`__doc__`, `__init__`, `__class__`), and the non-dunder `mro`, wherever an attribute name can hide: attribute nodes (load, store, delete,
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
- Reading `x.__class__` or `x.__dict__` alone is harmless and allowed by the default policy, but the
  next steps of every walk are not (`__base__`, `__mro__`, `__subclasses__`, `__globals__`, `mro`);
  storing or deleting any dunder attribute is denied, and so is any dunder of a module object other
  than `__name__`, `__version__`, `__doc__`, `__file__` and `__all__` (`pd.io.stata.__dict__["os"]`).
- Defining hooks that run implicitly (`__del__`, `__reduce__`, `__getattr__`…) in a class body.

## Known gaps
- Names built at run time (`"__cl" + "ass__"`) are only visible where they are used (`getattr` with a
  computed name: ATTR304).
"#;

fn allowed(checker: &Checker<'_>, name: &str) -> bool {
    checker.policy.allow_dunder.contains(name)
}

/// An attribute name (already NFKC-normalised). `mro` is included: `type(x).mro()` reaches `object`
/// without a dunder.
pub(crate) fn check_attribute(checker: &mut Checker<'_>, name: &str, range: TextRange) {
    if (names::is_dunder(name) && !allowed(checker, name)) || name == "mro" {
        report(checker, name, range);
    }
}

/// Storing or deleting a dunder attribute (`x.__class__ = Other`, `del f.__defaults__`) rewires
/// objects whatever the name; it is denied even for names that may be read.
pub(crate) fn check_store(checker: &mut Checker<'_>, attribute: &ast::ExprAttribute) {
    let name = names::normalize_identifier(attribute.attr.id.as_str());
    if names::is_dunder(&name) && !attribute.ctx.is_load() {
        checker.report(
            Rule::DunderAttribute,
            attribute.attr.range,
            format!("assigning or deleting dunder attribute `{name}` is not allowed"),
            "create a new object instead of rewiring an existing one",
        );
    }
}

/// Dunders of module objects (`pd.__dict__`, `np.__loader__`): a module's namespace holds everything it
/// imported. Only descriptive dunders are allowed on modules.
pub(crate) fn check_reference(checker: &mut Checker<'_>, name: &QualName, range: TextRange) {
    if name.origin != Origin::Import {
        return;
    }
    let segments = name.segments();
    if let Some(dunder) = segments.iter().skip(1).find(|s| {
        names::is_dunder(s)
            && !matches!(
                **s,
                "__name__" | "__version__" | "__doc__" | "__file__" | "__all__"
            )
    }) {
        checker.report(
            Rule::DunderAttribute,
            range,
            format!("dunder attribute `{dunder}` of module `{}`", name.path),
            "use the module's public API; module namespaces are not available",
        );
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
        || matches!(
            id,
            "__init_subclass__" | "__class_getitem__" | "__set_name__"
        )
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
