//! warden's static policy gate: decode → parse → resolve names → judge against the rules file.
//!
//! The entry point is [`check`]. It never panics on hostile input: undecodable, oversized, deeply nested
//! or unparseable programs are denied with a located SYN finding. It is fast and explains itself, but it is
//! not the security boundary: the jail is. This crate does not run code and knows nothing about the jail;
//! it owns the rules file's validation ([`settings`]) because one file drives every layer.
#![forbid(unsafe_code)]

mod checker;
pub mod finding;
pub mod fixtures;
pub mod names;
pub mod parse;
pub mod paths;
pub mod render;
pub mod rules;
mod semantic;
pub mod settings;
pub mod source;

pub use finding::{Action, Decision, Finding, Severity, Span};
pub use render::json::{CheckRecord, PolicyRef};
pub use rules::Rule;
pub use settings::{Policy, RulesError};
pub use source::Decoded;

/// Stack the checker needs for the deepest input the default limits accept, with a wide margin.
/// [`check`] runs on the caller's stack; [`check_on_worker`] provides one of this size.
pub const STACK_SIZE: usize = 64 * 1024 * 1024;

/// The verdict on one program. Serialisable so that a check made once (by the server) can travel
/// with the program to the process that runs it (`warden_gateway::checked`).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Report {
    pub decision: Decision,
    pub findings: Vec<Finding>,
    /// The text the interpreter must run, when the source could be decoded.
    pub decoded: Option<Decoded>,
}

/// Judges program bytes against a policy.
///
/// Runs on the current thread, which needs about [`STACK_SIZE`] of stack for adversarial input
/// at the policy's depth limits; use [`check_on_worker`] when unsure.
pub fn check(bytes: &[u8], policy: &Policy) -> Report {
    let decoded = match source::decode(bytes, policy.source.max_bytes) {
        Ok(decoded) => decoded,
        Err(error) => return source_error(bytes, &error),
    };
    let findings = check_text(&decoded.text, policy);
    Report {
        decision: Decision::of(&findings),
        findings,
        decoded: Some(decoded),
    }
}

/// [`check`] on a dedicated thread with a [`STACK_SIZE`] stack.
pub fn check_on_worker(bytes: &[u8], policy: &Policy) -> Report {
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name("warden-check".to_owned())
            .stack_size(STACK_SIZE)
            .spawn_scoped(scope, || check(bytes, policy));
        match worker.map(|handle| handle.join()) {
            Ok(Ok(report)) => report,
            // A panic or a failed spawn is reported as a deny, never propagated.
            _ => internal_error(),
        }
    })
}

fn check_text(text: &str, policy: &Policy) -> Vec<Finding> {
    match parse::parse(text, policy.target_minor, policy.source.max_depth) {
        parse::Parsed::Module {
            module,
            unsupported,
        } => {
            let mut findings = checker::Checker::new(policy, text).run(&module);
            if unsupported.is_empty() {
                return findings;
            }
            let lines = checker::LineIndex::new(text);
            for problem in unsupported {
                findings.push(source_finding(
                    Rule::UnsupportedSyntax,
                    lines.span(problem.start, problem.end),
                    format!(
                        "{} (the policy targets Python 3.{})",
                        problem.message, policy.target_minor
                    ),
                    "rewrite the construct in syntax the target Python supports",
                ));
            }
            findings.sort_by_key(|f| (f.span.start_byte, f.rule));
            findings
        }
        parse::Parsed::TooDeep { depth, start } => {
            let lines = checker::LineIndex::new(text);
            vec![source_finding(
                Rule::SourceLimits,
                lines.span(start, start),
                format!(
                    "nesting reaches {depth}; the policy accepts at most {}",
                    policy.source.max_depth
                ),
                "flatten the expression with intermediate variables",
            )]
        }
        parse::Parsed::Invalid(problem) => {
            let lines = checker::LineIndex::new(text);
            vec![source_finding(
                Rule::SyntaxError,
                lines.span(problem.start, problem.end),
                format!("syntax error: {}", problem.message),
                "fix the syntax error; the program must be valid Python",
            )]
        }
    }
}

fn source_finding(rule: Rule, span: Span, message: String, hint: &str) -> Finding {
    Finding {
        rule,
        name: rule.name(),
        severity: rule.severity(),
        action: Action::Deny,
        message,
        hint: hint.to_owned(),
        span,
    }
}

fn source_error(bytes: &[u8], error: &source::SourceError) -> Report {
    // Locate the error in the bytes as far as they are valid UTF-8.
    let offset = error.offset().min(bytes.len());
    let valid = match std::str::from_utf8(&bytes[..offset]) {
        Ok(text) => text,
        Err(err) => std::str::from_utf8(&bytes[..err.valid_up_to()]).unwrap_or_default(),
    };
    let span = checker::LineIndex::new(valid).span(valid.len(), valid.len());
    let rule = match error {
        source::SourceError::TooLarge { .. } => Rule::SourceLimits,
        _ => Rule::SourceEncoding,
    };
    let hint = match error {
        source::SourceError::TooLarge { .. } => "send a smaller program",
        _ => "send the program as plain UTF-8 text without a coding declaration",
    };
    let findings = vec![source_finding(rule, span, error.to_string(), hint)];
    Report {
        decision: Decision::Deny,
        findings,
        decoded: None,
    }
}

fn internal_error() -> Report {
    let span = checker::LineIndex::new("").span(0, 0);
    let findings = vec![source_finding(
        Rule::SourceLimits,
        span,
        "the checker could not finish on this input".to_owned(),
        "simplify the program",
    )];
    Report {
        decision: Decision::Deny,
        findings,
        decoded: None,
    }
}
