//! The stage dir: the empty host directory the jail's root is mounted on, inside the jail's own mount
//! namespace. The jail's init builds the whole root below it by path (program text, `/etc` files, the
//! copy of the work dir), so whoever can swap a directory on that path while the init works collects
//! what it writes. It must therefore be a path nobody but the caller (and root) can change.
//!
//! Owns: checking (and creating) the stage dir before each run, and the fallback. Every component of
//! the path is opened without following symlinks and checked on the descriptor: system directories
//! (`/`, `/tmp`, `/run/user/<uid>`) must belong to root or the caller and, if others may write to
//! them, be sticky (so nobody else can rename what the caller owns in them); warden's own two
//! directories (`/run/warden/root`, `$XDG_RUNTIME_DIR/warden/root`, `/tmp/warden-<uid>/root`) must
//! belong to the caller and are made mode 0700 (0755 for root). When the planned path fails this as
//! an ordinary user — another user created `/tmp/warden-<uid>` first — the run gets a fresh private
//! directory of its own instead (`mkdir` of a random name, mode 0700, removed after the run), so that
//! user can neither read the run nor stop it. As root, an unsafe stage dir is refused.
//!
//! Does not own: choosing the planned path (`plan.rs`), or what is mounted on it (`mounts.rs`).

use std::ffi::OsStr;
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag};
use nix::sys::stat::{fchmodat, fstat, fstatat, mkdirat, FchmodatFlags, Mode as FileMode, SFlag};

use crate::error::JailError;
use crate::userns::Mode;

/// How many of the path's last components are warden's own directories.
const OWN: usize = 2;

/// The stage dir of one run.
#[derive(Debug)]
pub struct Stage {
    path: PathBuf,
    /// A fresh directory made for this run only: removed when the run is over.
    fresh: bool,
}

impl Stage {
    /// Checks (creating what is missing) the planned stage dir, or makes a fresh private one when
    /// the planned one is not safe and warden runs as an ordinary user.
    pub fn prepare(planned: &Path, mode: Mode) -> Result<Self, JailError> {
        let me = nix::unistd::geteuid().as_raw();
        let dir_mode = if mode == Mode::Root { 0o755 } else { 0o700 };
        match check(planned, me, OWN, dir_mode) {
            Ok(()) => Ok(Stage {
                path: planned.to_path_buf(),
                fresh: false,
            }),
            Err(Unsafe::Io(err)) => Err(err),
            Err(Unsafe::Untrusted(why)) if mode == Mode::Root => Err(refused(planned, &why)),
            Err(Unsafe::Untrusted(why)) => {
                crate::trace("stage dir untrusted: a fresh one");
                fresh(planned, me).map_err(|err| match err {
                    Unsafe::Io(err) => err,
                    Unsafe::Untrusted(also) => refused(planned, &format!("{why}; {also}")),
                })
            }
        }
    }

    /// The directory the jail's root is mounted on.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Stage {
    fn drop(&mut self) {
        if self.fresh {
            let _ = std::fs::remove_dir(&self.path);
        }
    }
}

/// The directory beside the stage dir that holds warden's cache (the compiled bootstrap,
/// `interpreter.rs`), opened and checked as the stage dir's own parent is: every component walked
/// without following symlinks, the last one the caller's, with the stage dir's mode. `None` when
/// it is not safe: the cache is then not used (never a reason to refuse a run).
pub fn cache_dir(planned: &Path, mode: Mode) -> Option<(PathBuf, OwnedFd)> {
    let me = nix::unistd::geteuid().as_raw();
    let dir_mode = if mode == Mode::Root { 0o755 } else { 0o700 };
    let dir = planned.parent()?;
    check(dir, me, OWN - 1, dir_mode).ok()?;
    let fd = nix::fcntl::open(dir, flags(), FileMode::empty()).ok()?;
    let stat = fstat(&fd).ok()?;
    (stat.st_uid == me && stat.st_mode & 0o7777 == dir_mode).then(|| (dir.to_path_buf(), fd))
}

fn refused(path: &Path, why: &str) -> JailError {
    JailError::Config(format!(
        "the stage dir {} is not safe to use: {why} (another user could swap directories under it \
         and read the program and its inputs); remove it, or set XDG_RUNTIME_DIR to a private \
         directory",
        path.display()
    ))
}

/// Why a path cannot be used.
#[derive(Debug)]
enum Unsafe {
    /// Someone else could change it (or it is not a plain directory path).
    Untrusted(String),
    /// A call failed for another reason.
    Io(JailError),
}

fn flags() -> OFlag {
    OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC
}

/// The components of a clean absolute path.
fn components(path: &Path) -> Result<Vec<&OsStr>, Unsafe> {
    let mut parts = path.components();
    if parts.next() != Some(Component::RootDir) {
        return Err(Unsafe::Untrusted(format!(
            "{} is not an absolute path",
            path.display()
        )));
    }
    parts
        .map(|part| match part {
            Component::Normal(name) => Ok(name),
            _ => Err(Unsafe::Untrusted(format!(
                "{} is not a clean path",
                path.display()
            ))),
        })
        .collect()
}

/// Walks `path` from `/` one descriptor at a time, never following a symlink. Its last `own`
/// components are warden's: created if missing (mode `dir_mode`), required to be the caller's, and
/// given `dir_mode`. Above them, every directory must belong to root or the caller and be writable by
/// nobody else unless sticky.
fn check(path: &Path, me: u32, own: usize, dir_mode: u32) -> Result<(), Unsafe> {
    let names = components(path)?;
    let first_own = names.len().saturating_sub(own);
    let mut dir = nix::fcntl::open("/", flags(), FileMode::empty())
        .map_err(|errno| Unsafe::Io(JailError::syscall("open", "/", errno)))?;
    trusted_system_dir(&dir, Path::new("/"), me)?;
    let mut walked = PathBuf::from("/");
    for (index, name) in names.into_iter().enumerate() {
        walked.push(name);
        let warden_own = index >= first_own;
        let next = match nix::fcntl::openat(&dir, name, flags(), FileMode::empty()) {
            Err(Errno::ENOENT) if warden_own => {
                match mkdirat(&dir, name, FileMode::from_bits_truncate(dir_mode)) {
                    Ok(()) | Err(Errno::EEXIST) => {}
                    Err(errno) => {
                        return Err(Unsafe::Io(JailError::syscall(
                            "mkdir",
                            walked.display(),
                            errno,
                        )))
                    }
                }
                open_component(&dir, name, &walked)?
            }
            Err(Errno::ENOTDIR | Errno::ELOOP) => return Err(not_a_directory(&dir, name, &walked)),
            Err(errno) => {
                return Err(Unsafe::Io(JailError::syscall(
                    "open",
                    walked.display(),
                    errno,
                )))
            }
            Ok(next) => next,
        };
        if warden_own {
            trusted_own_dir(&dir, name, &next, &walked, me, dir_mode)?;
        } else {
            trusted_system_dir(&next, &walked, me)?;
        }
        dir = next;
    }
    Ok(())
}

fn open_component(dir: &OwnedFd, name: &OsStr, walked: &Path) -> Result<OwnedFd, Unsafe> {
    nix::fcntl::openat(dir, name, flags(), FileMode::empty()).map_err(|errno| match errno {
        Errno::ENOTDIR | Errno::ELOOP => not_a_directory(dir, name, walked),
        errno => Unsafe::Io(JailError::syscall("open", walked.display(), errno)),
    })
}

fn not_a_directory(dir: &OwnedFd, name: &OsStr, walked: &Path) -> Unsafe {
    let symlink = fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW).is_ok_and(|stat| {
        SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT == SFlag::S_IFLNK
    });
    Unsafe::Untrusted(if symlink {
        format!("{} is a symlink", walked.display())
    } else {
        format!("{} is not a directory", walked.display())
    })
}

fn stat_of(fd: &OwnedFd, walked: &Path) -> Result<libc::stat, Unsafe> {
    fstat(fd).map_err(|errno| Unsafe::Io(JailError::syscall("fstat", walked.display(), errno)))
}

/// A directory above warden's own: root's or the caller's, and if others may write to it, sticky.
fn trusted_system_dir(fd: &OwnedFd, walked: &Path, me: u32) -> Result<(), Unsafe> {
    let stat = stat_of(fd, walked)?;
    if stat.st_uid != 0 && stat.st_uid != me {
        return Err(Unsafe::Untrusted(format!(
            "{} belongs to uid {}",
            walked.display(),
            stat.st_uid
        )));
    }
    if stat.st_mode & 0o022 != 0 && stat.st_mode & libc::S_ISVTX == 0 {
        return Err(Unsafe::Untrusted(format!(
            "others may write to {} (mode {:o}) and it is not sticky",
            walked.display(),
            stat.st_mode & 0o7777
        )));
    }
    Ok(())
}

/// One of warden's own directories: the caller's, with `dir_mode` (set if it has more).
fn trusted_own_dir(
    parent: &OwnedFd,
    name: &OsStr,
    fd: &OwnedFd,
    walked: &Path,
    me: u32,
    dir_mode: u32,
) -> Result<(), Unsafe> {
    let stat = stat_of(fd, walked)?;
    if stat.st_uid != me {
        return Err(Unsafe::Untrusted(format!(
            "{} belongs to uid {}, not to uid {me} who runs warden",
            walked.display(),
            stat.st_uid
        )));
    }
    if stat.st_mode & 0o7777 != dir_mode {
        // Ours, in a directory only we (or root) can change: the name still names `fd`.
        fchmodat(
            parent,
            name,
            FileMode::from_bits_truncate(dir_mode),
            FchmodatFlags::FollowSymlink,
        )
        .map_err(|errno| Unsafe::Io(JailError::syscall("chmod", walked.display(), errno)))?;
    }
    Ok(())
}

/// A fresh private directory beside warden's usual one (`/tmp/warden-<uid>-<random>`).
fn fresh(planned: &Path, me: u32) -> Result<Stage, Unsafe> {
    let base = planned
        .ancestors()
        .nth(OWN)
        .ok_or_else(|| Unsafe::Untrusted(format!("{} is too short", planned.display())))?;
    check(base, me, 0, 0)?;
    let base_fd = nix::fcntl::open(base, flags(), FileMode::empty())
        .map_err(|errno| Unsafe::Io(JailError::syscall("open", base.display(), errno)))?;
    for _ in 0..16 {
        let name = format!("warden-{me}-{}", random_hex());
        let path = base.join(&name);
        match mkdirat(&base_fd, name.as_str(), FileMode::from_bits_truncate(0o700)) {
            Ok(()) => {
                let stage = Stage { path, fresh: true };
                let fd = open_component(&base_fd, OsStr::new(&name), stage.path())?;
                trusted_own_dir(&base_fd, OsStr::new(&name), &fd, stage.path(), me, 0o700)?;
                return Ok(stage);
            }
            Err(Errno::EEXIST) => continue,
            Err(errno) => {
                return Err(Unsafe::Io(JailError::syscall(
                    "mkdir",
                    path.display(),
                    errno,
                )))
            }
        }
    }
    Err(Unsafe::Untrusted(format!(
        "no fresh directory could be made in {}",
        base.display()
    )))
}

fn random_hex() -> String {
    use std::io::Read;
    let mut bytes = [0u8; 8];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if read.is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        bytes = (nanos ^ u64::from(std::process::id()).rotate_left(32)).to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    fn me() -> u32 {
        nix::unistd::geteuid().as_raw()
    }

    /// A private directory to play in (tempfile's are 0700 and the caller's).
    fn base() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    #[test]
    fn a_missing_stage_dir_is_created_private() {
        let dir = base();
        let stage = dir.path().join("warden-x/root");
        check(&stage, me(), OWN, 0o700).unwrap();
        for path in [dir.path().join("warden-x"), stage] {
            let meta = std::fs::symlink_metadata(&path).unwrap();
            assert!(meta.is_dir());
            assert_eq!(meta.mode() & 0o7777, 0o700, "{}", path.display());
            assert_eq!(meta.uid(), me());
        }
    }

    #[test]
    fn an_own_dir_with_a_looser_mode_is_made_private() {
        let dir = base();
        let own = dir.path().join("warden-x");
        std::fs::create_dir(&own).unwrap();
        std::fs::set_permissions(&own, std::fs::Permissions::from_mode(0o777)).unwrap();
        check(&own.join("root"), me(), OWN, 0o700).unwrap();
        assert_eq!(std::fs::metadata(&own).unwrap().mode() & 0o7777, 0o700);
    }

    #[test]
    fn a_symlink_anywhere_in_the_path_is_refused() {
        let dir = base();
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::fs::create_dir(dir.path().join("warden-x")).unwrap();
        std::os::unix::fs::symlink(&elsewhere, dir.path().join("warden-x/root")).unwrap();
        let err = check(&dir.path().join("warden-x/root"), me(), OWN, 0o700).unwrap_err();
        assert!(
            matches!(&err, Unsafe::Untrusted(why) if why.ends_with("root is a symlink")),
            "{err:?}"
        );
        std::os::unix::fs::symlink(dir.path().join("warden-x"), dir.path().join("link")).unwrap();
        let err = check(&dir.path().join("link/root"), me(), OWN, 0o700).unwrap_err();
        assert!(
            matches!(&err, Unsafe::Untrusted(why) if why.ends_with("link is a symlink")),
            "{err:?}"
        );
    }

    #[test]
    fn a_world_writable_directory_above_must_be_sticky() {
        let dir = base();
        let open = dir.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = check(&open.join("warden-x/root"), me(), OWN, 0o700).unwrap_err();
        assert!(
            matches!(&err, Unsafe::Untrusted(why) if why.contains("not sticky")),
            "{err:?}"
        );
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o1777)).unwrap();
        check(&open.join("warden-x/root"), me(), OWN, 0o700).unwrap();
    }

    #[test]
    fn paths_that_are_not_clean_and_absolute_are_refused() {
        for path in ["relative/root", "/tmp/../tmp/warden-x/root"] {
            assert!(
                matches!(
                    check(Path::new(path), me(), OWN, 0o700),
                    Err(Unsafe::Untrusted(_))
                ),
                "{path}"
            );
        }
    }

    #[test]
    fn a_fresh_directory_is_private_and_removed_with_the_stage() {
        let dir = base();
        let planned = dir.path().join("warden-x/root");
        let stage = fresh(&planned, me()).unwrap();
        let path = stage.path().to_path_buf();
        assert_eq!(path.parent(), Some(dir.path()));
        let meta = std::fs::symlink_metadata(&path).unwrap();
        assert_eq!((meta.mode() & 0o7777, meta.uid()), (0o700, me()));
        drop(stage);
        assert!(!path.exists());
    }
}
