//! The hook's pure parts (settings, rules and the exec-ban filter program), compiled on their own: the
//! library itself is a Python extension that needs the interpreter to run. The real hook in the real
//! jail is tested by `tests/jail/hook.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

#[path = "../src/paths.rs"]
mod paths;
#[path = "../src/rules.rs"]
mod rules;
#[path = "../src/settings.rs"]
mod settings;

use rules::{
    as_proc_self, inert, is_plain_absolute, link_target, normalise, real_path, sqlite_uri_path,
    sqlite_uri_reads_only, under, write_hint, Denial, Modules, Rule,
};
use settings::{InterpreterFacts, Settings};

fn module_matches(patterns: &[String], module: &str, submodules: bool) -> bool {
    Modules::new(patterns).matches(module, submodules)
}

fn module_denied(patterns: &[String], module: &str) -> bool {
    Modules::new(patterns).denied(module)
}

fn settings() -> Settings {
    let json = serde_json::json!({
        "policy": "test", "mode": "enforce",
        "import_allow": ["pandas", "pandas.*", "os"], "import_deny": ["subprocess", "numpy.ctypeslib"],
        "allow_processes": false, "allow_network": false,
        "read_roots": ["/work", "/tmp"], "write_roots": ["/work"], "runtime_read_roots": ["/proc/self"],
        "deny_pickle": true, "deny_marshal": true, "deny_native": true,
        "code_callers": ["<frozen importlib._bootstrap", "<bootstrap>", "dataclasses.py", "scipy/_lib/"],
        "marshal_callers": [], "ctypes_callers": ["ctypes/"], "runtime_imports": ["_strptime"],
        "import_machinery": ["<frozen importlib.", "importlib/"], "ctypes_machinery": [],
        "introspection_machinery": ["inspect.py"], "program": "/run/warden/main.py",
    });
    Settings::new(
        &json.to_string(),
        InterpreterFacts {
            trusted_roots: vec![
                "/usr/lib/python3.11".into(),
                "/venv/lib/python3.11/site-packages".into(),
            ],
            prefixes: vec!["/usr".into()],
            bootstrap: "/run/warden/bootstrap.py".into(),
        },
    )
    .unwrap()
}

#[test]
fn library_code_is_the_interpreters_import_path_frozen_modules_and_the_bootstrap() {
    let s = settings();
    assert!(s.is_trusted_file("/usr/lib/python3.11/dataclasses.py"));
    assert!(s.is_trusted_file("/venv/lib/python3.11/site-packages/pandas/core/frame.py"));
    assert!(s.is_trusted_file("<frozen importlib._bootstrap>"));
    assert!(s.is_trusted_file("/run/warden/bootstrap.py"));
    assert!(!s.is_trusted_file("/run/warden/main.py"));
    assert!(!s.is_trusted_file("<string>"));
    // A look-alike directory is not the root.
    assert!(!s.is_trusted_file("/usr/lib/python3.11x/evil.py"));
}

#[test]
fn caller_lists_match_relative_files_packages_and_frozen_names() {
    let s = settings();
    let callers = &s.policy.code_callers;
    assert!(s.listed(callers, "/usr/lib/python3.11/dataclasses.py"));
    assert!(s.listed(
        callers,
        "/venv/lib/python3.11/site-packages/scipy/_lib/_bunch.py"
    ));
    assert!(s.listed(callers, "<frozen importlib._bootstrap_external>"));
    assert!(s.listed(callers, "/run/warden/bootstrap.py"));
    assert!(!s.listed(callers, "/usr/lib/python3.11/threading.py"));
    assert!(!s.listed(
        callers,
        "/venv/lib/python3.11/site-packages/pandas/dataclasses.py"
    ));
    assert!(!s.listed(&s.policy.ctypes_callers, "/run/warden/bootstrap.py"));
}

#[test]
fn readable_paths_are_the_roots_the_prefixes_and_the_source_of_what_runs() {
    let s = settings();
    for path in [
        "/work/data.csv",
        "/tmp/x",
        "/proc/self/status",
        "/usr/lib/python3.11/os.py",
        // linecache reads the source of every frame it formats: the program's and the bootstrap's
        // (pandas' `query("… @name")` through `inspect.stack()`, `traceback.extract_stack`).
        "/run/warden/main.py",
        "/run/warden/bootstrap.py",
    ] {
        assert!(s.readable(path), "{path}");
    }
    for path in [
        "/etc/passwd",
        "/run/warden/hook.json",
        "/run/warden",
        "/run/warden/bootstrap.pyc",
        "/proc/1/environ",
        "/workshop",
    ] {
        assert!(!s.readable(path), "{path}");
    }
}

#[test]
fn settings_refuse_unknown_keys_and_relative_paths() {
    let facts = InterpreterFacts {
        trusted_roots: vec!["/usr/lib/python3.11".into()],
        prefixes: vec![],
        bootstrap: "/b.py".into(),
    };
    assert!(Settings::new("{\"policy\": \"x\", \"extra\": 1}", facts.clone()).is_err());
    let mut json: serde_json::Value = serde_json::json!({
        "policy": "test", "mode": "enforce", "import_allow": [], "import_deny": [],
        "allow_processes": false, "allow_network": false, "read_roots": ["work"], "write_roots": [],
        "runtime_read_roots": [], "deny_pickle": true, "deny_marshal": true, "deny_native": true,
        "code_callers": [], "marshal_callers": [], "ctypes_callers": [], "runtime_imports": [],
        "import_machinery": [],
        "ctypes_machinery": [], "introspection_machinery": [], "program": "/run/warden/main.py",
    });
    let err = Settings::new(&json.to_string(), facts.clone()).unwrap_err();
    assert!(err.contains("\"work\""), "{err}");
    json["read_roots"] = serde_json::json!(["/work"]);
    assert!(Settings::new(&json.to_string(), facts).is_ok());
}

#[test]
fn module_patterns_follow_the_static_layers_semantics() {
    let allow = vec!["pandas".to_owned(), "numpy.*".to_owned()];
    assert!(module_matches(&allow, "pandas", false));
    assert!(!module_matches(&allow, "pandas.io", false));
    assert!(module_matches(&allow, "numpy.linalg", false));
    assert!(!module_matches(&allow, "numpy", false));
    assert!(!module_matches(&allow, "numpyx.linalg", false));
    // Deny patterns cover submodules.
    let deny = vec!["subprocess".to_owned()];
    assert!(module_matches(&deny, "subprocess", true));
    assert!(module_matches(&deny, "subprocess.x", true));
    assert!(!module_matches(&deny, "subprocessx", true));
}

#[test]
fn a_denied_modules_private_twins_are_denied_by_rule() {
    let deny: Vec<String> = [
        "sqlite3",
        "socket",
        "pyarrow.fs",
        "pyarrow.flight",
        "multiprocessing",
    ]
    .map(str::to_owned)
    .into();
    for twin in [
        "_sqlite3",
        "_socket",
        "pyarrow._fs",
        "pyarrow._flight",
        "pyarrow._flight.x",
        "_multiprocessing",
        "sqlite3.dbapi2",
        "_sqlite3.x",
    ] {
        assert!(module_denied(&deny, twin), "{twin}");
    }
    for other in [
        "_json",
        "pyarrow._compute",
        "pyarrow",
        "__socket",
        "_",
        "pyarrow.__fs",
        "_pyarrow",
    ] {
        assert!(!module_denied(&deny, other), "{other}");
    }
}

#[test]
fn paths_are_normalised_lexically_against_the_working_directory() {
    assert_eq!(normalise("data.csv", "/work"), "/work/data.csv");
    assert_eq!(normalise("../../../../etc/passwd", "/work"), "/etc/passwd");
    assert_eq!(normalise("/work/./a//b/../c", "/"), "/work/a/c");
    assert_eq!(normalise("/", "/work"), "/");
    let roots = vec!["/work".to_owned(), "/tmp/".to_owned()];
    assert!(under(&roots, "/work"));
    assert!(under(&roots, "/work/a/b"));
    assert!(under(&roots, "/tmp/x"));
    assert!(!under(&roots, "/workshop"));
    assert!(!under(&roots, "/etc/passwd"));
}

#[test]
fn denial_messages_start_with_the_rule_and_the_event() {
    let denial = Denial::new(Rule::Process, "starting a process");
    let message = denial.message("os.system", "default", &[]);
    assert!(
        message.starts_with("warden[PROC801] os.system: starting a process (policy default, runtime layer) — hint: "),
        "{message}"
    );
}

#[test]
fn a_write_denial_names_where_the_policy_lets_the_program_write() {
    let denial = Denial::new(Rule::Write, "writing /etc/x, outside the write roots");
    let roots = vec!["/work".to_owned(), "/tmp".to_owned()];
    let message = denial.message("open", "default", &roots);
    assert!(
        message.ends_with("hint: this policy lets the program write only under /work (the work dir: relative paths), /tmp"),
        "{message}"
    );
    let none = denial.message("open", "readonly", &[]);
    assert!(
        none.contains("writes no files") || none.contains("write no files"),
        "{none}"
    );
    assert_eq!(
        write_hint(&["/tmp".to_owned()]),
        "this policy lets the program write only under /tmp"
    );
}

#[test]
fn sqlite_uris_are_read_as_sqlite_reads_them() {
    let path = |uri: &str| sqlite_uri_path(uri);
    assert_eq!(path("file:data.db?mode=ro").as_deref(), Some("data.db"));
    assert_eq!(path("file:///etc/x.db").as_deref(), Some("/etc/x.db"));
    assert_eq!(
        path("file://localhost/etc/x.db#f").as_deref(),
        Some("/etc/x.db")
    );
    assert_eq!(path("file:/etc/x.db").as_deref(), Some("/etc/x.db"));
    assert_eq!(path("file:?mode=memory").as_deref(), Some(""));
    // What SQLite would decode or refuse is refused here too.
    assert_eq!(path("file:%2Fetc%2Fx.db"), None);
    assert_eq!(path("file://host/etc/x.db"), None);
    assert_eq!(path("data.db"), None);
    assert!(sqlite_uri_reads_only(
        "file:/data/x.db?cache=shared&mode=ro"
    ));
    assert!(sqlite_uri_reads_only("file:/data/x.db?immutable=1#f"));
    assert!(!sqlite_uri_reads_only("file:/data/x.db?mode=rw"));
    assert!(!sqlite_uri_reads_only("file:/data/mode=ro"));
}

/// `os.mknod`'s mode: character and block devices are devices (what a tar member of type `3` or `4`
/// asks for), regular files, FIFOs and sockets are not; the permission bits do not matter.
#[test]
fn device_modes_are_told_from_the_file_type_bits() {
    assert!(rules::makes_device(0o020666)); // S_IFCHR | 0666: /dev/null's kind
    assert!(rules::makes_device(0o060600)); // S_IFBLK
    assert!(!rules::makes_device(0o600)); // os.mknod's default: a regular file
    assert!(!rules::makes_device(0o100644)); // S_IFREG
    assert!(!rules::makes_device(0o010644)); // S_IFIFO
    assert!(!rules::makes_device(0o140755)); // S_IFSOCK: its bits contain S_IFCHR's
    assert!(!rules::makes_device(0));
}

#[path = "../src/kernel.rs"]
mod kernel;

/// Runs the classic-BPF subset the exec ban uses on one `seccomp_data`.
fn evaluate(program: &[libc::sock_filter], arch: u32, nr: u32, arg0: u64) -> u32 {
    let mut data = [0u8; 64];
    data[0..4].copy_from_slice(&nr.to_le_bytes());
    data[4..8].copy_from_slice(&arch.to_le_bytes());
    data[16..24].copy_from_slice(&arg0.to_le_bytes());
    let (mut pc, mut acc) = (0usize, 0u32);
    loop {
        let insn = program[pc];
        match insn.code {
            0x20 => {
                let k = insn.k as usize;
                acc = u32::from_le_bytes(data[k..k + 4].try_into().unwrap());
                pc += 1;
            }
            0x15 => pc += 1 + usize::from(if acc == insn.k { insn.jt } else { insn.jf }),
            0x45 => pc += 1 + usize::from(if acc & insn.k != 0 { insn.jt } else { insn.jf }),
            0x06 => return insn.k,
            other => panic!("unexpected BPF code {other:#x}"),
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[test]
fn the_exec_ban_refuses_exec_and_process_creation_but_not_threads() {
    const X86_64: u32 = 0xc000_003e;
    const ALLOW: u32 = 0x7fff_0000;
    const EPERM: u32 = 0x0005_0000 | 1;
    let program = kernel::exec_ban_program();
    assert_eq!(evaluate(&program, X86_64, 59, 0), EPERM, "execve");
    assert_eq!(evaluate(&program, X86_64, 322, 0), EPERM, "execveat");
    assert_eq!(evaluate(&program, X86_64, 57, 0), EPERM, "fork");
    assert_eq!(evaluate(&program, X86_64, 58, 0), EPERM, "vfork");
    // clone as fork (SIGCHLD) and as posix_spawn (CLONE_VM | CLONE_VFORK): refused.
    assert_eq!(evaluate(&program, X86_64, 56, 17), EPERM);
    assert_eq!(evaluate(&program, X86_64, 56, 0x4100 | 17), EPERM);
    // pthread_create's clone (CLONE_THREAD among its flags): allowed.
    assert_eq!(evaluate(&program, X86_64, 56, 0x003d_0f00), ALLOW);
    assert_eq!(evaluate(&program, X86_64, 0, 0), ALLOW, "read");
    assert_eq!(
        evaluate(&program, X86_64, 435, 0),
        ALLOW,
        "clone3 is the jail's (ENOSYS)"
    );
    assert_eq!(
        evaluate(&program, 0x4000_0003, 11, 0),
        ALLOW,
        "i386: the jail's filter"
    );
}

#[test]
fn code_sinks_are_exec_eval_and_compile_with_underscores_around() {
    for name in ["exec", "eval", "compile", "exec_", "_compile", "__eval__"] {
        assert!(rules::names_code_sink(name), "{name}");
    }
    for name in ["execute", "evaluate", "map_infer", "compiler", "", "_"] {
        assert!(!rules::names_code_sink(name), "{name}");
    }
}

#[test]
fn a_link_is_judged_by_where_it_leads() {
    assert_eq!(link_target("/etc/passwd", "/work/notes.txt"), "/etc/passwd");
    assert_eq!(link_target("../etc", "/work/data"), "/etc");
    assert_eq!(link_target("sub/x", "/work/link"), "/work/sub/x");
    assert_eq!(link_target("x", "/link"), "/x");

    let dir = std::env::temp_dir().join(format!("warden-hook-links-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("real")).expect("mkdir");
    let outside = std::fs::canonicalize(dir.join("real")).expect("real");
    let link = dir.join("link");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&outside, &link).expect("symlink");
    let through = format!("{}/new/file.txt", link.display());
    assert_eq!(
        real_path(&through),
        Some(format!("{}/new/file.txt", outside.display()))
    );
    // The process's own /proc/<pid> is /proc/self; another's is not.
    assert_eq!(
        as_proc_self("/proc/42/status".to_owned(), 42),
        "/proc/self/status"
    );
    assert_eq!(as_proc_self("/proc/42".to_owned(), 42), "/proc/self");
    assert_eq!(
        as_proc_self("/proc/421/status".to_owned(), 42),
        "/proc/421/status"
    );
    assert_eq!(as_proc_self("/etc/passwd".to_owned(), 42), "/etc/passwd");
    // The kernel's links under /proc lead where they point.
    assert_eq!(real_path("/proc/self/root/etc"), Some("/etc".to_owned()));
    let s = settings();
    assert!(s.readable("/proc/self/status"));
    for secret in [
        "/proc/self/environ",
        "/proc/self/task/1/environ",
        "/proc/self/mem",
    ] {
        assert!(!s.readable(secret), "{secret}");
    }
    // No link on the way: nothing to say.
    assert_eq!(real_path(&format!("{}/x", outside.display())), None);
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn a_library_file_is_the_module_its_path_below_the_import_path_names() {
    let s = settings();
    let module = |file: &str| s.module_of_file(file);
    assert_eq!(
        module("/usr/lib/python3.11/ftplib.py").as_deref(),
        Some("ftplib")
    );
    assert_eq!(
        module("/usr/lib/python3.11/xml/dom/__init__.py").as_deref(),
        Some("xml.dom")
    );
    assert_eq!(
        module("/venv/lib/python3.11/site-packages/nltk/downloader.py").as_deref(),
        Some("nltk.downloader")
    );
    assert_eq!(module("<frozen zipimport>").as_deref(), Some("zipimport"));
    // The import system's own, the program's files, and what is no module file.
    assert_eq!(module("<frozen importlib._bootstrap>"), None);
    assert_eq!(module("/work/ftplib.py"), None);
    assert_eq!(module("/usr/lib/python3.11/json/tool.pyc"), None);
    assert_eq!(module("/usr/lib/python3.11/a.b.py"), None);
}

#[test]
fn paths_are_judged_by_their_real_target_every_component_resolved() {
    let dir = std::env::temp_dir().join(format!("warden-hook-real-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("usr/bin")).expect("mkdir");
    std::fs::create_dir_all(dir.join("etc")).expect("mkdir");
    std::fs::write(dir.join("etc/passwd"), "x").expect("file");
    let root = std::fs::canonicalize(&dir)
        .expect("real")
        .display()
        .to_string();
    // `/usr/bin/X11 -> .`: `X11/../..` climbs from `bin`, not from `X11`.
    std::os::unix::fs::symlink(".", dir.join("usr/bin/X11")).expect("symlink");
    let written = format!("{root}/usr/bin/X11/../../etc/passwd");
    assert_eq!(normalise(&written, "/"), format!("{root}/usr/etc/passwd"));
    let no_roots: Vec<String> = Vec::new();
    assert_eq!(
        paths::resolved(&no_roots, &written),
        format!("{root}/etc/passwd")
    );
    // A path with no `..` through a linked directory: the directory is kept, its target read.
    std::os::unix::fs::symlink(format!("{root}/etc"), dir.join("usr/conf")).expect("symlink");
    let plain = format!("{root}/usr/conf/passwd");
    assert_eq!(
        paths::resolved(&no_roots, &plain),
        format!("{root}/etc/passwd")
    );
    assert_eq!(
        paths::resolved(&no_roots, &plain),
        format!("{root}/etc/passwd")
    );
    // A link in the middle of a deeper path, and a relative one: each directory is its parent's
    // real path and its own name.
    std::fs::create_dir_all(dir.join("etc/sub/deep")).expect("mkdir");
    std::os::unix::fs::symlink("../etc", dir.join("usr/rel")).expect("symlink");
    for written in [
        "usr/conf/sub/deep/x",
        "usr/rel/sub/deep/x",
        "usr/bin/X11/X11/x",
    ] {
        let expected = if written.starts_with("usr/bin") {
            format!("{root}/usr/bin/x")
        } else {
            format!("{root}/etc/sub/deep/x")
        };
        assert_eq!(
            paths::resolved(&no_roots, &format!("{root}/{written}")),
            expected
        );
    }
    // The last component a link: followed.
    std::os::unix::fs::symlink(format!("{root}/etc/passwd"), dir.join("usr/bin/pw"))
        .expect("symlink");
    assert_eq!(
        paths::resolved(&no_roots, &format!("{root}/usr/bin/pw")),
        format!("{root}/etc/passwd")
    );
    // Under a write root, resolved afresh each time (the program plants and swaps links there).
    let roots = vec![format!("{root}/usr")];
    std::os::unix::fs::symlink(format!("{root}/etc"), dir.join("usr/swap")).expect("symlink");
    let swapped = format!("{root}/usr/swap/passwd");
    assert_eq!(
        paths::resolved(&roots, &swapped),
        format!("{root}/etc/passwd")
    );
    std::fs::remove_file(dir.join("usr/swap")).expect("unlink");
    std::os::unix::fs::symlink(format!("{root}/usr/bin"), dir.join("usr/swap")).expect("symlink");
    assert_eq!(
        paths::resolved(&roots, &swapped),
        format!("{root}/usr/bin/passwd")
    );
    // Missing components after a `..`: normalised, never left with a `..` a root check could pass.
    let missing = format!("{root}/usr/nothing/../../etc/passwd");
    assert_eq!(
        paths::resolved(&no_roots, &missing),
        format!("{root}/etc/passwd")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn inert_text_has_no_call_dunder_or_lambda() {
    for text in [
        "int",
        "Optional[List[int]]",
        "DataFrame | None",
        "Literal['a', 'b']",
        "(a > 1) & (b < 2)",
        "y ~ x + z",
        "a > @threshold",
        "`my col` == 3",
    ] {
        assert!(inert(text), "{text}");
    }
    for text in [
        "open('/etc/passwd')",
        "np.log (x)",
        "x.__class__",
        "lambda: 1",
        "(y := 2)",
        "a; b",
        "f'{x}'[0] ('a')",
        "x)(",
        "f()[0]",
        "a\nb",
    ] {
        assert!(!inert(text), "{text}");
    }
}

#[test]
fn plain_absolute_paths_are_what_normalise_gives_back() {
    for path in [
        "/",
        "/usr/lib/python3.11/os.py",
        "/a/b.c/.hidden",
        "/a/..b/c.",
    ] {
        assert!(is_plain_absolute(path), "{path}");
        assert_eq!(normalise(path, "/"), path);
    }
    for path in [
        "",
        "usr/lib",
        "//usr",
        "/usr//lib",
        "/usr/",
        "/usr/./lib",
        "/usr/../etc",
        "/usr/.",
        "/usr/..",
    ] {
        assert!(!is_plain_absolute(path), "{path}");
    }
}

#[test]
fn module_sets_match_as_the_pattern_lists_do() {
    let patterns: Vec<String> = ["pandas", "numpy.*", "socket"]
        .iter()
        .map(|p| p.to_string())
        .collect();
    let modules = Modules::new(&patterns);
    for (module, submodules, expected) in [
        ("pandas", false, true),
        ("pandas.io", false, false),
        ("pandas.io", true, true),
        ("numpy", false, false),
        ("numpy.linalg", false, true),
        ("numpyx", true, false),
        ("socket.x", true, true),
        ("socket.x", false, false),
    ] {
        assert_eq!(
            modules.matches(module, submodules),
            expected,
            "{module} {submodules}"
        );
    }
    assert!(modules.denied("_socket"));
    assert!(!modules.denied("_pandasx"));
}
