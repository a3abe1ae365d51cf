//! The runtime layer (warden's audit hook in the interpreter) and the kernel's exec ban, end to end:
//! programs that evade the static layer (run with `--no-policy`) are stopped by the hook, with the
//! rule and event in the result record's `stopped_by`; tampering with the hook fails and is
//! reported; the exec ban holds with the hook off; data programs keep working with it on; a policy
//! that requires the layer fails closed without it. Effects are judged from the host side: the
//! files warden collects from the work dir, a canary outside the roots, a loopback listener.
//!
//! These runs use the default policy and its provisioned runtime (`scripts/setup.sh` installs it,
//! as for `tests/run.rs`).

use std::io::Read;
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use warden_test_support::{both_modes, repo};

use super::support::{self, run, As, Canary, Options, Run};

/// The default policy, as shipped.
fn default_rules() -> String {
    std::fs::read_to_string(repo().join("rules/default.toml")).expect("rules/default.toml")
}

/// A directory `who` may create the output dir in, and that output dir.
fn output_dir(who: As) -> (tempfile::TempDir, PathBuf) {
    let dir = support::shared_tempdir();
    if who == As::User {
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777))
            .expect("chmod");
    }
    let out = dir.path().join("out");
    (dir, out)
}

/// Runs `program` with the static layer off and the runtime layer on, collecting the work dir's
/// files into `out`.
fn run_hooked(who: As, program: &str, rules: &str, out: &Path, extra: &[&str]) -> Run {
    let mut extra_args: Vec<String> = vec!["--output-dir".into(), out.display().to_string()];
    extra_args.extend(extra.iter().map(|arg| (*arg).to_owned()));
    run(
        who,
        program,
        Options {
            rules: Some(rules),
            hooks: true,
            extra_args,
            // The test user finds the default runtime where root installed it.
            env: vec![("WARDEN_DATA_DIR", "/var/lib/warden".to_owned())],
        },
    )
}

fn stopped_by(run: &Run) -> (String, String, String) {
    let s = &run.record["stopped_by"];
    let text = |key: &str| s[key].as_str().unwrap_or("").to_owned();
    (text("layer"), text("rule"), text("event"))
}

/// Names of the files warden collected.
fn collected(run: &Run) -> Vec<String> {
    run.record["files"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|file| file["path"].as_str().map(str::to_owned))
        .collect()
}

both_modes! {
    /// One program per event class, each reaching its sink by a path the static layer does not
    /// follow: the hook stops it, names its rule and event, and the effect never happens.
    fn every_event_class_is_stopped_by_the_hook_with_its_rule(who: As) {
        let canary = Canary::new();
        let listener = TcpListener::bind("127.0.0.1:0").expect("listener");
        listener.set_nonblocking(true).expect("nonblocking");
        let port = listener.local_addr().expect("addr").port();
        let secret_path = canary.file.display().to_string();
        // (name, program, rule, event). Each program tries to leave `PWNED` in the work dir: warden
        // would collect it.
        let cases: Vec<(&str, String, &str, &str)> = vec![
            ("walrus system", "import os\n(m := os).system('touch /work/PWNED')\n".into(), "PROC801", "os.system"),
            ("methodcaller popen", "import operator, os\noperator.methodcaller('popen', 'touch /work/PWNED')(os)\n".into(), "PROC801", "subprocess.Popen"),
            ("returned module fork", "import os\ndef m():\n    return os\nif m().fork() == 0:\n    open('/work/PWNED', 'w')\n".into(), "PROC801", "os.fork"),
            ("subprocess from sys.modules", "import os, pandas\nos.sys.modules['subprocess'].run(['touch', '/work/PWNED'])\n".into(), "PROC801", "subprocess.Popen"),
            ("fork_exec directly", "import os, pandas\nfe = os.sys.modules['_posixsubprocess'].fork_exec\nfe(['/bin/touch', '/work/PWNED'], [b'/bin/touch'], True, (), None, None, -1, -1, -1, -1, -1, -1, -1, -1, True, False, None, None, None, -1, None, False)\n".into(), "PROC801", "_posixsubprocess.fork_exec"),
            ("expandvars read", format!("import os\nprint(open(os.path.expandvars('$HOME/..' + {secret_path:?})).read())\n"), "FILE701", "open"),
            ("FileIO read", format!("import io\nprint(io.FileIO({secret_path:?}).read())\n"), "FILE701", "open"),
            ("write outside", "import os\nopen(os.path.expandvars('$HOME/../usr/PWNED'), 'w')\n".into(), "FILE702", "open"),
            ("socket", format!("import pandas as pd\npd.read_csv('ht' + 'tp://127.0.0.1:{port}/x.csv')\n"), "NET802", ""),
            ("ctypes dlopen", "import numpy as np\nnp.core._internal.ctypes.CDLL(None)\n".into(), "NAT803", "ctypes.dlopen"),
            ("unpickle", "import numpy as np\nopen('p.npy', 'wb').write(b\"cposix\\nsystem\\n(S'touch /work/PWNED'\\ntR.\")\nnp.load('p.npy', None, True)\n".into(), "DES804", "pickle.find_class"),
            ("marshal", "import os\nos.sys.modules['marshal'].loads(b'\\xe3')\n".into(), "DES804", "marshal.loads"),
            ("denied import", "mods = list(map(__import__, ['ftp' + 'lib']))\n".into(), "IMP101", "import"),
            ("not allowed import", "import xml.dom.minidom\n".into(), "IMP101", "import"),
            ("library import callback", "import matplotlib.pyplot as plt\nplt.switch_backend('module://smtp' + 'lib')\n".into(), "IMP101", "import"),
            ("exec", "def exec(s):\n    pass\ndel exec\nexec(\"open('/work/PWNED', 'w')\")\n".into(), "DYN401", "compile"),
            ("string compiled by a library under a library's file name", "import patsy\npatsy.EvalEnvironment.capture().eval(\"__import__('xml.dom.minidom')\", source_name='/usr/lib/python3.11/os.py')\nopen('/work/PWNED', 'w')\n".into(), "IMP101", "import"),
            ("exec by a library callback", "import pandas as pd\npd.Series([\"open('/work/PWNED', 'w')\"]).map(eval)\n".into(), "DYN401", ""),
            ("frame", "import os\nprint(os.sys._getframe().f_back)\n".into(), "ATTR303", "sys._getframe"),
            ("traceback frame", "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    print(e.__traceback__.tb_frame.f_globals)\n".into(), "ATTR303", "object.__getattr__"),
        ];
        let rules = default_rules();
        for (name, program, rule, event) in &cases {
            let (_dir, out) = output_dir(who);
            let run = run_hooked(who, program, &rules, &out, &[]);
            assert_eq!(run.status(), "error", "{name}: {:?}", run.record);
            let (layer, got_rule, got_event) = stopped_by(&run);
            assert_eq!((layer.as_str(), got_rule.as_str()), ("runtime", *rule), "{name}: {}", run.stderr());
            if !event.is_empty() {
                assert_eq!(got_event, *event, "{name}");
            }
            assert_eq!(run.record["layers"]["runtime_hooks"], true);
            assert!(!collected(&run).iter().any(|f| f == "PWNED"), "{name}: the effect happened");
            assert!(!run.everything().contains(&canary.secret), "{name}: the canary leaked");
            assert!(run.stderr().contains("— hint: "), "{name}: no hint in {}", run.stderr());
        }
        let mut buf = [0u8; 1];
        if let Ok((mut stream, _)) = listener.accept() {
            let _ = stream.set_read_timeout(Some(Duration::from_millis(100)));
            let _ = stream.read(&mut buf);
            panic!("the listener was reached");
        }
    }
}

both_modes! {
    /// Every trick to find, replace or disable the hook fails and is reported, and afterwards a
    /// process and a read outside the roots are still denied.
    fn tampering_with_the_hook_fails_and_is_reported(who: As) {
        let canary = Canary::new();
        let program = format!(r#"
import os
import pandas
sys = os.sys
def attempt(label, fn):
    try:
        fn()
        print("TRICK", label, "no-error")
    except BaseException as e:
        print("TRICK", label, "blocked", type(e).__name__, str(e)[:60])
def payload():
    attempt("payload-system", lambda: os.system("touch /work/PWNED"))
    attempt("payload-read", lambda: print(open({secret:?}).read()))
gc = sys.modules.get("gc")
attempt("gc-objects", lambda: gc.get_objects())
attempt("gc-referrers", lambda: gc.get_referrers(os))
attempt("getframe", lambda: sys._getframe(0))
attempt("settrace", lambda: sys.settrace(lambda *a: None))
calls = []
attempt("addaudithook-recording", lambda: sys.addaudithook(lambda ev, args: calls.append(ev)))
attempt("addaudithook-raising", lambda: sys.addaudithook(lambda ev, args: (_ for _ in ()).throw(SystemExit)))
sys.audit = lambda *a: None
sys.addaudithook = lambda *a: None
attempt("module-lookup", lambda: sys.modules["_warden_hook"])
sys.path.insert(0, "/run/warden/lib")
attempt("reimport", lambda: __import__("_warden_hook"))
attempt("gcd-import", lambda: sys.modules["_frozen_importlib"]._gcd_import("ftp" + "lib"))
attempt("ctypes-loaded", lambda: sys.modules["ctypes"].pythonapi.PySys_AddAuditHook)
payload()
print("HOOK-CALLS", len(calls))
"#, secret = canary.file.display().to_string());
        let (_dir, out) = output_dir(who);
        let run = run_hooked(who, &program, &default_rules(), &out, &[]);
        assert_eq!(run.status(), "ok", "{:?}", run.record);
        let stdout = run.stdout();
        for trick in ["gc-objects", "gc-referrers", "getframe", "settrace", "reimport", "gcd-import", "ctypes-loaded", "payload-read"] {
            let line = run.lines_starting(&format!("TRICK {trick} ")).join("");
            assert!(line.contains(" blocked "), "{trick} was not blocked: {stdout}");
        }
        // os.system reports a failure as its return value; the hook's denial is an exception.
        assert!(run.lines_starting("TRICK payload-system blocked").len() == 1, "{stdout}");
        assert!(stdout.contains("HOOK-CALLS 0"), "a program's audit hook was called: {stdout}");
        assert!(stdout.contains("warden[ATTR303]") && stdout.contains("warden[IMP101]"), "{stdout}");
        assert!(!collected(&run).iter().any(|f| f == "PWNED"));
        assert!(!run.everything().contains(&canary.secret));
    }
}

both_modes! {
    /// With the hook off, the kernel still refuses every way to start a program or a process, and
    /// threads still work.
    fn the_exec_ban_holds_without_the_hook(who: As) {
        let program = r#"
import os, subprocess, threading
def attempt(label, fn):
    try:
        fn()
        print("PROBE", label, "ran")
    except OSError as e:
        print("PROBE", label, "refused", e.errno)
attempt("execv", lambda: os.execv("/bin/touch", ["touch", "/work/PWNED"]))
attempt("fork", lambda: os.fork() or None)
attempt("posix_spawn", lambda: os.posix_spawn("/bin/touch", ["touch", "/work/PWNED"], {}))
attempt("subprocess", lambda: subprocess.run(["/bin/touch", "/work/PWNED"]))
attempt("system", lambda: os.system("touch /work/PWNED") and None)
done = []
t = threading.Thread(target=lambda: done.append(1)); t.start(); t.join()
print("THREAD", len(done))
"#;
        let (_dir, out) = output_dir(who);
        let run = run_hooked(who, program, &default_rules(), &out, &["--no-hooks"]);
        assert_eq!(run.status(), "ok", "{:?}", run.record);
        assert_eq!(run.record["layers"]["exec_ban"], true);
        assert_eq!(run.record["layers"]["runtime_hooks"], false);
        for probe in ["execv", "fork", "posix_spawn", "subprocess"] {
            let line = run.lines_starting(&format!("PROBE {probe} ")).join("");
            assert!(line.contains("refused 1"), "{probe}: {}", run.stdout());
        }
        assert!(run.stdout().contains("THREAD 1"), "{}", run.stdout());
        assert!(!collected(&run).iter().any(|f| f == "PWNED"), "a process ran");
    }
}

/// Data programs keep working with the hook on: pandas, numpy, matplotlib (Agg), scikit-learn,
/// dataclasses and namedtuple (code generators), CSV in and out of the work dir.
#[test]
fn data_programs_keep_working_with_the_hook() {
    warden_test_support::require_root!();
    let program = r#"
import json
from collections import namedtuple
from dataclasses import dataclass, field
import numpy as np
import pandas as pd
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
from sklearn.cluster import KMeans
from sklearn.linear_model import LinearRegression

@dataclass
class Summary:
    rows: int
    names: list = field(default_factory=list)

Point = namedtuple("Point", "x y")
df = pd.DataFrame({"x": np.arange(50), "y": np.arange(50) * 2.0 + 1})
df.to_csv("data.csv", index=False)
back = pd.read_csv("data.csv")
model = LinearRegression().fit(back[["x"]], back["y"])
labels = KMeans(n_clusters=2, n_init=2, random_state=0).fit_predict(back[["x", "y"]])
fig, ax = plt.subplots()
back.plot(x="x", y="y", ax=ax)
fig.savefig("plot.png")
print(json.dumps({"coef": round(float(model.coef_[0]), 3), "summary": str(Summary(len(back))),
                  "point": Point(1, 2)._asdict(), "clusters": len(set(labels))}))
"#;
    let (_dir, out) = output_dir(As::Root);
    let run = run_hooked(As::Root, program, &default_rules(), &out, &[]);
    assert_eq!(run.status(), "ok", "{}", run.stderr());
    let record: Value = serde_json::from_str(run.stdout().trim()).expect("json");
    assert_eq!(record["coef"], 2.0);
    assert_eq!(record["clusters"], 2);
    assert_eq!(record["point"]["y"], 2);
    let files = collected(&run);
    assert!(
        files.contains(&"plot.png".to_owned()) && files.contains(&"data.csv".to_owned()),
        "{files:?}"
    );
    assert_eq!(run.record["stopped_by"], Value::Null);
}

/// A policy that requires the runtime layer refuses to run without warden's hook library (a copy of
/// the binary with no library beside it), and when the library does not load.
#[test]
fn a_required_runtime_layer_fails_closed() {
    warden_test_support::require_root!();
    let dir = support::shared_tempdir();
    let warden = dir.path().join("warden");
    std::fs::copy(warden_test_support::warden_bin(), &warden).expect("copy warden");
    let program = dir.path().join("p.py");
    std::fs::write(&program, "open('/work/RAN', 'w')\nprint('ran')\n").expect("program");
    let record = |warden: &Path| -> Value {
        let output = std::process::Command::new(warden)
            .args(["run", "--json"])
            .arg(&program)
            .output()
            .expect("run warden");
        serde_json::from_slice(&output.stdout).expect("record")
    };
    let missing = record(&warden);
    assert_eq!(missing["status"], "setup_failed", "{missing}");
    let message = missing["message"].as_str().unwrap_or("");
    assert!(
        message.contains("requires the runtime layer") && message.contains("libwarden_hook.so"),
        "{message}"
    );
    assert_eq!(missing["stdout"], "");

    std::fs::write(dir.path().join("libwarden_hook.so"), b"not a library").expect("bogus library");
    let broken = record(&warden);
    assert_eq!(broken["status"], "setup_failed", "{broken}");
    let message = broken["message"].as_str().unwrap_or("");
    assert!(
        message.starts_with("warden-bootstrap: cannot load"),
        "{message}"
    );
    assert_eq!(broken["stdout"], "");
}

/// Every corpus attack that names a runtime rule (`# expect-runtime: RULE`) is stopped by the runtime
/// layer alone, with that rule.
#[test]
fn corpus_attacks_are_stopped_by_the_runtime_layer_alone() {
    warden_test_support::require_root!();
    let mut cases: Vec<(PathBuf, String)> = std::fs::read_dir(repo().join("corpus/attacks"))
        .expect("corpus/attacks")
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
    assert!(cases.len() >= 20, "only {} runtime cases", cases.len());
    let rules = default_rules();
    let failures: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = cases
            .chunks(cases.len().div_ceil(3))
            .map(|chunk| {
                let rules = &rules;
                scope.spawn(move || {
                    let mut failures = Vec::new();
                    for (path, rule) in chunk {
                        let source = std::fs::read_to_string(path).expect("case");
                        let (_dir, out) = output_dir(As::Root);
                        let run = run_hooked(As::Root, &source, rules, &out, &[]);
                        let (layer, got, _) = stopped_by(&run);
                        if layer != "runtime" || got != *rule {
                            failures.push(format!(
                                "{}: expected runtime {rule}, got {layer} {got} ({})",
                                path.display(),
                                run.record["error"]
                            ));
                        }
                    }
                    failures
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("thread"))
            .collect()
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `linecache` reads the source of every frame a library formats — the program's and warden's
/// bootstrap's (`traceback.extract_stack`, `warnings`, pandas' `query("… @name")` through
/// `inspect.stack()`): those reads are allowed, and nothing else under `/run/warden` is.
#[test]
fn libraries_read_the_source_of_what_runs_and_nothing_beside() {
    warden_test_support::require_root!();
    let program = r#"
import traceback
import pandas as pd
limits = {"low": 10}
print("QUERY", len(pd.DataFrame({"t": [5, 12, 25]}).query("t >= @limits['low']")))
print("SOURCE", all(frame.line for frame in traceback.extract_stack()))
for path in ["/run/warden/hook.json", "/run/warden/lib/_warden_hook.abi3.so"]:
    try:
        open(path, "rb").read(1)
        print("READ", path, "allowed")
    except PermissionError as e:
        print("READ", path, "denied", str(e)[:16])
"#;
    let (_dir, out) = output_dir(As::Root);
    let run = run_hooked(As::Root, program, &default_rules(), &out, &[]);
    assert_eq!(run.status(), "ok", "{}", run.stderr());
    let stdout = run.stdout();
    assert!(stdout.contains("QUERY 2"), "{stdout}");
    assert!(
        stdout.contains("SOURCE True"),
        "the bootstrap's source was not readable: {stdout}"
    );
    assert_eq!(
        run.lines_starting("READ ")
            .iter()
            .filter(|line| line.contains(" denied warden[FILE701]"))
            .count(),
        2,
        "{stdout}"
    );
}

/// Paths given as bytes that are not UTF-8 are judged like any other (read lossily: the hook never
/// takes a program's bytes for UTF-8): a write in the work dir goes through, a read outside the
/// roots is FILE701.
#[test]
fn paths_in_bytes_that_are_not_utf8_are_judged() {
    warden_test_support::require_root!();
    let program = r#"
with open(b"caf\xe9\xff.txt", "wb") as f:
    f.write(b"x")
print("WROTE", open(b"caf\xe9\xff.txt", "rb").read())
for path in [b"/etc/passwd\xff", b"/etc/\xc3(/../passwd"]:
    try:
        open(path, "rb")
        print("READ allowed")
    except PermissionError as e:
        print("READ denied", str(e)[:15])
    except OSError as e:
        print("READ other", type(e).__name__)
"#;
    let (_dir, out) = output_dir(As::Root);
    let run = run_hooked(As::Root, program, &default_rules(), &out, &[]);
    assert_eq!(run.status(), "ok", "{}", run.stderr());
    let stdout = run.stdout();
    assert!(stdout.contains("WROTE b'x'"), "{stdout}");
    assert_eq!(
        run.lines_starting("READ "),
        vec!["READ denied warden[FILE701]"; 2],
        "{stdout}"
    );
}

/// A builtin the program calls may import a module from C on first use (`datetime.strptime` and
/// `time.strptime` import `_strptime`): that is the runtime's import, not the program's. The
/// program's own import statement of the same module is still judged by the policy, and so is
/// any other module a call imports (`map(__import__, …)`).
#[test]
fn modules_the_interpreter_imports_for_builtins_are_not_the_programs() {
    warden_test_support::require_root!();
    let rules = default_rules();
    let parse = r#"
import time
from datetime import datetime
print("PARSED", datetime.strptime("2024-01-03", "%Y-%m-%d").day, time.strptime("2024", "%Y").tm_year)
"#;
    let (_dir, out) = output_dir(As::Root);
    let run = run_hooked(As::Root, parse, &rules, &out, &[]);
    assert_eq!(run.status(), "ok", "{}", run.stderr());
    assert!(run.stdout().contains("PARSED 3 2024"), "{}", run.stdout());

    for (name, program) in [
        ("import statement", "import _strptime\n"),
        (
            "another module through a call",
            "import datetime\nlist(map(__import__, ['_so' + 'cket']))\n",
        ),
    ] {
        let (_dir, out) = output_dir(As::Root);
        let run = run_hooked(As::Root, program, &rules, &out, &[]);
        let (layer, rule, event) = stopped_by(&run);
        assert_eq!(
            (layer.as_str(), rule.as_str(), event.as_str()),
            ("runtime", "IMP101", "import"),
            "{name}: {}",
            run.stderr()
        );
    }
}

/// `warden runtime check` imports the allowed packages in the jail and finds, by identity, attribute
/// paths that are banned objects under another name; it writes the index beside the runtime, and
/// `warden check` then denies a program using such a path, naming the banned object — a path whose
/// own name the policy does not ban.
#[test]
fn the_identity_index_bans_second_paths_to_banned_objects() {
    warden_test_support::require_root!();
    let dir = support::shared_tempdir();
    let rules = dir.path().join("default.toml");
    std::fs::write(&rules, default_rules()).expect("rules");
    let program = dir.path().join("p.py");
    std::fs::write(
        &program,
        "import seaborn.utils as su\nfetch = su.urlopen\nfetch('http://127.0.0.1:5758/warden')\n",
    )
    .expect("program");
    let output = warden_test_support::warden()
        .args(["runtime", "check", "--json", "--rules"])
        .arg(&rules)
        .output()
        .expect("warden runtime check");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let facts: Value = serde_json::from_slice(&output.stdout).expect("facts");
    for (alias, banned) in [
        ("seaborn.utils.urlopen", "urllib.request.urlopen"),
        ("mpmath.libmp.backend.exec_", "builtins.exec"),
        (
            "sklearn.utils.discovery.import_module",
            "importlib.import_module",
        ),
        ("yaml.loader.UnsafeLoader", "yaml.UnsafeLoader"),
        ("jinja2.sandbox.Environment", "jinja2.Environment"),
    ] {
        assert_eq!(
            facts["aliases"][alias], banned,
            "{alias}: {}",
            facts["aliases"]
        );
    }
    let index = PathBuf::from(facts["index"].as_str().expect("index path"));
    assert!(
        index.starts_with("/var/lib/warden/runtimes/default/identity"),
        "{}",
        index.display()
    );
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(&index).expect("index")).expect("json");
    assert_eq!(written["aliases"], facts["aliases"]);

    let check = |rules: &Path| -> Value {
        let output = warden_test_support::warden()
            .args(["check", "--format", "json", "--rules"])
            .arg(rules)
            .arg(&program)
            .output()
            .expect("warden check");
        serde_json::from_slice(&output.stdout).expect("check record")
    };
    let verdict = check(&rules);
    assert_eq!(verdict["decision"], "deny", "{verdict}");
    let findings = verdict["findings"].as_array().expect("findings");
    assert!(
        findings.iter().any(|f| {
            f["rule"] == "IMP101"
                && f["message"].as_str().is_some_and(|m| {
                    m.contains("`seaborn.utils.urlopen` is `urllib.request.urlopen`")
                })
        }),
        "{verdict}"
    );
    // The same policy text with one more comment has another digest, hence no index: the path's name
    // alone says nothing.
    let other = dir.path().join("other.toml");
    std::fs::write(&other, default_rules() + "\n# another policy\n").expect("rules");
    let verdict = check(&other);
    assert_eq!(verdict["decision"], "allow", "{verdict}");
}
