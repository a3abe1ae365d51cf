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
    if let Some((depth, start)) = too_deep(text, max_depth) {
        return Parsed::TooDeep { depth, start };
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
