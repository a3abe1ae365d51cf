//! STR601/STR602 for the strings that statistics and algebra packages evaluate as Python: model
//! formulas (statsmodels, patsy) and sympy's string arguments.
//!
//! A formula is Python in disguise: patsy and formulaic evaluate each term (`np.log(x)`, `C(g)`) with
//! `eval` in the caller's namespace, builtins included, so `smf.ols("y ~ os.system('id')", df)` runs
//! a shell. Every name a literal formula calls or walks is judged here as if the program had written
//! it, in the scope of the call; a bare name no binding explains is a formula transform or a harmless
//! builtin, or the formula is denied. sympy turns string arguments of almost every function into
//! expressions with `parse_expr`, whose namespace holds sympy and Python's builtin functions: those
//! strings may only name symbols and call mathematics.

use ruff_text_size::{Ranged, TextRange};

use crate::checker::{Checker, ReferenceKind};
use crate::parse::ast::{self, Expr};
use crate::rules::Rule;
use crate::semantic::{Origin, QualName};

/// Callables whose first argument (or `formula=`/`formula_like=`) is a formula.
pub(crate) const FORMULA_PREFIXES: &[&str] =
    &["statsmodels.formula.api.", "statsmodels.api.formula."];
pub(crate) const FORMULA_FUNCTIONS: &[&str] = &[
    "patsy.dmatrix",
    "patsy.dmatrices",
    "patsy.incr_dbuilder",
    "patsy.incr_dbuilders",
    "patsy.highlevel.dmatrix",
    "patsy.highlevel.dmatrices",
];
/// Keywords that hold formulas (statsmodels' mixed models take several).
pub(crate) const FORMULA_KEYWORDS: &[&str] =
    &["formula", "formula_like", "re_formula", "vc_formula"];

/// What a formula may call without the program binding it: patsy's and formulaic's transforms and
/// contrasts, and builtins that compute.
const FORMULA_TRANSFORMS: &[&str] = &[
    "C",
    "I",
    "Q",
    "center",
    "scale",
    "standardize",
    "bs",
    "cr",
    "cc",
    "te",
    "poly",
    "lag",
    "log",
    "exp",
    "sqrt",
    "Treatment",
    "Sum",
    "Diff",
    "Helmert",
    "Poly",
    "ContrastMatrix",
    "abs",
    "round",
    "min",
    "max",
    "pow",
    "float",
    "int",
    "str",
    "bool",
    "len",
];

/// Names a sympy string may not call: Python builtins that reach objects, files or code, and sympy
/// functions that parse strings again, generate code or start programs.
const SYMPY_STRING_CALLS_DENIED: &[&str] = &[
    "eval",
    "exec",
    "compile",
    "open",
    "getattr",
    "setattr",
    "delattr",
    "hasattr",
    "globals",
    "locals",
    "vars",
    "dir",
    "breakpoint",
    "input",
    "help",
    "exit",
    "quit",
    "memoryview",
    "print",
    "type",
    "object",
    "id",
    "iter",
    "next",
    "sympify",
    "S",
    "parse_expr",
    "lambdify",
    "preview",
    "init_session",
    "init_printing",
    "var",
    "test",
    "doctest",
    "interactive_traversal",
    "python",
    "textplot",
    "plot",
];

/// sympy constructors that take names, not expressions: a computed name is not worth a warning.
const SYMPY_NAME_TAKERS: &[&str] = &[
    "sympy.Symbol",
    "sympy.symbols",
    "sympy.Dummy",
    "sympy.Wild",
    "sympy.Function",
    "sympy.IndexedBase",
    "sympy.Idx",
    "sympy.MatrixSymbol",
];

/// Formula and sympy calls; called for every call by `string_sink::check_call`.
pub(crate) fn check_call<'a>(checker: &mut Checker<'a>, call: &'a ast::ExprCall) {
    let callee = checker.resolve(&call.func);
    let method = match call.func.as_ref() {
        Expr::Attribute(attribute) => Some(attribute.attr.id.as_str()),
        _ => None,
    };
    let formula_api = callee.iter().find_map(|name| {
        let path = name.path.as_str();
        (FORMULA_FUNCTIONS.contains(&path) || FORMULA_PREFIXES.iter().any(|p| path.starts_with(p)))
            .then(|| path.to_owned())
    });
    let api = match (formula_api, method) {
        (Some(api), _) => Some(api),
        (None, Some("from_formula")) => Some(".from_formula".to_owned()),
        _ => None,
    };
    if let Some(api) = api {
        let mut formulas: Vec<&Expr> = call.arguments.args.first().into_iter().collect();
        for keyword in call.arguments.keywords.iter() {
            if keyword
                .arg
                .as_ref()
                .is_some_and(|a| FORMULA_KEYWORDS.contains(&a.id.as_str()))
            {
                match &keyword.value {
                    Expr::Dict(dict) => formulas.extend(dict.items.iter().map(|item| &item.value)),
                    value => formulas.push(value),
                }
            }
        }
        for formula in formulas {
            check_formula_argument(checker, &api, formula);
        }
        return;
    }
    if let Some(sympy) = callee.iter().find(|name| name.path.starts_with("sympy.")) {
        let sympy = sympy.path.clone();
        for argument in call.arguments.args.iter() {
            check_sympy_argument(checker, &sympy, argument);
        }
    }
}

fn check_formula_argument(checker: &mut Checker<'_>, api: &str, formula: &Expr) {
    match checker.folded_strings(formula) {
        Some(literals) => {
            for literal in literals {
                check_formula(checker, api, &literal, formula.range());
            }
        }
        None if builds_a_string(formula) || matches!(formula, Expr::Name(_)) => {
            checker.report(
                Rule::DynamicStringSink,
                formula.range(),
                format!("`{api}` is given a formula built at run time: its terms are evaluated as Python"),
                "write the formula as a string literal (`\"y ~ x1 + x2\"`), or build the design matrix with pandas",
            );
        }
        None => {}
    }
}

/// Judges a literal formula: dunders, `lambda`/`import`, calls of computed callees, and every name it
/// calls or walks, resolved where the call is.
fn check_formula(checker: &mut Checker<'_>, api: &str, text: &str, range: TextRange) {
    if let Some(why) = always_dangerous(text) {
        report_formula(checker, api, why, range);
        return;
    }
    for chain in chains(text) {
        if chain.computed_callee {
            report_formula(checker, api, "calls the result of an expression", range);
            continue;
        }
        let root = chain.segments[0];
        if chain.segments.len() == 1 && !chain.called {
            // A column or a variable read as a value.
            continue;
        }
        for segment in &chain.segments[1..] {
            checker.attribute_name(segment, range, crate::checker::AttributeSite::Attribute);
            if segment.starts_with('_') {
                report_formula(checker, api, "walks a private attribute", range);
            }
        }
        let candidates = resolve_chain(checker, &chain.segments.join("."), range);
        if candidates.is_empty() {
            // Bound by the program to something the checker does not follow (a function it defines,
            // a computed value): the program's own code, judged where it is written.
            continue;
        }
        if candidates.iter().all(|name| name.origin == Origin::Builtin) {
            if chain.segments.len() == 1 && FORMULA_TRANSFORMS.contains(&root) {
                continue;
            }
            if chain.segments.len() == 1 {
                report_formula(
                    checker,
                    api,
                    &format!("calls `{root}`, which is neither a formula transform nor defined by the program"),
                    range,
                );
            }
            // `data.col` or an unknown module: patsy would look it up in the data or fail.
            continue;
        }
        for name in candidates {
            checker.reference_rules(&name, range, ReferenceKind::Call);
        }
    }
}

fn report_formula(checker: &mut Checker<'_>, api: &str, why: &str, range: TextRange) {
    checker.report(
        Rule::StringSink,
        range,
        format!("the formula given to `{api}` {why}: formula terms are evaluated as Python"),
        "use column names, arithmetic and transforms such as `np.log(x)`, `C(g)`, `I(x**2)`, `Q(\"a b\")`",
    );
}

fn check_sympy_argument(checker: &mut Checker<'_>, api: &str, argument: &Expr) {
    match checker.folded_strings(argument) {
        Some(literals) => {
            for literal in literals {
                if let Some(why) = sympy_string_danger(&literal) {
                    checker.report(
                        Rule::StringSink,
                        argument.range(),
                        format!("the string given to `{api}` {why}: sympy parses and evaluates it as Python"),
                        "build expressions from symbols (`x = sp.symbols(\"x\")`, `sp.sin(x) + 1`) instead of strings",
                    );
                }
            }
        }
        None if builds_a_string(argument) && !SYMPY_NAME_TAKERS.contains(&api) => {
            checker.report(
                Rule::DynamicStringSink,
                argument.range(),
                format!("`{api}` is given a string built at run time: sympy parses and evaluates strings"),
                "build expressions from symbols (`sp.symbols`, operators, sympy functions) instead of strings",
            );
        }
        None => {}
    }
}

/// Why a string handed to sympy is dangerous, if it is.
fn sympy_string_danger(text: &str) -> Option<&'static str> {
    if let Some(why) = always_dangerous(text) {
        return Some(why);
    }
    if text.contains(['\'', '"', '`']) {
        return Some("contains a string, which sympy would parse again");
    }
    for chain in chains(text) {
        if chain.segments.iter().skip(1).any(|s| s.starts_with('_'))
            || chain.segments[0].starts_with('_')
        {
            return Some("names a private attribute");
        }
        if chain.computed_callee {
            return Some("calls the result of an expression");
        }
        if chain.called
            && chain.segments.len() == 1
            && SYMPY_STRING_CALLS_DENIED.contains(&chain.segments[0])
        {
            return Some("calls a function that reaches code, files or the interpreter");
        }
    }
    None
}

/// Dunders, `lambda` and `import` are never mathematics.
fn always_dangerous(text: &str) -> Option<&'static str> {
    if text.contains("__") {
        return Some("contains a dunder name");
    }
    if ["lambda", "import", "exec", "eval"]
        .iter()
        .any(|word| contains_word(text, word))
    {
        return Some("contains `lambda`, `import`, `exec` or `eval`");
    }
    None
}

fn contains_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
            && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

/// Expressions that certainly build a string at run time.
fn builds_a_string(expr: &Expr) -> bool {
    match expr {
        Expr::FString(_) | Expr::StringLiteral(_) => true,
        Expr::BinOp(binop) => builds_a_string(&binop.left) || builds_a_string(&binop.right),
        Expr::Call(call) => matches!(
            call.func.as_ref(),
            Expr::Attribute(attribute)
                if matches!(attribute.attr.id.as_str(), "format" | "join" | "replace")
        ),
        _ => false,
    }
}

/// A dotted name in an expression string, outside quotes and backticks.
#[derive(Debug, PartialEq, Eq)]
struct Chain<'t> {
    segments: Vec<&'t str>,
    /// Followed by `(`.
    called: bool,
    /// `)(`, `](`: a call of something computed (no name to judge).
    computed_callee: bool,
}

/// The dotted names of `text`, skipping quoted strings, backtick-quoted names and numbers. A `(` after
/// `)` or `]` is reported as a chain with `computed_callee`.
fn chains(text: &str) -> Vec<Chain<'_>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut index = 0;
    let mut previous_significant: u8 = b' ';
    while index < bytes.len() {
        let c = bytes[index];
        if c == b'\'' || c == b'"' || c == b'`' {
            let close = text[index + 1..]
                .find(c as char)
                .map_or(bytes.len(), |i| index + 1 + i);
            index = close + 1;
            previous_significant = c;
            continue;
        }
        if c.is_ascii_digit() {
            while index < bytes.len()
                && (bytes[index].is_ascii_alphanumeric()
                    || bytes[index] == b'.'
                    || bytes[index] == b'_')
            {
                index += 1;
            }
            previous_significant = b'0';
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 {
            let mut segments = Vec::new();
            let preceded_by_dot = previous_significant == b'.';
            loop {
                let start = index;
                while index < bytes.len()
                    && (bytes[index].is_ascii_alphanumeric()
                        || bytes[index] == b'_'
                        || bytes[index] >= 0x80)
                {
                    index += 1;
                }
                segments.push(&text[start..index]);
                let rest = text[index..].trim_start();
                let skipped = text.len() - index - rest.len();
                if rest.starts_with('.')
                    && rest[1..]
                        .trim_start()
                        .starts_with(|ch: char| ch.is_alphabetic() || ch == '_')
                {
                    index += skipped + 1;
                    index += text[index..].len() - text[index..].trim_start().len();
                    continue;
                }
                break;
            }
            let called = text[index..].trim_start().starts_with('(');
            if !preceded_by_dot && !is_keyword(segments[0]) {
                out.push(Chain {
                    segments,
                    called,
                    computed_callee: false,
                });
            } else if preceded_by_dot {
                // `(...).attr` or `x[0].attr`: the names after the dot are still attribute walks.
                out.push(Chain {
                    segments: std::iter::once("<computed>").chain(segments).collect(),
                    called,
                    computed_callee: false,
                });
            }
            previous_significant = b'a';
            continue;
        }
        if c == b'(' && matches!(previous_significant, b')' | b']') {
            out.push(Chain {
                segments: vec!["<computed>"],
                called: true,
                computed_callee: true,
            });
        }
        if !c.is_ascii_whitespace() {
            previous_significant = c;
        }
        index += 1;
    }
    out
}

fn is_keyword(word: &str) -> bool {
    matches!(
        word,
        "and" | "or" | "not" | "in" | "is" | "if" | "else" | "True" | "False" | "None" | "for"
    )
}

/// What a dotted name means in the program at the call: parsed as Python and resolved in the scope
/// of the call, as if the program had written it there.
/// What a dotted name of a formula may be where the formula is evaluated (the call at `range`).
fn resolve_chain(checker: &Checker<'_>, dotted: &str, range: TextRange) -> Vec<QualName> {
    if dotted.starts_with("<computed>") {
        return Vec::new();
    }
    let crate::parse::Parsed::Module { module, .. } = crate::parse::parse(dotted, 11, 50) else {
        return Vec::new();
    };
    match module.body.first() {
        Some(ast::Stmt::Expr(statement)) => {
            checker
                .semantic
                .resolve_at(&statement.value, checker.scope, range.start().to_usize())
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::{chains, sympy_string_danger};

    #[test]
    fn chains_skip_strings_numbers_and_keywords() {
        let found: Vec<(Vec<&str>, bool)> =
            chains("y ~ np.log(x) + C(g, Treatment(\"a.b\")) + 1.5e3 + `a b` and z")
                .into_iter()
                .map(|c| (c.segments, c.called))
                .collect();
        assert_eq!(
            found,
            [
                (vec!["y"], false),
                (vec!["np", "log"], true),
                (vec!["x"], false),
                (vec!["C"], true),
                (vec!["g"], false),
                (vec!["Treatment"], true),
                (vec!["z"], false),
            ]
        );
        assert!(chains("f(x)(y)").iter().any(|c| c.computed_callee));
        assert!(chains("(x).y.z")
            .iter()
            .any(|c| c.segments == ["<computed>", "y", "z"]));
    }

    #[test]
    fn sympy_strings_may_be_mathematics_only() {
        for ok in [
            "x**2 + 3*x - 1",
            "sin(x)*exp(-y)",
            "Matrix([[1, 2], [3, 4]])",
            "x y z",
            "Integral(x, (x, 0, 1))",
        ] {
            assert_eq!(sympy_string_danger(ok), None, "{ok}");
        }
        for bad in [
            "__import__('os').system('id')",
            "eval(x)",
            "open(x).read()",
            "sympify(x)",
            "x._args",
            "lambda: 1",
            "Symbol('x')",
            "f(x)(y)",
        ] {
            assert!(sympy_string_danger(bad).is_some(), "{bad}");
        }
    }
}
