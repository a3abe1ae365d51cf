//! Exit codes: the contract scripts rely on.

/// Allowed, or the run succeeded.
pub const OK: u8 = 0;
/// Denied, needs review, or the run did not succeed.
pub const FAILED: u8 = 1;
/// Usage, configuration or internal error.
pub const ERROR: u8 = 2;
