//! Helpers shared by warden's end-to-end tests (one test binary per area: `check`, `run`, `jail`,
//! `serve`, `corpus`): where the binaries under test and the repository are, and whether the tests
//! run as root. [`jail`] runs the binary as root or as an unprivileged user and checks from the host
//! that nothing was left behind; [`serve`] starts servers and speaks HTTP to them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

pub mod jail;
pub mod serve;

/// The repository's root directory.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root")
}

/// A binary of the workspace built for the running test (`warden`, `warden-corpus`): test binaries
/// live in `target/<profile>/deps/`, the workspace's binaries one level up.
pub fn bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps/<test>");
    let path = profile_dir.join(name);
    assert!(
        path.is_file(),
        "{} is not built (cargo test/nextest build it with the workspace)",
        path.display()
    );
    path
}

/// The `warden` binary under test.
pub fn warden_bin() -> PathBuf {
    bin("warden")
}

/// A command running the `warden` binary under test.
pub fn warden() -> Command {
    Command::new(warden_bin())
}

/// Whether the tests run as root (the jail's end-to-end tests need it: they create an unprivileged
/// user and real cgroups).
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(2) == Some("0"))
        })
        .unwrap_or(false)
}

/// Skips the calling test (with a note) when not root.
#[macro_export]
macro_rules! require_root {
    () => {
        if !$crate::is_root() {
            eprintln!("skipped: this end-to-end test runs as root (real cgroups, an unprivileged test user)");
            return;
        }
    };
}
