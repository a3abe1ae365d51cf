//! The runtime layer fails closed (issue 24): an event with no Python frame is the program's; paths
//! are judged by their real target (links in the read roots, `dir_fd`); every creator of files,
//! FIFOs, devices, shared memory, semaphores and socket pairs is judged; a denied module's private
//! twins are denied by rule; SQLite files are writes; a hook removed through raw memory ends the
//! run. Every program runs with the static layer off (`--no-policy`) and the default policy, in
//! the real jail; effects are judged from the host side (the work dir warden collects, a canary
//! outside the roots).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use warden_test_support::repo;

use super::support::{self, run, As, Canary, Options, Run};

pub(super) fn default_rules() -> String {
    std::fs::read_to_string(repo().join("rules/default.toml")).expect("rules/default.toml")
}

/// The default policy with `sqlite3` allowed (the issue's default allowlist will allow it).
fn rules_allowing_sqlite() -> String {
    let rules = default_rules()
        .replace("\"sqlite3\",", "")
        .replace(", \"sqlite3\"", "");
    rules.replacen("allow = [", "allow = [\n    \"sqlite3\", \"sqlite3.*\",", 1)
}

pub(super) fn output_dir() -> (tempfile::TempDir, PathBuf) {
    let dir = support::shared_tempdir();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let out = dir.path().join("out");
    (dir, out)
}

/// Runs `program` with the static layer off (`support::run` always passes `--no-policy`), the
/// runtime layer on or off, collecting the work dir's files into `out`.
pub(super) fn run_with(program: &str, rules: &str, out: &Path, hooks: bool) -> Run {
    let extra_args: Vec<String> = vec!["--output-dir".into(), out.display().to_string()];
    run(
        As::Root,
        program,
        Options {
            rules: Some(rules),
            hooks,
            extra_args,
            env: vec![("WARDEN_DATA_DIR", "/var/lib/warden".to_owned())],
        },
    )
}

pub(super) fn stopped_by(run: &Run) -> (String, String, String) {
    let s = &run.record["stopped_by"];
    let text = |key: &str| s[key].as_str().unwrap_or("").to_owned();
    (text("layer"), text("rule"), text("event"))
}

pub(super) fn collected(run: &Run) -> Vec<String> {
    run.record["files"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|file| file["path"].as_str().map(str::to_owned))
        .collect()
}

/// Pushes a failure unless `run` was stopped by the runtime layer with `rule` (at `event`, when
/// one is given) and left no `PWNED` in the work dir it collected (judged on the host).
pub(super) fn expect_runtime_stop(
    name: &str,
    run: &Run,
    rule: &str,
    event: Option<&str>,
    failures: &mut Vec<String>,
) {
    let (layer, got_rule, got_event) = stopped_by(run);
    if layer != "runtime" || got_rule != rule || event.is_some_and(|event| got_event != event) {
        failures.push(format!(
            "{name}: expected runtime {rule} {}, got {layer} {got_rule} {got_event}: {}",
            event.unwrap_or(""),
            run.stderr()
        ));
    }
    if collected(run).iter().any(|f| f == "PWNED") {
        failures.push(format!(
            "{name}: the effect happened (PWNED in the work dir)"
        ));
    }
}

/// One program per way the runtime layer used to fail open: each is stopped with its rule and
/// event, leaves no `PWNED` in the work dir and no canary in its output. (Denials raised in a
/// thread are reported, not fatal: the record's `stopped_by` names them.)
#[test]
fn the_runtime_layer_fails_closed() {
    warden_test_support::require_root!();
    let canary = Canary::new();
    let wait = "import time\ntime.sleep(0.3)\n";
    let cases: Vec<(&str, String, &str, &str)> = vec![
        // No frame: a C callable run by a thread, with a C-level map chain.
        ("thread exec, no frame", format!("import os\nt = os.sys.modules['_thread']\nt.start_new_thread(list, (map(exec, [\"open('/work/PWNED', 'w')\"], [{{}}]),))\n{wait}"), "DYN401", "compile"),
        ("thread compile under a library's name, no frame", format!("import os\nt = os.sys.modules['_thread']\nsrc = [\"open('/work/PWNED', 'w')\"]\nt.start_new_thread(list, (map(exec, map(compile, src, [os.__file__], ['exec']), [{{}}]),))\n{wait}"), "DYN401", "compile"),
        ("thread import, no frame", format!("import os\nt = os.sys.modules['_thread']\nt.start_new_thread(list, (map(__import__, ['ftp' + 'lib']),))\n{wait}"), "IMP101", "import"),
        ("thread importlib, walk ends in the machinery", format!("import os\nt = os.sys.modules['_thread']\ngi = os.sys.modules['_frozen_importlib']._gcd_import\nt.start_new_thread(list, (map(gi, ['xml.dom.minidom']),))\n{wait}"), "IMP101", "import"),
        // Paths by their real target.
        ("a link in the read roots (/usr/bin/X11 -> .)", "print(open('/usr/bin/X11/../../etc/passwd').read())\n".into(), "FILE701", "open"),
        ("dir_fd honoured", "import os\nos.mkdir('sub')\nos.chdir('sub')\nfd = os.open('/tmp', os.O_RDONLY)\nprint(os.read(os.open('../etc/passwd', os.O_RDONLY, dir_fd=fd), 100))\n".to_owned(), "FILE701", "open"),
        ("dir_fd on mkdir", "import os\nos.mkdir('sub')\nos.chdir('sub')\nfd = os.open('/tmp', os.O_RDONLY)\nos.mkdir('../usr/PWNED', dir_fd=fd)\n".into(), "FILE702", "os.mkdir"),
        // Creators with no event of their own.
        ("mkfifo outside the write roots", "import os\nos.mkfifo('/var/warden-fifo')\n".into(), "FILE702", "os.mkfifo"),
        ("mknod outside the write roots", "import os\nos.mknod('/var/warden-node', 0o600 | 0o010000)\n".into(), "FILE702", "os.mknod"),
        ("mkfifo by dir_fd", "import os\nfd = os.open('.', os.O_RDONLY)\nos.mkdir('sub')\nos.chdir('sub')\nos.mkfifo('../var/warden-fifo', dir_fd=fd)\n".into(), "FILE702", "os.mkfifo"),
        ("socketpair (loaded by pandas)", "import os, pandas\na, b = os.sys.modules['_socket'].socketpair()\n".into(), "NET802", "socket.socketpair"),
        // A denied module's private twin, imported for the program by a library.
        ("private twin through a library's importer", "import matplotlib.pyplot as plt\nplt.switch_backend('module://_multiprocess' + 'ing')\n".into(), "IMP101", "import"),
    ];
    let rules = default_rules();
    let mut failures = Vec::new();
    for (name, program, rule, event) in &cases {
        let (_dir, out) = output_dir();
        let run = run_with(program, &rules, &out, true);
        expect_runtime_stop(name, &run, rule, Some(event), &mut failures);
        if run.everything().contains(&canary.secret) || run.stdout().contains("root:") {
            failures.push(format!("{name}: a file outside the read roots leaked"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Named semaphores (and shared memory, judged the same way) are files under `/dev/shm`, judged by
/// its real target: in the jail `/dev/shm` leads to `/tmp`, so with `/tmp` out of the write roots a
/// FIFO there is FILE702. (`_multiprocessing.SemLock` is judged the same way, in its type:
/// `types_reached_past_their_module_are_judged`.)
#[test]
fn fifos_under_dev_shm_are_writes_of_their_real_files() {
    warden_test_support::require_root!();
    let rules: String = default_rules()
        .lines()
        .map(|line| {
            if line.starts_with("write = [") {
                "write = [\".\"]".to_owned()
            } else {
                line.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        rules.contains("write = [\".\"]"),
        "no [files] write line to narrow"
    );
    let (_dir, out) = output_dir();
    let run = run_with(
        "import os\nos.mkfifo('/dev/shm/warden-fifo')\n",
        &rules,
        &out,
        true,
    );
    assert_eq!(
        stopped_by(&run),
        (
            "runtime".to_owned(),
            "FILE702".to_owned(),
            "os.mkfifo".to_owned()
        ),
        "mkfifo under /dev/shm: {}",
        run.stderr()
    );
}

/// What the guards and the real-path judgement keep working: `os.open` with a `dir_fd` inside the
/// roots, a library writing its files there. A FIFO in the work dir passes the hook (a write inside
/// the roots) and is refused by the kernel, which refuses FIFO and device nodes everywhere (EPERM).
#[test]
fn guarded_creators_still_work_inside_the_roots() {
    warden_test_support::require_root!();
    let program = r#"
import os
import pandas as pd
FIFO = 0o010000  # stat.S_IFIFO
fd = os.open(".", os.O_RDONLY)
os.mkdir("d", dir_fd=fd)
w = os.open("d/x.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
os.write(w, b"hello")
os.close(w)
refused = []
for make in (lambda: os.mkfifo("fifo"), lambda: os.mknod("node", 0o600 | FIFO)):
    try:
        make()
        refused.append("made")
    except PermissionError as err:
        refused.append(f"errno{err.errno}")
print("FIFO", *refused)
print("READ", open("d/x.txt").read())
print("OPEN-GUARDED", type(os.open).__name__, os.open in os.supports_dir_fd)
pd.DataFrame({"a": [1]}).to_csv("d/out.csv")
"#;
    let (_dir, out) = output_dir();
    let run = run_with(program, &default_rules(), &out, true);
    assert_eq!(run.status(), "ok", "{}", run.stderr());
    let stdout = run.stdout();
    assert!(stdout.contains("FIFO errno1 errno1"), "{stdout}");
    assert!(stdout.contains("READ hello"), "{stdout}");
    assert!(stdout.contains("OPEN-GUARDED guarded True"), "{stdout}");
    assert_eq!(run.record["stopped_by"], serde_json::Value::Null);
}

/// SQLite, when the policy allows it: database files only inside the write roots, `:memory:`
/// always, extension loading never.
#[test]
fn sqlite_databases_are_files_judged_as_writes() {
    warden_test_support::require_root!();
    let rules = rules_allowing_sqlite();
    let fine = r#"
import sqlite3
for target in [":memory:", "data.db", "file:uri.db?mode=rwc"]:
    con = sqlite3.connect(target, uri=target.startswith("file:"))
    con.execute("create table t (x)")
    con.commit()
    con.close()
print("DONE")
"#;
    let (_dir, out) = output_dir();
    let run = run_with(fine, &rules, &out, true);
    assert_eq!(run.status(), "ok", "{}", run.stderr());
    assert!(run.stdout().contains("DONE"));
    assert!(
        collected(&run).contains(&"data.db".to_owned()),
        "{:?}",
        collected(&run)
    );

    for (name, program, rule, event) in [
        (
            "outside the write roots",
            "import sqlite3\nsqlite3.connect('/var/warden.db').execute('create table t (x)')\n",
            "FILE702",
            "sqlite3.connect",
        ),
        (
            "a URI outside",
            "import sqlite3\nsqlite3.connect('file:/var/warden.db?mode=rwc', uri=True)\n",
            "FILE702",
            "sqlite3.connect",
        ),
        (
            "extension loading",
            "import sqlite3\nsqlite3.connect(':memory:').enable_load_extension(True)\n",
            "NAT803",
            "sqlite3.enable_load_extension",
        ),
    ] {
        let (_dir, out) = output_dir();
        let run = run_with(program, &rules, &out, true);
        assert_eq!(run.status(), "error", "{name}: {}", run.stderr());
        assert_eq!(
            stopped_by(&run),
            ("runtime".to_owned(), rule.to_owned(), event.to_owned()),
            "{name}: {}",
            run.stderr()
        );
    }
}

/// The raw-memory class: a program that writes memory through a ctypes `Union` (no audit event)
/// clears the interpreter's audit-hook list; the hook's watchdog sees it and ends the run before
/// the program's next step. The addresses come from a first run with the hook off (its own C hook
/// shows where the list's head is; `id(type)` locates the interpreter's state, as an attacker
/// would compute it).
#[test]
fn a_hook_removed_through_raw_memory_ends_the_run() {
    warden_test_support::require_root!();
    let probe = r#"
import ctypes, os
api = ctypes.pythonapi
runtime = ctypes.addressof(ctypes.c_char.in_dll(api, "_PyRuntime"))
words = (ctypes.c_size_t * 4096).from_address(runtime)
HOOK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p)
hook = HOOK(lambda event, args, data: 0)
function = ctypes.cast(hook, ctypes.c_void_p).value
api.PySys_AddAuditHook.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
before = list(words)
api.PySys_AddAuditHook(function, None)
after = list(words)
for index, (old, new) in enumerate(zip(before, after)):
    if old == 0 and new > 0x10000 and new % 8 == 0:
        if (ctypes.c_size_t * 2).from_address(new)[1] == function:
            print("OFFSETS", runtime - id(type), index * 8, flush=True)
            break
# Its own C hook must not outlive ctypes at finalisation.
os._exit(0)
"#;
    let (_dir, out) = output_dir();
    let first = run_with(probe, &default_rules(), &out, false);
    let line = first.lines_starting("OFFSETS ").join("");
    let offsets: Vec<i64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|word| word.parse().ok())
        .collect();
    assert_eq!(offsets.len(), 2, "no offsets: {}", first.everything());
    let attack = format!(
        r#"
import os, time
import numpy
ctypes = os.sys.modules["ctypes"]
class U(ctypes.Union):
    _fields_ = [("address", ctypes.c_size_t), ("pointer", ctypes.POINTER(ctypes.c_size_t))]
u = U()
u.address = id(type) + {runtime} + {head}
print("HEAD", u.pointer[0] != 0, flush=True)
u.pointer[0] = 0
time.sleep(0.5)
print("SURVIVED", open("/etc/passwd").read(), flush=True)
"#,
        runtime = offsets[0],
        head = offsets[1],
    );
    let (_dir, out) = output_dir();
    let run = run_with(&attack, &default_rules(), &out, true);
    assert!(run.stdout().contains("HEAD True"), "{}", run.everything());
    assert!(!run.stdout().contains("SURVIVED"), "{}", run.everything());
    assert!(!run.stdout().contains("root:"), "{}", run.stdout());
    assert_eq!(run.status(), "error", "{:?}", run.record);
    let (layer, rule, _) = stopped_by(&run);
    assert_eq!(
        (layer.as_str(), rule.as_str()),
        ("runtime", "AUD805"),
        "{}",
        run.stderr()
    );
    assert!(
        run.stderr().contains("the audit hook was removed"),
        "{}",
        run.stderr()
    );
}

/// Every case of `corpus/attacks/runtime3` (issue 24's classes, built for the runtime layer) is
/// stopped by the runtime layer alone (`--no-policy`) with the rule its `expect-runtime` names,
/// and leaves nothing in the work dir it was not allowed to.
#[test]
fn runtime3_corpus_cases_are_stopped_by_the_runtime_layer_alone() {
    warden_test_support::require_root!();
    let mut cases: Vec<(PathBuf, String)> =
        std::fs::read_dir(repo().join("corpus/attacks/runtime3"))
            .expect("corpus/attacks/runtime3")
            .flatten()
            .map(|entry| entry.path())
            .filter_map(|path| {
                let text = std::fs::read_to_string(&path).ok()?;
                let rule = text
                    .lines()
                    .take_while(|line| line.starts_with('#'))
                    .find_map(|line| line.strip_prefix("# expect-runtime: "))?
                    .trim()
                    .to_owned();
                Some((path, rule))
            })
            .collect();
    cases.sort();
    assert!(cases.len() >= 24, "only {} cases", cases.len());
    let rules = default_rules();
    let failures = in_three_threads(&cases, |(path, rule), failures| {
        let source = std::fs::read_to_string(path).expect("case");
        let (_dir, out) = output_dir();
        let run = run_with(&source, &rules, &out, true);
        let name = path.display().to_string();
        expect_runtime_stop(&name, &run, rule, None, failures);
        if run.stdout().contains("root:") {
            failures.push(format!("{name}: a file outside the read roots leaked"));
        }
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Runs `check` on every case in three threads (the cases mostly wait for their jails); the
/// failures it pushed, in the cases' order within each third.
pub(super) fn in_three_threads<T: Sync>(
    cases: &[T],
    check: impl Fn(&T, &mut Vec<String>) + Sync,
) -> Vec<String> {
    let check = &check;
    std::thread::scope(|scope| {
        let handles: Vec<_> = cases
            .chunks(cases.len().div_ceil(3).max(1))
            .map(|chunk| {
                scope.spawn(move || {
                    let mut failures = Vec::new();
                    for case in chunk {
                        check(case, &mut failures);
                    }
                    failures
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("thread"))
            .collect()
    })
}

/// The default policy with `_multiprocessing` importable by the program and only the work dir
/// writable: a named semaphore (`/dev/shm/sem.NAME`, the run's `/tmp` in the jail) is a write
/// outside the roots.
fn rules_semaphores_outside_the_roots() -> String {
    let denied = "\"_posixsubprocess\", \"multiprocessing\", ";
    assert!(
        default_rules().contains(denied),
        "no multiprocessing in the denied modules"
    );
    let rules = default_rules().replacen(denied, "\"_posixsubprocess\", ", 1);
    let rules = rules.replacen("allow = [", "allow = [\n    \"_multiprocessing\",", 1);
    rules
        .lines()
        .map(|line| {
            if line.starts_with("write = [") {
                "write = [\".\"]".to_owned()
            } else {
                line.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The default policy with `pickle` allowed (imported by the program, not denied: the hook's
/// `deny_pickle` is off).
fn rules_allowing_pickle() -> String {
    let denied = "\"asyncio\", \"pickle\", ";
    assert!(
        default_rules().contains(denied),
        "no pickle in the denied modules"
    );
    let rules = default_rules().replacen(denied, "\"asyncio\", ", 1);
    rules.replacen("allow = [", "allow = [\n    \"pickle\",", 1)
}

/// Types a guard on their module cannot hold (issue 24, classes 5 and 7): `_multiprocessing.SemLock`
/// and the unpicklers are reached through `object.__subclasses__()`, subclasses, `type.__call__`,
/// `__new__` and instance attributes; each is judged in the type itself. Every program writes
/// `PWNED` into the work dir once past the sink: none may be collected.
#[test]
fn types_reached_past_their_module_are_judged() {
    warden_test_support::require_root!();
    let semaphores = rules_semaphores_outside_the_roots();
    let default = default_rules();
    let walk = "import _multiprocessing\nS = [c for c in object.__subclasses__() if c.__name__ == 'SemLock'][0]\n";
    let pickle = "import io, os, pandas\npickle = os.sys.modules['pickle']\nDATA = b\"cposix\\nsystem\\n(S'touch /work/PWNED'\\ntR.\"\n";
    let resolver = "    def find_class(self, module, name):\n        return getattr(os.sys.modules[module], name)\n";
    let done = "open('PWNED', 'w').close()\n";
    let cases: Vec<(&str, String, &str, &str, &str)> = vec![
        // Named semaphores, their real names (/dev/shm is outside the write roots here).
        ("SemLock through object.__subclasses__()", format!("{walk}S(1, 1, 1, '/warden-sem', True)\n{done}"), &semaphores, "FILE702", "_multiprocessing.SemLock"),
        ("a subclass of SemLock", format!("{walk}class L(S):\n    pass\nL(1, 1, 1, '/warden-sem', True)\n{done}"), &semaphores, "FILE702", "_multiprocessing.SemLock"),
        ("a subclass with its own __new__", format!("{walk}class L(S):\n    def __new__(cls, *a):\n        return super().__new__(cls, *a)\nL(1, 1, 1, '/warden-sem', True)\n{done}"), &semaphores, "FILE702", "_multiprocessing.SemLock"),
        ("type.__call__ with keywords", format!("{walk}type.__call__(S, 1, 1, 1, name='/warden-sem', unlink=True)\n{done}"), &semaphores, "FILE702", "_multiprocessing.SemLock"),
        ("SemLock.__new__ for a subclass", format!("{walk}S.__new__(type('L', (S,), {{}}), 1, 1, 1, '/warden-sem', True)\n{done}"), &semaphores, "FILE702", "_multiprocessing.SemLock"),
        ("copyreg.__newobj__", format!("{walk}import os, pandas\nos.sys.modules['copyreg'].__newobj__(S, 1, 1, 1, '/warden-sem', True)\n{done}"), &semaphores, "FILE702", "_multiprocessing.SemLock"),
        ("multiprocessing's own Lock, for the program", format!("import os, sklearn\nos.sys.modules['multiprocessing'].context._default_context.Lock()\n{done}"), &semaphores, "FILE702", "_multiprocessing.SemLock"),
        // Unpicklers that resolve globals themselves (the default policy denies pickle).
        ("a C Unpickler subclass", format!("{pickle}class L(pickle.Unpickler):\n{resolver}L(io.BytesIO(DATA)).load()\n{done}"), &default, "DES804", "pickle.Unpickler.find_class"),
        ("a subclass of a subclass", format!("{pickle}class L(pickle.Unpickler):\n{resolver}class M(L):\n    pass\nM(io.BytesIO(DATA)).load()\n{done}"), &default, "DES804", "pickle.Unpickler.find_class"),
        ("an instance's find_class", format!("{pickle}class L(pickle.Unpickler):\n    pass\nu = L(io.BytesIO(DATA))\nu.find_class = lambda m, n: getattr(os.sys.modules[m], n)\nu.load()\n{done}"), &default, "DES804", "pickle.Unpickler.find_class"),
        ("a __getattribute__ of its own", format!("{pickle}class L(pickle.Unpickler):\n    def __getattribute__(self, name):\n        if name == 'find_class':\n            return lambda m, n: getattr(os.sys.modules[m], n)\n        return object.__getattribute__(self, name)\nL(io.BytesIO(DATA)).load()\n{done}"), &default, "DES804", "pickle.Unpickler.find_class"),
        ("the load method descriptor called directly", format!("{pickle}class L(pickle.Unpickler):\n{resolver}pickle.Unpickler.load(L(io.BytesIO(DATA)))\n{done}"), &default, "DES804", "pickle.Unpickler.find_class"),
        ("a pure-Python _Unpickler subclass", format!("{pickle}class L(pickle._Unpickler):\n{resolver}L(io.BytesIO(DATA)).load()\n{done}"), &default, "DES804", "pickle.Unpickler.find_class"),
        ("joblib's NumpyUnpickler, subclassed", format!("{pickle}import sklearn\nN = os.sys.modules['joblib'].numpy_pickle.NumpyUnpickler\nclass L(N):\n{resolver}L('x', io.BytesIO(DATA), False).load()\n{done}"), &default, "DES804", "pickle.Unpickler.find_class"),
        ("pandas' compat Unpickler itself", format!("{pickle}C = [c for c in pickle._Unpickler.__subclasses__() if c.__module__.startswith('pandas')][0]\nC(io.BytesIO(DATA)).load()\n{done}"), &default, "DES804", "pickle.Unpickler.find_class"),
    ];
    let mut failures = Vec::new();
    for (name, program, rules, rule, event) in &cases {
        let (_dir, out) = output_dir();
        let run = run_with(program, rules, &out, true);
        expect_runtime_stop(name, &run, rule, Some(event), &mut failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// What the type guards keep working: with pickle allowed by the rules, an `Unpickler` subclass
/// with its own `find_class` (C and pure-Python) loads references; with the default policy
/// (pickle denied), a subclass that keeps pickle's `find_class` loads plain data, and
/// multiprocessing's own locks, a `SemLock` subclass and `SemLock._rebuild` work inside the write
/// roots (`/dev/shm` is the run's `/tmp`).
#[test]
fn guarded_types_work_where_the_policy_allows_them() {
    warden_test_support::require_root!();
    let allowed = r#"
import collections, io, pickle
class Loader(pickle.Unpickler):
    def find_class(self, module, name):
        if module == "collections":
            return getattr(collections, name)
        raise pickle.UnpicklingError(f"{module}.{name}")
class PyLoader(pickle._Unpickler):
    def find_class(self, module, name):
        return super().find_class(module, name)
data = pickle.dumps(collections.OrderedDict(a=1))
print("C", dict(Loader(io.BytesIO(data)).load()))
print("PY", dict(PyLoader(io.BytesIO(data)).load()))
"#;
    let (_dir, out) = output_dir();
    let run = run_with(allowed, &rules_allowing_pickle(), &out, true);
    assert_eq!(run.status(), "ok", "{}", run.stderr());
    let stdout = run.stdout();
    assert!(stdout.contains("C {'a': 1}"), "{stdout}");
    assert!(stdout.contains("PY {'a': 1}"), "{stdout}");
    assert_eq!(run.record["stopped_by"], serde_json::Value::Null);

    let default = r#"
import io, os, sklearn
pickle = os.sys.modules["pickle"]
class Persistent(pickle.Unpickler):
    def persistent_load(self, pid):
        return pid
data = pickle.dumps({"a": [1, 2.5, "x"]})
print("PLAIN", Persistent(io.BytesIO(data)).load(), pickle._Unpickler(io.BytesIO(data)).load())
lock = os.sys.modules["multiprocessing"].context._default_context.Lock()
with lock:
    print("LOCK held")
S = type(lock._semlock)
class Sub(S):
    pass
sub = Sub(1, 1, 1, "/warden-sub", True)
state = lock._semlock
again = S._rebuild(state.handle, state.kind, state.maxvalue, None)
print("SUB", sub.acquire(), "REBUILD", again.acquire(), again._count())
"#;
    let (_dir, out) = output_dir();
    let run = run_with(default, &default_rules(), &out, true);
    assert_eq!(run.status(), "ok", "{}", run.stderr());
    let stdout = run.stdout();
    assert!(
        stdout.contains("PLAIN {'a': [1, 2.5, 'x']} {'a': [1, 2.5, 'x']}"),
        "{stdout}"
    );
    assert!(stdout.contains("LOCK held"), "{stdout}");
    assert!(stdout.contains("SUB True REBUILD True 1"), "{stdout}");
    assert_eq!(run.record["stopped_by"], serde_json::Value::Null);
}
