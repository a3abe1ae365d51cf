//! STR601 string-sink.

use ruff_text_size::{Ranged, TextRange};

use crate::checker::Checker;
use crate::parse::ast::{self, Expr};
use crate::rules::Rule;
use crate::semantic::QualName;

use super::query_expression::{dangerous, references};

pub(crate) const DOC: &str = r#"# STR601 string-sink

## What it does
Denies expression strings that can reach arbitrary objects: `DataFrame.query(...)` and
`DataFrame.eval(...)` whose literal calls through an `@name` reference (`@f()`, `@cfg.load()`), calls
a bare name other than the functions pandas evaluates itself (`abs`, `sqrt`, `log`, `exp`, `sin`…),
contains a dunder, `lambda` or `import`; and every reference to `pandas.eval`, `numexpr.evaluate`,
`sympy.sympify` and `sympy.parse_expr`. Walks through a reference (`@cfg.low`, `@d['k']`) are
judged as code: `@name` is resolved where the call is, and each attribute is checked by the attribute
and reference rules (`@pd.io.common.os` is REX501, `@obj.__class__` ATTR301).

Model formulas (`statsmodels.formula.api.*`, `Model.from_formula`, `patsy.dmatrix`/`dmatrices`, the
`formula`, `re_formula` and `vc_formula` arguments) are checked as the code they are: every name a
literal formula calls or walks is resolved where the call is and judged by the import and reference
rules (`"y ~ os.system('id')"` is IMP101 there), and a call of a bare name the program does not bind
must be a formula transform (`C`, `I`, `Q`, `center`, `scale`, `standardize`, `bs`, `cr`, `cc`, `te`,
`poly`, `log`, `exp`, `sqrt`, contrasts, `abs`, `round`…). String arguments of sympy functions
(`sp.simplify("x**2")`, `sp.lambdify(x, "x**2")`, `sp.S("1/3")`) are parsed and evaluated by sympy in a
namespace that holds Python's builtin functions: they may not contain dunders, `lambda`, `import`,
nested strings, private names or calls of `eval`, `open`, `getattr`, `sympify`, `lambdify`… (the list
is in `policy/src/rules/strings/formula.rs`).

## Why is this bad?
pandas evaluates `query`/`eval` strings with its own parser, and `@name` looks up variables in the
caller's frame: `df.query("@os.system('id')")` calls any object the program can name. `numexpr.evaluate`
(LangChain CVE-2023-39631) and `sympify` (CVE-2024-46946) have run arbitrary code from strings.

## Example
```python
limit = 5
df.query("price > @limit")
```
Filter with a boolean mask: `df[df["price"] > limit]`.

## Evasions handled
- A string held in a variable bound only to literals is checked as those literals; so is a
  concatenation of such strings or a literal separator's `join` of a list of them
  (`"@f" + "".join(["(", "1)"])`), which DYN405 takes for fixed.
- Formula terms are resolved in the scope of the call: aliases (`s = os.system`, `import numpy as
  n`) are followed as in code.
- Column comparisons and method calls on columns (`name.str.len() > 3`) stay allowed; so does `@`
  inside quoted strings (`email == 'a@b.com'`).
- `level=`, `local_dict=`, `global_dict=`, `resolvers=` or `**kwargs` make `@name` resolve outside the
  caller's scope: any walk through a reference is then denied. Subscript keys must be literals.

## Known gaps
- Strings computed at run time are reported by STR602 (warn by default), not denied.
"#;

const EVALUATORS: &[&str] = &[
    "pandas.eval",
    "numexpr.evaluate",
    "numexpr.re_evaluate",
    "sympy.sympify",
    "sympy.parse_expr",
];

pub(crate) fn check_reference(checker: &mut Checker<'_>, name: &QualName, range: TextRange) {
    if let Some(matched) = EVALUATORS
        .iter()
        .find(|p| crate::rules::dynamic::under(&name.path, p))
    {
        checker.report(
            Rule::StringSink,
            range,
            format!("`{matched}` evaluates a string as an expression"),
            "compute the expression with ordinary Python or pandas operations",
        );
    }
}

/// `<anything>.query(expr)` and `<anything>.eval(expr)` with a string argument.
pub(crate) fn check_call<'a>(checker: &mut Checker<'a>, call: &'a ast::ExprCall) {
    super::formula::check_call(checker, call);
    let Expr::Attribute(attribute) = call.func.as_ref() else {
        return;
    };
    let method = attribute.attr.id.as_str();
    if !matches!(method, "query" | "eval") {
        return;
    }
    let Some(expression) = call
        .arguments
        .args
        .first()
        .or_else(|| call.arguments.find_keyword("expr").map(|k| &k.value))
    else {
        return;
    };
    // These keywords make `@name` look somewhere else than the caller's own scope.
    let lexical = ["level", "local_dict", "global_dict", "resolvers"]
        .iter()
        .all(|keyword| call.arguments.find_keyword(keyword).is_none())
        && call.arguments.keywords.iter().all(|k| k.arg.is_some());
    match checker.folded_strings(expression) {
        Some(literals) => {
            for literal in literals {
                let why = dangerous(&literal)
                    .or_else(|| references(checker, &literal, lexical, expression.range()).err());
                if let Some(why) = why {
                    checker.report(
                        Rule::StringSink,
                        expression.range(),
                        format!("`.{method}()` expression {why}"),
                        "filter with boolean masks (`df[df[\"a\"] > x]`) instead of expression strings",
                    );
                }
            }
        }
        None if is_stringy(expression) => {
            super::dynamic_string_sink::report(checker, method, expression.range());
        }
        None => {}
    }
}

/// Expressions that may produce a string: names, f-strings, concatenations, calls.
fn is_stringy(expr: &Expr) -> bool {
    !matches!(
        expr,
        Expr::NumberLiteral(_)
            | Expr::BooleanLiteral(_)
            | Expr::NoneLiteral(_)
            | Expr::List(_)
            | Expr::Dict(_)
            | Expr::Lambda(_)
    )
}
