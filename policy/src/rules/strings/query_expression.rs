//! The expression strings of `DataFrame.query`/`DataFrame.eval`, read the way pandas reads them:
//! what their text alone says (dunders, `lambda`, calls of names pandas does not evaluate itself) and
//! their `@name` references with the walks that follow, which are judged as code. STR601
//! (`string_sink.rs`) decides what to report.

use ruff_text_size::TextRange;

use crate::checker::{AttributeSite, Checker, ReferenceKind};
use crate::semantic::{Origin, QualName};

/// The functions pandas evaluates itself when an expression calls a bare name
/// (`pandas.core.computation.ops.MATHOPS`): nothing of the program's is called.
const PANDAS_FUNCTIONS: &[&str] = &[
    "sin", "cos", "tan", "exp", "log", "expm1", "log1p", "sqrt", "sinh", "cosh", "tanh", "arcsin",
    "arccos", "arctan", "arccosh", "arcsinh", "arctanh", "abs", "log10", "floor", "ceil",
    "arctan2",
];

/// Why a query string is dangerous on its text alone, if it is.
pub(super) fn dangerous(text: &str) -> Option<&'static str> {
    if text.contains("__") {
        return Some("contains a dunder name");
    }
    let code = blank_quoted(text);
    if contains_word(&code, "lambda") || contains_word(&code, "import") {
        return Some("contains `lambda` or `import`");
    }
    if calls_bare_name(&code) {
        return Some("calls a function by name");
    }
    None
}

/// One `@name` reference of an expression string and what follows it.
#[derive(Debug, PartialEq, Eq)]
struct Reference<'t> {
    name: &'t str,
    steps: Vec<Step<'t>>,
}

#[derive(Debug, PartialEq, Eq)]
enum Step<'t> {
    Attribute(&'t str),
    /// A subscript with a literal key (`['k']`, `[0]`).
    Index,
    Call,
}

/// Judges every `@name` reference: pandas looks `name` up in the caller's scope and walks what follows
/// with `getattr` and `[]`, so the walk is judged as code would be (the attribute names by the attribute
/// rules, `name.attr…` as a reference). Calls through a reference are denied, and so are walks when
/// the call's keywords make `@name` resolve elsewhere (`lexical` false).
pub(super) fn references(
    checker: &mut Checker<'_>,
    text: &str,
    lexical: bool,
    range: TextRange,
) -> Result<(), &'static str> {
    for reference in parse_references(text)? {
        if reference.steps.contains(&Step::Call) {
            return Err("calls through an `@name` reference");
        }
        if reference.steps.is_empty() {
            continue;
        }
        if !lexical {
            return Err("walks an `@name` reference that `level`, `local_dict`, `global_dict`, `resolvers` or `**` keywords resolve elsewhere");
        }
        judge_walk(checker, &reference, range);
    }
    Ok(())
}

/// The attribute names of a walk, and the walk as a reference as far as it stays a dotted name.
fn judge_walk(checker: &mut Checker<'_>, reference: &Reference<'_>, range: TextRange) {
    let mut paths: Vec<QualName> = checker.semantic.resolve_identifier(
        reference.name,
        checker.scope,
        range.start().to_usize(),
    );
    let mut dotted = true;
    for step in &reference.steps {
        let Step::Attribute(attribute) = step else {
            // What a subscript returns is not followed: later attributes are judged by name only.
            dotted = false;
            continue;
        };
        let site = if dotted && paths.iter().any(|q| q.origin == Origin::Import) {
            AttributeSite::ModuleAttribute
        } else {
            AttributeSite::Attribute
        };
        checker.attribute_name(attribute, range, site);
        if dotted {
            for path in &mut paths {
                path.path = format!("{}.{attribute}", path.path);
            }
            for name in paths.clone() {
                checker.reference_rules(&name, range, ReferenceKind::Value);
            }
        }
    }
}

/// The `@name` references of an expression string, outside its quoted strings.
fn parse_references(text: &str) -> Result<Vec<Reference<'_>>, &'static str> {
    const UNREADABLE: &str = "has an `@` reference the checker cannot read";
    let mut out = Vec::new();
    let code = blank_quoted(text);
    for (at, _) in code.match_indices('@') {
        let mut rest = text[at + 1..].trim_start();
        let name = identifier(rest).ok_or(UNREADABLE)?;
        rest = &rest[name.len()..];
        let mut steps = Vec::new();
        loop {
            let trimmed = rest.trim_start();
            if let Some(after) = trimmed.strip_prefix('.') {
                let after = after.trim_start();
                let attribute = identifier(after).ok_or(UNREADABLE)?;
                steps.push(Step::Attribute(attribute));
                rest = &after[attribute.len()..];
            } else if let Some(after) = trimmed.strip_prefix('[') {
                let close = after.find(']').ok_or(UNREADABLE)?;
                if !is_literal_key(after[..close].trim()) {
                    return Err("indexes an `@name` reference with something other than a literal");
                }
                steps.push(Step::Index);
                rest = &after[close + 1..];
            } else if trimmed.starts_with('(') {
                steps.push(Step::Call);
                break;
            } else {
                break;
            }
        }
        out.push(Reference { name, steps });
    }
    Ok(out)
}

fn identifier(text: &str) -> Option<&str> {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    let word = &text[..end];
    word.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        .then_some(word)
}

/// `'k'`, `"k"` (without quotes, brackets or backslashes inside) or an integer.
fn is_literal_key(key: &str) -> bool {
    let quoted = ['\'', '"'].iter().any(|&q| {
        key.len() >= 2
            && key.starts_with(q)
            && key.ends_with(q)
            && !key[1..key.len() - 1].contains(['\'', '"', '[', ']', '\\'])
    });
    let number = key.strip_prefix('-').unwrap_or(key);
    quoted || (!number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()))
}

/// The text with the contents of quoted strings and backticked column names replaced by spaces
/// (same length, same offsets): `'a@b.com'` is data, not a reference.
fn blank_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match quote {
            Some(q) if c == q => {
                quote = None;
                out.push(c);
            }
            Some(_) => out.extend(std::iter::repeat_n(' ', c.len_utf8())),
            None => {
                if matches!(c, '\'' | '"' | '`') {
                    quote = Some(c);
                }
                out.push(c);
            }
        }
    }
    out
}

fn contains_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
            && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

/// An identifier not preceded by `.` and followed by `(`, other than a keyword or a function pandas
/// evaluates itself (`abs`, `sqrt`…; `@abs(` is a call of the program's `abs` and still counts).
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
            let before = text[..start].trim_end();
            let followed_by_paren = text[index..].trim_start().starts_with('(');
            if followed_by_paren
                && !before.ends_with('.')
                && (before.ends_with('@') || !PANDAS_FUNCTIONS.contains(&word))
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
    use super::{dangerous, parse_references, Reference, Step};

    #[test]
    fn column_expressions_are_fine_and_escapes_are_not() {
        for ok in [
            "a > 3 and (b < 2)",
            "name.str.len() > 3",
            "`my col` == 'x'",
            "c = a + b",
            "x in @items",
            "abs(a) > 1",
            "c = sqrt(b) + arctan2(a, b)",
            "email == 'ops@example.com'",
            "label == 'f(x)'",
        ] {
            assert_eq!(dangerous(ok), None, "{ok}");
            assert!(parse_references(ok).is_ok(), "{ok}");
        }
        for bad in ["a.__class__", "open('x')", "x == lambda: 1", "@abs(a) > 1"] {
            assert!(dangerous(bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn references_are_read_with_their_walks() {
        let walk = |text| parse_references(text).unwrap_or_default();
        assert_eq!(
            walk("a > @cfg.low and b < @d['k']"),
            [
                Reference {
                    name: "cfg",
                    steps: vec![Step::Attribute("low")]
                },
                Reference {
                    name: "d",
                    steps: vec![Step::Index]
                },
            ]
        );
        assert_eq!(
            walk("@os.system('id')")[0].steps,
            [Step::Attribute("system"), Step::Call]
        );
        assert!(parse_references("@d[k]").is_err());
        assert!(parse_references("@ > 1").is_err());
    }
}
