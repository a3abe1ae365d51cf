//! The work dir: a host directory mirrored into the jail's private `/work` and back.
//!
//! `/work` inside the jail is a size-capped tmpfs of its own, so a program can never fill the host's
//! disk or leave files for the next run. When the caller passes a host work dir, its tree is copied
//! in before the program starts (by the jail's init, before pivot_root, as the only moment it sees
//! the host), and afterwards every regular file the program created or changed is copied back (by
//! warden, through the init's root while the init keeps the namespace alive). Neither direction
//! follows a symlink; devices, fifos and sockets are skipped.
//!
//! Owns: the manifest of what was copied in, the copy-in (jail side) and the copy-out (parent side).
//! Does not own: choosing inputs or collecting outputs for the result record (warden's pipeline does
//! that on the host work dir).

use std::collections::BTreeMap;
use std::fs::{self, File, FileTimes, OpenOptions};
use std::io::ErrorKind;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag};
use nix::sys::stat::{fstatat, Mode as FileMode, SFlag};
use nix::unistd::Pid;

use crate::error::{JailError, SysError};

/// Deepest directory nesting copied in either direction.
const MAX_DEPTH: usize = 32;

/// What was copied in: relative path → (size, modification time).
pub type Manifest = BTreeMap<PathBuf, (u64, SystemTime)>;

/// Lists the regular files of the host work dir (parent side, before the run).
pub fn manifest(host: &Path) -> Result<Manifest, JailError> {
    let mut found = Manifest::new();
    list(host, Path::new(""), 0, &mut found)
        .map_err(|err| JailError::io("cannot read work dir", host, err))?;
    Ok(found)
}

fn list(dir: &Path, relative: &Path, depth: usize, out: &mut Manifest) -> std::io::Result<()> {
    if depth > MAX_DEPTH {
        return Ok(());
    }
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let meta = fs::symlink_metadata(entry.path())?;
        let rel = relative.join(entry.file_name());
        if meta.is_dir() {
            list(&entry.path(), &rel, depth + 1, out)?;
        } else if meta.is_file() {
            out.insert(rel, (meta.len(), meta.modified()?));
        }
    }
    Ok(())
}

/// Copies the host tree `host` into `jail_work` (jail side, as its init, before pivot_root). Files the
/// host marks writable by their owner become the program's (`program_id`); the rest stay the init's,
/// so read-only inputs stay read-only for the program.
pub fn copy_in(host: &Path, jail_work: &Path, program_id: u32) -> Result<(), SysError> {
    copy_dir_in(host, jail_work, program_id, 0)
}

fn op_error<'a>(
    call: &'static str,
    path: &'a Path,
) -> impl FnOnce(std::io::Error) -> SysError + 'a {
    move |err| SysError::io(call, path.display(), &err)
}

fn copy_dir_in(host: &Path, jail: &Path, program_id: u32, depth: usize) -> Result<(), SysError> {
    if depth > MAX_DEPTH {
        return Ok(());
    }
    for entry in fs::read_dir(host).map_err(op_error("opendir", host))? {
        let entry = entry.map_err(op_error("readdir", host))?;
        let source = entry.path();
        let target = jail.join(entry.file_name());
        let meta = fs::symlink_metadata(&source).map_err(op_error("lstat", &source))?;
        let owned = meta.mode() & 0o200 != 0;
        if meta.is_dir() {
            fs::create_dir(&target).map_err(op_error("mkdir", &target))?;
            copy_dir_in(&source, &target, program_id, depth + 1)?;
            fs::set_permissions(&target, fs::Permissions::from_mode(meta.mode() & 0o777))
                .map_err(op_error("chmod", &target))?;
            if owned {
                chown(&target, program_id)?;
            }
        } else if meta.is_file() {
            let mut from = OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&source)
                .map_err(op_error("open", &source))?;
            let mut to = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(meta.mode() & 0o777)
                .open(&target)
                .map_err(op_error("open(O_CREAT)", &target))?;
            std::io::copy(&mut from, &mut to).map_err(op_error("copy", &target))?;
            // The same modification time as on the host: after the run, unchanged files are not
            // copied back.
            to.set_times(
                FileTimes::new().set_modified(meta.modified().map_err(op_error("stat", &source))?),
            )
            .map_err(op_error("futimens", &target))?;
            if owned {
                nix::unistd::fchown(to.as_fd(), Some(program_id.into()), Some(program_id.into()))
                    .map_err(SysError::at("fchown", target.display()))?;
            }
        }
    }
    Ok(())
}

fn chown(path: &Path, id: u32) -> Result<(), SysError> {
    nix::unistd::chown(path, Some(id.into()), Some(id.into()))
        .map_err(SysError::at("chown", path.display()))
}

/// Copies back every regular file the program created or changed under the jail's `/work` into
/// `host` (parent side, after the program ended, while the jail's init is still alive). Returns how
/// many files were copied.
pub fn copy_out(init: Pid, host: &Path, before: &Manifest) -> Result<u64, JailError> {
    let root = format!("/proc/{init}/root/work");
    let dir = open_dir(None, Path::new(&root))
        .map_err(|errno| JailError::syscall("open", &root, errno))?;
    let mut copied = 0;
    copy_dir_out(&dir, host, Path::new(""), before, 0, &mut copied)?;
    Ok(copied)
}

fn open_dir(parent: Option<&OwnedFd>, name: &Path) -> Result<OwnedFd, Errno> {
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    match parent {
        Some(dir) => nix::fcntl::openat(dir, name, flags, FileMode::empty()),
        None => nix::fcntl::open(
            name,
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            FileMode::empty(),
        ),
    }
}

fn copy_dir_out(
    dir: &OwnedFd,
    host: &Path,
    relative: &Path,
    before: &Manifest,
    depth: usize,
    copied: &mut u64,
) -> Result<(), JailError> {
    if depth > MAX_DEPTH {
        return Ok(());
    }
    let names = read_names(dir)
        .map_err(|errno| JailError::syscall("getdents", relative.display(), errno))?;
    for name in names {
        let rel = relative.join(&name);
        let stat = match fstatat(dir, name.as_path(), AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(stat) => stat,
            Err(_) => continue,
        };
        let kind = SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT;
        if kind == SFlag::S_IFDIR {
            let Ok(sub) = open_dir(Some(dir), &name) else {
                continue;
            };
            copy_dir_out(&sub, host, &rel, before, depth + 1, copied)?;
        } else if kind == SFlag::S_IFREG {
            let modified = SystemTime::UNIX_EPOCH
                + std::time::Duration::new(
                    stat.st_mtime.max(0) as u64,
                    stat.st_mtime_nsec.clamp(0, 999_999_999) as u32,
                );
            if before.get(&rel) == Some(&(stat.st_size as u64, modified)) {
                continue;
            }
            let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
            let Ok(fd) = nix::fcntl::openat(dir, name.as_path(), flags, FileMode::empty()) else {
                continue;
            };
            copy_file_out(File::from(fd), &host.join(&rel))?;
            *copied += 1;
        }
    }
    Ok(())
}

fn read_names(dir: &OwnedFd) -> Result<Vec<PathBuf>, Errno> {
    let dup = nix::unistd::dup(dir)?;
    let mut listing = nix::dir::Dir::from_fd(dup)?;
    let mut names = Vec::new();
    for entry in listing.iter() {
        let entry = entry?;
        let name = entry.file_name().to_bytes();
        if name != b"." && name != b".." {
            names.push(PathBuf::from(std::ffi::OsStr::from_bytes(name)));
        }
    }
    Ok(names)
}

fn copy_file_out(mut from: File, target: &Path) -> Result<(), JailError> {
    if !from
        .metadata()
        .map_err(|err| JailError::io("cannot stat", target, err))?
        .is_file()
    {
        return Ok(());
    }
    if let Some(parent) = target.parent() {
        fs::create_dir_all(parent).map_err(|err| JailError::io("cannot create", parent, err))?;
    }
    let mut to = match OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW)
        .open(target)
    {
        Err(err) if err.kind() == ErrorKind::PermissionDenied => {
            // A read-only file of the host work dir (e.g. an input) that the program rewrote: replace it.
            fs::remove_file(target).map_err(|err| JailError::io("cannot replace", target, err))?;
            OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o644)
                .open(target)
                .map_err(|err| JailError::io("cannot create", target, err))?
        }
        other => other.map_err(|err| JailError::io("cannot create", target, err))?,
    };
    std::io::copy(&mut from, &mut to)
        .map_err(|err| JailError::io("cannot copy back", target, err))?;
    Ok(())
}
