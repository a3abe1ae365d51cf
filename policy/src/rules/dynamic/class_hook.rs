//! DYN404 class-hook.

use ruff_text_size::Ranged;

use crate::checker::Checker;
use crate::parse::ast;
use crate::rules::Rule;
use crate::semantic::QualName;

pub(crate) const DOC: &str = r#"# DYN404 class-hook

## What it does
Denies the ways to run code while a class is created: three-argument `type(name, bases, dict)`, the
`metaclass=` class keyword with a metaclass other than the standard library's `abc.ABCMeta`,
`enum.EnumMeta`/`enum.EnumType` and `type`, and defining `__class_getitem__`.

Defining `__init_subclass__` and `__set_name__` is allowed (when the policy lists them in
`attributes.allow_dunder_definitions`, as the default does): their bodies are the program's own code,
checked like any other, and they are how plugin registries and descriptors are written.

## Why is this bad?
These hooks run code implicitly — at class creation, subclassing or subscription — where a reader of the
program (or a checker that validates by "defining" code, as Langflow's CVE-2025-3248 did) does not expect
execution. Three-argument `type` builds classes whose methods come from a dictionary, hiding dunder
definitions from the class-body checks.

## Example
```python
Point = type("Point", (), {"x": 0})
```
Use a class statement or a dataclass.

## Evasions handled
- `type` through aliases (`t = type`), metaclass given by any expression: only a name that resolves to
  one of the standard metaclasses (and nothing else) is allowed, so `class M(ABCMeta)` used as
  `metaclass=M` is denied.

## Known gaps
- Hooks inherited from allowed library classes are not visible.
"#;

/// `type(name, bases, dict)`.
pub(crate) fn check_call(checker: &mut Checker<'_>, call: &ast::ExprCall, callee: &[QualName]) {
    let arguments = call.arguments.args.len() + call.arguments.keywords.len();
    if arguments >= 3 && callee.iter().any(|q| q.path == "builtins.type") {
        checker.report(
            Rule::ClassHook,
            call.range(),
            "three-argument `type()` creates a class from a dictionary",
            "use a class statement or `dataclasses.dataclass`",
        );
    }
}

/// Metaclasses of the standard library whose hooks run only the standard library's code.
const STANDARD_METACLASSES: &[&str] = &[
    "abc.ABCMeta",
    "enum.EnumMeta",
    "enum.EnumType",
    "builtins.type",
];

/// `class C(metaclass=M)` with `M` other than a standard metaclass.
pub(crate) fn check_class_keywords<'a>(checker: &mut Checker<'a>, arguments: &'a ast::Arguments) {
    for keyword in arguments.keywords.iter() {
        if keyword
            .arg
            .as_ref()
            .is_some_and(|arg| arg.id.as_str() == "metaclass")
        {
            let candidates = checker.resolve(&keyword.value);
            if checker
                .semantic
                .fully_resolved(&keyword.value, checker.scope)
                && !candidates.is_empty()
                && candidates
                    .iter()
                    .all(|name| STANDARD_METACLASSES.contains(&name.path.as_str()))
            {
                continue;
            }
            checker.report(
                Rule::ClassHook,
                keyword.range(),
                "`metaclass=` runs code when the class is created",
                "use an ordinary class or a dataclass",
            );
        }
    }
}

/// `def __class_getitem__` in a class body.
pub(crate) fn check_definition(checker: &mut Checker<'_>, name: &ast::Identifier) {
    let id = name.id.as_str();
    if id == "__class_getitem__" {
        checker.report(
            Rule::ClassHook,
            name.range,
            format!("defining `{id}` runs code implicitly when classes are created or used"),
            "use ordinary methods",
        );
    }
}
