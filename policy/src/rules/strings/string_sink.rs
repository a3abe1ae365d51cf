//! STR601 string-sink.

use ruff_text_size::{Ranged, TextRange};

use crate::checker::Checker;
use crate::parse::ast::{self, Expr};
use crate::rules::Rule;
use crate::semantic::QualName;

pub(crate) const DOC: &str = r#"# STR601 string-sink

## What it does
Denies expression strings that can reach arbitrary objects: `DataFrame.query(...)` and
`DataFrame.eval(...)` whose literal walks or calls through an `@name` reference, a call of a bare name, a dunder, `lambda`
or `import`; and every reference to `pandas.eval`, `numexpr.evaluate`, `sympy.sympify` and
`sympy.parse_expr`.

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
- A string held in a variable bound only to literals is checked as those literals.
- Formula terms are resolved in the scope of the call: aliases (`s = os.system`, `import numpy as
  n`) are followed as in code.
- Column comparisons and method calls on columns (`name.str.len() > 3`) stay allowed.

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
pub(crate) fn check_call(checker: &mut Checker<'_>, call: &ast::ExprCall) {
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
    match checker.literal_strings(expression) {
        Some(literals) => {
            for literal in literals {
                if let Some(why) = dangerous(&literal) {
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

/// Why a query string is dangerous, if it is.
fn dangerous(text: &str) -> Option<&'static str> {
    if reaches_through_reference(text) {
        return Some("reaches into a program variable with `@name.`, `@name(` or `@name[`");
    }
    if text.contains("__") {
        return Some("contains a dunder name");
    }
    if contains_word(text, "lambda") || contains_word(text, "import") {
        return Some("contains `lambda` or `import`");
    }
    if calls_bare_name(text) {
        return Some("calls a function by name");
    }
    None
}

/// `@name` followed by `.`, `(` or `[`: pandas resolves `@name` in the caller's frame, so anything after
/// it walks or calls an arbitrary object. A plain `@name` only reads a value.
fn reaches_through_reference(text: &str) -> bool {
    text.match_indices('@').any(|(at, _)| {
        let rest = text[at + 1..].trim_start();
        let name_len = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        name_len == 0 || rest[name_len..].trim_start().starts_with(['.', '(', '['])
    })
}

fn contains_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
            && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

/// An identifier not preceded by `.` and followed by `(`, other than a keyword.
fn calls_bare_name(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut index = 0;
    while index < bytes.len() {
        let c = bytes[index];
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = index;
            while index < bytes.len()
                && (bytes[index].is_ascii_alphanumeric() || bytes[index] == b'_')
            {
                index += 1;
            }
            let word = &text[start..index];
            let preceded_by_dot = text[..start].trim_end().ends_with('.');
            let followed_by_paren = text[index..].trim_start().starts_with('(');
            if followed_by_paren
                && !preceded_by_dot
                && !matches!(word, "and" | "or" | "not" | "in" | "is" | "if" | "else")
            {
                return true;
            }
        } else {
            index += 1;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::dangerous;

    #[test]
    fn column_expressions_are_fine_and_escapes_are_not() {
        for ok in [
            "a > 3 and (b < 2)",
            "name.str.len() > 3",
            "`my col` == 'x'",
            "c = a + b",
            "x in @items",
        ] {
            assert_eq!(dangerous(ok), None, "{ok}");
        }
        for bad in [
            "@os.system('id')",
            "@f()",
            "@d['k']",
            "a.__class__",
            "open('x')",
            "x == lambda: 1",
        ] {
            assert!(dangerous(bad).is_some(), "{bad}");
        }
    }
}
