//! The runtime layer's rules (warden's audit hook, `hook/`): the ids a result record's `stopped_by`
//! can carry besides the static rules'. Where the runtime layer enforces a static rule at its sink
//! (IMP101, DYN401, ATTR303, FILE701, FILE702, FILE704), the id is the static rule's and
//! [`sink_note`] says what the runtime layer adds; the others are documented here. `warden rules
//! explain ID` prints both. The hook's own table of ids is `hook/src/rules.rs` (a test keeps the two
//! in step: `every_runtime_id_of_the_hook_is_documented`).

/// A rule only the runtime layer has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuntimeRule {
    pub id: &'static str,
    pub name: &'static str,
    pub doc: &'static str,
}

/// Every rule only the runtime layer has.
pub const RUNTIME_RULES: &[RuntimeRule] = &[
    RuntimeRule {
        id: "PROC801",
        name: "process",
        doc: r#"# PROC801 process (runtime layer)

## What it does
Denies starting or signalling a process when the policy says `[processes] allow = false`, whoever asks
(the program or a library on its behalf): `subprocess.Popen`, `os.system`, `os.exec*`, `os.spawn*`,
`os.posix_spawn`, `os.fork`, `os.forkpty`, `pty.spawn`, `os.kill`, `os.killpg`, `os.pidfd_open`.
Once the interpreter runs, the kernel refuses `execve`, `fork` and `clone` without `CLONE_THREAD`
(seccomp) as well.

## Why is this bad?
A process runs code the policy never saw, outside the runtime layer.

## Example
```python
from sklearn.model_selection import GridSearchCV
GridSearchCV(model, grid, n_jobs=-1)   # runs: joblib works in the interpreter in warden
import os; os.system("ls")             # PROC801
```
Compute in Python. Libraries that probe for programs (matplotlib's `fc-list`) go on without them;
a refused process writes nothing on standard error.

## Evasions handled
- Whoever asks: a library starting a process for the program (joblib's process pools, matplotlib's viewers, Pillow's `Image.show`) is stopped too; `_posixsubprocess.fork_exec`, which raises no event, is replaced by a stub.

## Known gaps
- None at this layer for the listed calls; the kernel's exec ban holds whatever reaches `execve`.
"#,
    },
    RuntimeRule {
        id: "NET802",
        name: "network",
        doc: r#"# NET802 network (runtime layer)

## What it does
Denies every socket event (`socket()`, `connect`, `bind`, `getaddrinfo`…) while `[network] allow`
is false, whoever asks: a library's download (`sklearn.datasets.fetch_*`, `pd.read_csv(url)`) is
stopped at its socket. The jail's network namespace has no interface but `lo` as well.

## Why is this bad?
The network is how data leaves; warden has no egress filter.

## Example
```python
import pandas as pd
pd.read_csv("https://example.org/data.csv")   # FILE703 statically, NET802 at run time
```
Read the input files given with the run instead.

## Evasions handled
- Every socket event, so a library's own client (`urllib`, `requests` inside a package) is stopped at its socket.

## Known gaps
- The static layer sees only literal URLs (FILE703); the network namespace is the boundary.
"#,
    },
    RuntimeRule {
        id: "NAT803",
        name: "native-code",
        doc: r#"# NAT803 native-code (runtime layer)

## What it does
Denies native code the program reaches at run time: ctypes (`dlopen`, `dlsym`, `addressof`,
`string_at`, calls through function pointers…) unless ctypes itself, numpy's internals or a listed
library binding its own native library asks; loading a SQLite extension
(`sqlite3.enable_load_extension`, `sqlite3.load_extension`).

## Why is this bad?
Native code runs outside every check the interpreter makes, and can remove them.

## Example
```python
import sqlite3
con = sqlite3.connect("data.db")
con.enable_load_extension(True)   # REF202 statically, NAT803 at run time
```
Use the modules the policy allows; SQL works without extensions.

## Evasions handled
- ctypes reached through a library on the program's behalf; SQLite extensions at their audit events whoever enables them.

## Known gaps
- Writes through a ctypes pointer a library handed out raise no event (docs/enforcement.md).
"#,
    },
    RuntimeRule {
        id: "DES804",
        name: "deserialisation",
        doc: r#"# DES804 deserialisation (runtime layer)

## What it does
Denies unpickling a reference (`pickle.find_class`, whoever unpickles: `pd.read_pickle`,
`np.load(…, allow_pickle=True)`, `joblib.load`) when `pickle` is denied, `marshal.loads`/`load`
outside the import system when `marshal` is, and the import system reading a `.pyc` from outside
the runtime.

## Why is this bad?
A pickle names the functions it calls when it is loaded: loading one runs code chosen by whoever
wrote the file. `joblib.load` unpickles, which is why `joblib` stays denied.

## Example
```python
import pandas as pd
pd.read_pickle("model.pkl")   # REF201 statically, DES804 at run time
```
Exchange data as CSV, JSON or Parquet.

## Evasions handled
- Every unpickler, whoever calls it (`np.load`, `pd.read_pickle`, `joblib.load`): the reference is judged at `pickle.find_class`.

## Known gaps
- A library that deserialises with its own native code (no `find_class`) is not seen; the sinks that code reaches are.
"#,
    },
    RuntimeRule {
        id: "AUD805",
        name: "audit-hook",
        doc: r#"# AUD805 audit-hook (runtime layer)

## What it does
Denies `sys.addaudithook` (CPython then drops the new hook: it is never called).

## Why is this bad?
A hook of the program's would run at every event of the interpreter, libraries' included.

## Example
```python
import sys
sys.addaudithook(print)   # DYN403 statically, AUD805 at run time
```
Programs cannot add audit hooks.

## Evasions handled
- `sys.addaudithook` reached by any path.

## Known gaps
- None known.
"#,
    },
];

/// A runtime-only rule by id (case-insensitively) or name.
pub fn runtime_rule(text: &str) -> Option<&'static RuntimeRule> {
    RUNTIME_RULES
        .iter()
        .find(|rule| rule.id.eq_ignore_ascii_case(text) || rule.name == text)
}

/// What the runtime layer does for a static rule it also enforces at the sink, by id.
pub fn sink_note(id: &str) -> Option<&'static str> {
    Some(match id {
        "IMP101" => "At run time (runtime layer): the `import` event, by any path the program takes (`__import__`, `importlib`); a library's own imports are allowed.",
        "DYN401" => "At run time (runtime layer): `exec`/`compile` reached from the program, or from a library running a callable the program handed it (`Series.map(eval)`); code objects and functions built by hand, `__code__` writes; a string the program built at run time and gave to a library that evaluates it as code (`sympify`, `DataFrame.query`/`eval`, `pd.eval`, patsy and statsmodels formulas, jinja2 templates, `typing` forward references, `dataclass` field names), stopped at the library's compile: only the program's literals are evaluated.",
        "ATTR303" => "At run time (runtime layer): `sys._getframe`, `sys.settrace`, `gc.get_objects`, `breakpoint`, and reads of `tb_frame`, `gi_frame`, `f_code`, `__code__`… from the program or a callback.",
        "FILE701" => "At run time (runtime layer): every `open`, `os.listdir`/`scandir`, `glob`, `sqlite3.connect`… outside the read roots, whoever asks; links under the write roots are judged by where they lead. Landlock holds the same roots.",
        "FILE702" => "At run time (runtime layer): every write (`open` for writing, `os.remove`, `os.mkdir`, `shutil.*`, `sqlite3.connect`…) outside the write roots, whoever asks; the message names the policy's write roots. Landlock holds the same roots.",
        "FILE704" => "At run time (runtime layer): a path that is neither `str`, `bytes` nor `os.PathLike`.",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::{runtime_rule, sink_note, RUNTIME_RULES};
    use crate::Rule;

    #[test]
    fn runtime_rules_are_distinct_from_the_static_ones_and_documented() {
        for rule in RUNTIME_RULES {
            assert!(Rule::from_id(rule.id).is_none(), "{}", rule.id);
            assert!(Rule::from_id(rule.name).is_none(), "{}", rule.name);
            assert!(rule.doc.starts_with(&format!("# {} ", rule.id)));
            for heading in [
                "## What it does",
                "## Why is this bad?",
                "## Example",
                "## Evasions handled",
                "## Known gaps",
            ] {
                assert!(rule.doc.contains(heading), "{} lacks {heading}", rule.id);
            }
            assert_eq!(runtime_rule(&rule.id.to_lowercase()), Some(rule));
        }
        assert!(runtime_rule("IMP101").is_none());
    }

    /// The ids the hook's `Rule::id` gives (`hook/src/rules.rs`): each is a static rule with a sink
    /// note or a runtime-only rule documented here.
    #[test]
    fn every_runtime_id_of_the_hook_is_documented() {
        let hook = include_str!("../../../hook/src/rules.rs");
        let start = hook
            .find("pub fn id(self)")
            .unwrap_or_else(|| panic!("no id table"));
        let end = start + hook[start..].find("\n    }\n").unwrap_or(0);
        let ids: Vec<&str> = hook[start..end].split('"').skip(1).step_by(2).collect();
        assert!(ids.len() >= 11, "{ids:?}");
        for id in ids {
            let known = runtime_rule(id).is_some()
                || (Rule::from_id(id).is_some() && sink_note(id).is_some());
            assert!(known, "{id} is not documented for `warden rules explain`");
        }
    }
}
