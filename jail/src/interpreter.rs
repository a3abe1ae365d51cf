//! Which Python binary runs, and which host directories it needs.
//!
//! Owns: resolving the configured interpreter to the real ELF binary (refusing shell-script shims
//! such as pyenv's), and the installation prefixes to bind read-only. Does not own: provisioning
//! interpreters (`warden runtime`) or how they are mounted (`mounts.rs`).

use std::io::Read;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::sys::stat::Mode as FileMode;

use serde::Serialize;

use crate::error::JailError;

/// A resolved interpreter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Interpreter {
    /// The path as configured; passed as `argv[0]` so CPython finds a venv's `pyvenv.cfg` and
    /// computes its prefix from this installation, not from whatever `PATH` says.
    pub configured: PathBuf,
    /// The real binary (all symlinks resolved), the path given to `execve`.
    pub real: PathBuf,
    /// Installation directories to bind read-only (e.g. `/usr`, a venv's root).
    pub prefixes: Vec<PathBuf>,
}

/// Resolves `configured` on the host and checks that it is an ELF executable.
pub fn resolve(configured: &Path) -> Result<Interpreter, JailError> {
    let fail = |reason: String| JailError::Interpreter {
        path: configured.to_path_buf(),
        reason,
    };
    if !configured.is_absolute() {
        return Err(fail("must be an absolute path".into()));
    }
    let real =
        std::fs::canonicalize(configured).map_err(|err| fail(format!("cannot resolve: {err}")))?;
    let mut file = std::fs::File::open(&real)
        .map_err(|err| fail(format!("cannot open {}: {err}", real.display())))?;
    let meta = file
        .metadata()
        .map_err(|err| fail(format!("cannot stat {}: {err}", real.display())))?;
    if !meta.is_file() {
        return Err(fail(format!("{} is not a regular file", real.display())));
    }
    let mut magic = [0u8; 4];
    let read = file
        .read(&mut magic)
        .map_err(|err| fail(format!("cannot read {}: {err}", real.display())))?;
    check_magic(&magic[..read]).map_err(|reason| fail(format!("{} {reason}", real.display())))?;
    let configured_dir = configured
        .parent()
        .map(std::fs::canonicalize)
        .transpose()
        .map_err(|err| fail(format!("cannot resolve its directory: {err}")))?;
    let mut prefixes = Vec::new();
    for bin in [
        configured_dir.map(|dir| dir.join("python")),
        Some(real.clone()),
    ]
    .into_iter()
    .flatten()
    {
        let prefix = prefix_of(&bin).ok_or_else(|| {
            fail(format!(
                "{} has no installation directory below /",
                bin.display()
            ))
        })?;
        prefixes.push(prefix);
    }
    Ok(Interpreter {
        configured: configured.to_path_buf(),
        real,
        prefixes: minimal_roots(prefixes),
    })
}

/// How long the interpreter may take to compile the bootstrap before warden gives up on the cache.
const COMPILE_TIME: std::time::Duration = std::time::Duration::from_secs(10);

/// The largest compiled bootstrap warden reads back (the one-shot one is ~17 KB).
const COMPILED_MAX: u64 = 1 << 20;

/// What the interpreter runs to compile the bootstrap: source on stdin, file name as the argument,
/// a `.pyc` (magic number, 12 zero bytes of header, marshalled code) on stdout. Trusted: warden's
/// own code, run by the configured interpreter with no site, no environment and no script dir.
const COMPILER: &str = "import sys, marshal, _frozen_importlib_external as e
code = compile(sys.stdin.buffer.read().decode('utf-8'), sys.argv[1], 'exec', dont_inherit=True)
sys.stdout.buffer.write(e.MAGIC_NUMBER + bytes(12) + marshal.dumps(code))
";

/// `source` compiled by `interpreter` under the file name `filename`, as a `.pyc` CPython runs
/// without compiling anything: read from `cache` (`dir`, the checked directory beside the stage
/// dir, `stage::cache_dir`), or compiled once by the interpreter on the host and stored there.
/// The cache file is named by a hash of the interpreter binary's identity (path, device, inode,
/// size, times), the file name and the source, so a changed interpreter or bootstrap gets a new
/// one; it is only read when it is a regular file of the caller's that nobody else may write.
/// `Err` says why the cache could not be used (the run then gets the source, which is the same
/// code, compiled at start).
pub fn compiled(
    interpreter: &Interpreter,
    source: &str,
    filename: &str,
    cache: (&Path, &OwnedFd),
) -> Result<Vec<u8>, String> {
    use sha2::{Digest, Sha256};
    use std::os::unix::fs::MetadataExt;
    let (dir, dir_fd) = cache;
    let meta = std::fs::metadata(&interpreter.real)
        .map_err(|err| format!("cannot stat {}: {err}", interpreter.real.display()))?;
    let mut hash = Sha256::new();
    hash.update(b"warden compiled bootstrap 1\0");
    hash.update(interpreter.real.as_os_str().as_bytes());
    for number in [
        meta.dev(),
        meta.ino(),
        meta.size(),
        meta.mtime() as u64,
        meta.mtime_nsec() as u64,
        meta.ctime() as u64,
        meta.ctime_nsec() as u64,
    ] {
        hash.update(number.to_le_bytes());
    }
    hash.update(filename.as_bytes());
    hash.update(b"\0");
    hash.update(source.as_bytes());
    let key: String = hash.finalize()[..16]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    let name = format!("bootstrap-{key}.pyc");
    match read_cached(dir_fd, &name) {
        Ok(Some(bytes)) => return Ok(bytes),
        Ok(None) => {}
        Err(why) => return Err(format!("{}/{name}: {why}", dir.display())),
    }
    let bytes = compile_with(interpreter, source, filename, dir_fd, &name)
        .map_err(|why| format!("compiling into {}: {why}", dir.display()))?;
    crate::trace("bootstrap compiled and cached");
    Ok(bytes)
}

/// The cached file, if there is one; `Err` when something is there that warden did not make.
fn read_cached(dir: &OwnedFd, name: &str) -> Result<Option<Vec<u8>>, String> {
    let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC | OFlag::O_NONBLOCK;
    let fd = match nix::fcntl::openat(dir, name, flags, FileMode::empty()) {
        Ok(fd) => fd,
        Err(Errno::ENOENT) => return Ok(None),
        Err(errno) => return Err(format!("open: {errno}")),
    };
    let stat = nix::sys::stat::fstat(&fd).map_err(|errno| format!("fstat: {errno}"))?;
    let me = nix::unistd::geteuid().as_raw();
    if stat.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err("not a regular file".into());
    }
    if stat.st_uid != me || stat.st_mode & 0o022 != 0 {
        return Err(format!(
            "uid {} mode {:o}: not the caller's alone",
            stat.st_uid,
            stat.st_mode & 0o7777
        ));
    }
    if stat.st_size as u64 > COMPILED_MAX {
        return Err("too large".into());
    }
    let mut bytes = Vec::with_capacity(stat.st_size as usize);
    std::fs::File::from(fd)
        .read_to_end(&mut bytes)
        .map_err(|err| format!("read: {err}"))?;
    looks_compiled(&bytes)?;
    Ok(Some(bytes))
}

/// A `.pyc` header: a magic number ending in `\r\n`, 12 more bytes, then code.
fn looks_compiled(bytes: &[u8]) -> Result<(), String> {
    if bytes.len() > 16 && bytes[2..4] == *b"\r\n" {
        Ok(())
    } else {
        Err(format!("not a compiled module ({} bytes)", bytes.len()))
    }
}

/// Runs the interpreter on `source` into a temporary file in `dir`, renamed to `name` once it is
/// complete (a concurrent warden makes its own and one rename wins).
fn compile_with(
    interpreter: &Interpreter,
    source: &str,
    filename: &str,
    dir: &OwnedFd,
    name: &str,
) -> Result<Vec<u8>, String> {
    use std::io::Write;
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    let temp = format!("{name}.{}.tmp", std::process::id());
    let flags =
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let _ = nix::unistd::unlinkat(dir, temp.as_str(), nix::unistd::UnlinkatFlags::NoRemoveDir);
    let out = nix::fcntl::openat(
        dir,
        temp.as_str(),
        flags,
        FileMode::from_bits_truncate(0o644),
    )
    .map_err(|errno| format!("create {temp}: {errno}"))?;
    let remove = || {
        let _ = nix::unistd::unlinkat(dir, temp.as_str(), nix::unistd::UnlinkatFlags::NoRemoveDir);
    };
    let result = (|| {
        let mut child = Command::new(&interpreter.real)
            .arg0(&interpreter.configured)
            .args(["-I", "-S", "-c", COMPILER, filename])
            .env_clear()
            .current_dir("/")
            .stdin(Stdio::piped())
            .stdout(Stdio::from(out))
            .stderr(Stdio::null())
            .spawn()
            .map_err(|err| format!("cannot start {}: {err}", interpreter.real.display()))?;
        let written = child
            .stdin
            .take()
            .map(|mut stdin| stdin.write_all(source.as_bytes()));
        let started = std::time::Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if started.elapsed() < COMPILE_TIME => {
                    std::thread::sleep(std::time::Duration::from_millis(1))
                }
                Ok(None) | Err(_) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(format!("{} did not finish", interpreter.real.display()));
                }
            }
        };
        if !status.success() || !matches!(written, Some(Ok(()))) {
            return Err(format!("{} failed: {status}", interpreter.real.display()));
        }
        let bytes = read_cached(dir, &temp)?.ok_or("the output is gone")?;
        nix::fcntl::renameat(dir, temp.as_str(), dir, name)
            .map_err(|errno| format!("rename: {errno}"))?;
        Ok(bytes)
    })();
    if result.is_err() {
        remove();
    }
    result
}

/// Accepts an ELF header; explains what else it found.
fn check_magic(head: &[u8]) -> Result<(), String> {
    if head == b"\x7fELF" {
        Ok(())
    } else if head.starts_with(b"#!") {
        Err("is a script (a shim such as pyenv's?), not the interpreter itself; point the rules file's \
             `runtime.interpreter` at the real binary (e.g. the output of \
             `python3 -c 'import sys; print(sys.executable)'`)"
            .into())
    } else {
        Err("is not an ELF executable".into())
    }
}

/// The installation directory of a binary: `/usr` for `/usr/bin/python3`, the binary's own
/// directory when it is not in a `bin` directory. `None` when that would be `/`.
pub fn prefix_of(binary: &Path) -> Option<PathBuf> {
    let dir = binary.parent()?;
    let prefix = if dir.file_name().is_some_and(|name| name == "bin") {
        dir.parent()?
    } else {
        dir
    };
    (prefix != Path::new("/")).then(|| prefix.to_path_buf())
}

/// Sorts, deduplicates and drops paths nested inside another path of the list.
pub fn minimal_roots(mut paths: Vec<PathBuf>) -> Vec<PathBuf> {
    paths.sort();
    paths.dedup();
    let mut kept: Vec<PathBuf> = Vec::new();
    for path in paths {
        if !kept.iter().any(|root| path.starts_with(root)) {
            kept.push(path);
        }
    }
    kept
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_are_the_parent_of_bin() {
        assert_eq!(
            prefix_of(Path::new("/usr/bin/python3.11")),
            Some(PathBuf::from("/usr"))
        );
        assert_eq!(
            prefix_of(Path::new("/opt/venv/bin/python")),
            Some(PathBuf::from("/opt/venv"))
        );
        assert_eq!(
            prefix_of(Path::new("/opt/python/python3")),
            Some(PathBuf::from("/opt/python"))
        );
        assert_eq!(prefix_of(Path::new("/bin/python3")), None);
        assert_eq!(prefix_of(Path::new("/python3")), None);
    }

    #[test]
    fn nested_roots_collapse() {
        let roots = minimal_roots(vec![
            "/usr/local".into(),
            "/usr".into(),
            "/opt/v".into(),
            "/usr".into(),
        ]);
        assert_eq!(roots, vec![PathBuf::from("/opt/v"), PathBuf::from("/usr")]);
    }

    #[test]
    fn the_system_interpreter_resolves_to_an_elf_under_usr() {
        let Ok(interpreter) = resolve(Path::new("/usr/bin/python3")) else {
            return;
        };
        assert!(interpreter.real.starts_with("/usr"));
        assert_eq!(interpreter.prefixes, vec![PathBuf::from("/usr")]);
        assert_eq!(interpreter.configured, PathBuf::from("/usr/bin/python3"));
    }

    #[test]
    fn shell_script_shims_are_refused_with_a_hint() {
        let dir = tempfile::tempdir().unwrap();
        let shim = dir.path().join("python3");
        std::fs::write(
            &shim,
            "#!/usr/bin/env bash\nexec pyenv exec python3 \"$@\"\n",
        )
        .unwrap();
        let err = resolve(&shim).unwrap_err().to_string();
        assert!(err.contains("is a script"), "{err}");
        assert!(err.contains("runtime.interpreter"), "{err}");
    }

    /// A private cache dir as `stage::cache_dir` hands it over.
    fn cache() -> (tempfile::TempDir, OwnedFd) {
        let dir = tempfile::tempdir().unwrap();
        let flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
        let fd = nix::fcntl::open(dir.path(), flags, FileMode::empty()).unwrap();
        (dir, fd)
    }

    #[test]
    fn the_bootstrap_is_compiled_once_and_runs_as_the_interpreter_s_bytecode() {
        let Ok(python) = resolve(Path::new("/usr/bin/python3")) else {
            return;
        };
        let (dir, fd) = cache();
        let source = "import sys\nprint('compiled', sys._getframe().f_code.co_filename)\n";
        let bytes = compiled(&python, source, "/run/warden/x.py", (dir.path(), &fd)).unwrap();
        let files: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .collect();
        assert_eq!(files.len(), 1, "{files:?}");
        assert!(files[0].extension().is_some_and(|ext| ext == "pyc"));
        // The second call reads what the first stored.
        assert_eq!(
            compiled(&python, source, "/run/warden/x.py", (dir.path(), &fd)).unwrap(),
            bytes
        );
        let out = std::process::Command::new(&python.real)
            .args(["-I", "-S"])
            .arg(&files[0])
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "compiled /run/warden/x.py\n"
        );
        // Another source (or file name) gets its own file.
        compiled(&python, "pass\n", "/run/warden/x.py", (dir.path(), &fd)).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn a_cached_file_others_may_write_or_not_compiled_is_not_used() {
        use std::os::unix::fs::PermissionsExt;
        let Ok(python) = resolve(Path::new("/usr/bin/python3")) else {
            return;
        };
        let (dir, fd) = cache();
        compiled(&python, "pass\n", "/b.py", (dir.path(), &fd)).unwrap();
        let file = std::fs::read_dir(dir.path())
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
        let err = compiled(&python, "pass\n", "/b.py", (dir.path(), &fd)).unwrap_err();
        assert!(err.contains("not the caller's alone"), "{err}");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::write(&file, "print('not bytecode')\n").unwrap();
        let err = compiled(&python, "pass\n", "/b.py", (dir.path(), &fd)).unwrap_err();
        assert!(err.contains("not a compiled module"), "{err}");
        std::fs::remove_file(&file).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", &file).unwrap();
        assert!(compiled(&python, "pass\n", "/b.py", (dir.path(), &fd)).is_err());
    }

    #[test]
    fn a_bootstrap_the_interpreter_cannot_compile_leaves_nothing_in_the_cache() {
        let Ok(python) = resolve(Path::new("/usr/bin/python3")) else {
            return;
        };
        let (dir, fd) = cache();
        let err = compiled(&python, "def (:\n", "/b.py", (dir.path(), &fd)).unwrap_err();
        assert!(err.contains("failed"), "{err}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn missing_interpreters_are_refused() {
        let err = resolve(Path::new("/nonexistent/bin/python3"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("cannot resolve"), "{err}");
    }
}
