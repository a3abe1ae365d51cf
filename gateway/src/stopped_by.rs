//! Which depth of enforcement stopped a program, for the result record's `stopped_by`: the static
//! layer (its findings), the runtime layer (the audit hook's denial, read back from the
//! `warden.PolicyViolation` the program died of) or the kernel (an errno from Landlock, seccomp or the
//! read-only tree, or seccomp's SIGSYS).
//!
//! Owns: reading those three signs. It is a report, not a boundary: a program can print a line that
//! looks like a denial and so misreport its own run, nothing more.

use serde::{Deserialize, Serialize};
use warden_policy::{Action, Finding};

use crate::python_error::PythonError;

/// A depth of enforcement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Depth {
    /// `warden check`'s findings: the program never ran.
    Static,
    /// warden's audit hook in the interpreter.
    Runtime,
    /// The jail: Landlock, seccomp, the read-only tree.
    Kernel,
}

impl Depth {
    pub fn name(self) -> &'static str {
        match self {
            Depth::Static => "static",
            Depth::Runtime => "runtime",
            Depth::Kernel => "kernel",
        }
    }
}

/// The layer that stopped a program and what it stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoppedBy {
    pub layer: Depth,
    /// The rule: a finding's (static) or the hook's (runtime).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub rule: Option<String>,
    /// The audit event the hook denied (`os.system`, `open`, `import`…).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub event: Option<String>,
    /// The kernel's answer: `EPERM`, `EACCES`, `EROFS`, or `SIGSYS`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub errno: Option<String>,
}

impl StoppedBy {
    fn new(layer: Depth) -> Self {
        StoppedBy {
            layer,
            rule: None,
            event: None,
            errno: None,
        }
    }
}

/// The static layer, from the findings of a program it denied or sent to review: the first finding
/// with the strongest action.
pub fn from_findings(findings: &[Finding]) -> StoppedBy {
    let first = findings
        .iter()
        .find(|f| f.action == Action::Deny)
        .or_else(|| findings.iter().find(|f| f.action == Action::Review));
    StoppedBy {
        rule: first.map(|f| f.rule.id().to_owned()),
        ..StoppedBy::new(Depth::Static)
    }
}

/// The runtime layer or the kernel, from how a program that ran ended: the exception it died of
/// (with its whole standard error, where a library may have wrapped the hook's denial), the
/// signal that killed it, or for a program that ended without an error the last denial the hook
/// wrote to standard error.
pub fn from_run(
    error: Option<&PythonError>,
    stderr: &str,
    signal: Option<i32>,
) -> Option<StoppedBy> {
    if signal == Some(libc_sigsys()) {
        return Some(StoppedBy {
            errno: Some("SIGSYS".to_owned()),
            ..StoppedBy::new(Depth::Kernel)
        });
    }
    // A program that ended without an error may still have met the hook: a denial swallowed by
    // the program (`try`/`except`) or raised where Python only reports it (`__del__`, a thread, an
    // exit handler, a weakref finaliser). The hook writes each denial to standard error.
    let Some(error) = error else {
        return last_denial(stderr);
    };
    if let Some(denial) = denial_in(&error.name, &error.value).or_else(|| last_denial(stderr)) {
        return Some(denial);
    }
    kernel_errno(&error.value).map(|errno| StoppedBy {
        errno: Some(errno.to_owned()),
        ..StoppedBy::new(Depth::Kernel)
    })
}

fn libc_sigsys() -> i32 {
    31
}

/// `warden.PolicyViolation: warden[RULE] EVENT: …` (the hook's message, `hook/src/rules.rs`).
fn denial_in(name: &str, value: &str) -> Option<StoppedBy> {
    if !name.ends_with("PolicyViolation") {
        return None;
    }
    let rest = value.strip_prefix("warden[")?;
    let (rule, rest) = rest.split_once("] ")?;
    let event = rest.split_once(": ").map(|(event, _)| event);
    Some(StoppedBy {
        rule: Some(rule.to_owned()),
        event: event.map(str::to_owned),
        ..StoppedBy::new(Depth::Runtime)
    })
}

/// The last `warden.PolicyViolation` line of a traceback (a library wrapped the denial in its own
/// error: "The above exception was the direct cause of …").
fn last_denial(stderr: &str) -> Option<StoppedBy> {
    stderr.lines().rev().find_map(|line| {
        let (name, value) = line.split_once(": ")?;
        denial_in(name, value)
    })
}

/// The errno of an `OSError` message (`[Errno 13] Permission denied: '/etc/shadow'`) when it is one
/// the jail answers with.
fn kernel_errno(value: &str) -> Option<&'static str> {
    let number = value.strip_prefix("[Errno ")?.split_once(']')?.0;
    match number {
        "1" => Some("EPERM"),
        "13" => Some("EACCES"),
        "30" => Some("EROFS"),
        "38" => Some("ENOSYS"),
        _ => None,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn error(name: &str, value: &str) -> PythonError {
        let stderr = format!(
            "Traceback (most recent call last):\n  File \"/run/warden/main.py\", line 1\n{name}: {value}\n"
        );
        crate::python_error::parse(&stderr).expect("a Python error")
    }

    #[test]
    fn the_hooks_denial_names_the_rule_and_the_event() {
        let e = error(
            "warden.PolicyViolation",
            "warden[PROC801] os.system: starting a process (policy default, runtime layer) — hint: x",
        );
        let stopped = from_run(Some(&e), "", None).unwrap();
        assert_eq!(stopped.layer, Depth::Runtime);
        assert_eq!(stopped.rule.as_deref(), Some("PROC801"));
        assert_eq!(stopped.event.as_deref(), Some("os.system"));
    }

    #[test]
    fn a_denial_wrapped_by_a_library_is_still_the_runtime_layers() {
        let stderr = "Traceback (most recent call last):\nwarden.PolicyViolation: warden[NET802] socket.__new__: opening a socket (…)\n\nThe above exception was the direct cause of the following exception:\n\nTraceback (most recent call last):\nurllib.error.URLError: <urlopen error x>\n";
        let e = error("urllib.error.URLError", "<urlopen error x>");
        let stopped = from_run(Some(&e), stderr, None).unwrap();
        assert_eq!(stopped.rule.as_deref(), Some("NET802"));
        assert_eq!(stopped.event.as_deref(), Some("socket.__new__"));
    }

    #[test]
    fn kernel_answers_are_errnos_and_sigsys() {
        let e = error(
            "PermissionError",
            "[Errno 13] Permission denied: '/etc/shadow'",
        );
        let stopped = from_run(Some(&e), "", None).unwrap();
        assert_eq!(
            (stopped.layer, stopped.errno.as_deref()),
            (Depth::Kernel, Some("EACCES"))
        );
        let e = error(
            "PermissionError",
            "[Errno 1] Operation not permitted: '/bin/sh'",
        );
        assert_eq!(
            from_run(Some(&e), "", None).unwrap().errno.as_deref(),
            Some("EPERM")
        );
        assert_eq!(
            from_run(None, "", Some(31)).unwrap().errno.as_deref(),
            Some("SIGSYS")
        );
        let e = error("ZeroDivisionError", "division by zero");
        assert_eq!(from_run(Some(&e), "", None), None);
        let e = error(
            "FileNotFoundError",
            "[Errno 2] No such file or directory: 'x'",
        );
        assert_eq!(from_run(Some(&e), "", None), None);
    }

    #[test]
    fn a_denial_the_program_survived_is_read_from_stderr() {
        let stderr = "warden.PolicyViolation: warden[PROC801] os.posix_spawn: starting a process \
                      (policy default, runtime layer) — hint: x\nException ignored in: <function \
                      Later.__del__>\ndone\n";
        let stopped = from_run(None, stderr, None).unwrap();
        assert_eq!(stopped.layer, Depth::Runtime);
        assert_eq!(stopped.rule.as_deref(), Some("PROC801"));
        assert_eq!(stopped.event.as_deref(), Some("os.posix_spawn"));
        assert_eq!(from_run(None, "all fine\n", None), None);
    }
}
