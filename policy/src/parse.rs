//! The one module that talks to the Python parser.
//!
//! warden uses RustPython's maintained fork of ruff's parser. Everything about running it — target
//! versions, error types, the nesting pre-scan that keeps deep input from overflowing the stack — stays
//! here. The rest of the crate sees only its AST, re-exported as [`ast`], and the AST's text ranges
//! (`ruff_text_size`): a parser with a different AST would mean changing the rules too.

pub use ruff_python_ast as ast;
use ruff_python_ast::token::TokenKind;
use ruff_python_ast::PythonVersion;
use ruff_python_parser::lexer::lex;
use ruff_python_parser::{Mode, ParseOptions};
use ruff_text_size::Ranged;

/// A parsed module.
pub type Module = ast::ModModule;

/// A problem that stops the program from being judged, with its byte range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxProblem {
    pub message: String,
    pub start: usize,
    pub end: usize,
}

/// Syntax the target interpreter cannot run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported {
    pub message: String,
    pub start: usize,
    pub end: usize,
}

/// The outcome of parsing: the module, or why not.
#[derive(Debug)]
pub enum Parsed {
    Module {
        module: Module,
        unsupported: Vec<Unsupported>,
    },
    TooDeep {
        depth: usize,
        start: usize,
    },
    Invalid(SyntaxProblem),
}

/// Parses `text` for Python 3.`target_minor`, refusing input nested deeper than `max_depth` before
/// the recursive-descent parser ever sees it.
pub fn parse(text: &str, target_minor: u8, max_depth: usize) -> Parsed {
    if !provably_shallow(text, max_depth) {
        if let Some((depth, start)) = too_deep(text, max_depth) {
            return Parsed::TooDeep { depth, start };
        }
    }
    let version = PythonVersion {
        major: 3,
        minor: target_minor,
    };
    let options = ParseOptions::from(Mode::Module).with_target_version(version);
    let parsed = ruff_python_parser::parse_unchecked(text, options);
    if let Some(error) = parsed.errors().first() {
        return Parsed::Invalid(SyntaxProblem {
            message: error.error.to_string(),
            start: error.location.start().to_usize(),
            end: error.location.end().to_usize(),
        });
    }
    let unsupported = parsed
        .unsupported_syntax_errors()
        .iter()
        .map(|error| Unsupported {
            message: error.to_string(),
            start: error.range().start().to_usize(),
            end: error.range().end().to_usize(),
        })
        .collect();
    match parsed.into_syntax() {
        ast::Mod::Module(module) => Parsed::Module {
            module,
            unsupported,
        },
        ast::Mod::Expression(expression) => Parsed::Invalid(SyntaxProblem {
            message: "expected a module".to_owned(),
            start: expression.range.start().to_usize(),
            end: expression.range.end().to_usize(),
        }),
    }
}

/// Whether [`too_deep`] is sure to find nothing, from a count of bytes that is cheaper than lexing:
/// most programs are far too short to reach the limits, and the scan is a second pass of the lexer.
///
/// Every token that raises the scan's depth has its own place in the text that is counted here:
/// an opening bracket its byte, an f-string's start its quote, `-` `+` `~` `*` `**` `:` their (first)
/// byte, an indent the line break before its line (or the start of the text: one indent per line),
/// and a keyword (`not`, `await`, `lambda` twice, `yield`, `from`, `if`, `else`) an occurrence of
/// its letters (counted wherever they occur, inside names and strings too; only ASCII names are
/// keywords). Tokens do not overlap, so the count is at least the number of such tokens, which is
/// at least the depth; and a chain has at most one token per byte.
fn provably_shallow(text: &str, max_depth: usize) -> bool {
    if text.len() > max_depth.saturating_mul(20) {
        return false;
    }
    let bytes = text.as_bytes();
    let mut bound = 1usize;
    for (at, byte) in bytes.iter().enumerate() {
        bound += match byte {
            b'(' | b'[' | b'{' | b'\'' | b'"' | b'-' | b'+' | b'~' | b'*' | b':' | b'\n'
            | b'\r' => 1,
            b'a' | b'e' | b'f' | b'i' | b'l' | b'n' | b'y' => keyword_weight(&bytes[at..]),
            _ => 0,
        };
        if bound > max_depth {
            return false;
        }
    }
    true
}

/// What a keyword starting at the front of `rest` adds to the scan's depth, if one does.
fn keyword_weight(rest: &[u8]) -> usize {
    let (keyword, weight): (&[u8], usize) = match rest.first() {
        Some(b'a') => (b"await", 1),
        Some(b'e') => (b"else", 1),
        Some(b'f') => (b"from", 1),
        Some(b'i') => (b"if", 1),
        Some(b'l') => (b"lambda", 2),
        Some(b'n') => (b"not", 1),
        Some(b'y') => (b"yield", 1),
        _ => return 0,
    };
    if rest.starts_with(keyword) {
        weight
    } else {
        0
    }
}

/// A token scan that bounds everything the parser recurses on: brackets (including f-string
/// replacement fields), indentation, runs of prefix operators and keywords (`-`, `not`, `await`,
/// `lambda`, `yield`, `yield from`…), `lambda`s still waiting for their `:` (the parser nests a
/// `lambda` without one into the next, across lines too), and the length of one logical line's chain
/// of operators and conditional keywords (`a if b else c if d else …` nests without any of the
/// others). Returns the depth reached and where, when it passes `max_depth`.
fn too_deep(text: &str, max_depth: usize) -> Option<(usize, usize)> {
    let chain_limit = max_depth.saturating_mul(20);
    let mut lexer = lex(text, Mode::Module);
    let (mut brackets, mut indent, mut prefix_run, mut chain) = (0usize, 0usize, 0usize, 0usize);
    // The bracket depth of each `lambda` whose `:` has not come yet. In valid code its `:` is the
    // next colon at that depth, and none is open at the end of a logical line.
    let mut open_lambdas: Vec<usize> = Vec::new();
    loop {
        let kind = lexer.next_token();
        match kind {
            TokenKind::EndOfFile => return None,
            TokenKind::Lpar | TokenKind::Lsqb | TokenKind::Lbrace | TokenKind::FStringStart => {
                brackets += 1;
            }
            TokenKind::Rpar | TokenKind::Rsqb | TokenKind::Rbrace | TokenKind::FStringEnd => {
                brackets = brackets.saturating_sub(1);
            }
            TokenKind::Indent => indent += 1,
            TokenKind::Dedent => indent = indent.saturating_sub(1),
            TokenKind::Newline => chain = 0,
            TokenKind::Lambda => open_lambdas.push(brackets),
            TokenKind::Colon if open_lambdas.last() == Some(&brackets) => {
                open_lambdas.pop();
            }
            _ => {}
        }
        let prefix = matches!(
            kind,
            TokenKind::Minus
                | TokenKind::Plus
                | TokenKind::Tilde
                | TokenKind::Not
                | TokenKind::Await
                | TokenKind::Lambda
                | TokenKind::Yield
                | TokenKind::From
                | TokenKind::Star
                | TokenKind::DoubleStar
                | TokenKind::If
                | TokenKind::Else
                | TokenKind::Colon
        );
        prefix_run = if prefix { prefix_run + 1 } else { 0 };
        if (kind.is_operator() && !matches!(kind, TokenKind::Comma))
            || matches!(kind, TokenKind::If | TokenKind::Else)
        {
            chain += 1;
        }
        let depth = brackets + indent + prefix_run + open_lambdas.len();
        if depth > max_depth || chain > chain_limit {
            return Some((depth.max(chain), approximate_position(text, max_depth)));
        }
    }
}

/// Where nesting passes `limit`, found by a plain byte scan (the lexer does not expose offsets). Only
/// used to locate the message; falls back to the start of the file.
fn approximate_position(text: &str, limit: usize) -> usize {
    let mut depth = 0usize;
    for (offset, byte) in text.bytes().enumerate() {
        match byte {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth > limit {
            return offset;
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The pieces the token scan counts, and ones that sit next to them in odd ways.
    const PIECES: &[&str] = &[
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        "f'",
        "'",
        "\"",
        "f\"{",
        "}\"",
        "t'{",
        "rb'",
        "'''",
        "-",
        "+",
        "~",
        "*",
        "**",
        ":",
        ":=",
        "lambda",
        "lambda x:",
        "not ",
        "await ",
        "yield ",
        "yield from ",
        "from ",
        "if ",
        "else ",
        "1if ",
        "0else ",
        "x",
        "_",
        " ",
        "\n",
        "\r\n",
        "\r",
        "    ",
        "\t",
        "\\\n",
        "\u{e9}",
        "\u{ff49}\u{ff46} ",
        "#",
        ",",
        "=",
        "a.b",
        "1",
        "\u{c}",
    ];

    fn text_of(indices: &[usize]) -> String {
        indices.iter().map(|&index| PIECES[index]).collect()
    }

    /// Skipping the scan is exact: whenever the byte count says so, the scan finds nothing.
    fn assert_bound_holds(text: &str) {
        for limit in 0..48 {
            if provably_shallow(text, limit) {
                assert_eq!(too_deep(text, limit), None, "limit {limit}: {text:?}");
            }
        }
    }

    #[test]
    fn the_byte_count_bounds_the_token_scan_on_handmade_cases() {
        for text in [
            "x = (((1)))\n",
            "f'{f'{f'{1}'}'}'\n",
            "if a:\n    if b:\n        if c:\n            pass\n",
            "if a:\r    if b:\r        pass\r",
            "x = lambda: lambda: lambda: 1\n",
            "x = not not not -+~1\n",
            "x = 1if 1else 2\n",
            "def f():\n    yield from (yield (yield))\n",
            "x = a if b else c if d else e if f else g\n",
            "x = {**a, 'b': [*c]}\n",
            "\u{ff49}\u{ff46} = 1\n",
            "x = 1 + 2 - 3 * 4 ** 5 // 6 @ 7 | 8 & 9 ^ 10 << 11 >> 12 % 13\n",
        ] {
            assert_bound_holds(text);
        }
    }

    #[test]
    fn ordinary_programs_skip_the_scan_and_deep_ones_do_not() {
        let program = "import numpy as np\n\ndef f(x):\n    return np.sum([x, -x])\n";
        assert!(provably_shallow(program, 200));
        let deep = format!("x = {}1{}\n", "(".repeat(300), ")".repeat(300));
        assert!(!provably_shallow(&deep, 200));
        assert!(matches!(parse(&deep, 12, 200), Parsed::TooDeep { .. }));
        // Short, but nested past a small limit: refused with the limit's own message either way.
        assert!(matches!(
            parse("x = ((((1))))\n", 12, 3),
            Parsed::TooDeep { .. }
        ));
        // Longer than the chain limit allows to count: scanned.
        assert!(!provably_shallow(&"x\n".repeat(2_001), 200));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]
        #[test]
        fn the_byte_count_bounds_the_token_scan(indices in prop::collection::vec(0..PIECES.len(), 0..60)) {
            assert_bound_holds(&text_of(&indices));
        }
    }
}
