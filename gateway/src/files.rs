//! Files in and out of a run: the host work dir ([`WorkDir`]), copying `--input` paths into it, and
//! collecting what the program wrote into `--output-dir`.
//!
//! Never follows a symlink on either side: an input that is a symlink is refused (it could point at a host
//! secret), and only regular files the program wrote are collected. Knows nothing about the jail.

use std::fs;
use std::io::Read;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// One collected output file, as the result record lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputFile {
    /// Path relative to the work dir.
    pub path: String,
    pub bytes: u64,
    pub sha256: String,
    /// The file's bytes, base64, when the caller asked for them (the server's `return_files`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_base64: Option<String>,
    /// The program was stopped before it ended (a limit kill): the file is as it left it, perhaps
    /// half written.
    #[serde(default)]
    pub partial: bool,
}

/// A file the program wrote that did not come back, as the record's `files_refused` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefusedOutput {
    /// Path relative to the work dir (percent-encoded when not UTF-8, as in `files`).
    pub path: String,
    /// `symlink`, `not_regular`, `file_cap`, `byte_cap`, `hard_link`, `time_bound`, `too_deep`,
    /// `name_taken` or `failed`.
    pub reason: String,
    /// The same in words, with the cap or the other name.
    pub detail: String,
}

/// The inputs placed in the work dir, relative paths, so they are not collected back as outputs.
#[derive(Debug, Default, Clone)]
pub struct PlacedInputs {
    pub paths: Vec<PathBuf>,
}

/// A file name inside the work dir as a caller gives it (`inputs/sales.csv`), normalised: `.` and
/// empty segments dropped; `..`, absolute paths, NUL and names that end up empty are refused, and
/// so are more than 16 levels or a segment over 255 bytes. Links are refused where the file is
/// opened (`O_NOFOLLOW`), not here.
pub fn relative_name(name: &str) -> Result<String, String> {
    if name.starts_with('/') {
        return Err(format!(
            "{name:?} is an absolute path; give a path inside the work dir"
        ));
    }
    if name.contains('\0') {
        return Err("a file name may not contain NUL".to_owned());
    }
    let mut parts = Vec::new();
    for part in name.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err(format!("{name:?} leaves the work dir (`..`)")),
            part if part.len() > 255 => {
                return Err(format!("a segment of {name:?} is over 255 bytes"))
            }
            part => parts.push(part),
        }
    }
    if parts.is_empty() {
        return Err(format!("{name:?} names no file"));
    }
    if parts.len() > 16 {
        return Err(format!("{name:?} is more than 16 directories deep"));
    }
    Ok(parts.join("/"))
}

/// Checks `--input` paths before anything runs: each must exist, be readable, and not be a symlink.
pub fn check_inputs(inputs: &[PathBuf]) -> anyhow::Result<()> {
    let mut names = std::collections::BTreeSet::new();
    for input in inputs {
        let meta = fs::symlink_metadata(input)
            .with_context(|| format!("input {} cannot be read", input.display()))?;
        if meta.file_type().is_symlink() {
            bail!(
                "input {} is a symlink; warden does not follow symlinks into the jail",
                input.display()
            );
        }
        if !meta.is_file() && !meta.is_dir() {
            bail!(
                "input {} is neither a regular file nor a directory",
                input.display()
            );
        }
        let name = input
            .file_name()
            .with_context(|| format!("input {} has no file name", input.display()))?;
        if !names.insert(name.to_owned()) {
            bail!(
                "two inputs are named {:?}; inputs are placed by name in the work dir",
                name
            );
        }
    }
    Ok(())
}

/// Copies inputs into `workdir` by file name (directories recursively, symlinks inside them skipped),
/// making them read-only unless `writable`.
pub fn place_inputs(
    inputs: &[PathBuf],
    workdir: &Path,
    writable: bool,
) -> anyhow::Result<PlacedInputs> {
    let mut placed = PlacedInputs::default();
    for input in inputs {
        let name = input
            .file_name()
            .with_context(|| format!("input {} has no file name", input.display()))?;
        let target = workdir.join(name);
        copy_tree(input, &target, writable, &mut placed, Path::new(name))?;
    }
    Ok(placed)
}

fn copy_tree(
    source: &Path,
    target: &Path,
    writable: bool,
    placed: &mut PlacedInputs,
    relative: &Path,
) -> anyhow::Result<()> {
    let meta = fs::symlink_metadata(source)
        .with_context(|| format!("cannot read {}", source.display()))?;
    if meta.file_type().is_symlink() {
        return Ok(());
    }
    if meta.is_dir() {
        fs::create_dir(target).with_context(|| format!("cannot create {}", target.display()))?;
        let mut entries: Vec<_> = fs::read_dir(source)
            .with_context(|| format!("cannot read {}", source.display()))?
            .flatten()
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let name = entry.file_name();
            copy_tree(
                &entry.path(),
                &target.join(&name),
                writable,
                placed,
                &relative.join(&name),
            )?;
        }
        if !writable {
            fs::set_permissions(target, fs::Permissions::from_mode(0o555))?;
        }
    } else if meta.is_file() {
        // Read through an opened handle (O_NOFOLLOW is implied by the symlink check above, and the copy
        // cannot be redirected: we read the file we checked).
        fs::copy(source, target)
            .with_context(|| format!("cannot copy {} into the work dir", source.display()))?;
        fs::set_permissions(
            target,
            fs::Permissions::from_mode(if writable { 0o644 } else { 0o444 }),
        )?;
        placed.paths.push(relative.to_path_buf());
    }
    Ok(())
}

/// Refuses an output dir that exists and is not empty: warden never overwrites or mixes files.
pub fn check_output_dir(dir: &Path) -> anyhow::Result<()> {
    match fs::symlink_metadata(dir) {
        Ok(meta) if meta.file_type().is_symlink() => {
            bail!("output dir {} is a symlink", dir.display())
        }
        Ok(meta) if !meta.is_dir() => {
            bail!("output dir {} exists and is not a directory", dir.display())
        }
        Ok(_) => {
            let mut entries = fs::read_dir(dir)
                .with_context(|| format!("cannot read output dir {}", dir.display()))?;
            if entries.next().is_some() {
                bail!(
                    "output dir {} is not empty; warden will not overwrite or mix files",
                    dir.display()
                );
            }
            Ok(())
        }
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(err).with_context(|| format!("cannot use output dir {}", dir.display())),
    }
}

/// Limits on collected files.
#[derive(Debug, Clone, Copy)]
pub struct CollectLimits {
    pub max_files: u64,
    pub max_total_bytes: u64,
}

/// The files collected, and what was said about the others.
#[derive(Debug, Default)]
pub struct Collected {
    pub files: Vec<OutputFile>,
    /// What the record's `message` says about files: left out (and why) or renamed.
    pub notes: Vec<String>,
    /// A file was left out because a cap was reached.
    pub over_caps: bool,
    /// The files left out, each with its reason.
    pub refused: Vec<RefusedOutput>,
}

impl Collected {
    fn refuse(&mut self, path: &str, reason: &str, detail: String) {
        self.notes.push(format!("{path} left out: {detail}"));
        self.refused.push(RefusedOutput {
            path: path.to_owned(),
            reason: reason.to_owned(),
            detail,
        });
    }
}

/// Lists (and, with `destination`, delivers) the regular files the program left in `workdir`,
/// skipping the placed inputs, symlinks and special files, in name order up to the caps (the jail
/// enforced the same caps when it copied the files back; these hold on their own too).
///
/// A name that is not UTF-8 is delivered and listed percent-encoded ([`record_path`]), and a note
/// says so. A file is delivered by a hard link when `destination` is on the work dir's file system
/// (nothing is written twice on the host), by a copy otherwise.
pub fn collect_outputs(
    workdir: &Path,
    inputs: &PlacedInputs,
    limits: CollectLimits,
    destination: Option<&Path>,
) -> anyhow::Result<Collected> {
    let mut found = Vec::new();
    walk(workdir, Path::new(""), &mut found)?;
    found.retain(|(relative, _)| !inputs.paths.contains(relative));
    found.sort();
    if let Some(destination) = destination {
        fs::create_dir_all(destination)
            .with_context(|| format!("cannot create output dir {}", destination.display()))?;
    }
    // Names that are UTF-8 keep their name; an encoded one that would clash with one is left out.
    let mut taken: std::collections::BTreeSet<String> = found
        .iter()
        .filter_map(|(relative, _)| relative.to_str().map(str::to_owned))
        .collect();
    let mut collected = Collected::default();
    let mut total = 0u64;
    for (relative, size) in found {
        let (path, encoded) = record_path(&relative);
        if collected.files.len() as u64 >= limits.max_files {
            collected.refuse(
                &path,
                "file_cap",
                format!("over the cap of {} files", limits.max_files),
            );
            collected.over_caps = true;
            continue;
        }
        if size > limits.max_total_bytes.saturating_sub(total) {
            collected.refuse(
                &path,
                "byte_cap",
                format!(
                    "its {size} bytes exceed what is left of the {}-byte cap",
                    limits.max_total_bytes
                ),
            );
            collected.over_caps = true;
            continue;
        }
        if encoded {
            if !taken.insert(path.clone()) {
                collected.refuse(
                    &path,
                    "name_taken",
                    "its name is not UTF-8 and its percent-encoded name is taken".to_owned(),
                );
                continue;
            }
            collected.notes.push(format!(
                "{path}: the name is not UTF-8; delivered and listed percent-encoded (invalid bytes \
                 as %XX, % as %25)"
            ));
        }
        let source = workdir.join(&relative);
        let (bytes, sha256) = match destination {
            Some(destination) => {
                let target = destination.join(&path);
                if let Some(parent) = target.parent() {
                    fs::create_dir_all(parent)?;
                }
                deliver(&source, &target)?
            }
            None => hash(open_no_follow(&source)?)?,
        };
        total = total.saturating_add(bytes);
        collected.files.push(OutputFile {
            path,
            bytes,
            sha256,
            content_base64: None,
            partial: false,
        });
    }
    Ok(collected)
}

/// What the record says about the jail's copy back (files refused while copying, a partial copy
/// after a kill), and whether a cap, the time bound or the depth left files out.
pub fn copy_back_notes(
    copy: Option<&warden_jail::CopyBack>,
    limits: CollectLimits,
) -> (Vec<String>, bool) {
    let Some(copy) = copy else {
        return (Vec::new(), false);
    };
    let mut notes = Vec::new();
    if copy.partial && copy.files > 0 {
        notes.push(
            "the program was stopped before it ended: its files are as it left them (partial)"
                .to_owned(),
        );
    }
    for refused in copy_back_refused(Some(copy), limits) {
        notes.push(format!("{} not returned: {}", refused.path, refused.detail));
    }
    let unlisted = copy.refused_total.saturating_sub(copy.refused.len() as u64);
    if unlisted > 0 {
        notes.push(format!("{unlisted} more files not returned"));
    }
    (notes, copy.capped)
}

/// The files the jail refused while copying back (the first 64 it names), each with its reason.
pub fn copy_back_refused(
    copy: Option<&warden_jail::CopyBack>,
    limits: CollectLimits,
) -> Vec<RefusedOutput> {
    use warden_jail::Refusal;
    let Some(copy) = copy else {
        return Vec::new();
    };
    copy.refused
        .iter()
        .map(|refused| {
            let (reason, detail) = match &refused.refusal {
                Refusal::HardLink { of } => (
                    "hard_link",
                    format!(
                        "a hard link to {}, whose content comes back once, under that name",
                        record_path(of).0
                    ),
                ),
                Refusal::FileCap => (
                    "file_cap",
                    format!("over the cap of {} files", limits.max_files),
                ),
                Refusal::ByteCap => (
                    "byte_cap",
                    format!(
                        "its {} bytes exceed what is left of the {}-byte cap (a file counts by \
                         its length, holes included)",
                        refused.bytes, limits.max_total_bytes
                    ),
                ),
                Refusal::TimeBound => (
                    "time_bound",
                    format!(
                        "the copy back ran out of its {} s here; nothing after it was copied",
                        warden_jail::COPY_BACK_TIME.as_secs()
                    ),
                ),
                Refusal::TooDeep => (
                    "too_deep",
                    "deeper than 32 directories; nothing below was copied".to_owned(),
                ),
                Refusal::Failed { error } => ("failed", error.clone()),
                Refusal::Symlink => (
                    "symlink",
                    "a symlink; warden never follows or copies one".to_owned(),
                ),
                Refusal::NotRegular => (
                    "not_regular",
                    "not a regular file (a fifo, socket or device)".to_owned(),
                ),
            };
            RefusedOutput {
                path: record_path(&refused.path).0,
                reason: reason.to_owned(),
                detail,
            }
        })
        .collect()
}

/// A relative path as the record names it, and whether it had to be encoded: a UTF-8 path as it
/// is; any other percent-encoded (each byte of an invalid sequence as `%XX`, and `%` itself as `%25`,
/// so the original bytes can be recovered).
pub fn record_path(path: &Path) -> (String, bool) {
    use std::os::unix::ffi::OsStrExt;
    let bytes = path.as_os_str().as_bytes();
    if let Ok(text) = std::str::from_utf8(bytes) {
        return (text.to_owned(), false);
    }
    let mut out = String::with_capacity(bytes.len() * 2);
    for chunk in bytes.utf8_chunks() {
        out.push_str(&chunk.valid().replace('%', "%25"));
        for byte in chunk.invalid() {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    (out, true)
}

/// Puts `source` at `target` (which must not exist): a hard link on the same file system, else a
/// copy. Returns its size and SHA-256.
fn deliver(source: &Path, target: &Path) -> anyhow::Result<(u64, String)> {
    match fs::hard_link(source, target) {
        Ok(()) => hash(open_no_follow(target)?),
        Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {
            Err(err).with_context(|| format!("cannot create {}", target.display()))
        }
        Err(_) => copy_hashing(open_no_follow(source)?, target),
    }
}

fn walk(dir: &Path, relative: &Path, out: &mut Vec<(PathBuf, u64)>) -> anyhow::Result<()> {
    let entries = fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))?;
    for entry in entries.flatten() {
        let meta = fs::symlink_metadata(entry.path())?;
        let rel = relative.join(entry.file_name());
        if meta.is_dir() {
            walk(&entry.path(), &rel, out)?;
        } else if meta.is_file() && meta.nlink() == 1 {
            out.push((rel, meta.len()));
        }
    }
    Ok(())
}

/// Opens a file refusing symlinks at the last component (the program cannot swap one in: it has exited).
fn open_no_follow(path: &Path) -> anyhow::Result<fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc_o_nofollow())
        .open(path)
        .with_context(|| format!("cannot open output {}", path.display()))
}

const fn libc_o_nofollow() -> i32 {
    // O_NOFOLLOW on Linux (x86_64 and aarch64 alike).
    0o400000
}

fn hash(file: fs::File) -> anyhow::Result<(u64, String)> {
    hash_into(file, &mut std::io::sink())
}

fn copy_hashing(file: fs::File, target: &Path) -> anyhow::Result<(u64, String)> {
    let mut out = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(target)
        .with_context(|| format!("cannot create {}", target.display()))?;
    hash_into(file, &mut out)
}

/// Reads `file` to its end, writing every byte to `out`; returns its size and SHA-256 (hex).
fn hash_into(mut file: fs::File, out: &mut impl std::io::Write) -> anyhow::Result<(u64, String)> {
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    loop {
        let read = file.read(&mut buffer)?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
        out.write_all(&buffer[..read])?;
        total += read as u64;
    }
    Ok((total, warden_policy::settings::hex(&hasher.finalize())))
}

/// A private host work dir for one run (mode 0700), removed with everything in it afterwards.
pub struct WorkDir {
    pub path: PathBuf,
}

impl WorkDir {
    pub fn create() -> anyhow::Result<Self> {
        use std::os::unix::fs::DirBuilderExt;
        let base =
            std::env::var_os("WARDEN_RUN_DIR").map_or_else(std::env::temp_dir, PathBuf::from);
        for attempt in 0..16u32 {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            let path = base.join(format!(
                "warden-work-{}-{nanos}-{attempt}",
                std::process::id()
            ));
            match std::fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => return Ok(Self { path }),
                Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(err) => {
                    return Err(anyhow::anyhow!(
                        "cannot create work dir {}: {err}",
                        path.display()
                    ))
                }
            }
        }
        anyhow::bail!("cannot create a unique work dir under {}", base.display())
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        remove_tree(&self.path);
    }
}

/// Removes a work tree, read-only input dirs included; best effort (used on clean-up paths).
pub fn remove_tree(path: &std::path::Path) {
    let _ = make_writable(path);
    let _ = std::fs::remove_dir_all(path);
}

/// Read-only input dirs (0555) would stop `remove_dir_all`.
fn make_writable(dir: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    for entry in std::fs::read_dir(dir)?.flatten() {
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            make_writable(&entry.path())?;
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    #[test]
    fn relative_names_are_normalised_and_confined() {
        assert_eq!(
            relative_name("inputs/sales.csv").unwrap(),
            "inputs/sales.csv"
        );
        assert_eq!(relative_name("./a//b/./c.txt").unwrap(), "a/b/c.txt");
        for bad in ["/etc/passwd", "../x", "a/../../x", "", ".", "a/\0b", "a/.."] {
            assert!(relative_name(bad).is_err(), "{bad:?}");
        }
        let deep = vec!["d"; 17].join("/");
        assert!(relative_name(&deep).is_err());
    }
}
