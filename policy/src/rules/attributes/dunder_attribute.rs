//! ATTR301 dunder-attribute.

use ruff_text_size::{Ranged, TextRange};

use crate::checker::{AttributeSite, Checker};
use crate::names;
use crate::parse::ast;
use crate::rules::Rule;
use crate::semantic::{Origin, QualName};

pub(crate) const DOC: &str = r#"# ATTR301 dunder-attribute

## What it does
Denies dunder names (`__x__`) outside a short allowlist (`attributes.allow_dunder`, e.g. `__name__`,
`__doc__`, `__init__`, `__class__`), and the non-dunder `mro` unless `__mro__` is allowed, wherever an attribute name can hide: attribute nodes (load, store, delete,
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
- Format strings are parsed as CPython parses them (`str.format`, `format_map`,
  `string.Formatter().vformat`/`get_field`): `arg_name ("." attribute | "[" index "]")*`, with `:`,
  `!` and `}` inside an index (`{0[a:b].__globals__}`), conversions (`!r`), replacement fields nested
  in the format spec (`{0:{1.__mro__}}`), templates of any length or spacing, and templates joined from
  several literals (`f"{{0.__glo" "bals__}"`). Attributes are judged as attribute nodes are (ATTR301,
  ATTR303, REX501), index keys and keyword names as string keys.
- Reading `x.__class__`, `x.__dict__`, `x.__name__` or a class's `__mro__` (and `mro()`) alone is
  harmless and allowed by the default policy: what they reach (the program's classes, `object`, which
  is a builtin anyway) gives nothing the program did not have. The steps that lead further are not
  (`__base__`, `__subclasses__`, `__globals__`, `__builtins__`): every walk to `os` needs one;
  storing or deleting any dunder attribute is denied, and so is any dunder of a module object other
  than `__name__`, `__version__`, `__doc__`, `__file__` and `__all__` (`pd.io.stata.__dict__["os"]`).
- Defining hooks that run implicitly (`__del__`, `__reduce__`, `__getattr__`…) in a class body.
- Two calls are judged as what they do rather than as dunder reads: `object.__setattr__(obj, "name",
  value)` with a literal name (a frozen dataclass's `__post_init__`; the name is judged as `setattr`'s)
  and `super().__new__(cls, …)`/`str.__new__(cls, …)` in a subclass of a builtin value type. `object`,
  `super` and the type must be the builtins; `type.__new__` is never sanctioned.

## Known gaps
- Names built at run time (`"__cl" + "ass__"`) are only visible where they are used (`getattr` with a
  computed name: ATTR304).
"#;

fn allowed(checker: &Checker<'_>, name: &str) -> bool {
    checker.policy.allow_dunder.contains(name)
}

/// An attribute name (already NFKC-normalised). `mro` is included: `type(x).mro()` is the list of
/// `__mro__`, so it is allowed exactly when the policy allows `__mro__`.
pub(crate) fn check_attribute(checker: &mut Checker<'_>, name: &str, range: TextRange) {
    if checker.sanctioned_dunder == Some(range) {
        return;
    }
    if (names::is_dunder(name) && !allowed(checker, name))
        || (name == "mro" && !allowed(checker, "__mro__"))
    {
        report(checker, name, range);
    }
}

/// Value types whose `__new__` a subclass calls to build its instance: `str.__new__(cls, v)`.
/// (`type.__new__` is not one: with three arguments it builds a class from a dictionary, DYN404.)
const CONSTRUCTOR_TYPES: &[&str] = &[
    "builtins.object",
    "builtins.int",
    "builtins.float",
    "builtins.complex",
    "builtins.str",
    "builtins.bytes",
    "builtins.tuple",
    "builtins.frozenset",
];

/// The two dunder calls ordinary classes need, judged as what they are rather than as a read of a
/// dunder, returning the dunder's range for [`check_attribute`] to let through:
/// - `object.__setattr__(obj, "name", value)` with a literal name (how a frozen dataclass sets a field
///   in `__post_init__`): it is `setattr` with a literal, and the literal is judged as `setattr`'s is;
/// - `super().__new__(cls, …)` and `str.__new__(cls, …)` (and the other value types): how a subclass
///   of a builtin builds its value.
///
/// `object` and `super` must resolve to the builtins and nothing else.
pub(crate) fn sanctioned_call<'a>(
    checker: &mut Checker<'a>,
    call: &'a ast::ExprCall,
) -> Option<TextRange> {
    let ast::Expr::Attribute(callee) = call.func.as_ref() else {
        return None;
    };
    // Only a name the resolver knows every value of: a binding it does not follow adds no candidate,
    // and the builtin may be a candidate beside it (`if c: object = f()`).
    let receiver = if checker
        .semantic
        .fully_resolved(&callee.value, checker.scope)
    {
        checker.resolve(&callee.value)
    } else {
        std::rc::Rc::from(Vec::new())
    };
    let is = |path: &[&str]| {
        !receiver.is_empty() && receiver.iter().all(|q| path.contains(&q.path.as_str()))
    };
    match callee.attr.id.as_str() {
        "__setattr__" if is(&["builtins.object"]) => {
            let arguments = &call.arguments;
            let name = arguments.args.get(1)?;
            if arguments.args.len() != 3
                || !arguments.keywords.is_empty()
                || arguments.args.iter().any(ast::Expr::is_starred_expr)
            {
                return None;
            }
            let literals = checker.literal_strings(name)?;
            if literals.iter().any(|literal| names::is_dunder(literal)) {
                return None;
            }
            let module_receiver = checker.resolves_to_import(&arguments.args[0]);
            for literal in literals {
                checker.attribute_name(
                    &literal,
                    name.range(),
                    AttributeSite::Getattr { module_receiver },
                );
            }
            Some(callee.attr.range)
        }
        "__new__" if is(CONSTRUCTOR_TYPES) => Some(callee.attr.range),
        "__new__" => {
            let ast::Expr::Call(inner) = callee.value.as_ref() else {
                return None;
            };
            let zero_argument_super = inner.arguments.is_empty()
                && checker.semantic.fully_resolved(&inner.func, checker.scope)
                && checker
                    .resolve(&inner.func)
                    .iter()
                    .all(|q| q.path == "builtins.super")
                && !checker.resolve(&inner.func).is_empty();
            zero_argument_super.then_some(callee.attr.range)
        }
        _ => None,
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

/// `setattr(x, "__class__", …)` and `delattr(x, "__dict__")`: a store by name, judged as
/// [`check_store`] judges `x.__class__ = …`.
pub(crate) fn check_store_by_name(checker: &mut Checker<'_>, name: &str, range: TextRange) {
    let name = names::normalize_identifier(name);
    if names::is_dunder(&name) {
        checker.report(
            Rule::DunderAttribute,
            range,
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
    if let Some(dunder) = name.path.split('.').skip(1).find(|s| {
        names::is_dunder(s)
            && !matches!(
                *s,
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
    // `__class_getitem__` is DYN404's.
    if !names::is_dunder(id)
        || checker.policy.allow_dunder_definitions.contains(id)
        || id == "__class_getitem__"
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
