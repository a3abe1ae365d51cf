//! Files and archives (issue 26, item 1): `shutil`, `tarfile`, `zipfile` and `tempfile` are allowed
//! by the default policy because everything they do to files ends at a sink the runtime layer and the
//! kernel hold. A program using them in the work dir runs as it does unconfined; copies, moves,
//! removals, archives and extractions aimed outside the roots (links in archives, hard links,
//! absolute and `..` members, device members) are refused, and the host is judged from the host side:
//! a secret outside the roots, a directory bound read-only into the jail, the files warden collects.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use warden_test_support::repo;

use super::support::{self, run, As, Canary, Options, Run};

fn default_rules() -> String {
    std::fs::read_to_string(repo().join("rules/default.toml")).expect("rules/default.toml")
}

fn output_dir() -> (tempfile::TempDir, PathBuf) {
    let dir = support::shared_tempdir();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let out = dir.path().join("out");
    (dir, out)
}

/// Runs `program` with the static layer off and the runtime layer on, collecting the work dir's
/// files into `out`.
fn run_hooked(program: &str, rules: &str, out: &Path) -> Run {
    run(
        As::Root,
        program,
        Options {
            rules: Some(rules),
            hooks: true,
            extra_args: vec!["--output-dir".into(), out.display().to_string()],
            env: vec![("WARDEN_DATA_DIR", "/var/lib/warden".to_owned())],
        },
    )
}

/// What warden collected from the work dir: (relative path, content).
fn collected_files(out: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut todo = vec![out.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                todo.push(path);
            } else if let Ok(bytes) = std::fs::read(&path) {
                let name = path
                    .strip_prefix(out)
                    .unwrap_or(&path)
                    .display()
                    .to_string();
                files.push((name, bytes));
            }
        }
    }
    files
}

/// A program that copies, moves, archives, extracts and makes temporary files in the work dir and
/// `/tmp`, and uses `shlex`, `errno`, `mimetypes`, `os.urandom`, `os.uname` and `os.chdir`:
/// deterministic output.
const FILES_AND_ARCHIVES: &str = r#"import errno, mimetypes, os, shlex, shutil, tarfile, tempfile, zipfile
os.makedirs("data/sub", exist_ok=True)
for i in range(3):
    with open(f"data/sub/f{i}.txt", "w") as f:
        f.write(f"line {i}\n" * (i + 1))
shutil.copy("data/sub/f0.txt", "data/copy.txt")
shutil.copy2("data/sub/f1.txt", "data/copy2.txt")
shutil.copytree("data", "tree")
shutil.move("tree/copy.txt", "tree/moved.txt")
print("tree", sorted(os.path.relpath(os.path.join(r, n), "tree") for r, _, ns in os.walk("tree") for n in ns))
archive = shutil.make_archive("bundle", "gztar", root_dir="data")
print("archive", os.path.basename(archive))
shutil.unpack_archive(archive, "unpacked")
print("unpacked", sorted(os.listdir("unpacked/sub")))
with tarfile.open("t.tar", "w") as t:
    t.add("data/sub", arcname="sub")
with tarfile.open("t.tar") as t:
    print("tar names", sorted(t.getnames()))
    t.extractall("tx")
print("tar read", open("tx/sub/f2.txt").read().count("line"))
with zipfile.ZipFile("z.zip", "w", zipfile.ZIP_DEFLATED) as z:
    z.write("data/copy2.txt", "c.txt")
    z.writestr("notes/a.txt", "hello")
with zipfile.ZipFile("z.zip") as z:
    print("zip names", sorted(z.namelist()))
    z.extractall("zx")
print("zip read", open("zx/notes/a.txt").read(), open("zx/c.txt").read().count("line"))
with tempfile.TemporaryDirectory() as d:
    p = os.path.join(d, "x.txt")
    with open(p, "w") as f:
        f.write("tmp")
    print("tempdir", open(p).read(), os.path.dirname(d) == tempfile.gettempdir())
with tempfile.NamedTemporaryFile("w+", suffix=".csv") as f:
    f.write("a,b\n")
    f.flush()
    f.seek(0)
    print("named", f.read().strip(), f.name.endswith(".csv"))
fd, path = tempfile.mkstemp(dir=".")
os.remove(path)
shutil.rmtree("tree")
print("rmtree", os.path.exists("tree"))
print("shlex", shlex.split("a 'b c' d"), shlex.quote("x y"))
print("errno", errno.ENOENT, errno.errorcode[errno.EACCES])
print("mime", mimetypes.guess_type("x.csv")[0], mimetypes.guess_type("a.png")[0])
print("urandom", len(os.urandom(8)), "uname", bool(os.uname().sysname))
print("which", shutil.which("surely-no-such-program"), "usage", shutil.disk_usage(".").total > 0)
os.chdir("data")
print("chdir", sorted(os.listdir(".")))
"#;

/// The program above: `warden check` allows it with the default policy, and in the jail (runtime
/// layer on) it prints what it prints unconfined, in a scratch directory on the host.
#[test]
fn files_and_archives_in_the_work_dir_run_as_unconfined() {
    warden_test_support::require_root!();
    let scratch = support::shared_tempdir();
    let program = scratch.path().join("program.py");
    std::fs::write(&program, FILES_AND_ARCHIVES).expect("program");
    let check = Command::new(warden_test_support::warden_bin())
        .args(["check", "--format", "json"])
        .arg(&program)
        .output()
        .expect("warden check");
    let verdict: serde_json::Value =
        serde_json::from_slice(&check.stdout).expect("one JSON record");
    assert_eq!(verdict["decision"], "allow", "{verdict}");
    let unconfined_dir = scratch.path().join("unconfined");
    std::fs::create_dir(&unconfined_dir).expect("dir");
    let unconfined = Command::new("python3")
        .arg(&program)
        .current_dir(&unconfined_dir)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("TMPDIR", scratch.path())
        .output()
        .expect("python3");
    assert!(unconfined.status.success(), "{unconfined:?}");
    let expected = String::from_utf8_lossy(&unconfined.stdout).into_owned();
    assert!(expected.contains("chdir ["), "{expected}");
    let (_dir, out) = output_dir();
    let jailed = run_hooked(FILES_AND_ARCHIVES, &default_rules(), &out);
    assert_eq!(jailed.status(), "ok", "{}", jailed.everything());
    assert_eq!(jailed.stdout(), expected, "{}", jailed.stderr());
    assert!(
        !jailed.stderr().contains("PolicyViolation"),
        "{}",
        jailed.stderr()
    );
    let names: Vec<String> = collected_files(&out).into_iter().map(|(n, _)| n).collect();
    assert!(names.iter().any(|n| n == "bundle.tar.gz"), "{names:?}");
    assert!(names.iter().any(|n| n == "zx/notes/a.txt"), "{names:?}");
}

/// A directory on the host, bound read-only into the jail and readable by the policy (so a link to
/// it may be made), never writable: removed afterwards.
struct Target {
    dir: PathBuf,
    keep: String,
}

impl Target {
    fn new() -> Self {
        let dir = PathBuf::from(format!("/warden-target-{}", support::token("")));
        std::fs::create_dir(&dir).expect("target dir");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let keep = support::token("KEEP");
        let file = dir.join("keep.txt");
        std::fs::write(&file, &keep).expect("keep");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        Target { dir, keep }
    }

    /// The directory's entries and `keep.txt`'s content, mode and owner.
    fn state(&self) -> (Vec<String>, String, u32, u32) {
        use std::os::unix::fs::MetadataExt;
        let mut names: Vec<String> = std::fs::read_dir(&self.dir)
            .expect("target")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        let file = self.dir.join("keep.txt");
        let meta = std::fs::symlink_metadata(&file).expect("keep.txt");
        let text = std::fs::read_to_string(&file).expect("keep.txt");
        (names, text, meta.mode(), meta.uid())
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Every way `shutil`, `tarfile`, `zipfile` and `tempfile` reach outside the roots, with the static
/// layer off: each is refused by the runtime layer with the rule and event that judged it (the
/// ones a library swallows and works around, by the denial it wrote to standard error), and from
/// the host side the secret never leaves the jail and the read-only directory is unchanged.
#[test]
fn archive_and_copy_attacks_are_refused_and_the_host_is_unchanged() {
    warden_test_support::require_root!();
    let canary = Canary::new();
    let target = Target::new();
    let before = target.state();
    let t = target.dir.display().to_string();
    let rules = default_rules()
        .replacen(
            "read = [\".\", \"/tmp\"]",
            &format!("read = [\".\", \"/tmp\", {t:?}]"),
            1,
        )
        .replacen(
            "read_only_binds = []",
            &format!("read_only_binds = [{t:?}]"),
            1,
        );
    assert!(rules.contains(&format!("read_only_binds = [{t:?}]")));
    let program = format!(
        r#"import io, os, shutil, tarfile, tempfile, zipfile
T = {t:?}
S = {secret:?}
def attempt(label, fn):
    try:
        fn()
        print("TRY", label, "ran")
    except BaseException as e:
        print("TRY", label, "refused", type(e).__name__, str(e)[:90])
def tar_with(name, *members):
    with tarfile.open(name, "w") as t:
        for info, data in members:
            t.addfile(info, io.BytesIO(data) if data is not None else None)
def member(name, kind=tarfile.REGTYPE, link="", data=None):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    if kind == tarfile.CHRTYPE:
        info.devmajor, info.devminor = 1, 3
    if data is not None:
        info.size = len(data)
    return info, data
open("y", "w").write("PWNED")
os.makedirs("src", exist_ok=True)
os.symlink(T, "src/out")
attempt("copy-secret", lambda: shutil.copy(S, "x"))
attempt("copy-into", lambda: shutil.copy("y", T + "/pwn"))
attempt("rmtree", lambda: shutil.rmtree(T))
attempt("move-out", lambda: shutil.move(T + "/keep.txt", "m"))
attempt("copystat", lambda: shutil.copystat("y", T + "/keep.txt"))
attempt("chown", lambda: shutil.chown(T + "/keep.txt", "nobody"))
try:
    shutil.copytree("src", "dst", symlinks=True)
except shutil.Error:
    pass  # copystat of the copied link: judged by where it points, refused
print("COPIED LINK", os.path.islink("dst/out"))
attempt("write-through-copied-link", lambda: open("dst/out/pwn", "w").write("PWNED"))
attempt("archive-secret", lambda: shutil.make_archive("a", "gztar", root_dir=os.path.dirname(S)))
attempt("archive-into", lambda: shutil.make_archive(T + "/a", "zip", root_dir="src"))
tar_with("ok.tar", member("f", data=b"x"))
attempt("unpack-into", lambda: shutil.unpack_archive("ok.tar", T))
tar_with("sym.tar", member("link", tarfile.SYMTYPE, T), member("link/pwn", data=b"PWNED"))
tar_with("symsecret.tar", member("s", tarfile.SYMTYPE, S))
tar_with("hard.tar", member("h", tarfile.LNKTYPE, T + "/keep.txt"))
tar_with("abs.tar", member(T + "/abs", data=b"PWNED"))
tar_with("dots.tar", member("../../../.." + T + "/dots", data=b"PWNED"))
tar_with("dev.tar", member("null", tarfile.CHRTYPE))
for name in ["sym", "symsecret", "hard", "abs", "dots", "dev"]:
    attempt("tar-" + name, lambda: tarfile.open(name + ".tar").extractall("x_" + name))
attempt("unpack-sym", lambda: shutil.unpack_archive("sym.tar", "u_sym"))
print("LINKS", sorted(p for p in ["x_symsecret/s", "x_hard/h", "x_dev/null"] if os.path.lexists(p)))
with zipfile.ZipFile("z.zip", "w") as z:
    z.writestr("../../../.." + T + "/zipdots", "PWNED")
    z.writestr(T + "/zipabs", "PWNED")
attempt("zip", lambda: zipfile.ZipFile("z.zip").extractall("zx"))
attempt("hardlink", lambda: os.link(T + "/keep.txt", "hl"))
attempt("mkstemp-into", lambda: tempfile.mkstemp(dir=T))
attempt("mkdtemp-into", lambda: tempfile.mkdtemp(dir=T))
attempt("named-into", lambda: tempfile.NamedTemporaryFile(dir=T))
print("TARGET", sorted(os.listdir(T)))
"#,
        secret = canary.file.display().to_string(),
    );
    let (_dir, out) = output_dir();
    let run = run_hooked(&program, &rules, &out);
    let stdout = run.stdout();
    // (label, what the refusal says): the runtime layer's rule and the event that judged it.
    let refused = [
        ("copy-secret", "warden[FILE701] shutil.copyfile"),
        ("copy-into", "warden[FILE702] shutil.copyfile"),
        ("rmtree", "warden[FILE702] shutil.rmtree"),
        ("move-out", "warden[FILE702] shutil.move"),
        ("copystat", "warden[FILE702] shutil.copystat"),
        ("chown", "warden[FILE702] shutil.chown"),
        ("write-through-copied-link", "warden[FILE702] open"),
        ("archive-secret", "warden[FILE701] shutil.make_archive"),
        ("archive-into", "warden[FILE702] shutil.make_archive"),
        ("unpack-into", "warden[FILE702] shutil.unpack_archive"),
        ("tar-sym", "warden[FILE702] open"),
        ("unpack-sym", "warden[FILE702] open"),
        ("tar-abs", "warden[FILE702] open"),
        ("tar-dots", "warden[FILE702]"),
        (
            "tar-dev",
            "warden[FILE702] os.mknod: creating a device node",
        ),
        ("hardlink", "warden[FILE702] os.link"),
        ("mkstemp-into", "warden[FILE702] open"),
        ("mkdtemp-into", "warden[FILE702] os.mkdir"),
        ("named-into", "warden[FILE702] open"),
    ];
    for (label, says) in refused {
        let line = run.lines_starting(&format!("TRY {label} ")).join("\n");
        assert!(
            line.contains(" refused PolicyViolation ") && line.contains(says),
            "{label}: expected a refusal saying {says:?}, got {line:?}\n{stdout}\n{}",
            run.stderr()
        );
    }
    // tarfile works around a link it cannot make (it looks for the member in the archive, logs
    // the failure and goes on); the runtime layer's denial is on standard error, and no link exists.
    assert!(
        run.stderr()
            .contains("warden[FILE701] os.symlink: os.symlink to "),
        "{}",
        run.stderr()
    );
    assert!(
        run.stderr().contains(&format!(
            "warden[FILE702] os.link: writing {t}/keep.txt, outside the write roots"
        )),
        "{}",
        run.stderr()
    );
    assert!(stdout.contains("LINKS []"), "{stdout}");
    // `copytree(symlinks=True)` copies a link to a readable directory as a link; writing through it
    // is writing where it points (refused above).
    assert!(stdout.contains("COPIED LINK True"), "{stdout}");
    // zipfile cleans `..` and `/` out of member names: both land inside `zx`.
    assert!(stdout.contains("TRY zip ran"), "{stdout}");
    assert!(stdout.contains("TARGET ['keep.txt']"), "{stdout}");
    // From the host: the read-only directory and the secret.
    assert_eq!(target.state(), before, "the read-only directory changed");
    assert_eq!(target.state().1, target.keep);
    assert!(
        !run.everything().contains(&canary.secret),
        "the secret leaked"
    );
    let files = collected_files(&out);
    assert!(
        files.iter().all(
            |(_, bytes)| !String::from_utf8_lossy(bytes).contains(&canary.secret)
                && !String::from_utf8_lossy(bytes).contains(&target.keep)
        ),
        "a collected file holds the secret or the read-only file"
    );
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert!(
        names
            .iter()
            .any(|n| n.starts_with("zx/") && n.ends_with("zipdots")),
        "{names:?}"
    );
}
