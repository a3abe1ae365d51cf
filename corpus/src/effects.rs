//! The `expect-jail` language: the host-side effects an attack must not have when the static layer
//! is off, written as `effect arg…; effect arg…` in a case's header.
//!
//! Owns: the [`Effect`] and [`Endpoint`] types, parsing a header value into them and printing them
//! back (the printed form parses to the same value). Does not own: setting up what the effects
//! observe (`fixtures.rs`, `listeners.rs`, `procs.rs`) or judging a run against them (`verify.rs`).
//! The meaning of every effect is documented in `corpus/README.md`; keep the two in step.

use std::collections::BTreeSet;
use std::fmt;
use std::net::{SocketAddr, SocketAddrV4, SocketAddrV6};
use std::path::{Path, PathBuf};

/// The statuses of the jail's result record that an `expect-jail: status …` may name.
pub const JAIL_STATUSES: [&str; 6] = [
    "ok",
    "error",
    "timeout",
    "memory_limit",
    "output_limit",
    "output_invalid",
];

/// Layers a result record can report (`layer …`): `ns:NAME` for a namespace.
pub const LAYERS: [&str; 4] = ["seccomp", "landlock", "cgroup", "rlimits"];

/// Namespaces `layer ns:NAME` may name.
pub const NAMESPACES: [&str; 7] = ["user", "mount", "pid", "net", "ipc", "uts", "cgroup"];

/// Where an attack that escaped would leave files: every path the corpus's attacks write
/// contains `warden-escape`. Part of the baseline.
pub const ESCAPE_GLOBS: [&str; 6] = [
    "/etc/warden-escape*",
    "/tmp/warden-escape*",
    "/root/warden-escape*",
    "/usr/lib/warden-escape*",
    "/usr/warden-escape*",
    "/var/tmp/warden-escape*",
];

/// A loopback socket the runner listens on; anything arriving is an escape.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Endpoint {
    /// `tcp4:127.0.0.1:PORT` or `tcp6:[::1]:PORT`.
    Tcp(SocketAddr),
    /// `udp4:127.0.0.1:PORT` or `udp6:[::1]:PORT`.
    Udp(SocketAddr),
    /// `unix-abstract:NAME`: the abstract Unix socket `@NAME` (not covered by mount namespaces).
    UnixAbstract(String),
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let family = |addr: &SocketAddr| if addr.is_ipv4() { "4" } else { "6" };
        match self {
            Endpoint::Tcp(addr) => write!(f, "tcp{}:{addr}", family(addr)),
            Endpoint::Udp(addr) => write!(f, "udp{}:{addr}", family(addr)),
            Endpoint::UnixAbstract(name) => write!(f, "unix-abstract:{name}"),
        }
    }
}

impl Endpoint {
    /// Parses `tcp4:127.0.0.1:5758`, `tcp6:[::1]:5758`, `udp4:…`, `udp6:…`, `unix-abstract:NAME`.
    pub fn parse(text: &str) -> Result<Endpoint, String> {
        let (kind, rest) = text
            .split_once(':')
            .ok_or_else(|| format!("`{text}` is not an endpoint (kind:address)"))?;
        let socket = |v6: bool| -> Result<SocketAddr, String> {
            let addr: SocketAddr = if v6 {
                rest.parse::<SocketAddrV6>().map(SocketAddr::V6)
            } else {
                rest.parse::<SocketAddrV4>().map(SocketAddr::V4)
            }
            .map_err(|_| {
                let want = if v6 { "[::1]:PORT" } else { "127.0.0.1:PORT" };
                format!("`{rest}` is not an address of the form {want}")
            })?;
            if !addr.ip().is_loopback() {
                return Err(format!(
                    "`{addr}` is not a loopback address: the runner only listens on the host's loopback"
                ));
            }
            if addr.port() == 0 {
                return Err(format!("`{text}`: port 0 cannot be listened on"));
            }
            Ok(addr)
        };
        match kind {
            "tcp4" => Ok(Endpoint::Tcp(socket(false)?)),
            "tcp6" => Ok(Endpoint::Tcp(socket(true)?)),
            "udp4" => Ok(Endpoint::Udp(socket(false)?)),
            "udp6" => Ok(Endpoint::Udp(socket(true)?)),
            "unix-abstract" => {
                let valid = !rest.is_empty()
                    && rest.len() <= 100
                    && rest
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
                if valid {
                    Ok(Endpoint::UnixAbstract(rest.to_owned()))
                } else {
                    Err(format!(
                        "`{rest}` is not an abstract socket name (1-100 of [A-Za-z0-9._-])"
                    ))
                }
            }
            other => Err(format!(
                "unknown endpoint kind `{other}` (tcp4, tcp6, udp4, udp6, unix-abstract)"
            )),
        }
    }
}

/// One expected host-side effect (or the absence of one) of running an attack in the jail.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Effect {
    /// `contained`: only the baseline checks (see [`Effect::baseline`]); the case has no
    /// more specific target, e.g. it runs `id` through an escape, which may run, but in the jail.
    Contained,
    /// `canary-unread`: the secret in the host canary `/root/warden-canary` never leaves the jail.
    CanaryUnread,
    /// `env-secret-hidden`: a secret in warden's own environment never leaves the jail.
    EnvSecretHidden,
    /// `no-read PATH`: the content of host file PATH never leaves the jail. When PATH is absent and under `/root/` or `/app/`, the runner creates a
    /// canary there for the run.
    NoRead(PathBuf),
    /// `no-list DIR`: the names in host directory DIR never leave the jail: the runner plants a
    /// canary file with a random name (and content) in DIR for the run.
    NoList(PathBuf),
    /// `no-path GLOB`: nothing matching GLOB (`*`, `?` in the last component) appears on the host.
    NoPath(String),
    /// `unchanged PATH`: host file PATH keeps its content, mode and owner (restored if not).
    Unchanged(PathBuf),
    /// `interpreter-intact`: no file of the interpreter's standard library is added, removed or
    /// changed.
    InterpreterIntact,
    /// `no-connect ENDPOINT`: the runner's listener on ENDPOINT sees no connection or datagram.
    NoConnect(Endpoint),
    /// `host-process-survives [NAME]`: a host process (named NAME) started before the run is alive
    /// after it.
    HostProcessSurvives(Option<String>),
    /// `no-survivor`: no process of the run is alive once warden has returned.
    NoSurvivor,
    /// `status S|S…`: the jail-only run's result record has one of these statuses.
    Status(BTreeSet<String>),
    /// `exit-code N`: the jail-only run's result record has this exit code.
    ExitCode(i32),
    /// `no-persist`: a second jail-only run does not see state the first left (same stdout).
    NoPersist,
    /// `layer NAME`: the result record reports the layer NAME in force (`ns:NAME` for a namespace).
    Layer(String),
    /// `hostname-unchanged`: the host's hostname is the same after the run.
    HostnameUnchanged,
    /// `clock-unchanged`: the host's wall clock did not jump during the run.
    ClockUnchanged,
    /// `outputs-regular`: every file warden collected is a regular file without set-id bits.
    OutputsRegular,
    /// `not-run`: warden refuses the program before the jail starts (e.g. it is not UTF-8): a
    /// result record with status `denied`, or no record, exit code 2 and no process spawned.
    NotRun,
}

/// Why an `expect-jail` value does not parse: the offending effect and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EffectError {
    pub effect: String,
    pub message: String,
}

impl fmt::Display for EffectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "in `{}`: {}", self.effect, self.message)
    }
}

impl std::error::Error for EffectError {}

impl Effect {
    /// The checks made for every attack, whatever its header lists: a breach of any of them is an
    /// escape.
    pub fn baseline() -> Vec<Effect> {
        let mut effects = vec![
            Effect::Contained,
            Effect::CanaryUnread,
            Effect::EnvSecretHidden,
            Effect::HostProcessSurvives(None),
            Effect::NoSurvivor,
        ];
        effects.extend(ESCAPE_GLOBS.iter().map(|g| Effect::NoPath((*g).to_owned())));
        effects
    }

    /// The effect's keyword.
    pub fn name(&self) -> &'static str {
        match self {
            Effect::Contained => "contained",
            Effect::CanaryUnread => "canary-unread",
            Effect::EnvSecretHidden => "env-secret-hidden",
            Effect::NoRead(_) => "no-read",
            Effect::NoList(_) => "no-list",
            Effect::NoPath(_) => "no-path",
            Effect::Unchanged(_) => "unchanged",
            Effect::InterpreterIntact => "interpreter-intact",
            Effect::NoConnect(_) => "no-connect",
            Effect::HostProcessSurvives(_) => "host-process-survives",
            Effect::NoSurvivor => "no-survivor",
            Effect::Status(_) => "status",
            Effect::ExitCode(_) => "exit-code",
            Effect::NoPersist => "no-persist",
            Effect::Layer(_) => "layer",
            Effect::HostnameUnchanged => "hostname-unchanged",
            Effect::ClockUnchanged => "clock-unchanged",
            Effect::OutputsRegular => "outputs-regular",
            Effect::NotRun => "not-run",
        }
    }

    /// Parses one effect (`no-connect tcp4:127.0.0.1:5758`).
    pub fn parse(text: &str) -> Result<Effect, EffectError> {
        let fail = |message: String| EffectError {
            effect: text.trim().to_owned(),
            message,
        };
        let mut words = text.split_whitespace();
        let Some(name) = words.next() else {
            return Err(fail("empty effect (two `;` in a row?)".to_owned()));
        };
        let args: Vec<&str> = words.collect();
        let none = |effect: Effect| {
            if args.is_empty() {
                Ok(effect)
            } else {
                Err(fail(format!("`{name}` takes no argument")))
            }
        };
        let one = || match args.as_slice() {
            [arg] => Ok(*arg),
            _ => Err(fail(format!("`{name}` takes exactly one argument"))),
        };
        match name {
            "contained" => none(Effect::Contained),
            "canary-unread" => none(Effect::CanaryUnread),
            "env-secret-hidden" => none(Effect::EnvSecretHidden),
            "interpreter-intact" => none(Effect::InterpreterIntact),
            "no-survivor" => none(Effect::NoSurvivor),
            "no-persist" => none(Effect::NoPersist),
            "hostname-unchanged" => none(Effect::HostnameUnchanged),
            "clock-unchanged" => none(Effect::ClockUnchanged),
            "outputs-regular" => none(Effect::OutputsRegular),
            "not-run" => none(Effect::NotRun),
            "no-read" => Ok(Effect::NoRead(host_path(one()?, false).map_err(fail)?)),
            "no-list" => Ok(Effect::NoList(host_path(one()?, false).map_err(fail)?)),
            "unchanged" => Ok(Effect::Unchanged(host_path(one()?, false).map_err(fail)?)),
            "no-path" => {
                let glob = one()?;
                host_path(glob, true).map_err(fail)?;
                Ok(Effect::NoPath(glob.to_owned()))
            }
            "no-connect" => Ok(Effect::NoConnect(Endpoint::parse(one()?).map_err(fail)?)),
            "host-process-survives" => match args.as_slice() {
                [] => Ok(Effect::HostProcessSurvives(None)),
                [process] => Ok(Effect::HostProcessSurvives(Some(
                    process_name(process).map_err(fail)?,
                ))),
                _ => Err(fail(
                    "`host-process-survives` takes at most one process name".to_owned(),
                )),
            },
            "status" => {
                let mut statuses = BTreeSet::new();
                for status in one()?.split('|') {
                    if !JAIL_STATUSES.contains(&status) {
                        return Err(fail(format!(
                            "`{status}` is not a jail status ({})",
                            JAIL_STATUSES.join(", ")
                        )));
                    }
                    statuses.insert(status.to_owned());
                }
                Ok(Effect::Status(statuses))
            }
            "exit-code" => {
                let arg = one()?;
                arg.parse::<i32>()
                    .map(Effect::ExitCode)
                    .map_err(|_| fail(format!("`{arg}` is not an exit code")))
            }
            "layer" => {
                let arg = one()?;
                let known = LAYERS.contains(&arg)
                    || arg
                        .strip_prefix("ns:")
                        .is_some_and(|ns| NAMESPACES.contains(&ns));
                if known {
                    Ok(Effect::Layer(arg.to_owned()))
                } else {
                    Err(fail(format!(
                        "`{arg}` is not a layer ({}, or ns:{})",
                        LAYERS.join(", "),
                        NAMESPACES.join("|")
                    )))
                }
            }
            other => Err(fail(format!(
                "unknown effect `{other}` (see corpus/README.md, \"expect-jail\")"
            ))),
        }
    }

    /// Parses a whole `expect-jail` value: effects separated by `;`. Duplicates are merged; the
    /// result is sorted.
    pub fn parse_list(text: &str) -> Result<Vec<Effect>, EffectError> {
        if text.trim().is_empty() {
            return Err(EffectError {
                effect: String::new(),
                message: "no effect given (use `contained` when only the baseline applies)"
                    .to_owned(),
            });
        }
        let set: BTreeSet<Effect> = text
            .split(';')
            .map(Effect::parse)
            .collect::<Result<_, _>>()?;
        Ok(set.into_iter().collect())
    }

    /// Prints effects in header form (`a; b arg`).
    pub fn format_list(effects: &[Effect]) -> String {
        effects
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ")
    }
}

impl fmt::Display for Effect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.name();
        match self {
            Effect::NoRead(path) | Effect::NoList(path) | Effect::Unchanged(path) => {
                write!(f, "{name} {}", path.display())
            }
            Effect::NoPath(glob) => write!(f, "{name} {glob}"),
            Effect::NoConnect(endpoint) => write!(f, "{name} {endpoint}"),
            Effect::HostProcessSurvives(Some(process)) => write!(f, "{name} {process}"),
            Effect::Status(statuses) => {
                let list: Vec<&str> = statuses.iter().map(String::as_str).collect();
                write!(f, "{name} {}", list.join("|"))
            }
            Effect::ExitCode(code) => write!(f, "{name} {code}"),
            Effect::Layer(layer) => write!(f, "{name} {layer}"),
            _ => f.write_str(name),
        }
    }
}

/// An absolute, normalised host path without `.`/`..` parts; globs only in the last component.
fn host_path(text: &str, glob: bool) -> Result<PathBuf, String> {
    let path = Path::new(text);
    if !path.is_absolute() {
        return Err(format!("`{text}` is not an absolute path"));
    }
    let parts: Vec<&str> = text.split('/').skip(1).collect();
    if parts
        .iter()
        .any(|p| p.is_empty() || *p == "." || *p == "..")
    {
        return Err(format!(
            "`{text}` is not normalised (no empty, `.` or `..` parts, no trailing `/`)"
        ));
    }
    let has_glob = |p: &&str| p.contains(['*', '?', '[']);
    if !glob && parts.iter().any(has_glob) {
        return Err(format!("`{text}`: wildcards are only allowed in `no-path`"));
    }
    if parts.iter().rev().skip(1).any(has_glob) || parts.last().is_some_and(|p| p.contains('[')) {
        return Err(format!(
            "`{text}`: only `*` and `?` in the last component are supported"
        ));
    }
    if parts.len() < 2 && glob {
        return Err(format!(
            "`{text}`: a pattern directly under `/` would match too much"
        ));
    }
    Ok(path.to_path_buf())
}

/// A process name as the kernel keeps it (`comm`: at most 15 bytes).
fn process_name(text: &str) -> Result<String, String> {
    let valid = !text.is_empty()
        && text.len() <= 15
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
    if valid {
        Ok(text.to_owned())
    } else {
        Err(format!(
            "`{text}` is not a process name (1-15 of [A-Za-z0-9._-])"
        ))
    }
}

/// Whether `name` matches `pattern` (`*` any run, `?` one character; nothing else is special).
pub fn glob_match(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ni));
                pi += 1;
            }
            Some(c) if *c == '?' || *c == n[ni] => {
                pi += 1;
                ni += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    pi = sp + 1;
                    ni = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Vec<Effect> {
        Effect::parse_list(text).unwrap_or_else(|err| panic!("{text}: {err}"))
    }

    fn error(text: &str) -> String {
        match Effect::parse_list(text) {
            Ok(effects) => panic!("{text} parsed as {effects:?}"),
            Err(err) => err.to_string(),
        }
    }

    #[test]
    fn every_effect_parses_and_prints_back() {
        let text = "canary-unread; clock-unchanged; contained; env-secret-hidden; exit-code 3; \
                    host-process-survives; host-process-survives sshd; hostname-unchanged; \
                    interpreter-intact; layer ns:net; layer seccomp; no-connect tcp4:127.0.0.1:5758; \
                    no-connect tcp6:[::1]:5758; no-connect udp4:127.0.0.1:5759; \
                    no-connect udp6:[::1]:5759; no-connect unix-abstract:warden-canary; \
                    no-list /app; no-path /etc/warden-escape*; no-persist; not-run; no-read /etc/shadow; no-survivor; \
                    outputs-regular; status memory_limit|timeout; unchanged /root/.bashrc";
        let effects = parse(text);
        assert_eq!(effects.len(), 25);
        let printed = Effect::format_list(&effects);
        assert_eq!(parse(&printed), effects);
        for effect in &effects {
            assert_eq!(
                Effect::parse(&effect.to_string()).as_ref(),
                Ok(effect),
                "{effect}"
            );
        }
    }

    #[test]
    fn endpoints_keep_their_family() {
        let effects = parse("no-connect tcp6:[::1]:5758; no-connect udp4:127.0.0.1:53");
        assert_eq!(
            effects,
            vec![
                Effect::NoConnect(Endpoint::Tcp("[::1]:5758".parse().unwrap())),
                Effect::NoConnect(Endpoint::Udp("127.0.0.1:53".parse().unwrap())),
            ]
        );
        assert_eq!(effects[0].to_string(), "no-connect tcp6:[::1]:5758");
    }

    #[test]
    fn duplicates_merge_and_whitespace_is_free() {
        assert_eq!(
            parse("  no-survivor ;no-survivor;   status   timeout "),
            parse("no-survivor; status timeout")
        );
    }

    #[test]
    fn mistakes_name_the_effect_and_the_problem() {
        assert!(error("").contains("no effect"));
        assert!(error("contained;;no-survivor").contains("empty effect"));
        assert!(error("no-raed /etc/shadow").contains("unknown effect `no-raed`"));
        assert!(error("no-read etc/shadow").contains("not an absolute path"));
        assert!(error("no-read /etc/../root").contains("not normalised"));
        assert!(error("no-read /etc/*").contains("only allowed in `no-path`"));
        assert!(error("no-path /*").contains("too much"));
        assert!(error("no-path /etc/*/x").contains("last component"));
        assert!(error("no-connect tcp4:10.0.0.1:80").contains("not a loopback"));
        assert!(error("no-connect tcp4:[::1]:80").contains("127.0.0.1:PORT"));
        assert!(error("no-connect sctp:127.0.0.1:80").contains("unknown endpoint kind"));
        assert!(error("no-connect tcp4:127.0.0.1:0").contains("port 0"));
        assert!(error("no-connect unix-abstract:a/b").contains("abstract socket name"));
        assert!(error("status killed").contains("not a jail status"));
        assert!(error("status denied").contains("not a jail status"));
        assert!(error("exit-code three").contains("not an exit code"));
        assert!(error("layer apparmor").contains("not a layer"));
        assert!(error("layer ns:time").contains("not a layer"));
        assert!(error("contained now").contains("takes no argument"));
        assert!(error("no-read").contains("exactly one argument"));
        assert!(error("host-process-survives a b").contains("at most one"));
        assert!(error("host-process-survives a-name-far-too-long").contains("process name"));
    }

    #[test]
    fn globs_match_like_a_shell_last_component() {
        assert!(glob_match("warden-escape*", "warden-escape"));
        assert!(glob_match("warden-escape*", "warden-escape.csv"));
        assert!(glob_match("w?rden*.n*y", "warden-escape.npy"));
        assert!(!glob_match("warden-escape*", "xwarden-escape"));
        assert!(!glob_match("a?", "a"));
        assert!(glob_match("*", ""));
        assert!(glob_match("a*b*c", "aXbYbZc"));
        assert!(!glob_match("a*b*c", "aXbYbZ"));
    }
}
