//! ATTR304 computed-attribute.

use ruff_text_size::{Ranged, TextRange};

use crate::checker::{AttributeSite, Checker};
use crate::parse::ast;
use crate::rules::Rule;
use crate::semantic::QualName;

pub(crate) const DOC: &str = r#"# ATTR304 computed-attribute

## What it does
Denies attribute access whose name the checker cannot see: `getattr`, `setattr`, `hasattr` and
`delattr` with a name that is not a string literal, `operator.attrgetter`/`methodcaller` with computed
strings, and any of these functions used as a value (`map(getattr, …)`, `functools.partial(getattr, …)`,
`reduce(getattr, …)`). With a literal name the literal is checked like an attribute node.

## Why is this bad?
A computed name hides a dunder from every other rule: `getattr(x, "__cla" + "ss__")`,
`getattr(x, bytes([95, 95]).decode() + …)`. Passing `getattr` as a value is how smolagents'
CVE-2025-5120 walked to `__globals__`.

## Example
```python
name = "".join(["_", "_class_", "_"])
getattr(obj, name)
```
Access the attribute directly (`obj.attribute`).

## Evasions handled
- Names resolved through aliases (`g = getattr; g(x, n)`), `import operator as op`, `from operator
  import attrgetter as ag`.
- A name held in a variable bound only to string literals is checked as those literals.
- `attrgetter` paths are split on `.` as CPython splits them; each segment (and a `methodcaller` name)
  is judged as a `getattr` literal, banned methods included (`methodcaller("to_pickle", p)`: REF202).
- An f-string that builds a format template with an interpolation inside a field's attribute name
  (`f"{{0.{name}}}".format(x)`).

- A descriptor's `getattr(obj, self.name)` / `setattr(obj, self.name, value)` is denied too, with a
  hint: the name came from `__set_name__`, but what an attribute holds can be changed anywhere
  (`d.name = …`, `vars(d)[…]`), and the runtime layer does not hold what a computed name reaches
  (reading `__subclasses__` or `__globals__` raises no audit event). The instance's own dictionary,
  `obj.__dict__[self.name]`, holds only what the program stored there: it is allowed.

## Known gaps
- Functions that take attribute names in other libraries (e.g. `pandas.DataFrame.pipe` with a string)
  are not recognised.
- A format template computed some other way (`("{0." + name + "}").format(x)`, a template returned
  by a function) is not seen: only literal templates and f-strings are parsed. `Formatter().get_field`
  is recognised by its method name with a literal field name only.
"#;

const ATTRIBUTE_FUNCTIONS: &[&str] = &[
    "builtins.getattr",
    "builtins.setattr",
    "builtins.hasattr",
    "builtins.delattr",
];
const GETTERS: &[&str] = &["operator.attrgetter", "operator.methodcaller"];

/// `getattr` and friends referenced other than as the callee of a call. The checker consults it only
/// for such references (`ReferenceKind::Value` in `checker::REFERENCE_RULES`).
pub(crate) fn check_value_use(checker: &mut Checker<'_>, name: &QualName, range: TextRange) {
    let path = name.path.as_str();
    if ATTRIBUTE_FUNCTIONS.contains(&path) || GETTERS.contains(&path) {
        checker.report(
            Rule::ComputedAttribute,
            range,
            format!("`{path}` used as a value hides which attributes it reaches"),
            "access attributes directly by name",
        );
    }
}

/// Calls of the attribute functions.
pub(crate) fn check_call<'a>(
    checker: &mut Checker<'a>,
    call: &'a ast::ExprCall,
    callee: &[QualName],
) {
    for name in callee {
        let path = name.path.as_str();
        if ATTRIBUTE_FUNCTIONS.contains(&path) {
            attribute_function(checker, call, path);
        } else if GETTERS.contains(&path) {
            getter(checker, call, path);
        }
    }
}

fn attribute_function<'a>(checker: &mut Checker<'a>, call: &'a ast::ExprCall, path: &str) {
    let Some(name) = call
        .arguments
        .args
        .get(1)
        .or_else(|| call.arguments.find_keyword("name").map(|k| &k.value))
    else {
        return;
    };
    let module_receiver = call
        .arguments
        .args
        .first()
        .is_some_and(|receiver| checker.resolves_to_import(receiver));
    let stores = matches!(path, "builtins.setattr" | "builtins.delattr");
    match checker.literal_strings(name) {
        Some(literals) => {
            for literal in literals {
                checker.attribute_name(
                    &literal,
                    name.range(),
                    AttributeSite::Getattr { module_receiver },
                );
                if stores {
                    crate::rules::attributes::dunder_attribute::check_store_by_name(
                        checker,
                        &literal,
                        name.range(),
                    );
                }
            }
            // The chain itself (`getattr(pd.io.stata, "os")`) is checked as a reference by the checker.
        }
        None if is_attribute_of_a_name(name) => report_descriptor(checker, path, name.range()),
        None => report_computed(checker, path, name.range()),
    }
}

/// `self.name`, `self._attr`: how a descriptor names the attribute it manages.
fn is_attribute_of_a_name(expr: &ast::Expr) -> bool {
    matches!(expr, ast::Expr::Attribute(attribute) if attribute.value.is_name_expr())
}

/// A computed name held in an attribute, as a descriptor holds the name `__set_name__` gave it. The
/// runtime layer cannot hold what such a name reaches (`__subclasses__` and `__globals__` raise no
/// audit event), so it stays denied; the instance's own dictionary is what a descriptor needs.
fn report_descriptor(checker: &mut Checker<'_>, path: &str, range: TextRange) {
    let short = path.strip_prefix("builtins.").unwrap_or(path);
    checker.report(
        Rule::ComputedAttribute,
        range,
        format!("`{path}` with a computed attribute name"),
        format!(
            "a descriptor keeps its value in the instance's dictionary: `obj.__dict__[self.name]` \
             (and `obj.__dict__[self.name] = value`, `self.name in obj.__dict__`) instead of `{short}(obj, self.name…)`"
        ),
    );
}

fn getter(checker: &mut Checker<'_>, call: &ast::ExprCall, path: &str) {
    // attrgetter takes only names; methodcaller's first argument is the name, the rest are arguments.
    let names = if path == "operator.methodcaller" {
        1
    } else {
        usize::MAX
    };
    for argument in call.arguments.args.iter().take(names) {
        match checker.literal_strings(argument) {
            Some(literals) => {
                // `attrgetter("a.b")` is `getattr(getattr(x, "a"), "b")` (CPython splits on `.` and
                // nothing else); a methodcaller name is not split by CPython, but a dotted one names no
                // real method, so splitting it only adds checks. Each segment is judged as a `getattr`
                // literal is: `methodcaller("to_pickle", path)` is REF202's too.
                for literal in literals {
                    for segment in literal.split('.') {
                        checker.attribute_name(
                            segment,
                            argument.range(),
                            AttributeSite::Getattr {
                                module_receiver: false,
                            },
                        );
                    }
                }
            }
            None => report_computed(checker, path, argument.range()),
        }
    }
    if call.arguments.args.is_empty() && !call.arguments.keywords.is_empty() {
        report_computed(checker, path, call.range());
    }
}

fn report_computed(checker: &mut Checker<'_>, path: &str, range: TextRange) {
    checker.report(
        Rule::ComputedAttribute,
        range,
        format!("`{path}` with a computed attribute name"),
        "use a literal attribute name, or access the attribute directly",
    );
}

/// A replacement field of an f-string-built template whose attribute name holds an interpolation:
/// `f"{{0.{name}}}".format(x)` reaches an attribute named at run time.
pub(crate) fn report_format_field(checker: &mut Checker<'_>, range: TextRange) {
    checker.report(
        Rule::ComputedAttribute,
        range,
        "a format field's attribute name is built at run time (an f-string interpolation inside a `{…}` field of the template)",
        "write the format string as one literal, or access the attribute directly",
    );
}
