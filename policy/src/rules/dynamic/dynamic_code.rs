//! DYN401 dynamic-code.

use ruff_text_size::TextRange;

use crate::checker::Checker;
use crate::rules::Rule;
use crate::semantic::QualName;

pub(crate) const DOC: &str = r#"# DYN401 dynamic-code

## What it does
Denies every reference to functions that run code given as data: `eval`, `exec`, `compile`, code and
function constructors (`types.CodeType`, `types.FunctionType`), and standard modules whose functions run
strings or start interpreters (`timeit`, `cProfile`, `profile`, `runpy`, `code`, `codeop`, `pdb`,
`doctest`).

## Why is this bad?
Code in a string is code the checker never saw: `exec("import os; os.system('id')")` defeats every other
static rule.

## Example
```python
result = eval("2 + 3")
```
Compute the value directly: `result = 2 + 3`.

## Evasions handled
- References, not only calls: `e = eval`, `[exec][0](s)`, `map(eval, xs)`, `@exec`-style decorators,
  default values (`def f(e=eval)`), aliases through imports (`from builtins import exec as run`).
- Identifiers in look-alike Unicode letters (`ｅｖａｌ`) are NFKC-normalised before matching.

- Shadowing that may not hold: in a module or class body a name is the builtin unless a top-level
  statement of that body bound it before the use and nothing unbinds it again, so `def exec(s): …`
  followed by `del exec` (or `except … as exec`, or a function's `global exec; del exec`), a `def exec`
  under `if`/`try`/`for`, or one written after the use, leaves `exec(…)` judged as the builtin.

## Known gaps
- A binding that certainly holds hides the builtin: `def eval(x): …` at the top of the module, before
  the use and never deleted, makes `eval(…)` the program's own function, judged where it is written.
"#;

const NAMES: &[&str] = &[
    "builtins.eval",
    "builtins.exec",
    "builtins.compile",
    "builtins.__build_class__",
    "types.CodeType",
    "types.FunctionType",
    "types.LambdaType",
    "timeit",
    "cProfile",
    "profile",
    "runpy",
    "code",
    "codeop",
    "pdb",
    "doctest",
];

pub(crate) fn check_reference(checker: &mut Checker<'_>, name: &QualName, range: TextRange) {
    if let Some(matched) = NAMES
        .iter()
        .find(|pattern| super::under(&name.path, pattern))
    {
        checker.report(
            Rule::DynamicCode,
            range,
            format!("`{}` runs code from data (`{matched}`)", name.path),
            "write the computation as ordinary Python instead of building code at run time",
        );
    }
}
