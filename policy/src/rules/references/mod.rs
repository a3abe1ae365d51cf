//! Reference rules: names and methods the rules file bans outright.

pub(crate) mod banned_method;
pub(crate) mod banned_reference;
