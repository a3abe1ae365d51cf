//! What a `str.format` template walks, parsed as CPython 3.11 parses it (`Objects/stringlib/
//! unicode_format.h`: `MarkupIterator_next`, `parse_field`, `field_name_split`, `FieldNameIterator_next`),
//! which `str.format`, `str.format_map`, `string.Formatter().vformat`/`format` (through
//! `_string.formatter_parser`) and `Formatter().get_field` (through `_string.formatter_field_name_split`)
//! all share:
//!
//! ```text
//! replacement_field ::= "{" field_name ["!" conversion] [":" format_spec] "}"
//! field_name        ::= arg_name ("." attribute_name | "[" element_index "]")*
//! ```
//!
//! - Literal text: `{{` and `}}` are escapes; a lone `}` is an error.
//! - The field name ends at the first `}`, `:` or `!` outside brackets: inside `[…]` every character up
//!   to `]` belongs to the index (`{0[a:b!c}]}` is the index `a:b!c}`), and `{` is an error.
//! - `arg_name` runs up to the first `.` or `[`; an attribute name runs up to the next `.` or `[` (any
//!   characters, not only identifiers: `{0.a b}` reads the attribute `a b`); an index runs up to `]`
//!   and must be followed by `.`, `[` or the end.
//! - A conversion is one character after `!`, followed by `}` or `:`.
//! - The format spec runs to the `}` that balances the field's `{`; when it holds a `{`, it is itself
//!   a template, formatted after the field's object has been walked. `str.format` walks the fields of
//!   a spec but raises "Max string recursion exceeded" before those of a spec's spec;
//!   `string.Formatter` walks one level more (and raises after the walk). This parser follows three
//!   levels, as `Formatter` does, and no more (which also bounds its recursion on hostile input).
//!
//! Where CPython raises `ValueError` the walks before the error have happened and none after: parsing
//! stops there too.

/// One step of a replacement field's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step<'a> {
    /// The `arg_name`: a positional index (digits), empty (automatic numbering) or a key of the
    /// keyword arguments (`format_map`'s mapping).
    Argument(&'a str),
    /// `.name`: `getattr(obj, name)`.
    Attribute(&'a str),
    /// `[key]`: `obj[key]`, an integer when `key` is all digits, else the string.
    Index(&'a str),
}

/// Every step of every replacement field of `template`, in the order CPython takes them.
pub(crate) fn steps(template: &str) -> Vec<Step<'_>> {
    let mut out = Vec::new();
    markup(template, LEVELS, &mut out);
    out
}

/// The levels of templates whose fields are walked: the template, its format specs and theirs.
const LEVELS: usize = 3;

/// The steps of a field name on its own (`Formatter().get_field("0.__init__.__globals__", …)`).
pub(crate) fn field_name_steps(field_name: &str) -> Vec<Step<'_>> {
    let mut out = Vec::new();
    field_name_walk(field_name, &mut out);
    out
}

/// `MarkupIterator` over a whole template, `levels` deep at most; false when CPython raises.
fn markup<'a>(template: &'a str, levels: usize, out: &mut Vec<Step<'a>>) -> bool {
    let bytes = template.as_bytes();
    let mut pos = 0;
    while pos < bytes.len() {
        // Literal text up to the first `{` or `}`. Both are ASCII, so byte positions are char
        // boundaries around them.
        let Some(offset) = template[pos..].find(['{', '}']) else {
            return true;
        };
        let brace = bytes[pos + offset];
        pos += offset + 1;
        let next = bytes.get(pos).copied();
        if next == Some(brace) {
            // `{{` or `}}`: an escaped brace, literal text.
            pos += 1;
            continue;
        }
        if brace == b'}' || next.is_none() {
            // A lone `}`, or a `{` at the end.
            return false;
        }
        let Some(field) = parse_field(template, &mut pos) else {
            return false;
        };
        if !field_name_walk(field.name, out) {
            return false;
        }
        if field
            .conversion
            .is_some_and(|c| !matches!(c, 'r' | 's' | 'a'))
        {
            // "Unknown conversion specifier", raised after the walk.
            return false;
        }
        if let Some(spec) = field.spec {
            if spec.contains('{') && (levels <= 1 || !markup(spec, levels - 1, out)) {
                // "Max string recursion exceeded", or an error in the spec.
                return false;
            }
        }
    }
    true
}

struct Field<'a> {
    name: &'a str,
    conversion: Option<char>,
    spec: Option<&'a str>,
}

/// `parse_field`: from just after a field's `{` to just after its closing `}`.
fn parse_field<'a>(template: &'a str, pos: &mut usize) -> Option<Field<'a>> {
    let mut chars = template[*pos..].char_indices().map(|(i, c)| (*pos + i, c));
    let start = *pos;
    let mut terminator = None;
    let mut name_end = template.len();
    while let Some((index, c)) = chars.next() {
        match c {
            '{' => return None,
            '[' => {
                // Everything up to `]` is the index; the `]` itself is read as an ordinary character.
                for (_, c) in chars.by_ref() {
                    if c == ']' {
                        break;
                    }
                }
            }
            '}' | ':' | '!' => {
                terminator = Some(c);
                name_end = index;
                break;
            }
            _ => {}
        }
    }
    let name = &template[start..name_end];
    let mut rest = template[name_end..]
        .char_indices()
        .map(|(i, c)| (name_end + i, c));
    rest.next(); // the terminator
    let mut field = Field {
        name,
        conversion: None,
        spec: None,
    };
    match terminator? {
        '}' => {
            *pos = name_end + 1;
            return Some(field);
        }
        '!' => {
            let (_, conversion) = rest.next()?;
            field.conversion = Some(conversion);
            match rest.next() {
                Some((index, '}')) => {
                    *pos = index + 1;
                    return Some(field);
                }
                Some((_, ':')) | None => {}
                Some(_) => return None,
            }
        }
        _ => {}
    }
    // The format spec, up to the `}` that balances the field's `{`.
    let spec_start = rest.clone().next().map_or(template.len(), |(i, _)| i);
    let mut depth = 1usize;
    for (index, c) in rest {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    field.spec = Some(&template[spec_start..index]);
                    *pos = index + 1;
                    return Some(field);
                }
            }
            _ => {}
        }
    }
    None
}

/// `field_name_split` and `FieldNameIterator_next`: pushes the steps in order; false at an error
/// (after the steps before it, which CPython has taken by then).
fn field_name_walk<'a>(name: &'a str, out: &mut Vec<Step<'a>>) -> bool {
    let first_end = name.find(['.', '[']).unwrap_or(name.len());
    out.push(Step::Argument(&name[..first_end]));
    let mut pos = first_end;
    while pos < name.len() {
        let kind = name.as_bytes()[pos];
        pos += 1;
        match kind {
            b'.' => {
                let end = name[pos..].find(['.', '[']).map_or(name.len(), |e| pos + e);
                if end == pos {
                    return false; // "Empty attribute in format string"
                }
                out.push(Step::Attribute(&name[pos..end]));
                pos = end;
            }
            b'[' => {
                let Some(close) = name[pos..].find(']').map(|e| pos + e) else {
                    return false; // "Missing ']' in format string"
                };
                if close == pos {
                    return false; // "Empty attribute in format string"
                }
                out.push(Step::Index(&name[pos..close]));
                pos = close + 1;
            }
            // "Only '.' or '[' may follow ']' in format field specifier"
            _ => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::{field_name_steps, steps, Step};
    use Step::{Argument as Arg, Attribute as Attr, Index};

    /// Expected walks, written down from CPython 3.11 (`_string.formatter_parser` and
    /// `_string.formatter_field_name_split`, with specs that hold `{` parsed again).
    #[test]
    fn templates_walk_what_cpython_walks() {
        let cases: &[(&str, &[Step<'_>])] = &[
            ("plain text", &[]),
            ("{{0.__class__}}", &[]),
            ("{{{0.__class__}}}", &[Arg("0"), Attr("__class__")]),
            (
                "{0.__class__.__mro__[1]}",
                &[Arg("0"), Attr("__class__"), Attr("__mro__"), Index("1")],
            ),
            ("{a.b[c].d}", &[Arg("a"), Attr("b"), Index("c"), Attr("d")]),
            ("{0[__globals__]}", &[Arg("0"), Index("__globals__")]),
            ("{0!r}", &[Arg("0")]),
            ("{0.__init__!r:>10}", &[Arg("0"), Attr("__init__")]),
            (
                "{0!s:{1.__globals__}}",
                &[Arg("0"), Arg("1"), Attr("__globals__")],
            ),
            (
                "{0:{1.f_globals}{2[x]}>}",
                &[Arg("0"), Arg("1"), Attr("f_globals"), Arg("2"), Index("x")],
            ),
            (
                "{:{:{0.__class__}}}",
                &[Arg(""), Arg(""), Arg("0"), Attr("__class__")],
            ),
            (
                "{0[a:b!c}].__globals__}",
                &[Arg("0"), Index("a:b!c}"), Attr("__globals__")],
            ),
            (
                "{0[x y].__globals__}",
                &[Arg("0"), Index("x y"), Attr("__globals__")],
            ),
            (
                "{0.a b.__code__}",
                &[Arg("0"), Attr("a b"), Attr("__code__")],
            ),
            ("{0[a.b]}", &[Arg("0"), Index("a.b")]),
            // Three levels are walked (`string.Formatter`'s limit), not four.
            (
                "{0:{1:{2.x}}}{3.y}",
                &[Arg("0"), Arg("1"), Arg("2"), Attr("x"), Arg("3"), Attr("y")],
            ),
            ("{0:{1:{2:{3.x}}}}{4.y}", &[Arg("0"), Arg("1"), Arg("2")]),
            ("{__builtins__}", &[Arg("__builtins__")]),
            (
                "a {0.x} b {1.y}",
                &[Arg("0"), Attr("x"), Arg("1"), Attr("y")],
            ),
            // Errors: what comes before is walked, nothing after.
            ("{0.__class__} }", &[Arg("0"), Attr("__class__")]),
            ("{0.__class__} {", &[Arg("0"), Attr("__class__")]),
            ("{0.a}{0{1.b}}", &[Arg("0"), Attr("a")]),
            ("{0.a..b}{1.c}", &[Arg("0"), Attr("a")]),
            ("{0[a]b.c}", &[Arg("0"), Index("a")]),
            ("{0.a!x}{1.b}", &[Arg("0"), Attr("a")]),
            ("{0.a!r x}{1.b}", &[]),
            ("{0:{1.a}", &[]),
            ("{0[a.__class__}", &[]),
            ("{0.é.__dict__}", &[Arg("0"), Attr("é"), Attr("__dict__")]),
        ];
        for (template, expected) in cases {
            assert_eq!(&steps(template), expected, "{template:?}");
        }
    }

    #[test]
    fn a_field_name_alone_walks_its_steps() {
        assert_eq!(
            field_name_steps("0.__init__.__globals__[_os]"),
            [
                Arg("0"),
                Attr("__init__"),
                Attr("__globals__"),
                Index("_os")
            ]
        );
        assert_eq!(
            field_name_steps("0[a b].__globals__"),
            [Arg("0"), Index("a b"), Attr("__globals__")]
        );
    }
}
