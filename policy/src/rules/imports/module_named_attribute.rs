//! REX502 module-named-attribute.
//!
//! The check shares REX501's list (`attributes.deny_names`) and is called from
//! `reexported_module::check_attribute_name`, which decides between the two rules.

use ruff_text_size::TextRange;

use crate::checker::Checker;
use crate::rules::Rule;

pub(crate) const DOC: &str = r#"# REX502 module-named-attribute

## What it does
Warns (by default) about an attribute named like a guarded module (an `attributes.deny_names` entry
that is also denied in `imports.deny` or allowed only in part in `imports.members`: `os`, `sys`, `gc`,
`socket`…) on an object the checker cannot resolve: `row.os`, `df.sys`, `sample.gc`.

## Why is this bad?
Usually it is not: a column or a field named `os` (operating system), `sys` (systolic pressure) or
`gc` (GC content) is data, and `row.os` is how pandas rows and named tuples expose it. But an object
can also hold a module: a module reached without an import (`err.obj` of an `AttributeError`, a
module kept in a container or returned by a function) has its imports as attributes, and `.os` of
such a module is the module `os`, past the import rules. The checker cannot tell the two apart, so it
warns; the run-time layer and the jail stop what the module would be used for. A policy that prefers
the old behaviour sets `REX502 = "deny"` in `[actions]`.

## Example
```python
for row in df.itertuples():
    print(row.os)
```
Prefer `row["os"]`/`df["os"]` for columns named like modules: the subscript form is never ambiguous.

## Evasions handled
- The private forms (`err.obj._os`, `arr.ctypes._ctypes`) are REX501, denied on any receiver; so are
  `deny_names` entries that are not modules (`x.popen`, `x.CodeType`).
- On a receiver that resolves to an imported name (`pd.io.stata.os`, `mod = pd.io.stata; mod.os`),
  the chain is REX501's, denied.

## Known gaps
- A module value the checker cannot follow reaches the module's members with a warning only. A module
  allowed only in part (`os`, `sys`, `pandas`…) cannot be used as a value at all (IMP101); one allowed
  in full that imports a guarded module (`pandas.io.stata`) can.
"#;

pub(crate) fn report(checker: &mut Checker<'_>, name: &str, range: TextRange) {
    checker.report(
        Rule::ModuleNamedAttribute,
        range,
        format!("attribute `{name}` is named like the module `{name}` on an object the checker cannot resolve"),
        format!("if `{name}` is a column or a field, `x[\"{name}\"]` says so; modules held by objects are not available"),
    );
}
