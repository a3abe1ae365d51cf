//! User ids inside the jail: the user namespace's id maps and the ids the program runs as.
//!
//! Owns: computing the `uid_map`/`gid_map` lines (pure) and writing them for the jail's init
//! (parent side). Does not own: changing ids inside the jail (`child.rs` calls `setresuid` at its
//! step) or capabilities (`caps.rs`).
//!
//! As root the map is `0 0 1` plus `65534 65534 1`: the jail's init needs uid 0 mapped while it
//! builds the root (files it creates on tmpfs must have a mapped owner, else EOVERFLOW), and the
//! program runs as 65534, the host's `nobody`. As an ordinary user only one id can be mapped: the
//! user's own uid becomes 65534 inside, and `setgroups` must be denied before the gid map is written.

use std::io::Write;

use nix::unistd::Pid;
use serde::Serialize;

use crate::error::JailError;

/// The uid and gid the program runs as inside the jail (`nobody`/`nogroup`).
pub const PROGRAM_ID: u32 = 65534;

/// Who is spawning the jail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Mode {
    /// Real root: full id maps, real cgroups.
    Root,
    /// An ordinary user: a one-id map, cgroups only when delegated.
    Unprivileged { uid: u32, gid: u32 },
}

impl Mode {
    /// The mode of the calling process.
    pub fn current() -> Self {
        let (uid, gid) = (
            nix::unistd::geteuid().as_raw(),
            nix::unistd::getegid().as_raw(),
        );
        if uid == 0 {
            Mode::Root
        } else {
            Mode::Unprivileged { uid, gid }
        }
    }
}

/// The id maps of the jail's user namespace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IdMaps {
    pub uid_map: String,
    pub gid_map: String,
    /// Write `deny` to `setgroups` first (required before an unprivileged gid map).
    pub deny_setgroups: bool,
    /// Whether the program must drop supplementary groups (`setgroups([])`): only possible when
    /// `setgroups` is not denied.
    pub clear_groups: bool,
}

impl IdMaps {
    /// The maps for `mode`.
    pub fn for_mode(mode: Mode) -> Self {
        match mode {
            Mode::Root => IdMaps {
                uid_map: format!("0 0 1\n{PROGRAM_ID} {PROGRAM_ID} 1\n"),
                gid_map: format!("0 0 1\n{PROGRAM_ID} {PROGRAM_ID} 1\n"),
                deny_setgroups: false,
                clear_groups: true,
            },
            Mode::Unprivileged { uid, gid } => IdMaps {
                uid_map: format!("{PROGRAM_ID} {uid} 1\n"),
                gid_map: format!("{PROGRAM_ID} {gid} 1\n"),
                deny_setgroups: true,
                clear_groups: false,
            },
        }
    }

    /// Writes the maps for `pid` (parent side, while the child waits for them).
    pub fn write(&self, pid: Pid) -> Result<(), JailError> {
        let proc_dir = format!("/proc/{pid}");
        if self.deny_setgroups {
            write_file(&format!("{proc_dir}/setgroups"), "deny")?;
        }
        write_file(&format!("{proc_dir}/uid_map"), &self.uid_map)?;
        write_file(&format!("{proc_dir}/gid_map"), &self.gid_map)?;
        Ok(())
    }
}

/// One `write(2)` of the whole text, as these files require.
fn write_file(path: &str, text: &str) -> Result<(), JailError> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|err| JailError::io("cannot open", path, err))?;
    file.write_all(text.as_bytes())
        .map_err(|err| JailError::io("cannot write", path, err))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn root_maps_keep_uid_0_for_setup_and_nobody_for_the_program() {
        let maps = IdMaps::for_mode(Mode::Root);
        assert_eq!(maps.uid_map, "0 0 1\n65534 65534 1\n");
        assert!(!maps.deny_setgroups);
        assert!(maps.clear_groups);
    }

    #[test]
    fn unprivileged_maps_map_the_user_to_nobody_and_deny_setgroups() {
        let maps = IdMaps::for_mode(Mode::Unprivileged {
            uid: 1000,
            gid: 100,
        });
        assert_eq!(maps.uid_map, "65534 1000 1\n");
        assert_eq!(maps.gid_map, "65534 100 1\n");
        assert!(maps.deny_setgroups);
        assert!(!maps.clear_groups);
    }
}
