//! Rendering findings: human (rustc/ruff style), JSON lines, SARIF 2.1.0.

pub mod human;
pub mod json;
pub mod sarif;
