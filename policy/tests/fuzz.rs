//! Bad input never panics: property tests over arbitrary bytes, arbitrary text and Python token soup,
//! and adversarial inputs (deep nesting, long chains, huge, binary) that must be denied quickly without
//! overflowing the checker's stack. The cargo-fuzz target in `fuzz/` drives the same entry point.
//!
//! Every input goes through `check_on_worker`, as the CLI and the runner do. The adversarial cases run
//! under the default policy and under a generous one whose size limit is raised to 32 MiB, so that the
//! nesting, chain and node limits are exercised rather than only the size limit.

use std::time::{Duration, Instant};

use proptest::prelude::*;
use warden_policy::{check_on_worker, Action, Decision, Policy, Report, Rule};

fn default_policy() -> Policy {
    Policy::builtin_default().unwrap_or_else(|err| panic!("default policy: {err}"))
}

/// The default policy with a 32 MiB size limit: big inputs reach the parser and the limits after it.
fn generous_policy() -> Policy {
    let mut policy = default_policy();
    policy.source.max_bytes = 32 * 1024 * 1024;
    policy
}

/// The invariants every report keeps, whatever the input.
fn assert_well_formed(bytes: &[u8], report: &Report) {
    assert_eq!(
        report.decision,
        Decision::of(&report.findings),
        "the decision is the strictest action: {report:?}"
    );
    if report.decision == Decision::Allow {
        assert!(
            report.findings.iter().all(|f| f.action != Action::Deny),
            "an allowed program has a deny finding: {report:?}"
        );
    }
    // Spans index the decoded text when there is one, else the raw bytes.
    let len = report
        .decoded
        .as_ref()
        .map_or(bytes.len(), |decoded| decoded.text.len());
    for finding in &report.findings {
        let span = finding.span;
        assert!(span.line >= 1 && span.column >= 1, "{finding:?}");
        assert!(
            (span.end_line, span.end_column) >= (span.line, span.column),
            "{finding:?}"
        );
        assert!(
            span.start_byte <= span.end_byte && span.end_byte <= len,
            "span outside the source of {len} bytes: {finding:?}"
        );
    }
}

fn judge(bytes: &[u8], policy: &Policy) -> Report {
    let report = check_on_worker(bytes, policy);
    assert_well_formed(bytes, &report);
    report
}

// ---------------------------------------------------------------------------------------------------
// Properties

/// Pieces of Python, chosen to reach every corner of the lexer, parser and rules: keywords, soft
/// keywords, identifiers that NFKC-normalise to dangerous names, dunders, brackets, operators, every
/// string prefix with braces and escapes, numbers, comments, continuation lines and indentation.
const TOKENS: &[&str] = &[
    // Keywords and soft keywords.
    "False",
    "None",
    "True",
    "and",
    "as",
    "assert",
    "async",
    "await",
    "break",
    "class",
    "continue",
    "def",
    "del",
    "elif",
    "else",
    "except",
    "finally",
    "for",
    "from",
    "global",
    "if",
    "import",
    "in",
    "is",
    "lambda",
    "nonlocal",
    "not",
    "or",
    "pass",
    "raise",
    "return",
    "try",
    "while",
    "with",
    "yield",
    "match",
    "case",
    "type",
    "_",
    "print",
    // Identifiers: ordinary, dangerous, dunder, private, non-ASCII and NFKC look-alikes.
    "x",
    "y",
    "df",
    "pd",
    "np",
    "os",
    "sys",
    "subprocess",
    "eval",
    "exec",
    "open",
    "getattr",
    "__import__",
    "__class__",
    "__subclasses__",
    "__builtins__",
    "__globals__",
    "__init__",
    "_private",
    "ｅｖａｌ",
    "ſys",
    "𝓮𝔁𝓮𝓬",
    "名前",
    "ℌ",
    "__𝒸𝓁𝒶𝓈𝓈__",
    "é",
    "x\u{301}",
    // Brackets.
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    // Operators and delimiters.
    "+",
    "-",
    "*",
    "/",
    "//",
    "%",
    "**",
    "@",
    "<<",
    ">>",
    "&",
    "|",
    "^",
    "~",
    ":=",
    "<",
    ">",
    "<=",
    ">=",
    "==",
    "!=",
    "->",
    ".",
    ",",
    ":",
    ";",
    "=",
    "+=",
    "**=",
    "...",
    "!",
    "$",
    "?",
    "\\",
    // Strings, including braces, format specs, nested f-strings, template strings and bad escapes.
    "\"a\"",
    "'{x}'",
    "f\"{x}\"",
    "f'{x!r:>{w}}'",
    "f\"{{\"",
    "f\"{f'{x}'}\"",
    "t\"{x}\"",
    "rb\"\\x\"",
    "\"\"\"doc\"\"\"",
    "'{0.__class__}'",
    "\"__import__\"",
    "b'\\x00'",
    "'\\N{DASH}'",
    "u'x'",
    "f'''{\n}'''",
    "'unterminated",
    "\"\"\"open",
    // Numbers.
    "0",
    "1_000",
    "0x1f",
    "1e10",
    "1j",
    "0o7",
    "0b",
    "1__0",
    "09",
    // Layout.
    " ",
    " ",
    "\n",
    "\n    ",
    "\n        ",
    "\n\t",
    "\\\n",
    "# noqa\n",
    "\r\n",
    "\r",
    "\x0c",
];

/// A random sequence of Python tokens, mostly separated by spaces.
fn token_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(
        (prop::sample::select(TOKENS), prop::bool::weighted(0.7)),
        0..160,
    )
    .prop_map(|tokens| {
        let mut out = String::new();
        for (token, spaced) in tokens {
            out.push_str(token);
            if spaced {
                out.push(' ');
            }
        }
        out
    })
}

/// Lines of token soup with random indentation: more of it gets past the parser to the rules.
fn indented_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(
        (
            0usize..4,
            prop::collection::vec(prop::sample::select(TOKENS), 1..12),
        ),
        0..24,
    )
    .prop_map(|lines| {
        let mut out = String::new();
        for (indent, tokens) in lines {
            out.push_str(&"    ".repeat(indent));
            out.push_str(&tokens.join(" "));
            out.push('\n');
        }
        out
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        judge(&bytes, &default_policy());
    }

    #[test]
    fn arbitrary_text_never_panics(text in any::<String>()) {
        judge(text.as_bytes(), &default_policy());
    }

    #[test]
    fn token_soup_never_panics(text in token_soup()) {
        let policy = default_policy();
        let first = judge(text.as_bytes(), &policy);
        // The verdict depends on the program only.
        let second = check_on_worker(text.as_bytes(), &policy);
        prop_assert_eq!(&first.findings, &second.findings);
    }

    #[test]
    fn indented_token_soup_never_panics(text in indented_soup()) {
        judge(text.as_bytes(), &default_policy());
    }
}

// ---------------------------------------------------------------------------------------------------
// Adversarial inputs

/// Generous enough for a loaded CI machine; they take well under a second each in a debug build here.
const TIME_LIMIT: Duration = Duration::from_secs(10);

/// Judges `source` under both policies: the decision must be `expected` and come in time.
fn assert_denied_quickly(what: &str, source: &[u8], expected: Decision) {
    for (name, policy) in [
        ("default", default_policy()),
        ("generous", generous_policy()),
    ] {
        let started = Instant::now();
        let report = judge(source, &policy);
        let elapsed = started.elapsed();
        assert_eq!(
            report.decision, expected,
            "{what} under the {name} policy: {:?}",
            report.findings
        );
        assert!(
            elapsed < TIME_LIMIT,
            "{what} under the {name} policy took {elapsed:?}"
        );
        if expected == Decision::Deny {
            let internal = report
                .findings
                .iter()
                .any(|f| f.message.contains("could not finish"));
            assert!(
                !internal,
                "{what}: the checker crashed: {:?}",
                report.findings
            );
        }
    }
}

/// The rules that deny input the checker will not judge in full.
fn rules_of(source: &[u8], policy: &Policy) -> Vec<Rule> {
    check_on_worker(source, policy)
        .findings
        .iter()
        .map(|f| f.rule)
        .collect()
}

#[test]
fn deeply_nested_parentheses_are_denied() {
    let source = format!("x = {}1{}\n", "(".repeat(10_000), ")".repeat(10_000));
    assert_denied_quickly(
        "10,000 nested parentheses",
        source.as_bytes(),
        Decision::Deny,
    );
    assert!(rules_of(source.as_bytes(), &generous_policy()).contains(&Rule::SourceLimits));
}

#[test]
fn deeply_nested_lists_are_denied() {
    let source = format!("x = {}{}\n", "[".repeat(10_000), "]".repeat(10_000));
    assert_denied_quickly("10,000 nested lists", source.as_bytes(), Decision::Deny);
}

#[test]
fn deeply_nested_dicts_and_fstrings_are_denied() {
    let dicts = format!("x = {}{}\n", "{1: ".repeat(10_000), "}".repeat(10_000));
    assert_denied_quickly("10,000 nested dicts", dicts.as_bytes(), Decision::Deny);
    let fstrings = format!("x = {}1{}\n", "f'{".repeat(3_000), "}'".repeat(3_000));
    assert_denied_quickly(
        "3,000 nested f-strings",
        fstrings.as_bytes(),
        Decision::Deny,
    );
}

#[test]
fn a_long_run_of_unary_minus_is_denied() {
    let source = format!("x = {}1\n", "-".repeat(100_000));
    assert_denied_quickly("100,000 unary minus", source.as_bytes(), Decision::Deny);
    let mixed = format!("x = {}1\n", "not -~+".repeat(25_000));
    assert_denied_quickly(
        "100,000 mixed prefix operators",
        mixed.as_bytes(),
        Decision::Deny,
    );
}

#[test]
fn a_long_operator_chain_is_denied() {
    let source = format!("x = 1{}\n", " + 1".repeat(50_000));
    assert_denied_quickly("50,000-term + chain", source.as_bytes(), Decision::Deny);
    let power = format!("x = 2{}\n", " ** 2".repeat(50_000));
    assert_denied_quickly("50,000-term ** chain", power.as_bytes(), Decision::Deny);
}

#[test]
fn long_postfix_chains_are_denied() {
    for (what, piece) in [("attribute", ".b"), ("call", "()"), ("subscript", "[0]")] {
        let source = format!("x = a{}\n", piece.repeat(100_000));
        assert_denied_quickly(
            &format!("100,000-long {what} chain"),
            source.as_bytes(),
            Decision::Deny,
        );
    }
}

#[test]
fn nested_lambdas_are_denied() {
    let source = format!("f = {}1\n", "lambda: ".repeat(5_000));
    assert_denied_quickly("5,000 nested lambda:", source.as_bytes(), Decision::Deny);
    let with_parameters = format!("f = {}1\n", "lambda x: ".repeat(5_000));
    assert_denied_quickly(
        "5,000 nested lambda x:",
        with_parameters.as_bytes(),
        Decision::Deny,
    );
}

#[test]
fn a_long_conditional_chain_is_denied() {
    let source = format!("x = 1{}\n", " if 1 else 1".repeat(50_000));
    assert_denied_quickly(
        "50,000 nested conditionals",
        source.as_bytes(),
        Decision::Deny,
    );
}

/// Regression: `yield yield … a`, `lambda a lambda a …` (no colons) and `a if a else a if …` nest in
/// the parser without brackets, prefix operators or operators, so the pre-scan did not bound them.
/// A 1 MB `yield` or colon-less `lambda` chain overflowed the 64 MiB worker stack and aborted
/// `warden check`; a conditional chain needs over 32 MiB of stack per megabyte, so a 2 MB one did the
/// same under a policy with a larger size limit.
#[test]
fn keyword_chains_overflowed_the_worker_stack() {
    for (what, piece) in [
        ("yield", "yield "),
        ("yield from", "yield from "),
        ("conditional", "a if a else "),
        ("awaited conditional", "await a if a else "),
        ("colon-less lambda", "lambda a "),
        ("lambda-and-comma", "lambda , "),
        ("lambda-per-line", "lambda\n"),
    ] {
        for size in [1024 * 1024 - 64, 2 * 1024 * 1024] {
            let source = format!("def f():\n    x = {}a\n", piece.repeat(size / piece.len()));
            assert_denied_quickly(
                &format!("{size}-byte {what} chain"),
                source.as_bytes(),
                Decision::Deny,
            );
        }
    }
}

#[test]
fn deep_indentation_is_denied() {
    let mut source = String::new();
    for level in 0..2_000 {
        source.push_str(&" ".repeat(level));
        source.push_str("if True:\n");
    }
    source.push_str(&" ".repeat(2_000));
    source.push_str("pass\n");
    assert_denied_quickly(
        "2,000 levels of indentation",
        source.as_bytes(),
        Decision::Deny,
    );
    let tabs: String = (0..2_000)
        .map(|level| format!("{}def f():\n", "\t".repeat(level)))
        .chain(std::iter::once(format!("{}pass\n", "\t".repeat(2_000))))
        .collect();
    assert_denied_quickly("2,000 nested defs", tabs.as_bytes(), Decision::Deny);
}

#[test]
fn ten_megabytes_of_assignments_are_denied() {
    let source = "x = 1\n".repeat(10 * 1024 * 1024 / 6);
    assert_denied_quickly("10 MB of `x = 1`", source.as_bytes(), Decision::Deny);
    assert_eq!(
        rules_of(source.as_bytes(), &default_policy()),
        [Rule::SourceLimits]
    );
}

#[test]
fn empty_input_is_allowed() {
    assert_denied_quickly("empty input", b"", Decision::Allow);
    assert_denied_quickly("blank lines", b"\n\n  \n", Decision::Allow);
}

#[test]
fn a_binary_blob_is_denied() {
    let blob = std::fs::read("/bin/true").unwrap_or_else(|_| {
        // No /bin/true: the same kind of bytes, an ELF header followed by every byte value.
        let mut blob = b"\x7fELF\x02\x01\x01\0".to_vec();
        blob.extend((0..=255u8).cycle().take(64 * 1024));
        blob
    });
    let blob = &blob[..blob.len().min(64 * 1024)];
    assert_denied_quickly("64 KB of /bin/true", blob, Decision::Deny);
    assert_eq!(rules_of(blob, &default_policy()), [Rule::SourceEncoding]);
}

#[test]
fn invalid_utf8_and_nul_bytes_are_denied() {
    for (what, source) in [
        ("invalid UTF-8", &b"x = '\xff'\n"[..]),
        ("a lone continuation byte", b"\x80"),
        ("a truncated sequence", b"x = '\xe2\x82'"),
        ("UTF-16", b"\xff\xfex\0 \0=\0 \x001\0"),
        ("a NUL byte", b"x = 1\0\n"),
        ("a NUL byte in a string", b"x = '\0'\n"),
    ] {
        assert_denied_quickly(what, source, Decision::Deny);
        assert_eq!(
            rules_of(source, &default_policy()),
            [Rule::SourceEncoding],
            "{what}"
        );
    }
}

/// Every pair of tokens, repeated to fill 512 KB, is judged on a 4 MiB stack: a sixteenth of the worker's
/// stack for half the default size limit, so recursion the pre-scan does not bound overflows here long
/// before it could overflow the worker. This is how the keyword chains above were found. It takes
/// minutes: `cargo test --release -p warden-policy --test fuzz -- --ignored`. An overflow aborts the
/// run; `WARDEN_FUZZ_TRACE=1` and `--nocapture` print each case first to name the culprit.
#[test]
#[ignore = "minutes long; run in release"]
fn token_pairs_repeated_to_fill_the_input_never_overflow() {
    let policy = default_policy();
    let trace = std::env::var_os("WARDEN_FUZZ_TRACE").is_some();
    let pairs: Vec<String> = TOKENS
        .iter()
        .flat_map(|a| TOKENS.iter().map(move |b| format!("{a} {b} ")))
        .collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(1, usize::from);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let index = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(piece) = pairs.get(index) else {
                    return;
                };
                if trace {
                    eprintln!("{index}: {piece:?}");
                }
                let source = format!("{}a\n", piece.repeat(512 * 1024 / piece.len()));
                let policy = &policy;
                std::thread::scope(|inner| {
                    std::thread::Builder::new()
                        .stack_size(4 * 1024 * 1024)
                        .spawn_scoped(inner, move || {
                            let report = warden_policy::check(source.as_bytes(), policy);
                            assert_well_formed(source.as_bytes(), &report);
                        })
                        .unwrap_or_else(|err| panic!("spawn: {err}"));
                });
            });
        }
    });
}
