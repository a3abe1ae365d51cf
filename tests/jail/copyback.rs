//! What comes back from the work dir, judged on the host: the bytes a run writes on the host's disk
//! (its work dir and the output dir, on a file system of their own so every byte is counted) stay
//! within the output caps however the program shapes its 64 MiB — sparse files, hard links, a kill
//! at a limit — and names that are not UTF-8 are delivered under an encoded name. Also the stage dir:
//! a second user who owns the path cannot read a run.

use super::support;
use warden_test_support::both_modes;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use support::{run, As, Options};

const MIB: u64 = 1024 * 1024;

/// The default output caps (rules/default.toml, and the jail tests' rules): 32 files, 64 MiB.
const OUTPUT_BYTES: u64 = 64 * MIB;

/// A tmpfs of its own for a run's host side (work dir and output dir): its use is the bytes the run
/// wrote on the host, nobody else's. Capped at 1 GiB so a regression cannot eat the host's memory.
struct HostDisk {
    path: PathBuf,
}

impl HostDisk {
    fn mount() -> Self {
        let path = PathBuf::from(format!("/tmp/{}", support::token("warden-hostdisk-")));
        std::fs::create_dir(&path).expect("mkdir");
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=1g,mode=1777", "warden-hostdisk"])
            .arg(&path)
            .status()
            .expect("mount");
        assert!(
            status.success(),
            "cannot mount a tmpfs on {}",
            path.display()
        );
        HostDisk { path }
    }

    /// Bytes in use on it (statvfs, as `df` counts them).
    fn used(&self) -> u64 {
        used_bytes(&self.path)
    }
}

impl Drop for HostDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.path).status();
        let _ = std::fs::remove_dir(&self.path);
    }
}

fn used_bytes(path: &Path) -> u64 {
    let out = Command::new("stat")
        .args(["-f", "-c", "%b %f %S"])
        .arg(path)
        .output()
        .expect("stat -f");
    let text = String::from_utf8_lossy(&out.stdout);
    let numbers: Vec<u64> = text
        .split_whitespace()
        .filter_map(|n| n.parse().ok())
        .collect();
    match numbers[..] {
        [blocks, free, size] => (blocks - free) * size,
        _ => panic!("stat -f printed {text:?}"),
    }
}

/// `du -s -B1` of a directory (0 when it does not exist).
fn du(path: &Path) -> u64 {
    if !path.exists() {
        return 0;
    }
    let out = Command::new("du")
        .args(["-s", "-B1"])
        .arg(path)
        .output()
        .expect("du");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(u64::MAX)
}

/// Samples `disk`'s use every millisecond while `work` runs; returns the peak above the start.
fn peak_while<T>(disk: &HostDisk, work: impl FnOnce() -> T) -> (T, u64) {
    let before = disk.used();
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let stop = Arc::clone(&stop);
        let path = disk.path.clone();
        std::thread::spawn(move || {
            let mut peak = 0;
            while !stop.load(Ordering::Relaxed) {
                peak = peak.max(used_bytes(&path));
                std::thread::sleep(Duration::from_millis(1));
            }
            peak.max(used_bytes(&path))
        })
    };
    let result = work();
    stop.store(true, Ordering::Relaxed);
    let peak = sampler.join().expect("sampler");
    (result, peak.saturating_sub(before))
}

/// Sparse files far longer than the disk they hold (as long as RLIMIT_FSIZE lets them be) and a
/// 60 MiB file with a thousand names: 64 MiB of the jail's tmpfs that read as ~60 GB.
const AMPLIFIER: &str = r##"
import os, time
try:
    with open("sparse-big.bin", "wb") as f:
        f.truncate(1 << 30)
    print("SPARSE 1GiB")
except OSError as e:
    print("SPARSE 1GiB refused", e.errno)
for i in range(200):
    with open(f"sparse-{i:03}.bin", "wb") as f:
        f.truncate(60 << 20)
block = os.urandom(1 << 20)
with open("data.bin", "wb") as f:
    for _ in range(60):
        f.write(block)
for i in range(1000):
    os.link("data.bin", f"link-{i:04}.bin")
print("MADE", os.stat("data.bin").st_nlink, flush=True)
"##;

/// Runs `program` as `who` with its host side on `disk`; returns the run and the output dir.
// `..Options::default()` also covers fields other changes add.
#[allow(clippy::needless_update)]
fn run_on(disk: &HostDisk, who: As, program: &str, rules: Option<&str>) -> (support::Run, PathBuf) {
    let run_dir = disk.path.join(support::token("run-"));
    std::fs::create_dir(&run_dir).expect("run dir");
    std::fs::set_permissions(&run_dir, std::fs::Permissions::from_mode(0o1777)).expect("chmod");
    let out = disk.path.join(support::token("out-"));
    let options = Options {
        rules,
        env: vec![("WARDEN_RUN_DIR", run_dir.display().to_string())],
        extra_args: vec!["--output-dir".into(), out.display().to_string()],
        ..Options::default()
    };
    let run = run(who, program, options);
    (run, out)
}

fn message(run: &support::Run) -> String {
    run.record["message"].as_str().unwrap_or("").to_owned()
}

/// The host-side bytes a run may cost: the caps, plus the blocks a few files and directories take.
const SLACK: u64 = 2 * MIB;

both_modes! {
    /// Sparse files and hard links inside the 64 MiB work dir do not become gigabytes on the host: the
    /// host's disk use never exceeds the output cap during the run, the output dir holds at most the
    /// cap, and the record names what was refused and why.
    fn sparse_files_and_hard_links_are_not_amplified_onto_the_host(who: As) {
        let disk = HostDisk::mount();
        let ((run, out), peak) = peak_while(&disk, || run_on(&disk, who, AMPLIFIER, None));
        let after = disk.used();
        eprintln!(
            "host bytes: peak during the run {peak}, output dir {} (du), in use after {after}",
            du(&out)
        );
        assert!(run.stdout().contains("MADE 1001"), "{:?}", run.record);
        assert!(peak <= OUTPUT_BYTES + SLACK, "the run wrote {peak} bytes on the host (cap {OUTPUT_BYTES})");
        assert!(du(&out) <= OUTPUT_BYTES + SLACK, "output dir holds {} bytes", du(&out));
        assert_eq!(run.status(), "output_limit", "{:?}", run.record);
        let files = run.record["files"].as_array().cloned().unwrap_or_default();
        let total: u64 = files.iter().filter_map(|f| f["bytes"].as_u64()).sum();
        assert!(total <= OUTPUT_BYTES, "{files:?}");
        assert!(files.iter().any(|f| f["path"] == "data.bin" && f["bytes"] == 60 * MIB), "{files:?}");
        let message = message(&run);
        assert!(
            message.contains("link-0000.bin not returned: a hard link to data.bin"),
            "{message}"
        );
        assert!(
            message.contains("sparse-000.bin not returned: its 62914560 bytes exceed"),
            "{message}"
        );
        assert!(message.contains("more files not returned"), "{message}");
    }
}

both_modes! {
    /// A program killed at its wall-clock limit gets back the files it wrote before the kill, marked
    /// partial, under the same caps (no amplification either).
    fn files_written_before_a_kill_come_back_partial_and_capped(who: As) {
        let disk = HostDisk::mount();
        let program = format!("{AMPLIFIER}\nopen('result.txt', 'w').write('so far\\n')\ntime.sleep(60)\n");
        let rules = "[policy]\nname = \"jail-test\"\n[processes]\nallow = true\n[limits]\nwall_time_ms = 4000\n";
        let ((run, out), peak) = peak_while(&disk, || run_on(&disk, who, &program, Some(rules)));
        eprintln!("host bytes after a kill: peak {peak}, output dir {} (du)", du(&out));
        assert_eq!(run.status(), "timeout", "{:?}", run.record);
        assert!(peak <= OUTPUT_BYTES + SLACK, "the run wrote {peak} bytes on the host");
        assert_eq!(
            std::fs::read_to_string(out.join("result.txt")).ok().as_deref(),
            Some("so far\n"),
            "{:?}",
            run.record
        );
        assert!(message(&run).contains("(partial)"), "{:?}", run.record);
    }
}

both_modes! {
    /// A file whose name is not UTF-8 comes back under its percent-encoded name, with its content, and
    /// the record says so.
    fn a_name_that_is_not_utf8_is_delivered_encoded(who: As) {
        let disk = HostDisk::mount();
        let program = r##"
open(b"caf\xe9 100%.txt", "wb").write(b"latin-1 name\n")
open("plain.txt", "w").write("plain\n")
"##;
        let (run, out) = run_on(&disk, who, program, None);
        assert_eq!(run.status(), "ok", "{:?}", run.record);
        let files = run.record["files"].as_array().cloned().unwrap_or_default();
        let paths: Vec<&str> = files.iter().filter_map(|f| f["path"].as_str()).collect();
        assert_eq!(paths, ["caf%E9 100%25.txt", "plain.txt"], "{files:?}");
        assert_eq!(
            std::fs::read_to_string(out.join("caf%E9 100%25.txt")).ok().as_deref(),
            Some("latin-1 name\n")
        );
        assert!(message(&run).contains("not UTF-8"), "{:?}", run.record);
    }
}

/// Every regular file under `dir` (as root), with its content.
fn files_under(dir: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_dir() => files_under(&path, out),
            Ok(meta) if meta.is_file() => {
                out.push((path.clone(), std::fs::read(&path).unwrap_or_default()))
            }
            _ => {}
        }
    }
}

/// As `user`: `sh -c script`.
fn sh_as(user: (u32, u32), script: &str) -> Command {
    let mut command = Command::new("setpriv");
    command
        .arg(format!("--reuid={}", user.0))
        .arg(format!("--regid={}", user.1))
        .arg("--clear-groups")
        .args(["--", "sh", "-c", script]);
    command
}

/// Swaps `<argv[1]>/root` between a symlink to `argv[2]` and one to `argv[3]`, forever.
const FLIPPER: &str = r#"
import os, sys
base, a, b = sys.argv[1:4]
os.chdir(base)
while True:
    for target in (a, b):
        try:
            os.symlink(target, "r.new")
        except FileExistsError:
            os.unlink("r.new")
            os.symlink(target, "r.new")
        os.rename("r.new", "root")
"#;

/// Another user who created the unprivileged stage dir's path first (`$TMPDIR/warden-<uid>`, with a
/// symlink under it) gets nothing of the victim's runs, and cannot stop them: first with a symlink to
/// nowhere (formerly every run failed), then with one they keep swapping between two directories of
/// theirs (formerly the init's writes by path could land in the other one, on the host). Every run
/// goes ahead in a fresh private directory, which is removed afterwards, and nothing of the program or
/// its input appears in the attacker's directories.
#[test]
fn another_users_stage_dir_is_never_used() {
    warden_test_support::require_root!();
    let victim = support::test_user();
    let attacker = support::second_user();
    // A sticky, world-writable temp dir of the test's own (as /tmp is) as the victim's TMPDIR, so
    // other tests' runs are not disturbed.
    let tmp = PathBuf::from(format!("/tmp/{}", support::token("warden-stagetest-")));
    std::fs::create_dir(&tmp).expect("mkdir");
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o1777)).expect("chmod");
    let stage_base = tmp.join(format!("warden-{}", victim.0));
    let (loot_a, loot_b) = (tmp.join("loot-a"), tmp.join("loot-b"));
    let setup = format!(
        "set -e; umask 0; mkdir -m 0777 {base} {a} {b}; ln -s {tmp}/nowhere {base}/root",
        base = stage_base.display(),
        a = loot_a.display(),
        b = loot_b.display(),
        tmp = tmp.display(),
    );
    assert!(sh_as(attacker, &setup).status().expect("setup").success());

    // The victim's private input and program (the attacker cannot read them on the host).
    let own = tmp.join("victim");
    std::fs::create_dir(&own).expect("mkdir");
    let input_secret = support::token("INPUTSECRET");
    let program_secret = support::token("PROGRAMSECRET");
    let input = own.join("data.txt");
    std::fs::write(&input, format!("{input_secret}\n")).expect("input");
    let program =
        format!("# {program_secret}\nprint(open('data.txt').read().strip() == {input_secret:?})\n");
    let rules = own.join("rules.toml");
    std::fs::write(&rules, support::rules_for(As::User, support::BASE_RULES)).expect("rules");
    let program_path = own.join("program.py");
    std::fs::write(&program_path, &program).expect("program");
    for path in [&own, &input, &rules, &program_path] {
        std::os::unix::fs::chown(path, Some(victim.0), Some(victim.1)).expect("chown");
    }
    std::fs::set_permissions(&own, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let victim_runs = |count: usize| -> Vec<serde_json::Value> {
        (0..count)
            .map(|_| {
                let args: Vec<String> = vec![
                    "run".into(),
                    "--no-policy".into(),
                    "--json".into(),
                    "--rules".into(),
                    rules.display().to_string(),
                    "--input".into(),
                    input.display().to_string(),
                    program_path.display().to_string(),
                ];
                let mut command = support::command_as(As::User, &args);
                command.env("TMPDIR", &tmp);
                let output = support::run_with_timeout(command, Duration::from_secs(60));
                serde_json::from_slice(&output.stdout).unwrap_or_else(|err| {
                    panic!(
                        "no record ({err}): {}",
                        String::from_utf8_lossy(&output.stderr)
                    )
                })
            })
            .collect()
    };

    // A symlink to nowhere.
    let mut records = victim_runs(1);
    // The attacker flips `root` between their two directories as fast as they can (a rename is
    // atomic: the path always names one of them).
    let mut flipper = Command::new("setpriv")
        .arg(format!("--reuid={}", attacker.0))
        .arg(format!("--regid={}", attacker.1))
        .args([
            "--clear-groups",
            "--",
            "/usr/bin/python3",
            "-I",
            "-c",
            FLIPPER,
        ])
        .args([&stage_base, &loot_a, &loot_b])
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("flipper");
    let first = std::fs::read_link(stage_base.join("root")).expect("the attacker's symlink");
    let flipping = (0..5000).any(|_| {
        std::thread::sleep(Duration::from_millis(1));
        std::fs::read_link(stage_base.join("root")).is_ok_and(|now| now != first)
    });
    records.extend(victim_runs(20));
    let _ = flipper.kill();
    let _ = flipper.wait();

    // Whatever the attacker's directories hold now, as root.
    let mut found = Vec::new();
    for dir in [&loot_a, &loot_b, &stage_base] {
        files_under(dir, &mut found);
    }
    let leftovers: Vec<String> = std::fs::read_dir(&tmp)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(&format!("warden-{}-", victim.0)))
        .collect();
    let _ = std::fs::remove_dir_all(&tmp);

    assert!(flipping, "the attacker's flipper did not run");
    for (path, content) in &found {
        let text = String::from_utf8_lossy(content);
        assert!(
            !text.contains(&input_secret) && !text.contains(&program_secret),
            "the attacker collected the victim's run in {}",
            path.display()
        );
    }
    assert_eq!(
        found.len(),
        0,
        "files appeared in the attacker's directories: {found:?}"
    );
    for record in &records {
        assert_eq!(record["status"], "ok", "{}", record["message"]);
        assert_eq!(record["stdout"], "True\n");
    }
    assert_eq!(
        leftovers,
        Vec::<String>::new(),
        "fresh stage dirs were left behind"
    );
}
