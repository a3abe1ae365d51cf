//! Attribute rules: dunder, private and frame attributes in every position a name can hide, and
//! attribute names the checker cannot see.

pub(crate) mod computed_attribute;
pub(crate) mod dunder_attribute;
pub(crate) mod frame_attribute;
pub(crate) mod private_attribute;

use ruff_text_size::TextRange;

use crate::checker::Checker;
use crate::names;

/// An attribute name from an attribute node, a match class-pattern keyword, a `getattr` literal or an
/// `attrgetter` path.
pub(crate) fn check_attribute_name(checker: &mut Checker<'_>, name: &str, range: TextRange) {
    let name = names::normalize_identifier(name);
    dunder_attribute::check_attribute(checker, &name, range);
    frame_attribute::check(checker, &name, range);
    crate::rules::imports::reexported_module::check_attribute_name(checker, &name, range);
}

/// A name found inside a string: dunders and frame attributes only (a column may well be named "os").
fn check_string_token(checker: &mut Checker<'_>, name: &str, range: TextRange) {
    let name = names::normalize_identifier(name);
    dunder_attribute::check_attribute(checker, &name, range);
    frame_attribute::check(checker, &name, range);
}

/// String literals: a dunder or frame name as a whole string (`d["__builtins__"]`,
/// `getattr(x, "__globals__")`), a path with such names (`attrgetter("a.__globals__")`,
/// `Formatter().get_field("0.__init__.__globals__")`), and `str.format` field paths (`"{0.__mro__}"`).
pub(crate) fn check_string(checker: &mut Checker<'_>, text: &str, range: TextRange) {
    if text.len() > 4096 || text.contains(char::is_whitespace) && !text.contains('{') {
        return;
    }
    if !text.contains(char::is_whitespace) {
        // Dotted paths and lookup paths alike: `a.__class__`, `0.__init__.__globals__[_os]`.
        for token in text
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|t| !t.is_empty())
        {
            check_string_token(checker, token, range);
        }
    }
    if text.contains('{') {
        for path in format_field_attributes(text) {
            check_string_token(checker, path, range);
        }
    }
}

/// The attribute names walked by the replacement fields of a format string:
/// `"{0.__class__.__mro__[1]}"` yields `__class__` and `__mro__`; `"{x[__globals__]}"` yields
/// `__globals__` too (a mapping key is an attribute-like lookup for our purpose).
fn format_field_attributes(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] != b'{' {
            index += 1;
            continue;
        }
        if bytes.get(index + 1) == Some(&b'{') {
            index += 2;
            continue;
        }
        let start = index + 1;
        let end = text[start..]
            .find(['}', '!', ':'])
            .map_or(text.len(), |e| start + e);
        let field = &text[start..end];
        for part in field.split(['.', '[', ']']).skip(1) {
            if !part.is_empty() {
                out.push(part);
            }
        }
        index = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::format_field_attributes;

    #[test]
    fn format_fields_yield_attribute_walks() {
        assert_eq!(
            format_field_attributes("{0.__class__.__mro__[1]}"),
            ["__class__", "__mro__", "1"]
        );
        assert_eq!(
            format_field_attributes("{{literal}} {name:>10} {0!r}"),
            Vec::<&str>::new()
        );
        assert_eq!(format_field_attributes("{x[__globals__]}"), ["__globals__"]);
    }
}
