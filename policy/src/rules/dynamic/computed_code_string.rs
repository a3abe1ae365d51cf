//! DYN405 computed-code-string.
//!
//! Called by the checker for every call (`check_call`) and every assignment (`check_stmt`). Which
//! calls hand a string to a library evaluator is shared with STR601/STR602 (`strings::formula`,
//! `strings::string_sink`): those judge literal strings; this rule judges strings built at run time.

use ruff_text_size::{Ranged, TextRange};

use crate::checker::Checker;
use crate::parse::ast::{self, Expr, Stmt};
use crate::rules::Rule;
use crate::semantic::{QualName, ScopeId};

pub(crate) const DOC: &str = r#"# DYN405 computed-code-string

## What it does
Denies handing a library a string built at run time that the library evaluates as Python code:

- `DataFrame.query(...)`, `DataFrame.eval(...)`, `pandas.eval`, `numexpr.evaluate`;
- model formulas (`statsmodels.formula.api.*`, `Model.from_formula`, `patsy.dmatrix`/`dmatrices`,
  the `formula`, `re_formula` and `vc_formula` arguments);
- string arguments of sympy functions (`sympify`, `parse_expr`, `S`, `lambdify`, `simplify`…);
- `typing.ForwardRef(...)`;
- annotations written at run time: assignments into `__annotations__` (`C.__annotations__[k] = v`,
  `C.__annotations__ = {...}`, `.update(...)`/`.setdefault(...)`, `setattr(C, "__annotations__", d)`)
  whose names are not literals or whose values are strings built at run time;
- the fields of classes generated from data: `dataclasses.make_dataclass`, `typing.NamedTuple` and
  `typing.TypedDict` with field names that are not literals or types that are strings built at run
  time.

"Built at run time" means an f-string that interpolates a value, a concatenation or `%`-format with a
part that is not a literal, `str.format`/`format_map`/`join`/`replace`, `str()`/`repr()`/`format()` of
a value, a string method of such a string, or a name assigned one of these. Literal strings (and names
bound only to literals) stay allowed: STR601 judges what they contain. So do conversions and string
methods of constants only (`"a > " + str(1)`, `str(limit)` with `limit = 1`, `", ".join(["a", "b"])`),
but not of a name bound to a list or dictionary, which the program may fill later (`terms.append(s)`).

## Why is this bad?
Each of these libraries compiles the string and runs it: pandas' expression engine resolves `@name`
references in the caller's frame (and with `level=` in frames above it), patsy and formulaic `eval`
every formula term, sympy's parser ends in `eval` with Python's builtins in reach, `typing.get_type_hints`
evaluates string annotations with `eval`, and `dataclasses` writes field names into the source of the
`__init__` it generates with `exec`. A string the program computes is code the checker never saw:
`df.query(f"@{name}.system('id')")` or `C.__annotations__[k] = t` followed by `get_type_hints(C)` or
`@dataclass` runs whatever `name`, `k` or `t` hold.

## Example
```python
col = "price"
df.query(f"{col} > 5")
```
Filter with a boolean mask instead: `df[df[col] > 5]`; write formulas as literals (`"y ~ x1 + x2"`),
build sympy expressions from symbols, and declare fields in a class statement.

## Evasions handled
- The string held in a variable: a name is followed to every value assigned to it in its scope
  (`expr = "a > " + str(x); df.query(expr)`).
- Concatenations, `%`-formatting, `.format`, `.join` and f-strings, at any depth, and string methods
  applied to them (`(prefix + s).strip()`).
- Field names given as tuples, lists, dictionaries or names that are not literals, to
  `make_dataclass`, `NamedTuple` and `TypedDict`, positionally or as `fields=`.
- `__annotations__` written through the attribute, the module- or class-level name, its dictionary
  methods and `setattr`.

## Known gaps
- A string that reaches the evaluator through a function parameter, a container or an attribute is not
  followed; STR602 warns about the `query`/`eval` and formula cases, and the runtime layer judges the
  code the library compiles as the program's (DYN401).
- String annotations written in the source (`x: "expression"`) are literals and are not judged as code.
- Calls of these APIs through a computed callee (`getattr(df, name)(s)`) are ATTR304's.
"#;

/// How many expressions one judgement may look at, names followed included, so hostile webs of
/// assignments (`s = s + s` a thousand times) stay cheap. Past it a string counts as computed.
const BUDGET: usize = 256;

// The formula APIs are `strings::formula`'s tables: one list of what takes a formula.
use crate::rules::strings::formula::{FORMULA_FUNCTIONS, FORMULA_KEYWORDS, FORMULA_PREFIXES};

/// Functions that evaluate their first argument (or `expr=`) as an expression.
const EXPRESSION_EVALUATORS: &[&str] = &[
    "pandas.eval",
    "numexpr.evaluate",
    "numexpr.re_evaluate",
    "typing.ForwardRef",
];

/// Class factories whose field names and types become generated code or evaluated annotations.
const FIELD_FACTORIES: &[&str] = &[
    "dataclasses.make_dataclass",
    "typing.NamedTuple",
    "typing.TypedDict",
    "typing_extensions.NamedTuple",
    "typing_extensions.TypedDict",
];

/// sympy constructors that take names, not expressions.
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

const ANNOTATIONS: &str = "__annotations__";

/// Every call: library evaluators given a computed string, class factories given computed fields,
/// and writes into `__annotations__` through its methods or `setattr`.
pub(crate) fn check_call(checker: &mut Checker<'_>, call: &ast::ExprCall, callee: &[QualName]) {
    let method = match call.func.as_ref() {
        Expr::Attribute(attribute) => Some((attribute.attr.id.as_str(), &attribute.value)),
        _ => None,
    };
    let first = call.arguments.args.first();
    let keyword = |name: &str| call.arguments.find_keyword(name).map(|k| &k.value);

    // `obj.query(s)`, `obj.eval(s)`: pandas' expression strings, whatever the receiver.
    if let Some((name @ ("query" | "eval"), _)) = method {
        if let Some(expression) = first.or_else(|| keyword("expr")) {
            report_if_computed(
                checker,
                expression,
                &format!("`.{name}()` evaluates"),
                "filter with boolean masks (`df[df[col] > x]`) instead of building expression strings",
            );
        }
    }
    for name in callee {
        let path = name.path.as_str();
        if EXPRESSION_EVALUATORS.contains(&path) {
            if let Some(expression) = first.or_else(|| keyword("expr")) {
                report_if_computed(
                    checker,
                    expression,
                    &format!("`{path}` evaluates"),
                    "compute the value with ordinary Python or pandas operations",
                );
            }
            return;
        }
        if FORMULA_FUNCTIONS.contains(&path) || FORMULA_PREFIXES.iter().any(|p| path.starts_with(p))
        {
            check_formulas(checker, call, path);
            return;
        }
        if FIELD_FACTORIES.contains(&path) {
            if let Some(fields) = call.arguments.args.get(1).or_else(|| keyword("fields")) {
                check_fields(checker, fields, path);
            }
            return;
        }
        if path.starts_with("sympy.") && !SYMPY_NAME_TAKERS.contains(&path) {
            for argument in call.arguments.args.iter() {
                report_if_computed(
                    checker,
                    argument,
                    &format!("`{path}` parses and evaluates"),
                    "build expressions from symbols (`sp.symbols`, operators, sympy functions) instead of strings",
                );
            }
            return;
        }
        if path == "builtins.setattr" {
            let args = &call.arguments.args;
            if let (Some(attribute), Some(value)) = (args.get(1), args.get(2)) {
                if checker
                    .literal_strings(attribute)
                    .is_some_and(|names| names.iter().any(|n| n == ANNOTATIONS))
                {
                    check_annotations_value(checker, value);
                }
            }
            return;
        }
    }
    if let Some(("from_formula", _)) = method {
        check_formulas(checker, call, ".from_formula");
        return;
    }
    // `C.__annotations__.update(d)`, `__annotations__.setdefault(k, v)`.
    if let Some((name @ ("update" | "setdefault" | "__setitem__"), receiver)) = method {
        if is_annotations(receiver) {
            match name {
                "update" => {
                    for argument in call.arguments.args.iter() {
                        check_annotations_value(checker, argument);
                    }
                    for keyword in call.arguments.keywords.iter() {
                        if keyword.arg.is_none() {
                            check_annotations_value(checker, &keyword.value);
                        } else {
                            check_annotation(checker, None, Some(&keyword.value));
                        }
                    }
                }
                _ => {
                    let args = &call.arguments.args;
                    check_annotation(checker, args.first(), args.get(1));
                }
            }
        }
    }
}

/// Assignments into `__annotations__`: the whole mapping or one entry.
pub(crate) fn check_stmt(checker: &mut Checker<'_>, stmt: &Stmt) {
    let (targets, value): (&[Expr], Option<&Expr>) = match stmt {
        Stmt::Assign(assign) => (&assign.targets, Some(&*assign.value)),
        Stmt::AugAssign(assign) => (std::slice::from_ref(&*assign.target), Some(&*assign.value)),
        Stmt::AnnAssign(assign) => (
            std::slice::from_ref(&*assign.target),
            assign.value.as_deref(),
        ),
        _ => return,
    };
    let Some(value) = value else {
        return;
    };
    for target in targets {
        match target {
            target if is_annotations(target) => check_annotations_value(checker, value),
            Expr::Subscript(subscript) if is_annotations(&subscript.value) => {
                check_annotation(checker, Some(&subscript.slice), Some(value));
            }
            _ => {}
        }
    }
}

/// `__annotations__` as a name or as any object's attribute.
fn is_annotations(expr: &Expr) -> bool {
    match expr {
        Expr::Name(name) => name.id.as_str() == ANNOTATIONS,
        Expr::Attribute(attribute) => attribute.attr.id.as_str() == ANNOTATIONS,
        _ => false,
    }
}

/// A whole annotations mapping: a dictionary display whose entries pass, or nothing else.
fn check_annotations_value(checker: &mut Checker<'_>, value: &Expr) {
    match value {
        Expr::Dict(dict) => {
            for item in dict.items.iter() {
                match &item.key {
                    Some(key) => check_annotation(checker, Some(key), Some(&item.value)),
                    // `{**other}`: entries the checker cannot see.
                    None => report_annotations(checker, item.value.range()),
                }
            }
        }
        _ => report_annotations(checker, value.range()),
    }
}

/// One annotation entry: a literal name and a type that is not a string built at run time.
fn check_annotation(checker: &mut Checker<'_>, key: Option<&Expr>, value: Option<&Expr>) {
    if let Some(key) = key {
        if checker.literal_strings(key).is_none() {
            report_annotations(checker, key.range());
            return;
        }
    }
    if let Some(value) = value {
        if computed_string(checker, value) {
            report_annotations(checker, value.range());
        }
    }
}

fn report_annotations(checker: &mut Checker<'_>, range: TextRange) {
    checker.report(
        Rule::ComputedCodeString,
        range,
        "`__annotations__` is written from a value computed at run time: annotation names become generated code (dataclasses) and string annotations are evaluated (`typing.get_type_hints`)",
        "declare the fields in a class statement (`x: int`) or use a dictionary",
    );
}

/// Field lists of `make_dataclass`, `NamedTuple`, `TypedDict`: displays of literal names and types.
fn check_fields(checker: &mut Checker<'_>, fields: &Expr, api: &str) {
    let report = |checker: &mut Checker<'_>, range: TextRange| {
        checker.report(
            Rule::ComputedCodeString,
            range,
            format!("`{api}` is given fields computed at run time: field names become generated code and string types are evaluated"),
            "declare the fields in a class statement, or list literal names and types",
        );
    };
    let elements: &[Expr] = match fields {
        Expr::List(list) => &list.elts,
        Expr::Tuple(tuple) => &tuple.elts,
        Expr::Dict(dict) => {
            for item in dict.items.iter() {
                let key_ok = item
                    .key
                    .as_ref()
                    .is_some_and(|key| checker.literal_strings(key).is_some());
                if !key_ok {
                    report(
                        checker,
                        item.key.as_ref().map_or(item.value.range(), Ranged::range),
                    );
                } else if computed_string(checker, &item.value) {
                    report(checker, item.value.range());
                }
            }
            return;
        }
        _ => {
            report(checker, fields.range());
            return;
        }
    };
    for element in elements {
        let (name, kind) = match element {
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => {
                (elts.first(), elts.get(1))
            }
            other => (Some(other), None),
        };
        let name_ok = name.is_some_and(|name| checker.literal_strings(name).is_some());
        // A computed field name, or a field type given as a computed string.
        if !name_ok || kind.is_some_and(|kind| computed_string(checker, kind)) {
            report(checker, element.range());
        }
    }
}

/// The formula arguments of a formula API.
fn check_formulas(checker: &mut Checker<'_>, call: &ast::ExprCall, api: &str) {
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
        report_if_computed(
            checker,
            formula,
            &format!("`{api}` evaluates the terms of"),
            "write the formula as a string literal (`\"y ~ x1 + x2\"`), or build the design matrix with pandas",
        );
    }
}

fn report_if_computed(checker: &mut Checker<'_>, expr: &Expr, evaluates: &str, hint: &str) {
    if computed_string(checker, expr) {
        checker.report(
            Rule::ComputedCodeString,
            expr.range(),
            format!("{evaluates} a string built at run time as Python code"),
            hint,
        );
    }
}

/// True when `expr` builds a string from a value known only at run time (see the DOC), or is too
/// tangled to tell within [`BUDGET`].
fn computed_string(checker: &Checker<'_>, expr: &Expr) -> bool {
    let mut budget = BUDGET;
    computed_in(checker, expr, checker.scope, &mut budget)
}

fn computed_in(checker: &Checker<'_>, expr: &Expr, scope: ScopeId, budget: &mut usize) -> bool {
    let Some(left) = budget.checked_sub(1) else {
        return true;
    };
    *budget = left;
    match expr {
        Expr::FString(fstring) => fstring.value.iter().any(|part| match part {
            ast::FStringPart::Literal(_) => false,
            ast::FStringPart::FString(f) => f.elements.iter().any(|element| match element {
                ast::InterpolatedStringElement::Literal(_) => false,
                ast::InterpolatedStringElement::Interpolation(interpolation) => {
                    !constant(checker, &interpolation.expression, scope, budget)
                }
            }),
        }),
        Expr::BinOp(binop) => match binop.op {
            ast::Operator::Add => {
                computed_in(checker, &binop.left, scope, budget)
                    || computed_in(checker, &binop.right, scope, budget)
                    || (stringy(&binop.left) && !constant(checker, &binop.right, scope, budget))
                    || (stringy(&binop.right) && !constant(checker, &binop.left, scope, budget))
            }
            ast::Operator::Mod => {
                (stringy(&binop.left) || computed_in(checker, &binop.left, scope, budget))
                    && !constant(checker, &binop.right, scope, budget)
            }
            _ => false,
        },
        Expr::Call(call) => match call.func.as_ref() {
            Expr::Attribute(attribute) => {
                let receiver = &attribute.value;
                match attribute.attr.id.as_str() {
                    "format" | "format_map" | "join" | "replace" => {
                        (stringy(receiver) || computed_in(checker, receiver, scope, budget))
                            && !all_constant(checker, &call.arguments, scope, budget)
                    }
                    "upper" | "lower" | "strip" | "lstrip" | "rstrip" | "title" | "capitalize"
                    | "casefold" | "swapcase" | "removeprefix" | "removesuffix" => {
                        computed_in(checker, receiver, scope, budget)
                    }
                    _ => false,
                }
            }
            Expr::Name(name) => {
                matches!(
                    name.id.as_str(),
                    "str" | "repr" | "format" | "ascii" | "chr"
                ) && builtin(checker, &call.func, name.id.as_str(), scope)
                    && !all_constant(checker, &call.arguments, scope, budget)
            }
            _ => false,
        },
        Expr::Name(name) => checker
            .semantic
            .bound_values(name.id.as_str(), scope)
            .is_some_and(|values| {
                values
                    .iter()
                    .any(|(value, value_scope)| computed_in(checker, value, *value_scope, budget))
            }),
        _ => false,
    }
}

/// The string methods whose result is fixed when the string and the arguments are.
const STRING_METHODS: &[&str] = &[
    "format",
    "format_map",
    "join",
    "replace",
    "upper",
    "lower",
    "strip",
    "lstrip",
    "rstrip",
    "title",
    "capitalize",
    "casefold",
    "swapcase",
    "removeprefix",
    "removesuffix",
];

/// Whether `func` (the name `name`) is the builtin of that name, not a local shadowing it.
fn builtin(checker: &Checker<'_>, func: &Expr, name: &str, scope: ScopeId) -> bool {
    checker
        .semantic
        .resolve(func, scope)
        .iter()
        .any(|q| q.path.strip_prefix("builtins.") == Some(name))
}

/// A string literal or an f-string: the operand that makes `+` and `%` string operations.
fn stringy(expr: &Expr) -> bool {
    matches!(expr, Expr::StringLiteral(_) | Expr::FString(_))
}

/// A value the source fixes: literals, and names bound only to literals. Not within [`BUDGET`]: not
/// constant.
fn constant(checker: &Checker<'_>, expr: &Expr, scope: ScopeId, budget: &mut usize) -> bool {
    let Some(left) = budget.checked_sub(1) else {
        return false;
    };
    *budget = left;
    match expr {
        Expr::StringLiteral(_)
        | Expr::BytesLiteral(_)
        | Expr::NumberLiteral(_)
        | Expr::BooleanLiteral(_)
        | Expr::NoneLiteral(_) => true,
        Expr::FString(_) => !computed_in(checker, expr, scope, budget),
        Expr::UnaryOp(unary) => constant(checker, &unary.operand, scope, budget),
        Expr::BinOp(binop) => {
            constant(checker, &binop.left, scope, budget)
                && constant(checker, &binop.right, scope, budget)
        }
        Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => elts
            .iter()
            .all(|element| constant(checker, element, scope, budget)),
        // `str(1)`, `"x".upper()`, `", ".join(["a", "b"])`: a builtin conversion or a string
        // method of constants only is as fixed as they are.
        Expr::Call(call) => {
            all_fixed(checker, &call.arguments, scope, budget)
                && match call.func.as_ref() {
                    Expr::Name(name) => {
                        matches!(
                            name.id.as_str(),
                            "str" | "repr" | "format" | "ascii" | "chr"
                        ) && builtin(checker, &call.func, name.id.as_str(), scope)
                    }
                    Expr::Attribute(attribute) => {
                        STRING_METHODS.contains(&attribute.attr.id.as_str())
                            && (stringy(&attribute.value)
                                || constant(checker, &attribute.value, scope, budget))
                    }
                    _ => false,
                }
        }
        Expr::Name(name) => {
            checker.semantic.literal_strings(expr, scope).is_some()
                || checker
                    .semantic
                    .bound_values(name.id.as_str(), scope)
                    .is_some_and(|values| {
                        values.iter().all(|(value, value_scope)| {
                            constant(checker, value, *value_scope, budget)
                        })
                    })
        }
        _ => false,
    }
}

/// The arguments of a call whose result is judged constant: constants, and no name bound to a
/// list or a dictionary (the program may fill it later without assigning the name:
/// `terms.append(s)`); a list written in the call itself is nobody else's.
fn all_fixed(
    checker: &Checker<'_>,
    arguments: &ast::Arguments,
    scope: ScopeId,
    budget: &mut usize,
) -> bool {
    values_of(arguments).all(|argument| fixed(checker, argument, scope, budget))
}

fn fixed(checker: &Checker<'_>, expr: &Expr, scope: ScopeId, budget: &mut usize) -> bool {
    match expr {
        Expr::List(ast::ExprList { elts, .. }) | Expr::Tuple(ast::ExprTuple { elts, .. }) => elts
            .iter()
            .all(|element| fixed(checker, element, scope, budget)),
        Expr::Name(name) => {
            constant(checker, expr, scope, budget)
                && checker
                    .semantic
                    .bound_values(name.id.as_str(), scope)
                    .is_none_or(|values| {
                        values.iter().all(|(value, _)| {
                            !matches!(value, Expr::List(_) | Expr::Dict(_) | Expr::Set(_))
                        })
                    })
        }
        _ => constant(checker, expr, scope, budget),
    }
}

fn all_constant(
    checker: &Checker<'_>,
    arguments: &ast::Arguments,
    scope: ScopeId,
    budget: &mut usize,
) -> bool {
    values_of(arguments).all(|argument| constant(checker, argument, scope, budget))
}

/// A call's positional and keyword values, in order.
fn values_of(arguments: &ast::Arguments) -> impl Iterator<Item = &Expr> {
    arguments
        .args
        .iter()
        .chain(arguments.keywords.iter().map(|k| &k.value))
}
