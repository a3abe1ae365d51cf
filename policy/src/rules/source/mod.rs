//! Source rules: whether the program can be judged at all. They always deny (the rules file cannot
//! set another action for them).
//!
//! The files here hold only the rules' documentation: their checks are decoding (`source.rs`),
//! parsing (`parse.rs`) and the checker's walk bounds (`Checker::enter`), and the crate's entry point
//! (`lib.rs`) turns the first two into findings, because a program that cannot be decoded or parsed
//! never reaches the checker. Each rule's `//!` says where its check is.

pub(crate) mod source_encoding;
pub(crate) mod source_limits;
pub(crate) mod syntax_error;
pub(crate) mod unsupported_syntax;
