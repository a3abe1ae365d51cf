//! User ids inside the jail: the user namespace's id maps, who owns it, and the ids the program runs
//! as.
//!
//! Owns: computing the `uid_map`/`gid_map` lines (pure), choosing the host ids a root-mode run owns
//! ([`OwnerRange`], [`RunIds`]) and writing the maps for the jail's init (parent side). Does not own:
//! changing ids inside the jail (`child.rs` calls `setresuid` at its step), the euid switch around
//! `clone3` (`parent.rs`) or capabilities (`caps.rs`).
//!
//! **Who pays.** The kernel charges what processes of a user namespace hold — queued signals,
//! inotify instances and watches, POSIX message queues, locked memory, namespaces (the "ucounts") —
//! to their uid in that namespace *and* to the namespace's owner (the euid that created it) in every
//! ancestor namespace. A namespace created by root charged root's host-wide budgets: a run holding
//! its queued signals left no signal for any root process on the host. So as root, each run's
//! namespace is created with a pair of host ids of its own from a reserved range ([`OwnerRange`]):
//! the namespace's owner `U` (whose budget the run spends, and nothing else's) and the program's
//! uid/gid `U+1`, mapped to 65534 inside (per-user counts keyed by the host uid, such as pipe
//! buffers, are then the run's own too, not shared with the host's `nobody`). Host root stays the
//! init's uid 0 inside (`0 0 1`): the init builds the root, copies the work dir in and writes the
//! jail's own sysctls (`vm.memfd_noexec` is writable by host root only) exactly as before. A slot
//! is held by a lock file for the length of the run, so two concurrent runs never share ids.
//!
//! Why per-run ids rather than one `warden-jail` account: with one shared owner, every concurrent
//! run draws on the same host-wide per-user budgets (a run holding its maximum starves the others),
//! and a slow teardown of one run's namespace is charged to the next. The owner uid also holds every
//! capability over the namespace it owns (a host process running as it could `setns` into the jail),
//! so it must be used by nothing else on the host: the range is checked against the host's accounts
//! and subordinate id ranges, and a run is refused (fail closed) when they overlap.
//!
//! As an ordinary user only one id can be mapped: the user's own uid becomes 65534 inside, the user
//! owns the namespace (and pays from their own budgets), and `setgroups` must be denied before the
//! gid map is written — which also means the program keeps the user's supplementary groups (shown
//! as 65534 inside): the kernel refuses `setgroups` in a namespace whose gid map was written without
//! CAP_SETGID, by design, since dropping a group can grant access a negative group permission
//! denies. Start warden without supplementary groups to have none (docs/jail.md).

use std::io::Write;
use std::path::PathBuf;

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
    /// The `uid_map` lines that do not depend on the run.
    pub uid_map: String,
    /// The `gid_map` lines that do not depend on the run.
    pub gid_map: String,
    /// Root mode: the program's host id is the run's own ([`RunIds::program`]), mapped to 65534
    /// (one more line in each map, added at spawn).
    pub program_per_run: bool,
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
                uid_map: "0 0 1\n".into(),
                gid_map: "0 0 1\n".into(),
                program_per_run: true,
                deny_setgroups: false,
                clear_groups: true,
            },
            Mode::Unprivileged { uid, gid } => IdMaps {
                uid_map: format!("{PROGRAM_ID} {uid} 1\n"),
                gid_map: format!("{PROGRAM_ID} {gid} 1\n"),
                program_per_run: false,
                deny_setgroups: true,
                clear_groups: false,
            },
        }
    }

    /// The complete `(uid_map, gid_map)` of a run with `ids` (root mode: required).
    pub fn lines(&self, ids: Option<&RunIds>) -> Result<(String, String), JailError> {
        if !self.program_per_run {
            return Ok((self.uid_map.clone(), self.gid_map.clone()));
        }
        let ids = ids.ok_or_else(|| {
            JailError::Config("a root-mode run needs host ids of its own (none allocated)".into())
        })?;
        let line = format!("{PROGRAM_ID} {} 1\n", ids.program);
        Ok((
            format!("{}{line}", self.uid_map),
            format!("{}{line}", self.gid_map),
        ))
    }

    /// Writes the maps for `pid` (parent side, while the child waits for them).
    pub fn write(&self, pid: Pid, ids: Option<&RunIds>) -> Result<(), JailError> {
        let (uid_map, gid_map) = self.lines(ids)?;
        let proc_dir = format!("/proc/{pid}");
        if self.deny_setgroups {
            write_file(&format!("{proc_dir}/setgroups"), "deny")?;
        }
        write_file(&format!("{proc_dir}/uid_map"), &uid_map)?;
        write_file(&format!("{proc_dir}/gid_map"), &gid_map)?;
        Ok(())
    }
}

/// The host ids root-mode runs take their own pair from: slot `n` is the owner `first + 2n` and the
/// program's uid/gid `first + 2n + 1`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OwnerRange {
    pub first: u32,
    pub slots: u32,
    /// One lock file per slot, held for the length of a run.
    pub lock_dir: PathBuf,
}

/// The reserved range: 2000000000–2000008191, above the ranges `useradd` gives subordinate ids by
/// default (100000–600100000), below systemd's container ranges' end and far from any account; 4096
/// runs at once.
pub const OWNER_IDS_FIRST: u32 = 2_000_000_000;
pub const OWNER_SLOTS: u32 = 4096;

impl OwnerRange {
    /// The reserved range with its lock files under `/run/warden/owners`.
    pub fn reserved() -> Self {
        OwnerRange {
            first: OWNER_IDS_FIRST,
            slots: OWNER_SLOTS,
            lock_dir: PathBuf::from("/run/warden/owners"),
        }
    }

    /// The last id of the range.
    pub fn last(&self) -> u32 {
        self.first + 2 * self.slots - 1
    }

    /// Looks at the host's accounts: `Err` names what uses an id of the range, or says that
    /// warden's own user namespace does not have the ids (a container with a partial id map).
    pub fn check_host(&self) -> Result<(), String> {
        let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
        for map in ["/proc/self/uid_map", "/proc/self/gid_map"] {
            if !self.mapped_in(&read(map)) {
                return Err(format!(
                    "{map} does not map them (warden runs in a user namespace with a partial id map)"
                ));
            }
        }
        self.conflicts(
            &read("/etc/passwd"),
            &read("/etc/group"),
            &read("/etc/subuid"),
            &read("/etc/subgid"),
        )
        .map_or(Ok(()), Err)
    }

    /// Whether an id map (`/proc/self/uid_map` text: inside, outside, count) has every id of the
    /// range (pure).
    pub fn mapped_in(&self, map: &str) -> bool {
        let (first, last) = (u64::from(self.first), u64::from(self.last()));
        map.lines().any(|line| {
            let fields: Vec<u64> = line
                .split_whitespace()
                .filter_map(|f| f.parse().ok())
                .collect();
            matches!(fields[..], [inside, _, count] if inside <= first && last < inside + count)
        })
    }

    /// What in these files (passwd, group, subuid, subgid text) uses an id of the range (pure).
    pub fn conflicts(
        &self,
        passwd: &str,
        group: &str,
        subuid: &str,
        subgid: &str,
    ) -> Option<String> {
        let (first, last) = (u64::from(self.first), u64::from(self.last()));
        let inside = |id: u64| (first..=last).contains(&id);
        for (file, text, field) in [("/etc/passwd", passwd, 2), ("/etc/group", group, 2)] {
            for line in text.lines() {
                let fields: Vec<&str> = line.split(':').collect();
                if let Some(id) = fields.get(field).and_then(|f| f.parse::<u64>().ok()) {
                    if inside(id) {
                        return Some(format!("{file} gives id {id} to `{}`", fields[0]));
                    }
                }
            }
        }
        for (file, text) in [("/etc/subuid", subuid), ("/etc/subgid", subgid)] {
            for line in text.lines() {
                let fields: Vec<&str> = line.split(':').collect();
                let (Some(start), Some(count)) = (
                    fields.get(1).and_then(|f| f.parse::<u64>().ok()),
                    fields.get(2).and_then(|f| f.parse::<u64>().ok()),
                ) else {
                    continue;
                };
                if count > 0 && start <= last && start + count > first {
                    return Some(format!(
                        "{file} gives ids {start}–{} to `{}`",
                        start + count - 1,
                        fields[0]
                    ));
                }
            }
        }
        None
    }

    /// Takes a free slot for one run: its lock is held until the returned ids (and every copy of
    /// the descriptor, such as the jail's init's) are gone. Starts at a slot derived from the pid,
    /// so concurrent wardens rarely probe the same files.
    pub fn allocate(&self) -> Result<RunIds, JailError> {
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.lock_dir)
            .map_err(|err| JailError::io("cannot create", &self.lock_dir, err))?;
        let start = std::process::id() % self.slots;
        for step in 0..self.slots {
            let slot = (start + step) % self.slots;
            let path = self.lock_dir.join(format!("slot-{slot}"));
            let file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .mode(0o600)
                .custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW)
                .open(&path)
                .map_err(|err| JailError::io("cannot open", &path, err))?;
            match nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock) {
                Ok(lock) => {
                    let owner = self.first + 2 * slot;
                    return Ok(RunIds {
                        owner,
                        program: owner + 1,
                        _lock: lock,
                    });
                }
                Err((_, nix::errno::Errno::EWOULDBLOCK)) => continue,
                Err((_, errno)) => return Err(JailError::syscall("flock", path.display(), errno)),
            }
        }
        Err(JailError::Config(format!(
            "all {} host id slots of warden's reserved range ({}–{}) are in use by running jails",
            self.slots,
            self.first,
            self.last()
        )))
    }
}

/// The host ids of one root-mode run, held (by a lock on the slot's file) while this value lives.
#[derive(Debug)]
pub struct RunIds {
    /// The user namespace's owner: the run's kernel budgets are charged to it.
    pub owner: u32,
    /// The program's host uid and gid (65534 inside).
    pub program: u32,
    /// The slot's lock (released when the last copy of its descriptor closes: the jail's init
    /// holds one too, so a slot is never reused while a jail of it lives).
    _lock: nix::fcntl::Flock<std::fs::File>,
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
    fn root_maps_keep_host_root_for_setup_and_give_the_program_the_runs_own_id() {
        let maps = IdMaps::for_mode(Mode::Root);
        assert!(maps.program_per_run && !maps.deny_setgroups && maps.clear_groups);
        assert!(maps.lines(None).is_err(), "a root run needs its own ids");
        let dir = tempfile::tempdir().unwrap();
        let range = OwnerRange {
            lock_dir: dir.path().join("owners"),
            ..OwnerRange::reserved()
        };
        let ids = range.allocate().unwrap();
        assert_eq!(ids.program, ids.owner + 1);
        assert!((range.first..=range.last()).contains(&ids.program));
        let (uid_map, gid_map) = maps.lines(Some(&ids)).unwrap();
        assert_eq!(uid_map, format!("0 0 1\n65534 {} 1\n", ids.program));
        assert_eq!(gid_map, uid_map);
    }

    #[test]
    fn concurrent_runs_never_share_a_slot_and_a_freed_slot_is_reused() {
        let dir = tempfile::tempdir().unwrap();
        let range = OwnerRange {
            first: 3_000_000_000,
            slots: 2,
            lock_dir: dir.path().to_path_buf(),
        };
        let a = range.allocate().unwrap();
        let b = range.allocate().unwrap();
        assert_ne!(a.owner, b.owner);
        assert!(range.allocate().unwrap_err().to_string().contains("in use"));
        let freed = a.owner;
        drop(a);
        assert_eq!(range.allocate().unwrap().owner, freed);
    }

    #[test]
    fn the_range_must_be_mapped_in_wardens_own_namespace() {
        let range = OwnerRange::reserved();
        assert!(range.mapped_in("         0          0 4294967295\n"));
        assert!(!range.mapped_in("         0     100000      65536\n"));
        assert!(!range.mapped_in(""));
    }

    #[test]
    fn a_range_used_by_an_account_or_a_subordinate_range_is_found() {
        let range = OwnerRange::reserved();
        let passwd = "root:x:0:0::/root:/bin/sh\nnobody:x:65534:65534::/:/bin/false\n";
        assert_eq!(range.conflicts(passwd, "", "", ""), None);
        let taken = format!("{passwd}svc:x:{}:1::/:/bin/false\n", range.first + 3);
        assert!(range
            .conflicts(&taken, "", "", "")
            .unwrap()
            .contains("`svc`"));
        let sub = format!("alice:{}:65536\n", range.first - 10);
        assert!(range
            .conflicts("", "", &sub, "")
            .unwrap()
            .contains("subuid"));
        assert_eq!(range.conflicts("", "", "alice:100000:65536\n", ""), None);
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
