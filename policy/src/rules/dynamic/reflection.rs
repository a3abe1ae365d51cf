//! DYN403 reflection.

use ruff_text_size::TextRange;

use crate::checker::Checker;
use crate::rules::Rule;
use crate::semantic::QualName;

pub(crate) const DOC: &str = r#"# DYN403 reflection

## What it does
Denies references to functions that expose namespaces or hook the interpreter: `globals`, `locals`,
`vars()` (and `vars` of a module), `breakpoint`, `help`, `gc`, `inspect`, `sys._getframe`, `sys.settrace`,
`sys.setprofile`, `sys.addaudithook`, `atexit`, `signal`.

## Why is this bad?
`globals()["__builtins__"]` and `vars(obj)` are dictionaries of everything, indexed by strings the
checker cannot follow; `gc.get_objects()` finds every live module; trace and audit hooks and `atexit`
run code at moments the program does not control; `help()` waits on a terminal that the jail does
not have.

## Example
```python
config = globals()["settings"]
```
Refer to the variable directly: `config = settings`.

## Evasions handled
- References in any position and through aliases.

- `vars(obj)` of an object is `obj.__dict__` and is judged as that (ATTR301: readable by default,
  denied on modules and names reached through them); `vars()` and `vars(module)` are denied, and so
  is `vars` passed as a value.

## Known gaps
- `input()` is not introspection: the default and strict policies ban it by name (REF201, which
  says that standard input is empty in warden's runs); a policy without that entry lets it raise
  EOFError.
- `dir()` is allowed (it lists names but does not reach objects by itself; `getattr` with the
  names it returns is ATTR304).
"#;

const NAMES: &[&str] = &[
    "builtins.globals",
    "builtins.locals",
    "builtins.vars",
    "builtins.breakpoint",
    "builtins.help",
    "gc",
    "inspect",
    "sys._getframe",
    "sys.settrace",
    "sys.setprofile",
    "sys.addaudithook",
    "atexit",
    "signal",
];

/// `vars(obj)` of one object that is not a module or a name reached through one: the same as
/// `obj.__dict__`, which ATTR301 judges (readable by default, denied on modules).
fn is_vars_of_an_object(checker: &Checker<'_>, name: &QualName, range: TextRange) -> bool {
    if name.path != "builtins.vars" {
        return false;
    }
    let Some(arguments) = checker.arguments_of_callee(range) else {
        return false;
    };
    match (&arguments.args[..], arguments.keywords.is_empty()) {
        ([object], true) => !object.is_starred_expr() && !checker.resolves_to_import(object),
        _ => false,
    }
}

pub(crate) fn check_reference(checker: &mut Checker<'_>, name: &QualName, range: TextRange) {
    if is_vars_of_an_object(checker, name, range) {
        return;
    }
    if let Some(matched) = NAMES
        .iter()
        .find(|pattern| super::under(&name.path, pattern))
    {
        checker.report(
            Rule::Reflection,
            range,
            format!(
                "`{}` exposes interpreter internals (`{matched}`)",
                name.path
            ),
            "refer to variables and objects directly; introspection is not available",
        );
    }
}
