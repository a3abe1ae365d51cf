//! The jail's file system: a fresh tmpfs root with only what the interpreter needs.
//!
//! Owns: the ordered list of mount steps (pure data, [`plan`]), their translation into raw
//! operations with host paths (parent side, [`prepare`]) and running those operations inside the
//! jail's mount namespace ([`Op::run`], whose failures are [`SysError`]s naming the call and path).
//! Every step says who needs it.
//!
//! Does not own: Landlock (which restricts access *within* this tree, `landlock.rs`), copying the
//! host work dir into `/work` (`mirror.rs`, run as one of the operations), nor deciding the order
//! relative to other layers (`child.rs`).
//!
//! The tree, in the jail's view:
//! - `/usr` (and the interpreter's prefixes, and any configured binds): read-only binds of the host;
//! - `/bin`, `/lib`, `/lib64`, `/sbin`: the host's merged-usr symlinks (or binds on older layouts);
//! - `/etc`: only `passwd`, `group`, `hosts` and `fonts/fonts.conf`, written by warden;
//! - `/work`, `/tmp`: size-capped, `noexec` tmpfs of their own, gone with the run; the run's input
//!   files are bound read-only into `/work`;
//! - `/dev`: a small tmpfs with `null`, `zero`, `random`, `urandom` bound from the host, and the
//!   `fd`, `stdin`, `stdout`, `stderr` and `shm` (→ `/tmp`) symlinks;
//! - `/proc`: a fresh proc of the jail's pid namespace (`subset=pid,hidepid=invisible`: the
//!   program's own processes only);
//! - `/run/warden/main.py`: the program text, read-only; `/run/warden/bootstrap.py` (warden's
//!   bootstrap), `/run/warden/hook.json` (the audit hook's settings) and
//!   `/run/warden/lib/_warden_hook.abi3.so` (warden's native module), read-only; for a one-shot run,
//!   `/run/warden/bootstrap.pyc`, the bootstrap compiled by the interpreter (`interpreter.rs`).
//!
//! The root is a mount point of its own (pivot_root requires it), and is made read-only last.

use std::ffi::{CStr, CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::mount::{MntFlags, MsFlags};
use nix::sys::stat::Mode as FileMode;
use serde::Serialize;

use crate::config::{Input, NATIVE_MODULE_PATH, PROGRAM_PATH, WORKDIR};
use crate::error::{JailError, SysError};
use crate::userns::PROGRAM_ID;

/// Device nodes bound from the host into the jail's `/dev`.
pub const DEVICES: [(&str, &str); 4] = [
    ("null", "everyone: stdin of the program, `open(os.devnull)`"),
    ("zero", "numpy and ctypes users mapping zeroed memory"),
    (
        "random",
        "the `random` and `secrets` modules on old code paths",
    ),
    (
        "urandom",
        "`os.urandom`, hash randomisation, `uuid`, `secrets`",
    ),
];

/// One step of building the jail's file system, in the jail's view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Mount {
    /// Stop propagation, so nothing mounted below reaches the host.
    PrivateRoot,
    /// A tmpfs as the new root (read-only once built).
    NewRoot,
    /// A tmpfs of its own.
    Tmpfs {
        target: PathBuf,
        size_bytes: u64,
        mode: u32,
        owner: Option<u32>,
        noexec: bool,
        why: String,
    },
    /// A host path, read-only, at `target`.
    BindReadOnly {
        source: PathBuf,
        target: PathBuf,
        why: String,
    },
    /// A host device node at `/dev/<name>`.
    Device { name: String, why: String },
    /// A symbolic link.
    Symlink {
        link: PathBuf,
        points_to: String,
        why: String,
    },
    /// A small file warden writes.
    File {
        path: PathBuf,
        mode: u32,
        contents: String,
        why: String,
    },
    /// A small binary file warden writes (read-only): the compiled bootstrap, whose bytes come
    /// from the interpreter (`interpreter::compiled`) and are not part of a plan's report.
    Compiled {
        path: PathBuf,
        #[serde(skip)]
        contents: Vec<u8>,
        why: String,
    },
    /// The program text (filled in at spawn).
    Program { path: PathBuf },
    /// A fresh proc for the jail's pid namespace.
    Proc { target: PathBuf },
    /// Make the new root `/` and detach the host's tree.
    PivotRoot,
    /// Make `/` read-only.
    RemountRootReadOnly,
}

/// What [`plan`] needs to know about the host.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct HostLayout {
    /// Top-level `/bin`, `/lib`, … entries: `Some(target)` for a symlink, `None` for a directory.
    pub top_level: Vec<(String, Option<String>)>,
}

impl HostLayout {
    /// Reads the layout of the host's root.
    pub fn probe() -> Self {
        let mut top_level = Vec::new();
        for name in ["bin", "sbin", "lib", "lib32", "lib64", "libx32"] {
            let path = Path::new("/").join(name);
            match std::fs::symlink_metadata(&path) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    if let Ok(target) = std::fs::read_link(&path) {
                        top_level
                            .push((name.to_owned(), Some(target.to_string_lossy().into_owned())));
                    }
                }
                Ok(meta) if meta.is_dir() => top_level.push((name.to_owned(), None)),
                _ => {}
            }
        }
        HostLayout { top_level }
    }
}

/// Inputs for [`plan`].
pub struct MountSettings<'a> {
    pub layout: &'a HostLayout,
    /// Read-only host directories (interpreter prefixes and configured binds), minimal and sorted.
    pub read_only: &'a [(PathBuf, String)],
    pub inputs: &'a [Input],
    pub tmp_bytes: u64,
    pub work_bytes: u64,
    pub hostname: &'a str,
    /// Files warden writes under `/run/warden` besides the program (path, contents, who needs it).
    pub run_files: &'a [(PathBuf, String, String)],
    /// warden's native module (host path), bound read-only at [`NATIVE_MODULE_PATH`].
    pub native_module: Option<&'a Path>,
}

/// The ordered mount steps of one jail.
pub fn plan(s: &MountSettings<'_>) -> Vec<Mount> {
    let mut steps = vec![Mount::PrivateRoot, Mount::NewRoot];
    steps.push(Mount::Tmpfs {
        target: PathBuf::from(WORKDIR),
        size_bytes: s.work_bytes,
        mode: 0o700,
        owner: Some(PROGRAM_ID),
        noexec: true,
        why: "the program's working directory: writable, size-capped, gone with the run".into(),
    });
    steps.push(Mount::Tmpfs {
        target: PathBuf::from("/tmp"),
        size_bytes: s.tmp_bytes,
        mode: 0o1777,
        owner: None,
        noexec: true,
        why: "tempfile, matplotlib's cache, multiprocessing's sockets; private and size-capped"
            .into(),
    });
    steps.push(Mount::Tmpfs {
        target: PathBuf::from("/dev"),
        size_bytes: 64 * 1024,
        mode: 0o755,
        owner: None,
        noexec: true,
        why: "holds the few device nodes below, nothing else of the host's /dev".into(),
    });
    for (name, why) in DEVICES {
        steps.push(Mount::Device {
            name: name.into(),
            why: why.into(),
        });
    }
    for (link, points_to, why) in [
        (
            "/dev/fd",
            "/proc/self/fd",
            "bash-style /dev/fd paths, `subprocess` pass_fds",
        ),
        (
            "/dev/stdin",
            "/proc/self/fd/0",
            "programs opening /dev/stdin",
        ),
        (
            "/dev/stdout",
            "/proc/self/fd/1",
            "programs opening /dev/stdout",
        ),
        (
            "/dev/stderr",
            "/proc/self/fd/2",
            "programs opening /dev/stderr",
        ),
        (
            "/dev/shm",
            "/tmp",
            "POSIX semaphores and shared memory (multiprocessing) live in the private /tmp",
        ),
    ] {
        steps.push(Mount::Symlink {
            link: link.into(),
            points_to: points_to.into(),
            why: why.into(),
        });
    }
    steps.push(Mount::Proc {
        target: PathBuf::from("/proc"),
    });
    for (source, why) in s.read_only {
        steps.push(Mount::BindReadOnly {
            source: source.clone(),
            target: source.clone(),
            why: why.clone(),
        });
    }
    for (name, target) in &s.layout.top_level {
        let path = PathBuf::from("/").join(name);
        match target {
            Some(points_to) => steps.push(Mount::Symlink {
                link: path,
                points_to: points_to.clone(),
                why: "merged-usr layout: the dynamic loader is found as /lib64/ld-linux-*.so"
                    .into(),
            }),
            None if !s.read_only.iter().any(|(dir, _)| path.starts_with(dir)) => {
                steps.push(Mount::BindReadOnly {
                    source: path.clone(),
                    target: path,
                    why: "split-usr layout: the dynamic loader and libc live here".into(),
                })
            }
            None => {}
        }
    }
    for (path, contents, why) in [
        (
            "/etc/passwd",
            format!("root:x:0:0:root:/root:/usr/sbin/nologin\nnobody:x:{PROGRAM_ID}:{PROGRAM_ID}:nobody:/tmp:/usr/sbin/nologin\n"),
            "`getpass.getuser`, `pwd`, `os.path.expanduser` resolve the program's uid",
        ),
        ("/etc/group", format!("root:x:0:\nnogroup:x:{PROGRAM_ID}:\n"), "`grp` and `shutil.chown` resolve group ids"),
        (
            "/etc/hosts",
            format!("127.0.0.1 localhost {0}\n::1 localhost {0}\n", s.hostname),
            "`socket.gethostname` lookups stay local",
        ),
        (
            "/etc/fonts/fonts.conf",
            FONTS_CONF.to_owned(),
            "fontconfig (what matplotlib and Pillow load to find fonts) finds a configuration and a \
             writable cache instead of printing `Fontconfig error: Cannot load default config file`",
        ),
    ] {
        steps.push(Mount::File { path: path.into(), mode: 0o644, contents, why: why.into() });
    }
    steps.push(Mount::Program {
        path: PathBuf::from(PROGRAM_PATH),
    });
    for (path, contents, why) in s.run_files {
        steps.push(Mount::File {
            path: path.clone(),
            mode: 0o444,
            contents: contents.clone(),
            why: why.clone(),
        });
    }
    if let Some(module) = s.native_module {
        steps.push(Mount::BindReadOnly {
            source: module.to_path_buf(),
            target: PathBuf::from(NATIVE_MODULE_PATH),
            why: "warden's native module: the runtime layer's audit hook and the exec ban".into(),
        });
    }
    for input in s.inputs {
        steps.push(Mount::BindReadOnly {
            source: input.host.clone(),
            target: Path::new(WORKDIR).join(&input.name),
            why: "an input file of the run".into(),
        });
    }
    steps.push(Mount::PivotRoot);
    steps.push(Mount::RemountRootReadOnly);
    steps
}

/// The jail's fontconfig configuration: the host's fonts (under the read-only `/usr`) and a cache
/// in the run's own `/tmp`.
const FONTS_CONF: &str = "<?xml version=\"1.0\"?>
<!DOCTYPE fontconfig SYSTEM \"urn:fontconfig:fonts.dtd\">
<fontconfig>
  <dir>/usr/share/fonts</dir>
  <dir>/usr/local/share/fonts</dir>
  <cachedir>/tmp/.cache/fontconfig</cachedir>
</fontconfig>
";

/// A raw operation, with host paths (below the stage directory), ready to run inside the jail.
#[derive(Debug)]
pub enum Op {
    MakePrivate,
    Mkdir {
        path: CString,
        mode: u32,
    },
    Touch {
        path: CString,
    },
    Mount {
        source: Option<CString>,
        target: CString,
        fstype: Option<CString>,
        flags: MsFlags,
        data: Option<CString>,
    },
    Symlink {
        points_to: CString,
        link: CString,
    },
    WriteFile {
        path: CString,
        mode: u32,
        contents: Vec<u8>,
    },
    Proc {
        target: CString,
    },
    PivotRoot {
        new_root: CString,
    },
    RemountRootReadOnly,
    /// Give a tmpfs's root directory to `id` (uid and gid, as the jail maps them).
    Chown {
        path: CString,
        id: u32,
    },
    /// Copy the host work dir's tree into the jail's `/work` (see `mirror.rs`).
    CopyIn {
        from: PathBuf,
        to: PathBuf,
        owner: u32,
    },
}

fn cstring(path: &Path) -> Result<CString, JailError> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| JailError::Config(format!("path {} contains a NUL byte", path.display())))
}

/// `stage` joined with a jail path.
fn staged(stage: &Path, jail_path: &Path) -> PathBuf {
    stage.join(jail_path.strip_prefix("/").unwrap_or(jail_path))
}

/// Mount flags a bind of `source` must keep: in a user namespace the host's nosuid/nodev/noexec and
/// atime flags are locked, and a remount that drops them fails with EPERM.
fn locked_flags(source: &Path) -> Result<MsFlags, JailError> {
    use nix::sys::statvfs::{statvfs, FsFlags};
    let flags = statvfs(source)
        .map_err(|errno| JailError::syscall("statvfs", source.display(), errno))?
        .flags();
    let mut ms = MsFlags::MS_NOSUID | MsFlags::MS_NODEV;
    if flags.contains(FsFlags::ST_NOEXEC) {
        ms |= MsFlags::MS_NOEXEC;
    }
    if flags.contains(FsFlags::ST_NOATIME) {
        ms |= MsFlags::MS_NOATIME;
    } else if !flags.contains(FsFlags::ST_RELATIME) {
        ms |= MsFlags::MS_STRICTATIME;
    }
    if flags.contains(FsFlags::ST_NODIRATIME) {
        ms |= MsFlags::MS_NODIRATIME;
    }
    Ok(ms)
}

/// Every directory from below `stage` down to `dir`, to create in order.
fn mkdirs(stage: &Path, jail_dir: &Path, ops: &mut Vec<Op>) -> Result<(), JailError> {
    let mut current = stage.to_path_buf();
    for part in jail_dir.strip_prefix("/").unwrap_or(jail_dir).components() {
        current.push(part);
        ops.push(Op::Mkdir {
            path: cstring(&current)?,
            mode: 0o755,
        });
    }
    Ok(())
}

/// Translates the steps into raw operations below `stage` (parent side, before cloning).
/// With `workdir`, the host tree is copied into `/work` right after that tmpfs is mounted.
pub fn prepare(
    steps: &[Mount],
    stage: &Path,
    program: &[u8],
    root_bytes: u64,
    workdir: Option<&Path>,
) -> Result<Vec<Op>, JailError> {
    let mut ops = Vec::new();
    let tmpfs = Some(CString::from(c"tmpfs"));
    for step in steps {
        match step {
            Mount::PrivateRoot => ops.push(Op::MakePrivate),
            Mount::NewRoot => {
                let size = root_bytes + program.len() as u64;
                ops.push(Op::Mount {
                    source: tmpfs.clone(),
                    target: cstring(stage)?,
                    fstype: tmpfs.clone(),
                    flags: MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
                    data: Some(cstr_of(format!("mode=0755,size={size},nr_inodes=4096"))?),
                });
            }
            Mount::Tmpfs {
                target,
                size_bytes,
                mode,
                owner,
                noexec,
                ..
            } => {
                mkdirs(stage, target, &mut ops)?;
                // The owner is set by `chown` after the mount, not by `uid=`/`gid=` options: the
                // kernel shows a tmpfs's options in `/proc/self/mountinfo` with the ids mapped to
                // the host's, which would tell the program the run's host uid (issue 25).
                let data = format!("mode={mode:o},size={size_bytes},nr_inodes=65536");
                let mut flags = MsFlags::MS_NOSUID | MsFlags::MS_NODEV;
                if *noexec {
                    flags |= MsFlags::MS_NOEXEC;
                }
                ops.push(Op::Mount {
                    source: tmpfs.clone(),
                    target: cstring(&staged(stage, target))?,
                    fstype: tmpfs.clone(),
                    flags,
                    data: Some(cstr_of(data)?),
                });
                if let Some(id) = owner {
                    ops.push(Op::Chown {
                        path: cstring(&staged(stage, target))?,
                        id: *id,
                    });
                }
                if let (Some(host), true) = (workdir, target == Path::new(WORKDIR)) {
                    ops.push(Op::CopyIn {
                        from: host.to_path_buf(),
                        to: staged(stage, target),
                        owner: PROGRAM_ID,
                    });
                }
            }
            Mount::BindReadOnly { source, target, .. } => {
                // An input (a file placed in the work dir) is named by the caller: never follow a
                // symlink there, it could point at a host secret.
                if target.starts_with(WORKDIR)
                    && std::fs::symlink_metadata(source).is_ok_and(|m| m.file_type().is_symlink())
                {
                    return Err(JailError::Config(format!(
                        "input {} is a symlink; warden does not follow symlinks into the jail",
                        source.display()
                    )));
                }
                let meta = std::fs::metadata(source)
                    .map_err(|err| JailError::io("cannot bind", source, err))?;
                if meta.is_dir() {
                    mkdirs(stage, target, &mut ops)?;
                } else {
                    if let Some(parent) = target.parent() {
                        mkdirs(stage, parent, &mut ops)?;
                    }
                    ops.push(Op::Touch {
                        path: cstring(&staged(stage, target))?,
                    });
                }
                bind_read_only(source, &staged(stage, target), &mut ops)?;
            }
            Mount::Device { name, .. } => {
                let source = Path::new("/dev").join(name);
                let target = staged(stage, &source);
                ops.push(Op::Touch {
                    path: cstring(&target)?,
                });
                ops.push(Op::Mount {
                    source: Some(cstring(&source)?),
                    target: cstring(&target)?,
                    fstype: None,
                    flags: MsFlags::MS_BIND,
                    data: None,
                });
            }
            Mount::Symlink {
                link, points_to, ..
            } => {
                if let Some(parent) = link.parent() {
                    mkdirs(stage, parent, &mut ops)?;
                }
                ops.push(Op::Symlink {
                    points_to: cstr_of(points_to.clone())?,
                    link: cstring(&staged(stage, link))?,
                });
            }
            Mount::File {
                path,
                mode,
                contents,
                ..
            } => {
                if let Some(parent) = path.parent() {
                    mkdirs(stage, parent, &mut ops)?;
                }
                ops.push(Op::WriteFile {
                    path: cstring(&staged(stage, path))?,
                    mode: *mode,
                    contents: contents.as_bytes().to_vec(),
                });
            }
            Mount::Compiled { path, contents, .. } => {
                if let Some(parent) = path.parent() {
                    mkdirs(stage, parent, &mut ops)?;
                }
                ops.push(Op::WriteFile {
                    path: cstring(&staged(stage, path))?,
                    mode: 0o444,
                    contents: contents.clone(),
                });
            }
            Mount::Program { path } => {
                if let Some(parent) = path.parent() {
                    mkdirs(stage, parent, &mut ops)?;
                }
                ops.push(Op::WriteFile {
                    path: cstring(&staged(stage, path))?,
                    mode: 0o444,
                    contents: program.to_vec(),
                });
            }
            Mount::Proc { target } => {
                mkdirs(stage, target, &mut ops)?;
                ops.push(Op::Proc {
                    target: cstring(&staged(stage, target))?,
                });
            }
            Mount::PivotRoot => ops.push(Op::PivotRoot {
                new_root: cstring(stage)?,
            }),
            Mount::RemountRootReadOnly => ops.push(Op::RemountRootReadOnly),
        }
    }
    Ok(ops)
}

fn cstr_of(text: String) -> Result<CString, JailError> {
    CString::new(text)
        .map_err(|err| JailError::Config(format!("mount data contains a NUL byte: {err}")))
}

/// A recursive bind, then a remount of its top that adds read-only and keeps the locked flags.
fn bind_read_only(source: &Path, target: &Path, ops: &mut Vec<Op>) -> Result<(), JailError> {
    let target = cstring(target)?;
    ops.push(Op::Mount {
        source: Some(cstring(source)?),
        target: target.clone(),
        fstype: None,
        flags: MsFlags::MS_BIND | MsFlags::MS_REC,
        data: None,
    });
    ops.push(Op::Mount {
        source: None,
        target,
        fstype: None,
        flags: MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | locked_flags(source)?,
        data: None,
    });
    Ok(())
}

fn display(path: &CStr) -> String {
    Path::new(OsStr::from_bytes(path.to_bytes()))
        .display()
        .to_string()
}

fn fail<'a>(call: &'static str, arg: &'a CStr) -> impl FnOnce(Errno) -> SysError + 'a {
    move |errno| SysError::new(call, display(arg), errno)
}

impl Op {
    /// Runs the operation (inside the jail's mount namespace, as its init).
    pub fn run(&self) -> Result<(), SysError> {
        match self {
            Op::MakePrivate => nix::mount::mount(
                None::<&CStr>,
                c"/",
                None::<&CStr>,
                MsFlags::MS_REC | MsFlags::MS_PRIVATE,
                None::<&CStr>,
            )
            .map_err(fail("mount(MS_REC|MS_PRIVATE)", c"/")),
            Op::Mkdir { path, mode } => {
                match nix::unistd::mkdir(path.as_c_str(), FileMode::from_bits_truncate(*mode)) {
                    Ok(()) | Err(Errno::EEXIST) => Ok(()),
                    Err(errno) => Err(fail("mkdir", path)(errno)),
                }
            }
            Op::Touch { path } => {
                let flags = OFlag::O_CREAT | OFlag::O_WRONLY | OFlag::O_CLOEXEC | OFlag::O_NOFOLLOW;
                nix::fcntl::open(path.as_c_str(), flags, FileMode::from_bits_truncate(0o444))
                    .map(drop)
                    .map_err(fail("open(O_CREAT)", path))
            }
            Op::Mount {
                source,
                target,
                fstype,
                flags,
                data,
            } => nix::mount::mount(
                source.as_deref(),
                target.as_c_str(),
                fstype.as_deref(),
                *flags,
                data.as_deref(),
            )
            .map_err(fail("mount", target)),
            Op::Symlink { points_to, link } => {
                nix::unistd::symlinkat(points_to.as_c_str(), nix::fcntl::AT_FDCWD, link.as_c_str())
                    .map_err(fail("symlink", link))
            }
            Op::WriteFile {
                path,
                mode,
                contents,
            } => write_file(path, *mode, contents),
            Op::Proc { target } => {
                let flags = MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC;
                let mount = |data: Option<&CStr>| {
                    nix::mount::mount(Some(c"proc"), target.as_c_str(), Some(c"proc"), flags, data)
                };
                // `subset=pid` (Linux 5.8) hides /proc/sys, /proc/sysrq-trigger and the like;
                // `hidepid=invisible` hides processes the reader may not ptrace: the init (another
                // uid as root; outside the program's Landlock domain in both modes), so the program
                // sees only its own. Older kernels refuse the options and get a plain proc of the
                // jail's pid namespace.
                match mount(Some(c"subset=pid,hidepid=invisible")) {
                    Err(Errno::EINVAL) => match mount(Some(c"subset=pid")) {
                        Err(Errno::EINVAL) => mount(None),
                        other => other,
                    },
                    other => other,
                }
                .map_err(fail("mount(proc)", target))
            }
            Op::PivotRoot { new_root } => {
                nix::unistd::chdir(new_root.as_c_str()).map_err(fail("chdir", new_root))?;
                // pivot_root(".", "."): the old root ends up stacked on the new one and is detached
                // right away, so no path to the host's tree remains.
                nix::unistd::pivot_root(c".", c".").map_err(fail("pivot_root", new_root))?;
                nix::mount::umount2(c".", MntFlags::MNT_DETACH)
                    .map_err(fail("umount2(MNT_DETACH)", c"old root"))?;
                nix::unistd::chdir(c"/").map_err(fail("chdir", c"/"))
            }
            Op::RemountRootReadOnly => nix::mount::mount(
                None::<&CStr>,
                c"/",
                None::<&CStr>,
                MsFlags::MS_REMOUNT
                    | MsFlags::MS_BIND
                    | MsFlags::MS_RDONLY
                    | MsFlags::MS_NOSUID
                    | MsFlags::MS_NODEV,
                None::<&CStr>,
            )
            .map_err(fail("mount(MS_REMOUNT|MS_RDONLY)", c"/")),
            Op::Chown { path, id } => nix::unistd::chown(
                path.as_c_str(),
                Some(nix::unistd::Uid::from_raw(*id)),
                Some(nix::unistd::Gid::from_raw(*id)),
            )
            .map_err(fail("chown", path)),
            Op::CopyIn { from, to, owner } => crate::mirror::copy_in(from, to, *owner),
        }
    }
}

fn write_file(path: &CStr, mode: u32, contents: &[u8]) -> Result<(), SysError> {
    let flags =
        OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_WRONLY | OFlag::O_CLOEXEC | OFlag::O_NOFOLLOW;
    let fd = nix::fcntl::open(path, flags, FileMode::from_bits_truncate(mode))
        .map_err(fail("open(O_CREAT)", path))?;
    let mut written = 0;
    while written < contents.len() {
        match nix::unistd::write(&fd, &contents[written..]) {
            Ok(0) => return Err(fail("write", path)(Errno::EIO)),
            Ok(n) => written += n,
            Err(Errno::EINTR) => {}
            Err(errno) => return Err(fail("write", path)(errno)),
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn settings<'a>(
        layout: &'a HostLayout,
        read_only: &'a [(PathBuf, String)],
        inputs: &'a [Input],
    ) -> MountSettings<'a> {
        MountSettings {
            layout,
            read_only,
            inputs,
            tmp_bytes: 1 << 20,
            work_bytes: 2 << 20,
            hostname: "warden",
            run_files: &[],
            native_module: None,
        }
    }

    #[test]
    fn the_root_is_built_then_pivoted_then_made_read_only() {
        let layout = HostLayout {
            top_level: vec![("lib64".into(), Some("usr/lib64".into()))],
        };
        let read_only = [(PathBuf::from("/usr"), "interpreter".to_owned())];
        let steps = plan(&settings(&layout, &read_only, &[]));
        assert_eq!(steps[0], Mount::PrivateRoot);
        assert_eq!(steps[1], Mount::NewRoot);
        assert_eq!(steps[steps.len() - 2], Mount::PivotRoot);
        assert_eq!(steps[steps.len() - 1], Mount::RemountRootReadOnly);
        let tmp = steps
            .iter()
            .position(|s| matches!(s, Mount::Tmpfs { target, .. } if target == Path::new("/tmp")));
        let usr = steps.iter().position(
            |s| matches!(s, Mount::BindReadOnly { target, .. } if target == Path::new("/usr")),
        );
        assert!(
            tmp < usr,
            "tmpfs mounts come before binds so that binds below /tmp stay visible"
        );
        assert!(steps.contains(&Mount::Symlink {
            link: "/lib64".into(),
            points_to: "usr/lib64".into(),
            why: "merged-usr layout: the dynamic loader is found as /lib64/ld-linux-*.so".into()
        }));
    }

    #[test]
    fn nothing_of_the_host_is_writable() {
        let layout = HostLayout::default();
        let read_only = [(PathBuf::from("/usr"), "interpreter".to_owned())];
        let inputs = [Input {
            host: "/data/in.csv".into(),
            name: "in.csv".into(),
        }];
        for step in plan(&settings(&layout, &read_only, &inputs)) {
            if let Mount::Tmpfs { target, .. } = &step {
                assert!(
                    ["/work", "/tmp", "/dev"].contains(&target.to_str().unwrap_or_default()),
                    "{step:?}"
                );
            }
        }
    }

    #[test]
    fn prepared_operations_stay_below_the_stage() {
        let layout = HostLayout::default();
        let steps = plan(&settings(&layout, &[], &[]));
        let ops = prepare(
            &steps,
            Path::new("/run/warden/root"),
            b"print(1)\n",
            1 << 20,
            Some(Path::new("/host/w")),
        )
        .unwrap();
        assert!(ops.iter().any(
            |op| matches!(op, Op::CopyIn { to, .. } if to == Path::new("/run/warden/root/work"))
        ));
        for op in &ops {
            let path = match op {
                Op::Mkdir { path, .. }
                | Op::Touch { path }
                | Op::WriteFile { path, .. }
                | Op::Chown { path, .. } => Some(path),
                Op::Mount { target, .. } => Some(target),
                Op::Symlink { link, .. } => Some(link),
                _ => None,
            };
            if let Some(path) = path {
                assert!(path.to_bytes().starts_with(b"/run/warden/root"), "{op:?}");
            }
        }
        let program = ops.iter().find_map(|op| match op {
            Op::WriteFile {
                path,
                contents,
                mode,
            } if path.to_bytes().ends_with(b"main.py") => Some((contents, *mode)),
            _ => None,
        });
        assert_eq!(program, Some((&b"print(1)\n".to_vec(), 0o444)));
    }
}
