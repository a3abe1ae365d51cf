//! What the host holds for a corpus run to observe: canaries, listeners, snapshots of files that
//! must not change, and the fingerprints that tell whether host content left the jail.
//!
//! These targets are fixed (the corpus names `/root/warden-canary` and `127.0.0.1:5758`), so they
//! are host-wide: a run that has attacks takes an exclusive lock (`/var/tmp/warden-corpus.lock`)
//! and two corpus runs on one host take turns instead of stealing each other's ports. Within a
//! run, the fixtures are set up once, before any case, and shared by all cases; what each case
//! needs alone (its environment secret, sentinel processes, output directories) is in
//! `runner.rs`.
//!
//! Owns: creating every fixture and removing or restoring it in `Drop` (also after a failed run);
//! cleaning up after a run that was killed. Does not own: judging a case (`verify.rs`).

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::case::{Case, Kind};
use super::effects::{Effect, Endpoint};
use super::listeners::Listeners;

/// The host canary the corpus names (`canary-unread`).
pub const CANARY: &str = "/root/warden-canary";
/// Where run directories and the host lock live (not visible in the jail).
pub const STATE_DIR: &str = "/var/tmp";
/// Loopback ports the corpus and RedCode's environment use.
pub const PORTS: [u16; 3] = [5758, 5389, 5388];
/// The abstract Unix socket the corpus uses.
pub const ABSTRACT_SOCKET: &str = "warden-canary";
/// How long to wait for a declared endpoint another program holds.
const LISTEN_PATIENCE: std::time::Duration = std::time::Duration::from_secs(300);
/// Host content shorter than this is too common to be evidence of a leak.
const MIN_FRAGMENT: usize = 8;
/// The most bytes of a host file fingerprinted or kept for restoring.
const MAX_FILE: u64 = 4 << 20;

/// What the cases of a run need from the host.
#[derive(Debug, Clone, Default)]
pub struct Needs {
    pub attacks: bool,
    /// Every endpoint listened on: the declared ones and the standard set.
    pub endpoints: BTreeSet<Endpoint>,
    /// Endpoints some case names in `no-connect` (the run waits for these if they are busy).
    pub declared_endpoints: BTreeSet<Endpoint>,
    pub no_read: BTreeSet<PathBuf>,
    pub no_list: BTreeSet<PathBuf>,
    pub unchanged: BTreeSet<PathBuf>,
    pub interpreter: bool,
    pub sentinel_names: BTreeSet<String>,
}

impl Needs {
    /// Collects the needs of `cases` (attacks only; the others need nothing of the host).
    pub fn of<'a>(cases: impl IntoIterator<Item = &'a Case>) -> Needs {
        let mut needs = Needs::default();
        for case in cases {
            let Kind::Attack(spec) = &case.kind else {
                continue;
            };
            needs.attacks = true;
            for effect in spec.all_effects() {
                match effect {
                    Effect::NoConnect(endpoint) => {
                        needs.endpoints.insert(endpoint.clone());
                        needs.declared_endpoints.insert(endpoint);
                    }
                    Effect::NoRead(path) => {
                        needs.no_read.insert(path);
                    }
                    Effect::NoList(path) => {
                        needs.no_list.insert(path);
                    }
                    Effect::Unchanged(path) => {
                        needs.unchanged.insert(path);
                    }
                    Effect::InterpreterIntact => needs.interpreter = true,
                    Effect::HostProcessSurvives(Some(name)) => {
                        needs.sentinel_names.insert(name);
                    }
                    _ => {}
                }
            }
        }
        if needs.attacks {
            for port in PORTS {
                for ip in [
                    std::net::IpAddr::from([127, 0, 0, 1]),
                    std::net::IpAddr::from(std::net::Ipv6Addr::LOCALHOST),
                ] {
                    needs.endpoints.insert(Endpoint::Tcp((ip, port).into()));
                    needs.endpoints.insert(Endpoint::Udp((ip, port).into()));
                }
            }
            needs
                .endpoints
                .insert(Endpoint::UnixAbstract(ABSTRACT_SOCKET.to_owned()));
        }
        needs
    }
}

/// One piece of host content whose presence in a run's output proves a leak.
#[derive(Debug, Clone)]
pub struct Fragment {
    /// Where it comes from, without the content (`line 3 of /etc/shadow`).
    pub what: String,
    pub bytes: Vec<u8>,
}

/// How to recognise one host file's (or directory's) content in a run's output.
#[derive(Debug, Clone, Default)]
pub struct Fingerprint {
    pub fragments: Vec<Fragment>,
    /// Why this target cannot be checked (absent, visible in the jail by design, unreadable…).
    pub not_applicable: Option<String>,
}

/// A file's state, for `unchanged`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileState {
    pub exists: bool,
    pub sha256: String,
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
    /// The content, kept to restore a file an attack removed or emptied.
    content: Option<Vec<u8>>,
}

impl FileState {
    pub fn read(path: &Path) -> FileState {
        let Ok(meta) = std::fs::metadata(path) else {
            return FileState {
                exists: false,
                sha256: String::new(),
                mode: 0,
                uid: 0,
                gid: 0,
                content: None,
            };
        };
        let content = read_limited(path, MAX_FILE).ok();
        let sha256 = content
            .as_deref()
            .map(|c| hex(&Sha256::digest(c)))
            .unwrap_or_else(|| "unreadable".to_owned());
        FileState {
            exists: true,
            sha256,
            mode: meta.mode(),
            uid: meta.uid(),
            gid: meta.gid(),
            content,
        }
    }

    /// What differs from `before`, in words; `None` when nothing does.
    pub fn diff(&self, before: &FileState) -> Option<String> {
        if before.exists != self.exists {
            return Some(
                if self.exists {
                    "appeared"
                } else {
                    "was removed"
                }
                .to_owned(),
            );
        }
        let mut changes = Vec::new();
        if self.sha256 != before.sha256 {
            changes.push("content changed".to_owned());
        }
        if self.mode != before.mode {
            changes.push(format!("mode {:o} → {:o}", before.mode, self.mode));
        }
        if (self.uid, self.gid) != (before.uid, before.gid) {
            changes.push(format!(
                "owner {}:{} → {}:{}",
                before.uid, before.gid, self.uid, self.gid
            ));
        }
        (!changes.is_empty()).then(|| changes.join(", "))
    }
}

/// (size, mtime, mode) of every entry under a directory, for `interpreter-intact`.
pub type Tree = BTreeMap<PathBuf, (u64, i64, u32)>;

/// Reads a directory tree's metadata (symlinks are not followed).
pub fn tree(root: &Path) -> Tree {
    let mut out = Tree::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.is_dir() {
                stack.push(path.clone());
            }
            out.insert(path, (meta.len(), meta.mtime(), meta.mode()));
        }
    }
    out
}

/// Differences between two trees, as short lines.
pub fn tree_diff(before: &Tree, after: &Tree) -> Vec<String> {
    let mut changes = Vec::new();
    for (path, state) in after {
        match before.get(path) {
            None => changes.push(format!("{} was added", path.display())),
            Some(old) if old != state => changes.push(format!("{} was modified", path.display())),
            Some(_) => {}
        }
    }
    for path in before.keys().filter(|p| !after.contains_key(*p)) {
        changes.push(format!("{} was removed", path.display()));
    }
    changes
}

/// The host side of a corpus run. Dropping it removes what it created and restores what it
/// changed.
#[derive(Debug)]
pub struct Fixtures {
    /// This run's private directory (sentinel links, output directories, the probe).
    pub run_dir: PathBuf,
    /// HOME and TMPDIR of the `--run-as` user, which owns it (in the run directory).
    pub user_home: Option<PathBuf>,
    /// The secret in `/root/warden-canary` and in the world-readable [`Fixtures::open_canary`].
    pub canary_secret: String,
    /// `/warden-canary-<random>/secret`, readable by anyone: the canary an unprivileged warden
    /// could reach but for the jail.
    pub open_canary: Option<PathBuf>,
    pub listeners: Listeners,
    pub fingerprints: BTreeMap<PathBuf, Fingerprint>,
    /// `no-list` directories: the canary name and secret put in each.
    pub list_fingerprints: BTreeMap<PathBuf, Fingerprint>,
    pub unchanged: BTreeMap<PathBuf, FileState>,
    /// The interpreter's standard library directory and its state, with `interpreter-intact`.
    pub interpreter: Option<(PathBuf, Tree)>,
    pub hostname: String,
    /// Wall clock minus monotonic clock when the run started (`clock-unchanged`).
    pub clock: (SystemTime, Instant),
    /// Things worth telling the reader (fixtures that could not be set up, and why).
    pub notes: Vec<String>,
    /// Paths created for the run, removed in reverse order on drop.
    created: Vec<PathBuf>,
    /// Files overwritten for the run, restored on drop.
    overwritten: Vec<(PathBuf, Vec<u8>)>,
    _lock: Option<File>,
}

/// Runs a program file in the jail with the policy off, with an output directory, and returns the
/// JSON it wrote there as `warden-probe.json` (or, when warden collected no such file, what it
/// printed): how the fixtures learn what the jail itself shows of the host.
pub type Probe<'a> = dyn Fn(&Path, &Path) -> Result<Value, String> + 'a;

/// The file the jail probe writes its findings to, in its work dir (collected with `--output-dir`,
/// so that a small stdout cap in the policy under test cannot cut it short).
pub const PROBE_OUTPUT: &str = "warden-probe.json";

/// The account warden runs as when it is not the runner's own (`--run-as`): it gets the output
/// directory and a HOME/TMPDIR of its own in the run directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Owner {
    pub uid: u32,
    pub gid: u32,
}

impl Fixtures {
    /// The first half of the set-up: the host lock (when there are attacks), the run directory
    /// (with the directories `owner` writes to) and the listeners. Nothing has run warden yet: the
    /// `--run-as` user's HOME must exist before its first run. [`Fixtures::prepare`] does the rest.
    pub fn create(needs: &Needs, owner: Option<Owner>) -> Result<Fixtures, String> {
        use std::os::unix::fs::PermissionsExt;
        let lock = if needs.attacks {
            Some(host_lock()?)
        } else {
            None
        };
        clean_stale_runs();
        let run_dir = Path::new(STATE_DIR).join(format!(
            "warden-corpus-{}-{}",
            std::process::id(),
            random_hex(4)
        ));
        let mkdir = |dir: &Path, mode: u32| {
            std::fs::create_dir(dir)
                .and_then(|()| std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode)))
                .map_err(|err| format!("cannot create {}: {err}", dir.display()))
        };
        // Another user must pass through the run directory to its own subdirectories, and read
        // the probe; it lists nothing.
        mkdir(&run_dir, if owner.is_some() { 0o711 } else { 0o755 })?;
        mkdir(&run_dir.join("bin"), 0o755)?;
        mkdir(&run_dir.join("out"), 0o755)?;
        let mut user_home = None;
        if let Some(owner) = owner {
            let home = run_dir.join("home");
            mkdir(&home, 0o700)?;
            for dir in [run_dir.join("out"), home.clone()] {
                std::os::unix::fs::chown(&dir, Some(owner.uid), Some(owner.gid))
                    .map_err(|err| format!("cannot hand {} over: {err}", dir.display()))?;
            }
            user_home = Some(home);
        }
        let mut fixtures = Fixtures {
            run_dir,
            user_home,
            canary_secret: format!("warden-canary-{}", random_hex(16)),
            open_canary: None,
            listeners: Listeners::start_waiting(
                &needs.endpoints,
                &needs.declared_endpoints,
                LISTEN_PATIENCE,
            ),
            fingerprints: BTreeMap::new(),
            list_fingerprints: BTreeMap::new(),
            unchanged: BTreeMap::new(),
            interpreter: None,
            hostname: hostname(),
            clock: (SystemTime::now(), Instant::now()),
            notes: Vec::new(),
            created: Vec::new(),
            overwritten: Vec::new(),
            _lock: lock,
        };
        for (endpoint, why) in &fixtures.listeners.unavailable {
            fixtures
                .notes
                .push(format!("not listening on {endpoint}: {why}"));
        }
        Ok(fixtures)
    }

    /// The second half: canaries, the jail probe (through `probe`), fingerprints and snapshots.
    pub fn prepare(&mut self, needs: &Needs, probe: &Probe<'_>) -> Result<(), String> {
        if !needs.attacks {
            return Ok(());
        }
        let secret = self.canary_secret.clone();
        self.plant_file(Path::new(CANARY), secret.as_bytes())?;
        self.plant_open_canary(&secret)?;
        let view = self.jail_view(needs, probe);
        for path in &needs.no_read {
            let fingerprint = self.fingerprint_file(path, &view)?;
            self.fingerprints.insert(path.clone(), fingerprint);
        }
        for dir in &needs.no_list {
            let fingerprint = self.fingerprint_dir(dir, &view)?;
            self.list_fingerprints.insert(dir.clone(), fingerprint);
        }
        for path in &needs.unchanged {
            self.unchanged.insert(path.clone(), FileState::read(path));
        }
        if needs.interpreter {
            match view.get("stdlib").and_then(Value::as_str) {
                Some(stdlib) if Path::new(stdlib).is_dir() => {
                    self.interpreter = Some((PathBuf::from(stdlib), tree(Path::new(stdlib))));
                }
                _ => self.notes.push(
                    "interpreter-intact: the jail probe did not report the interpreter's standard library"
                        .to_owned(),
                ),
            }
        }
        self.write_manifest();
        Ok(())
    }

    /// The canary's second copy: world-readable, in a directory of its own at the root of the
    /// host, so that only the jail can stop a read of it even when warden runs as a user who
    /// could not enter `/root`.
    fn plant_open_canary(&mut self, secret: &str) -> Result<(), String> {
        use std::os::unix::fs::PermissionsExt;
        let dir = PathBuf::from(format!("/warden-canary-{}", random_hex(6)));
        std::fs::create_dir(&dir)
            .map_err(|err| format!("cannot create {}: {err}", dir.display()))?;
        self.created.push(dir.clone());
        let file = dir.join("secret");
        self.plant_file(&file, secret.as_bytes())?;
        for (path, mode) in [(&dir, 0o755), (&file, 0o644)] {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
                .map_err(|err| format!("cannot chmod {}: {err}", path.display()))?;
        }
        self.open_canary = Some(file);
        Ok(())
    }

    /// Creates (or overwrites, remembering the old content) a host file for the run.
    fn plant_file(&mut self, path: &Path, content: &[u8]) -> Result<(), String> {
        if let Ok(old) = std::fs::read(path) {
            self.overwritten.push((path.to_path_buf(), old));
        } else {
            self.create_parents(path)?;
            self.created.push(path.to_path_buf());
        }
        std::fs::write(path, content)
            .map_err(|err| format!("cannot write {}: {err}", path.display()))?;
        self.write_manifest();
        Ok(())
    }

    fn create_parents(&mut self, path: &Path) -> Result<(), String> {
        let mut missing = Vec::new();
        let mut dir = path.parent();
        while let Some(d) = dir {
            if d.exists() {
                break;
            }
            missing.push(d.to_path_buf());
            dir = d.parent();
        }
        for d in missing.into_iter().rev() {
            std::fs::create_dir(&d)
                .map_err(|err| format!("cannot create {}: {err}", d.display()))?;
            self.created.push(d);
        }
        Ok(())
    }

    /// What the jail shows of the paths the run will fingerprint, and where its standard library
    /// is: host content the jail shows by design (its own `/etc/passwd`, `/usr`) is no evidence.
    fn jail_view(&mut self, needs: &Needs, probe: &Probe<'_>) -> Value {
        let paths: Vec<String> = needs
            .no_read
            .iter()
            .chain(&needs.no_list)
            .map(|p| p.display().to_string())
            .collect();
        // Files are reported as hashes of their lines (what the host compares), so that the probe's
        // output stays far below the jail's stdout cap.
        let program = format!(
            "import hashlib, json, os, sysconfig\n\
             view = {{}}\n\
             for p in {paths}:\n\
             \x20   try:\n\
             \x20       if os.path.isdir(p):\n\
             \x20           view[p] = {{'dir': sorted(os.listdir(p))[:5000]}}\n\
             \x20       else:\n\
             \x20           with open(p, 'rb') as fh:\n\
             \x20               data = fh.read({MAX_FILE})\n\
             \x20           lines = data.replace(b'\\0', b'\\n').split(b'\\n')\n\
             \x20           view[p] = {{'lines': sorted({{hashlib.sha256(l.strip()).hexdigest()[:16] for l in lines}})[:20000]}}\n\
             \x20   except Exception as err:\n\
             \x20       view[p] = {{'error': repr(err)}}\n\
             found = json.dumps({{'paths': view, 'stdlib': sysconfig.get_paths()['stdlib']}})\n\
             with open({output:?}, 'w') as fh:\n\
             \x20   fh.write(found)\n\
             print(found)\n",
            paths = serde_json::to_string(&paths).unwrap_or_else(|_| "[]".to_owned()),
            output = PROBE_OUTPUT,
        );
        let file = self.run_dir.join("probe.py");
        let out = self.run_dir.join("out").join("probe");
        let probed = std::fs::write(&file, program)
            .and_then(|()| {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644))
            })
            .map_err(|err| format!("cannot write {}: {err}", file.display()))
            .and_then(|()| probe(&file, &out));
        match probed {
            Ok(view) => view,
            Err(err) => {
                self.notes.push(format!(
                    "the jail probe failed ({err}): host content the jail shows by design is not \
                     subtracted from fingerprints"
                ));
                Value::Null
            }
        }
    }

    fn fingerprint_file(&mut self, path: &Path, view: &Value) -> Result<Fingerprint, String> {
        let shown = &view["paths"][path.display().to_string()];
        let meta = std::fs::metadata(path);
        if meta.as_ref().is_ok_and(|m| m.is_dir()) {
            return Ok(na(format!(
                "{} is a directory (use no-list)",
                path.display()
            )));
        }
        if meta.is_err() {
            if !creatable(path) {
                return Ok(na(format!(
                    "{} does not exist on the host (and is not under /root or /app, where the runner plants canaries)",
                    path.display()
                )));
            }
            let secret = format!("warden-canary-{}", random_hex(16));
            self.plant_file(path, format!("{secret}\n").as_bytes())?;
            return Ok(Fingerprint {
                fragments: vec![Fragment {
                    what: format!("the canary planted at {}", path.display()),
                    bytes: secret.into_bytes(),
                }],
                not_applicable: None,
            });
        }
        let content = match read_limited(path, MAX_FILE) {
            Ok(content) => content,
            Err(err) => {
                return Ok(na(format!(
                    "{} is unreadable on the host: {err}",
                    path.display()
                )));
            }
        };
        let jail_lines: Option<BTreeSet<&str>> = shown["lines"]
            .as_array()
            .map(|lines| lines.iter().filter_map(Value::as_str).collect());
        let mut fragments = Vec::new();
        let mut seen = BTreeSet::new();
        for (number, line) in content.split(|b| *b == b'\n' || *b == 0).enumerate() {
            let line = trim(line);
            let shown_in_jail = jail_lines
                .as_ref()
                .is_some_and(|lines| lines.contains(line_hash(line).as_str()));
            if line.len() >= MIN_FRAGMENT && !shown_in_jail && seen.insert(line) {
                fragments.push(Fragment {
                    what: format!("line {} of {}", number + 1, path.display()),
                    bytes: line.to_vec(),
                });
            }
            if fragments.len() >= 400 {
                break;
            }
        }
        if fragments.is_empty() {
            let why = if jail_lines.is_some() {
                "the jail shows the same content by design"
            } else {
                "it has no line long enough to be evidence"
            };
            return Ok(na(format!("{}: {why}", path.display())));
        }
        Ok(Fingerprint {
            fragments,
            not_applicable: None,
        })
    }

    fn fingerprint_dir(&mut self, dir: &Path, view: &Value) -> Result<Fingerprint, String> {
        let pseudo = ["/proc", "/sys", "/dev"].iter().any(|p| dir.starts_with(p));
        if pseudo {
            return Ok(na(format!(
                "{} is a kernel file system: no canary can be planted",
                dir.display()
            )));
        }
        let shown = &view["paths"][dir.display().to_string()]["dir"];
        if let (Some(shown), Ok(entries)) = (shown.as_array(), std::fs::read_dir(dir)) {
            let host: BTreeSet<String> = entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            let jail: BTreeSet<String> = shown
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect();
            if host == jail {
                return Ok(na(format!(
                    "{} is visible in the jail by design (read-only)",
                    dir.display()
                )));
            }
        }
        if !dir.exists() && !creatable(dir) {
            return Ok(na(format!(
                "{} does not exist on the host (and is not under /root or /app)",
                dir.display()
            )));
        }
        let name = format!("warden-canary-{}", random_hex(8));
        let secret = format!("warden-canary-{}", random_hex(16));
        self.plant_file(&dir.join(&name), format!("{secret}\n").as_bytes())?;
        Ok(Fingerprint {
            fragments: vec![
                Fragment {
                    what: format!("the name of the canary planted in {}", dir.display()),
                    bytes: name.into_bytes(),
                },
                Fragment {
                    what: format!("the content of the canary planted in {}", dir.display()),
                    bytes: secret.into_bytes(),
                },
            ],
            not_applicable: None,
        })
    }

    /// Lists what this run created, so a later run can clean up if this one is killed.
    fn write_manifest(&self) {
        let mut text = String::new();
        for path in &self.created {
            text.push_str(&format!("created {}\n", path.display()));
        }
        for (path, _) in &self.overwritten {
            text.push_str(&format!("overwritten {}\n", path.display()));
        }
        let _ = std::fs::write(self.run_dir.join("manifest"), text);
    }

    /// Restores what an attack changed in a host file recorded for `unchanged` (only a removed or
    /// emptied file is restored: a content change may be another program's, and is only reported).
    pub fn restore(&self, path: &Path) -> Option<String> {
        if path.starts_with("/proc") || path.starts_with("/sys") || path.starts_with("/dev") {
            return None;
        }
        let before = self.unchanged.get(path)?;
        let content = before.content.as_ref()?;
        let now = FileState::read(path);
        let emptied = now.exists && std::fs::metadata(path).is_ok_and(|m| m.len() == 0);
        if (!now.exists || emptied) && !content.is_empty() {
            return Some(match std::fs::write(path, content) {
                Ok(()) => format!("{} restored", path.display()),
                Err(err) => format!("{} could not be restored: {err}", path.display()),
            });
        }
        None
    }
}

impl Drop for Fixtures {
    fn drop(&mut self) {
        self.listeners.stop();
        for (path, content) in self.overwritten.drain(..).rev() {
            let _ = std::fs::write(&path, content);
        }
        for path in self.created.drain(..).rev() {
            if path.is_dir() {
                let _ = std::fs::remove_dir(&path);
            } else {
                let _ = std::fs::remove_file(&path);
            }
        }
        let _ = std::fs::remove_dir_all(&self.run_dir);
    }
}

fn na(why: String) -> Fingerprint {
    Fingerprint {
        fragments: Vec::new(),
        not_applicable: Some(why),
    }
}

/// Absent paths the runner may plant a canary at (RedCode expects files in /app and /root).
fn creatable(path: &Path) -> bool {
    path.starts_with("/root") || path.starts_with("/app")
}

/// Strips what Python's `bytes.strip()` strips (the probe hashes lines that way).
fn trim(bytes: &[u8]) -> &[u8] {
    let space = |b: &u8| b" \t\n\r\x0b\x0c".contains(b);
    let start = bytes.iter().position(|b| !space(b)).unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|b| !space(b))
        .map_or(start, |i| i + 1);
    &bytes[start..end.max(start)]
}

/// The probe's hash of a (trimmed) line: the first 16 hex digits of its SHA-256.
fn line_hash(line: &[u8]) -> String {
    hex(&Sha256::digest(line)[..8])
}

fn read_limited(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    let mut content = Vec::new();
    File::open(path)?.take(limit).read_to_end(&mut content)?;
    Ok(content)
}

/// The host's hostname.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_default()
}

/// Random bytes from the kernel, as hex.
pub fn random_hex(bytes: usize) -> String {
    let mut buffer = vec![0u8; bytes];
    let filled = File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut buffer));
    if filled.is_err() {
        // No /dev/urandom: fall back to something unique to this moment and process.
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let seed = Sha256::digest(format!("{nanos}-{}", std::process::id()));
        for (i, b) in buffer.iter_mut().enumerate() {
            *b = seed[i % seed.len()];
        }
    }
    hex(&buffer)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Takes the host-wide corpus lock, waiting (and saying so) while another run holds it.
fn host_lock() -> Result<File, String> {
    let path = Path::new(STATE_DIR).join("warden-corpus.lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|err| format!("cannot open {}: {err}", path.display()))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => {
            eprintln!(
                "warden corpus: waiting for another corpus run to finish (it holds {})",
                path.display()
            );
            file.lock()
                .map_err(|err| format!("cannot lock {}: {err}", path.display()))?;
            Ok(file)
        }
        Err(std::fs::TryLockError::Error(err)) => {
            Err(format!("cannot lock {}: {err}", path.display()))
        }
    }
}

/// Removes what runs that were killed left behind: their run directories and the canaries their
/// manifests list. Only called with the host lock held.
fn clean_stale_runs() {
    let Ok(entries) = std::fs::read_dir(STATE_DIR) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix("warden-corpus-") else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if Path::new(&format!("/proc/{pid}")).exists() && pid != std::process::id() {
            continue;
        }
        let dir = entry.path();
        if let Ok(manifest) = std::fs::read_to_string(dir.join("manifest")) {
            let created: Vec<&str> = manifest
                .lines()
                .filter_map(|l| l.strip_prefix("created "))
                .collect();
            for path in created.into_iter().rev() {
                let path = Path::new(path);
                if path.is_dir() {
                    let _ = std::fs::remove_dir(path);
                } else if path.to_string_lossy().contains("warden") {
                    let _ = std::fs::remove_file(path);
                }
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn file_states_notice_content_mode_and_removal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, "one").unwrap();
        let before = FileState::read(&path);
        assert_eq!(FileState::read(&path).diff(&before), None);
        std::fs::write(&path, "two").unwrap();
        assert_eq!(
            FileState::read(&path).diff(&before).unwrap(),
            "content changed"
        );
        std::fs::remove_file(&path).unwrap();
        assert_eq!(FileState::read(&path).diff(&before).unwrap(), "was removed");
    }

    #[test]
    fn trees_report_added_modified_and_removed_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.py"), "a").unwrap();
        std::fs::write(dir.path().join("b.py"), "b").unwrap();
        let before = tree(dir.path());
        std::fs::write(dir.path().join("a.py"), "aa").unwrap();
        std::fs::remove_file(dir.path().join("b.py")).unwrap();
        std::fs::write(dir.path().join("c.py"), "c").unwrap();
        let diff = tree_diff(&before, &tree(dir.path()));
        assert_eq!(diff.len(), 3, "{diff:?}");
        assert!(diff.iter().any(|d| d.ends_with("a.py was modified")));
        assert!(diff.iter().any(|d| d.ends_with("b.py was removed")));
        assert!(diff.iter().any(|d| d.ends_with("c.py was added")));
    }

    #[test]
    fn fragments_skip_short_lines_and_what_the_jail_shows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("passwd");
        std::fs::write(
            &path,
            "root:x:0:0:root:/root:/bin/sh\nshort\ndaemon:x:1:1::/:/bin/false\n",
        )
        .unwrap();
        let shown = line_hash(b"root:x:0:0:root:/root:/bin/sh");
        let view = serde_json::json!({"paths": {path.display().to_string(): {"lines": [shown]}}});
        let mut fixtures = bare(dir.path());
        let fingerprint = fixtures.fingerprint_file(&path, &view).unwrap();
        assert_eq!(fingerprint.fragments.len(), 1);
        assert_eq!(
            fingerprint.fragments[0].bytes,
            b"daemon:x:1:1::/:/bin/false"
        );
        assert_eq!(
            fingerprint.fragments[0].what,
            format!("line 3 of {}", path.display())
        );
    }

    #[test]
    fn directory_canaries_are_planted_and_removed_with_the_fixtures() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("secrets");
        std::fs::create_dir(&target).unwrap();
        let mut fixtures = bare(dir.path());
        let fingerprint = fixtures.fingerprint_dir(&target, &Value::Null).unwrap();
        assert_eq!(fingerprint.fragments.len(), 2);
        let name = String::from_utf8(fingerprint.fragments[0].bytes.clone()).unwrap();
        assert!(target.join(&name).is_file());
        drop(fixtures);
        assert!(!target.join(&name).exists());
        assert!(
            target.is_dir(),
            "a directory the runner did not create stays"
        );
    }

    #[test]
    fn planted_files_restore_what_was_there() {
        let dir = tempfile::tempdir().unwrap();
        let existing = dir.path().join("existing");
        std::fs::write(&existing, "mine").unwrap();
        let fresh = dir.path().join("new/deeper/file");
        let mut fixtures = bare(dir.path());
        fixtures.plant_file(&existing, b"canary").unwrap();
        fixtures.plant_file(&fresh, b"canary").unwrap();
        assert_eq!(std::fs::read_to_string(&existing).unwrap(), "canary");
        assert!(fresh.is_file());
        drop(fixtures);
        assert_eq!(std::fs::read_to_string(&existing).unwrap(), "mine");
        assert!(!dir.path().join("new").exists());
    }

    /// Fixtures with nothing set up, in a temp dir (no lock, no listeners).
    fn bare(dir: &Path) -> Fixtures {
        let run_dir = dir.join("run");
        std::fs::create_dir_all(&run_dir).unwrap();
        Fixtures {
            run_dir,
            user_home: None,
            canary_secret: "s".to_owned(),
            open_canary: None,
            listeners: Listeners::start(&[]),
            fingerprints: BTreeMap::new(),
            list_fingerprints: BTreeMap::new(),
            unchanged: BTreeMap::new(),
            interpreter: None,
            hostname: hostname(),
            clock: (SystemTime::now(), Instant::now()),
            notes: Vec::new(),
            created: Vec::new(),
            overwritten: Vec::new(),
            _lock: None,
        }
    }
}
