//! The jail end to end: the real `warden` binary runs real Python in the real jail, as root and as an
//! unprivileged user, and every check is made from the host side.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use warden_test_support::jail as support;

mod archives;
mod cli;
mod cli_surface;
mod containment;
mod copyback;
mod evaluators;
mod hardening;
mod hook;
mod hook_closed;
mod kernel_mirror;
mod limits;
mod redcode;
mod session;
