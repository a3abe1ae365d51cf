//! `warden serve` and `warden mcp` end to end: the HTTP API over the Unix socket and TCP, admission
//! under load, the MCP server driven by the official Python client, and sessions.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use warden_test_support::jail;
use warden_test_support::serve as support;

mod adapters;
mod http;
mod install;
mod load;
mod mcp;
mod nodes;
mod pool;
mod review;
mod run_server;
mod sessions;
