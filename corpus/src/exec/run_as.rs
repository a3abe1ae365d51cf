//! The unprivileged account warden runs as with `--run-as USER`: looked up once, then applied to
//! every warden command (its uid and primary gid, no supplementary groups, a HOME and TMPDIR of
//! its own).
//!
//! Owns: the lookup (`getent passwd`, then `/etc/passwd`), refusing root and a runner that is not
//! root, and what a command started as the user gets. Does not own: the directory the user owns
//! (`fixtures.rs` makes it) or which commands run as the user (`exec.rs`).

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// An unprivileged account warden runs as (`--run-as USER`): every warden call is started with
/// this user's uid and primary gid and no supplementary groups, the way `setpriv --reuid --regid
/// --clear-groups` would, and with a HOME and TMPDIR the user owns. The runner itself stays root
/// for its host-side checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunAs {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
    /// HOME and TMPDIR of warden: a directory the user owns in the run directory, once it exists
    /// (until then `/tmp`).
    pub home: Option<PathBuf>,
}

impl RunAs {
    /// Looks `user` up (a name, through `getent passwd` and then `/etc/passwd`). The runner must
    /// be root to switch to it.
    pub fn lookup(user: &str) -> Result<RunAs, String> {
        if effective_uid() != Some(0) {
            return Err(format!(
                "--run-as {user}: the runner must run as root to start warden as another user \
                 (it also needs root for its host-side checks)"
            ));
        }
        let from_getent = Command::new("getent")
            .args(["passwd", user])
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .ok()
            .filter(|out| out.status.success())
            .map(|out| String::from_utf8_lossy(&out.stdout).into_owned());
        let passwd = from_getent
            .or_else(|| std::fs::read_to_string("/etc/passwd").ok())
            .unwrap_or_default();
        let ids = passwd.lines().find_map(|line| {
            let fields: Vec<&str> = line.split(':').collect();
            (fields.first() == Some(&user))
                .then(|| Some((fields.get(2)?.parse().ok()?, fields.get(3)?.parse().ok()?)))?
        });
        let Some((uid, gid)) = ids else {
            return Err(format!("--run-as {user}: no such user"));
        };
        if uid == 0 {
            return Err(format!(
                "--run-as {user}: this is root; --run-as names an unprivileged user"
            ));
        }
        Ok(RunAs {
            name: user.to_owned(),
            uid,
            gid,
            home: None,
        })
    }

    /// Makes `command` start as this user: uid, gid, no supplementary groups (std drops them with
    /// `setgroups(0)` when a uid is set and no groups are given), a clean HOME and TMPDIR.
    pub(super) fn apply(&self, command: &mut Command) {
        let home = self.home.as_deref().unwrap_or_else(|| Path::new("/tmp"));
        command
            .uid(self.uid)
            .gid(self.gid)
            .env("HOME", home)
            .env("TMPDIR", home)
            .env("USER", &self.name)
            .env("LOGNAME", &self.name)
            .env_remove("XDG_RUNTIME_DIR");
    }
}

/// The effective uid of this process (`/proc/self/status`).
pub(super) fn effective_uid() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("Uid:"))?;
    line.split_whitespace().nth(2)?.parse().ok()
}
