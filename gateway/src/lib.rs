//! The gateway for one program: the run pipeline (request → policy decision → jail configuration →
//! outcome → result record), files in and out of the work dir, output validation, the Python error
//! in the record, and the runtimes programs run with.
//!
//! Owns: [`pipeline::execute`] and the records it returns. Does not own: the static rules
//! (`warden-policy`), the confinement (`warden-jail`), nor how requests arrive (the `warden` binary,
//! `warden-service`).
#![forbid(unsafe_code)]

pub mod checked;
pub mod files;
pub mod hook_config;
pub mod jail_config;
pub mod pipeline;
mod python_error;
pub mod runtime;
pub mod runtime_check;
pub mod session;
pub mod stopped_by;
pub mod validate;

pub use python_error::PythonError;
