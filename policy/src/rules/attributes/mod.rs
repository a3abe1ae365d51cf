//! Attribute rules: dunder and frame attributes in every position a name can hide, private names of
//! imported modules, and attribute names the checker cannot see.
//!
//! This module also finds the attribute names hidden in string literals; the checker judges them
//! (`Checker::attribute_name`), as it judges every other attribute name.

pub(crate) mod computed_attribute;
pub(crate) mod dunder_attribute;
pub(crate) mod format_fields;
pub(crate) mod frame_attribute;
pub(crate) mod private_attribute;

/// The words of a string literal that may be attribute names: the words of a string without whitespace
/// (a dunder or frame name as a whole string, `d["__builtins__"]`, `getattr(x, "__globals__")`; a path
/// of them, `attrgetter("a.__globals__")`). Long strings are skipped. What a `str.format` template walks
/// is parsed apart ([`format_fields`]), whatever the string's length or spacing.
pub(crate) fn string_words(text: &str) -> Vec<&str> {
    if text.len() > 4096 || text.contains(char::is_whitespace) {
        return Vec::new();
    }
    // Dotted paths and lookup paths alike: `a.__class__`, `0.__init__.__globals__[_os]`.
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|t| !t.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::string_words;

    #[test]
    fn strings_yield_their_words() {
        assert_eq!(
            string_words("0.__init__.__globals__[_os]"),
            ["0", "__init__", "__globals__", "_os"]
        );
        assert_eq!(string_words("{0.__class__}"), ["0", "__class__"]);
        assert_eq!(string_words("total by region"), Vec::<&str>::new());
        assert_eq!(string_words("x = {0.__mro__}"), Vec::<&str>::new());
    }
}
