//! String-sink rules: APIs of allowed libraries that evaluate strings as expressions.

pub(crate) mod dynamic_string_sink;
pub(crate) mod formula;
pub(crate) mod query_expression;
pub(crate) mod string_sink;
