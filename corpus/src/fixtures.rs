//! What the host holds for a corpus run to observe: canaries, listeners, snapshots of files that
//! must not change, and the fingerprints that tell whether host content left the jail.
//!
//! These targets are fixed (the corpus names `/root/warden-canary` and `127.0.0.1:5758`), so they
//! are host-wide: a run that has attacks takes an exclusive lock (`/var/tmp/warden-corpus.lock`)
//! and two corpus runs on one host take turns instead of stealing each other's ports. Within a
//! run, the fixtures are set up once, before any case, and shared by all cases; what each case
//! needs alone (its environment secret, sentinel processes, output directories) is in
//! `runner.rs`. The snapshots are `fixtures/snapshot.rs`; the fingerprints, and the jail probe
//! they subtract what the jail shows by design with, `fixtures/fingerprint.rs`.
//!
//! Owns: creating every fixture and removing or restoring it in `Drop` (also after a failed run);
//! cleaning up after a run that was killed. Does not own: judging a case (`verify.rs`).

mod fingerprint;
mod snapshot;

pub use fingerprint::{Fingerprint, Fragment};
pub use snapshot::{tree, tree_diff, FileState, Tree};

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::Read;
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
        let listeners =
            Listeners::start_waiting(&needs.endpoints, &needs.declared_endpoints, LISTEN_PATIENCE);
        let mut fixtures = Fixtures::empty(run_dir, user_home, listeners, lock);
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

    /// Fixtures with nothing set up yet in `run_dir`: a fresh canary secret, the host's hostname
    /// and clock, `listeners` and the host lock (`None`: not taken).
    fn empty(
        run_dir: PathBuf,
        user_home: Option<PathBuf>,
        listeners: Listeners,
        lock: Option<File>,
    ) -> Fixtures {
        Fixtures {
            run_dir,
            user_home,
            canary_secret: format!("warden-canary-{}", random_hex(16)),
            open_canary: None,
            listeners,
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
        }
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
    pub(super) fn bare(dir: &Path) -> Fixtures {
        let run_dir = dir.join("run");
        std::fs::create_dir_all(&run_dir).unwrap();
        Fixtures::empty(run_dir, None, Listeners::start(&[]), None)
    }
}
