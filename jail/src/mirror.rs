//! The work dir mirror: a host directory mirrored into the jail's private `/work` and back.
//!
//! `/work` inside the jail is a size-capped tmpfs of its own, so a program can never fill the host's
//! disk or leave files for the next run. When the caller passes a host work dir, its tree is copied
//! in before the program starts (by the jail's init, before pivot_root, as the only moment it sees
//! the host), and afterwards every regular file the program created or changed is copied back (by
//! warden, through a descriptor of the jail's `/work` it opened while the init was alive, so also
//! after a limit kill). Neither direction follows a symlink; devices, fifos and sockets are skipped.
//!
//! The copy back is where the jail's 64 MiB could become gigabytes on the host (a sparse file is
//! mostly holes, a thousand hard links are one file), so it enforces the caller's caps while it
//! copies ([`CopyCaps`]): files and bytes (a file counted by its length), each inode once, a time
//! bound; what does not fit is refused before a byte of it is written, and reported ([`CopyBack`]).
//!
//! Owns: the manifest of what was copied in, the copy-in (jail side) and the copy-out (parent side).
//! Does not own: choosing inputs or collecting outputs for the result record (warden's pipeline does
//! that on the host work dir).

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::fs::{self, File, FileTimes, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag};
use nix::sys::stat::{fstatat, Mode as FileMode, SFlag};
use nix::unistd::Pid;
use serde::Serialize;

use crate::config::WORKDIR;
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

/// How long copying the work dir back may take. What is not copied when it runs out is refused (the
/// walk stops there); a file cut off in the middle is removed from the host again.
pub const COPY_BACK_TIME: Duration = Duration::from_secs(5);

/// How many refused files a [`CopyBack`] names (it counts them all), in all and for one reason.
const REFUSED_LISTED: usize = 64;
const REFUSED_LISTED_PER_REASON: usize = 16;

/// What may come back from the work dir: checked file by file *while* copying, so nothing past a cap
/// is ever written on the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CopyCaps {
    /// Files copied back.
    pub files: u64,
    /// Bytes copied back, each file counted by its length (see [`Refusal::ByteCap`]).
    pub bytes: u64,
    /// Time the whole copy may take.
    pub time: Duration,
}

/// Why a file of the work dir did not come back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "reason")]
pub enum Refusal {
    /// Another name of a file met earlier in the walk (a hard link): each file comes back once,
    /// under the first of its names, so a thousand links are not a thousand copies.
    HardLink {
        #[serde(serialize_with = "lossy_path")]
        of: PathBuf,
    },
    /// The file cap was reached.
    FileCap,
    /// Its length exceeds what is left of the byte cap. A file is counted by its length, the bytes a
    /// caller would receive, not by the blocks it holds in the jail: a sparse file is charged in full,
    /// so a hole is never materialised on the host beyond the cap.
    ByteCap,
    /// The copy ran out of [`COPY_BACK_TIME`] here; nothing after it in the walk was copied.
    TimeBound,
    /// Deeper than the walk goes (32 directories): nothing below it was copied.
    TooDeep,
    /// Reading it in the jail or writing it on the host failed.
    Failed { error: String },
    /// A symlink: never followed, never copied.
    Symlink,
    /// A fifo, socket or device: only regular files come back.
    NotRegular,
}

/// A file of the work dir that did not come back, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RefusedFile {
    /// Relative to the work dir (the raw name: it may not be UTF-8).
    #[serde(serialize_with = "lossy_path")]
    pub path: PathBuf,
    /// Its length.
    pub bytes: u64,
    #[serde(flatten)]
    pub refusal: Refusal,
}

/// What came back from the work dir.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CopyBack {
    /// Files copied onto the host.
    pub files: u64,
    /// Bytes written onto the host.
    pub bytes: u64,
    /// The program did not end on its own (warden killed it at a limit, or a signal ended it): the
    /// files are as it left them when it was stopped.
    pub partial: bool,
    /// The first refused files, in walk order.
    pub refused: Vec<RefusedFile>,
    /// How many files were refused in all (`refused` names at most 64, 16 for one reason).
    pub refused_total: u64,
    /// A cap, the time bound or the depth left files out (a hard link's extra names do not: their
    /// content came back under the first name).
    pub capped: bool,
}

impl CopyBack {
    fn refuse(&mut self, path: PathBuf, bytes: u64, refusal: Refusal) {
        self.refused_total += 1;
        self.capped |= matches!(
            refusal,
            Refusal::FileCap | Refusal::ByteCap | Refusal::TimeBound | Refusal::TooDeep
        );
        let kind = std::mem::discriminant(&refusal);
        let same = self
            .refused
            .iter()
            .filter(|listed| std::mem::discriminant(&listed.refusal) == kind)
            .count();
        if self.refused.len() < REFUSED_LISTED && same < REFUSED_LISTED_PER_REASON {
            self.refused.push(RefusedFile {
                path,
                bytes,
                refusal,
            });
        }
    }
}

fn lossy_path<S: serde::Serializer>(path: &Path, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&path.to_string_lossy())
}

/// Opens the jail's `/work` from the host (parent side) once the init has moved into the jail's root.
///
/// The descriptor keeps the work dir's tmpfs readable after the jail is gone: a limit kill tears the
/// jail's mount namespace down, but an open directory holds its file system, so the files written
/// before the kill can still be copied back. `None` while the init's root is still the host's (before
/// its `pivot_root`, `/proc/<init>/root/work` would be the *host's* `/work`), when the init is gone,
/// or when what is there is not a tmpfs.
pub fn open_jail_work(init: Pid) -> Option<OwnedFd> {
    let ours = nix::sys::stat::stat("/").ok()?;
    let root = nix::fcntl::open(
        format!("/proc/{init}/root").as_str(),
        OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        FileMode::empty(),
    )
    .ok()?;
    let theirs = nix::sys::stat::fstat(&root).ok()?;
    if (theirs.st_dev, theirs.st_ino) == (ours.st_dev, ours.st_ino) {
        return None;
    }
    let work = open_dir(Some(&root), Path::new(WORKDIR.trim_start_matches('/'))).ok()?;
    let fs = nix::sys::statfs::fstatfs(&work).ok()?;
    (fs.filesystem_type() == nix::sys::statfs::TMPFS_MAGIC).then_some(work)
}

/// Copies back every regular file the program created or changed under the jail's `/work` (`work`,
/// from [`open_jail_work`]) into `host` (parent side, once every process of the jail has ended).
///
/// Only what the caller will receive is written on the host: the caps are checked file by file
/// before a byte is written, each file (inode) comes back once whatever its number of names, a file
/// is copied up to the length it had when it was checked, and the whole copy is bounded by
/// `caps.time`. Everything that did not come back is in [`CopyBack::refused`].
pub fn copy_out(
    work: &OwnedFd,
    host: &Path,
    before: &Manifest,
    caps: CopyCaps,
    partial: bool,
) -> CopyBack {
    let mut copy = Copier {
        host,
        before,
        caps,
        deadline: Instant::now() + caps.time,
        seen: HashMap::new(),
        stopped: false,
        report: CopyBack {
            partial,
            ..CopyBack::default()
        },
    };
    copy.dir(work, Path::new(""), 0);
    copy.report
}

struct Copier<'a> {
    host: &'a Path,
    before: &'a Manifest,
    caps: CopyCaps,
    deadline: Instant,
    /// Files with several names met so far: (device, inode) → the first name.
    seen: HashMap<(u64, u64), PathBuf>,
    /// The time ran out: the walk ends.
    stopped: bool,
    report: CopyBack,
}

impl Copier<'_> {
    fn out_of_time(&mut self, at: &Path) -> bool {
        if !self.stopped && Instant::now() >= self.deadline {
            self.stopped = true;
            self.report.refuse(at.to_path_buf(), 0, Refusal::TimeBound);
        }
        self.stopped
    }

    fn dir(&mut self, dir: &OwnedFd, relative: &Path, depth: usize) {
        if depth > MAX_DEPTH {
            self.report
                .refuse(relative.to_path_buf(), 0, Refusal::TooDeep);
            return;
        }
        let names = match read_names(dir) {
            Ok(names) => names,
            Err(errno) => {
                let error = format!("cannot list it in the jail: {}", errno.desc());
                self.report
                    .refuse(relative.to_path_buf(), 0, Refusal::Failed { error });
                return;
            }
        };
        for name in names {
            let rel = relative.join(&name);
            if self.out_of_time(&rel) {
                return;
            }
            let Ok(stat) = fstatat(dir, name.as_path(), AtFlags::AT_SYMLINK_NOFOLLOW) else {
                continue;
            };
            let kind = SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT;
            if kind == SFlag::S_IFDIR {
                if let Ok(sub) = open_dir(Some(dir), &name) {
                    self.dir(&sub, &rel, depth + 1);
                }
            } else if kind == SFlag::S_IFREG {
                self.file(dir, &name, rel, &stat);
            } else if kind == SFlag::S_IFLNK {
                self.report.refuse(rel, 0, Refusal::Symlink);
            } else {
                self.report.refuse(rel, 0, Refusal::NotRegular);
            }
            if self.stopped {
                return;
            }
        }
    }

    fn file(&mut self, dir: &OwnedFd, name: &Path, rel: PathBuf, stat: &libc::stat) {
        let size = stat.st_size.max(0) as u64;
        if stat.st_nlink > 1 {
            match self.seen.entry((stat.st_dev, stat.st_ino)) {
                Entry::Occupied(first) => {
                    let of = first.get().clone();
                    self.report.refuse(rel, size, Refusal::HardLink { of });
                    return;
                }
                Entry::Vacant(slot) => {
                    slot.insert(rel.clone());
                }
            }
        }
        let modified = SystemTime::UNIX_EPOCH
            + Duration::new(
                stat.st_mtime.max(0) as u64,
                stat.st_mtime_nsec.clamp(0, 999_999_999) as u32,
            );
        if self.before.get(&rel) == Some(&(size, modified)) {
            return;
        }
        if self.report.files >= self.caps.files {
            self.report.refuse(rel, size, Refusal::FileCap);
            return;
        }
        if size > self.caps.bytes.saturating_sub(self.report.bytes) {
            self.report.refuse(rel, size, Refusal::ByteCap);
            return;
        }
        let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
        let from = match nix::fcntl::openat(dir, name, flags, FileMode::empty()) {
            Ok(fd) => File::from(fd),
            Err(errno) => {
                let error = format!("cannot open it in the jail: {}", errno.desc());
                self.report.refuse(rel, size, Refusal::Failed { error });
                return;
            }
        };
        // The file opened is the file checked (every process of the jail has ended; this is cheap).
        match nix::sys::stat::fstat(&from) {
            Ok(now) if (now.st_dev, now.st_ino) == (stat.st_dev, stat.st_ino) => {}
            _ => return,
        }
        let target = self.host.join(&rel);
        match copy_file_out(from, &target, size, self.deadline) {
            Ok(written) => {
                self.report.files += 1;
                self.report.bytes += written;
            }
            Err(CopyError::Time) => {
                self.stopped = true;
                self.report.refuse(rel, size, Refusal::TimeBound);
            }
            Err(CopyError::Failed(error)) => {
                self.report.refuse(rel, size, Refusal::Failed { error });
            }
        }
    }
}

fn open_dir(parent: Option<&OwnedFd>, name: &Path) -> Result<OwnedFd, Errno> {
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    match parent {
        Some(dir) => nix::fcntl::openat(dir, name, flags, FileMode::empty()),
        None => nix::fcntl::open(name, flags, FileMode::empty()),
    }
}

/// The names in `dir`, sorted (bytewise), so the walk and its refusals are the same run after run.
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
    names.sort();
    Ok(names)
}

enum CopyError {
    /// The copy's time ran out (the partial file was removed).
    Time,
    Failed(String),
}

/// Copies at most `length` bytes of `from` into `target`; returns the bytes written. A copy that
/// fails or runs past `deadline` is removed from the host again.
fn copy_file_out(
    mut from: File,
    target: &Path,
    length: u64,
    deadline: Instant,
) -> Result<u64, CopyError> {
    let failed = |what: &str, err: std::io::Error| CopyError::Failed(format!("{what}: {err}"));
    if let Some(parent) = target.parent() {
        fs::create_dir_all(parent).map_err(|err| failed("cannot create its directory", err))?;
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
            fs::remove_file(target).map_err(|err| failed("cannot replace it", err))?;
            OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o644)
                .open(target)
                .map_err(|err| failed("cannot create it on the host", err))?
        }
        other => other.map_err(|err| failed("cannot create it on the host", err))?,
    };
    let mut buffer = vec![0u8; 256 * 1024];
    let mut written = 0u64;
    let result = loop {
        if written >= length {
            break Ok(written);
        }
        if Instant::now() >= deadline {
            break Err(CopyError::Time);
        }
        let want = buffer.len().min((length - written) as usize);
        let read = match from.read(&mut buffer[..want]) {
            Ok(0) => break Ok(written),
            Ok(read) => read,
            Err(err) if err.kind() == ErrorKind::Interrupted => continue,
            Err(err) => break Err(failed("cannot read it in the jail", err)),
        };
        if let Err(err) = to.write_all(&buffer[..read]) {
            break Err(failed("cannot write it on the host", err));
        }
        written += read as u64;
    };
    if result.is_err() {
        drop(to);
        let _ = fs::remove_file(target);
    }
    result
}
