//! Which Python binary runs, and which host directories it needs.
//!
//! Owns: resolving the configured interpreter to the real ELF binary (refusing shell-script shims
//! such as pyenv's), and the installation prefixes to bind read-only. Does not own: provisioning
//! interpreters (`warden runtime`) or how they are mounted (`mounts.rs`).

use std::io::Read;
use std::path::{Path, PathBuf};

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

    #[test]
    fn missing_interpreters_are_refused() {
        let err = resolve(Path::new("/nonexistent/bin/python3"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("cannot resolve"), "{err}");
    }
}
