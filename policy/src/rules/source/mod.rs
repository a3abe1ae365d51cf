//! Source rules: whether the program can be judged at all. Emitted by the crate's entry point
//! before any other rule runs; they always deny.

pub(crate) mod source_encoding;
pub(crate) mod source_limits;
pub(crate) mod syntax_error;
pub(crate) mod unsupported_syntax;
