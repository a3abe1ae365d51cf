//! The library part of the `warden` binary: the pieces the commands, the server and the corpus runner share.
#![forbid(unsafe_code)]

pub mod corpus;
pub mod exit;
pub mod files;
pub mod jail_config;
pub mod pipeline;
pub mod python_error;
pub mod runtime;
pub mod runtime_check;
pub mod service;
pub mod validate;
