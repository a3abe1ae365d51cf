//! warden end to end, in one test binary (the support crate and the test harness are linked once):
//! the real `warden` binary runs real Python in the real jail, as root and as an unprivileged user,
//! and every check is made from the host side. One module per area:
//!
//! - `check`, `run`: the command line's static gate and the whole pipeline of `warden run`;
//! - `jail`: containment, limits, the runtime layer, sessions, RedCode (`jail/`);
//! - `serve`: `warden serve` and `warden mcp`, the pool, reviews, adapters, nodes (`serve/`);
//! - `corpus`: the attack and benign corpus runner;
//! - `sessions_jupyter`: session answers compared with a real Jupyter kernel.
//!
//! One area alone: `cargo nextest run -p warden --test e2e 'jail::'` (a filter on the module).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod check;
mod corpus;
mod jail;
mod run;
mod serve;
mod sessions_jupyter;
