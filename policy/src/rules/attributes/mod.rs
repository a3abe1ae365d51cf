//! Attribute rules: dunder and frame attributes in every position a name can hide, private names of
//! imported modules, and attribute names the checker cannot see.
//!
//! This module also finds the attribute names hidden in string literals; the checker judges them
//! (`Checker::attribute_name`), as it judges every other attribute name.

pub(crate) mod computed_attribute;
pub(crate) mod dunder_attribute;
pub(crate) mod frame_attribute;
pub(crate) mod private_attribute;

/// The attribute names a string literal may walk, in order: the words of a string without whitespace
/// (a dunder or frame name as a whole string, `d["__builtins__"]`, `getattr(x, "__globals__")`; a path
/// of them, `attrgetter("a.__globals__")`, `Formatter().get_field("0.__init__.__globals__")`), and the
/// attribute walks of `str.format` replacement fields (`"{0.__mro__}"`). Long strings and prose are
/// skipped.
pub(crate) fn string_attribute_names(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    if text.len() > 4096 || text.contains(char::is_whitespace) && !text.contains('{') {
        return out;
    }
    if !text.contains(char::is_whitespace) {
        // Dotted paths and lookup paths alike: `a.__class__`, `0.__init__.__globals__[_os]`.
        out.extend(
            text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .filter(|t| !t.is_empty()),
        );
    }
    if text.contains('{') {
        out.extend(format_field_attributes(text));
    }
    out
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
    use super::{format_field_attributes, string_attribute_names};

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

    #[test]
    fn strings_yield_their_words_and_format_walks() {
        assert_eq!(
            string_attribute_names("0.__init__.__globals__[_os]"),
            ["0", "__init__", "__globals__", "_os"]
        );
        assert_eq!(
            string_attribute_names("{0.__class__}"),
            ["0", "__class__", "__class__"]
        );
        assert_eq!(
            string_attribute_names("total by region"),
            Vec::<&str>::new()
        );
        assert_eq!(string_attribute_names("x = {0.__mro__}"), ["__mro__"]);
    }
}
