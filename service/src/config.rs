//! The server's configuration file (`warden serve --config FILE`): where it listens, who may call it,
//! which policies it holds, and how much work it admits. Documented key by key in docs/serve.md.
//!
//! Parsed like rules files (`warden_policy::settings::parse_toml`): unknown keys are errors with their
//! line, column and key path; everything is checked before the server binds a socket, and nothing reads the raw TOML after [`ServerConfig::parse`].

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context};
use serde::Deserialize;
use warden_policy::Policy;

/// The name under which `[policies]` refers to the built-in default policy.
pub const BUILTIN: &str = "builtin";

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    server: RawServer,
    #[serde(default)]
    admission: RawAdmission,
    #[serde(default)]
    sessions: RawSessions,
    #[serde(default)]
    pool: crate::pool::RawPool,
    #[serde(default)]
    review: RawReview,
    #[serde(default)]
    policies: BTreeMap<String, String>,
    #[serde(default)]
    tokens: Vec<RawToken>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawServer {
    socket: Option<PathBuf>,
    socket_mode: Option<String>,
    socket_group: Option<String>,
    tcp: Option<String>,
    #[serde(default)]
    tcp_allow_remote: bool,
    state_dir: Option<PathBuf>,
    audit_log: Option<String>,
    default_policy: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAdmission {
    max_concurrent_runs: Option<usize>,
    queue_size: Option<usize>,
    queue_timeout_ms: Option<u64>,
    max_request_bytes: Option<usize>,
    max_connections: Option<usize>,
    max_mcp_sessions_per_client: Option<usize>,
    max_unauthenticated_connections: Option<usize>,
    unauthenticated_timeout_ms: Option<u64>,
    header_timeout_ms: Option<u64>,
    body_timeout_ms: Option<u64>,
    send_timeout_ms: Option<u64>,
    max_input_files: Option<usize>,
    max_input_bytes: Option<u64>,
    shutdown_grace_ms: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSessions {
    max_sessions: Option<usize>,
    max_sessions_per_client: Option<usize>,
    idle_timeout_ms: Option<u64>,
    max_lifetime_ms: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawReview {
    ttl_ms: Option<u64>,
    max_reviews: Option<usize>,
    max_bytes: Option<usize>,
    max_reviews_per_client: Option<usize>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawToken {
    name: String,
    sha256: String,
    policies: Vec<String>,
    /// May approve or reject the programs the policy sends to review (`/v1/reviews`).
    #[serde(default)]
    approve: bool,
}

/// A policy the server holds: validated once at start-up, sent as text to each worker.
#[derive(Debug, Clone)]
pub struct RegisteredPolicy {
    pub policy: Policy,
    pub text: String,
    /// The rules resolved once, as JSON (`Policy::from_toml_with_json`): what each pooled worker reads
    /// instead of parsing the text again.
    pub resolved: String,
    pub base_dir: Option<PathBuf>,
    /// `builtin` or the rules file's path, for `GET /v1/policies`.
    pub source: String,
}

/// A bearer token, by the SHA-256 of its secret (the secret itself is never stored).
#[derive(Debug, Clone)]
pub struct Token {
    pub name: String,
    pub sha256: [u8; 32],
    pub policies: BTreeSet<String>,
    /// May approve or reject programs held for review.
    pub approve: bool,
}

/// Where audit lines go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuditTarget {
    /// Standard error: the journal when run by systemd.
    Stderr,
    File(PathBuf),
    Off,
}

/// Sessions (`[sessions]`): interpreters that keep their state across cells, each a jail of its
/// own for its whole life. They have their own cap, apart from the run slots, so that idle
/// sessions never hold one-shot runs back; idle and old sessions are ended by the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionLimits {
    /// Sessions alive at once on this server (0: sessions are turned off).
    pub max_sessions: usize,
    /// Sessions one client (a token, or a peer uid on the socket) may hold at once.
    pub max_per_client: usize,
    /// A session without a request for this long is ended.
    pub idle_timeout: Duration,
    /// A session is ended this long after it started, busy or not.
    pub max_lifetime: Duration,
}

/// Default `sessions.max_sessions`.
pub const DEFAULT_MAX_SESSIONS: usize = 4;
/// Default `sessions.idle_timeout_ms` (10 minutes).
pub const DEFAULT_SESSION_IDLE_MS: u64 = 600_000;
/// Default `sessions.max_lifetime_ms` (1 hour).
pub const DEFAULT_SESSION_LIFETIME_MS: u64 = 3_600_000;

/// The validated configuration.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub socket: Option<PathBuf>,
    pub socket_mode: u32,
    pub socket_group: Option<String>,
    pub tcp: Option<SocketAddr>,
    pub state_dir: PathBuf,
    pub audit: AuditTarget,
    pub default_policy: String,
    pub max_concurrent_runs: usize,
    pub queue_size: usize,
    pub queue_timeout: Duration,
    pub max_request_bytes: usize,
    /// Connections held open at once, per listener; more wait in the kernel's backlog. Also the
    /// most MCP sessions over HTTP (`/mcp`) alive at once.
    pub max_connections: usize,
    /// Connections without an authenticated request yet, at once, per listener (a quarter of
    /// `max_connections` by default): clients without credentials never hold the others' slots.
    pub max_unauthenticated_connections: usize,
    /// A connection without an authenticated request this long after it was accepted is closed.
    pub unauthenticated_timeout: Duration,
    /// MCP sessions over HTTP one client (its owner) may hold at once: its share of
    /// `max_connections` (a quarter by default), so that one token cannot take them all.
    pub max_mcp_sessions_per_client: usize,
    /// A complete request head must arrive within this long of the connection being accepted or
    /// of its previous response (so idle keep-alive connections close after it too).
    pub header_timeout: Duration,
    /// The whole body must arrive within this long of the head.
    pub body_timeout: Duration,
    /// A response write that makes no progress this long (the client stopped reading) closes the
    /// connection.
    pub send_timeout: Duration,
    /// Input files a run may carry, and their decoded bytes in total.
    pub max_input_files: usize,
    pub max_input_bytes: u64,
    pub shutdown_grace: Duration,
    pub sessions: SessionLimits,
    /// Pre-started jails (`[pool]`, service/src/pool.rs).
    pub pool: crate::pool::PoolConfig,
    /// Programs held for review (`[review]`, service/src/review.rs).
    pub review: crate::review::ReviewSettings,
    pub policies: BTreeMap<String, RegisteredPolicy>,
    pub tokens: Vec<Token>,
}

/// Command-line settings that override the file's.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub socket: Option<PathBuf>,
    pub no_socket: bool,
    pub tcp: Option<String>,
    pub state_dir: Option<PathBuf>,
    pub audit_log: Option<String>,
    pub max_concurrent_runs: Option<usize>,
}

impl ServerConfig {
    /// Reads and validates a configuration file (`None`: all defaults).
    pub fn load(path: Option<&Path>, overrides: &Overrides) -> anyhow::Result<Self> {
        let (raw, base) = match path {
            Some(path) => {
                let text = std::fs::read_to_string(path).with_context(|| {
                    format!("cannot read server configuration {}", path.display())
                })?;
                let raw = parse_raw(&text)
                    .with_context(|| format!("invalid server configuration {}", path.display()))?;
                (raw, path.parent().map(Path::to_owned))
            }
            None => (RawConfig::default(), None),
        };
        Self::validate(raw, base.as_deref(), overrides)
    }

    /// Parses configuration text (relative paths resolve against `base`).
    pub fn parse(text: &str, base: Option<&Path>, overrides: &Overrides) -> anyhow::Result<Self> {
        Self::validate(parse_raw(text)?, base, overrides)
    }

    fn validate(
        raw: RawConfig,
        base: Option<&Path>,
        overrides: &Overrides,
    ) -> anyhow::Result<Self> {
        let resolve = |path: PathBuf| match base {
            Some(base) if path.is_relative() => base.join(path),
            _ => path,
        };
        let server = raw.server;
        let socket = if overrides.no_socket {
            None
        } else {
            Some(
                overrides
                    .socket
                    .clone()
                    .or(server.socket.map(resolve))
                    .unwrap_or_else(default_socket),
            )
        };
        let socket_mode = match &server.socket_mode {
            Some(mode) => u32::from_str_radix(mode.trim_start_matches("0o"), 8)
                .ok()
                .filter(|m| *m <= 0o777)
                .with_context(|| {
                    format!("server.socket_mode: {mode:?} is not an octal mode such as \"0660\"")
                })?,
            None => 0o660,
        };
        let tcp = match overrides.tcp.as_ref().or(server.tcp.as_ref()) {
            Some(text) => Some(text.parse::<SocketAddr>().with_context(|| {
                format!("server.tcp: {text:?} is not an address such as \"127.0.0.1:8750\"")
            })?),
            None => None,
        };
        if let Some(addr) = tcp {
            if !addr.ip().is_loopback() && !server.tcp_allow_remote {
                bail!(
                    "server.tcp: {addr} is not a loopback address; set server.tcp_allow_remote = true \
                     to listen beyond this host (put TLS in front of it)"
                );
            }
            if raw.tokens.is_empty() {
                bail!(
                    "server.tcp needs at least one [[tokens]] entry: TCP clients must authenticate"
                );
            }
        }
        if socket.is_none() && tcp.is_none() {
            bail!("the server listens nowhere: give a socket or a TCP address");
        }
        let state_dir = overrides
            .state_dir
            .clone()
            .or(server.state_dir.map(resolve))
            .unwrap_or_else(|| warden_gateway::runtime::data_dir().join("serve"));
        let audit = match overrides.audit_log.as_ref().or(server.audit_log.as_ref()) {
            None => AuditTarget::Stderr,
            Some(text) if text == "-" => AuditTarget::Stderr,
            Some(text) if text == "off" => AuditTarget::Off,
            Some(text) => AuditTarget::File(resolve(PathBuf::from(text))),
        };

        let mut sources = raw.policies;
        if sources.is_empty() {
            sources.insert("default".to_owned(), BUILTIN.to_owned());
        }
        let mut policies = BTreeMap::new();
        for (name, source) in sources {
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
            {
                bail!("policies: {name:?} is not a valid policy name (letters, digits, `-`, `_`, `.`)");
            }
            let registered = if source == BUILTIN {
                let text = warden_policy::settings::DEFAULT_RULES.to_owned();
                let (mut policy, resolved) = Policy::from_toml_with_json(&text, None)
                    .map_err(|err| anyhow::anyhow!("built-in policy is invalid (a bug): {err}"))?;
                attach_identity_index(&name, &mut policy)?;
                RegisteredPolicy {
                    policy,
                    text,
                    resolved,
                    base_dir: None,
                    source: BUILTIN.to_owned(),
                }
            } else {
                let path = resolve(PathBuf::from(&source));
                let text = std::fs::read_to_string(&path)
                    .with_context(|| format!("policies.{name}: cannot read {}", path.display()))?;
                let base_dir = path.parent().map(Path::to_owned);
                let (mut policy, resolved) =
                    Policy::from_toml_with_json(&text, base_dir.as_deref()).map_err(|err| {
                        anyhow::anyhow!("policies.{name}: {}: {err}", path.display())
                    })?;
                attach_identity_index(&name, &mut policy)?;
                RegisteredPolicy {
                    policy,
                    text,
                    resolved,
                    base_dir,
                    source: path.display().to_string(),
                }
            };
            policies.insert(name, registered);
        }
        let default_policy = server.default_policy.unwrap_or_else(|| {
            if policies.contains_key("default") {
                "default".to_owned()
            } else {
                policies.keys().next().cloned().unwrap_or_default()
            }
        });
        if !policies.contains_key(&default_policy) {
            bail!("server.default_policy: no policy is named {default_policy:?}");
        }

        let mut tokens = Vec::with_capacity(raw.tokens.len());
        let mut names = BTreeSet::new();
        for token in raw.tokens {
            if !names.insert(token.name.clone()) {
                bail!("tokens: two tokens are named {:?}", token.name);
            }
            let sha256 = parse_digest(&token.sha256).with_context(|| {
                format!(
                    "tokens.{}: sha256 must be 64 hex digits (printf %s \"$TOKEN\" | sha256sum)",
                    token.name
                )
            })?;
            for policy in &token.policies {
                if !policies.contains_key(policy) {
                    bail!("tokens.{}: no policy is named {policy:?}", token.name);
                }
            }
            if token.policies.is_empty() {
                bail!(
                    "tokens.{}: policies must name at least one policy",
                    token.name
                );
            }
            tokens.push(Token {
                name: token.name,
                sha256,
                policies: token.policies.into_iter().collect(),
                approve: token.approve,
            });
        }

        let admission = raw.admission;
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let max_concurrent_runs = overrides
            .max_concurrent_runs
            .or(admission.max_concurrent_runs)
            .unwrap_or(cores);
        if max_concurrent_runs == 0 {
            bail!("admission.max_concurrent_runs must be at least 1");
        }
        if admission.max_connections == Some(0) {
            bail!("admission.max_connections must be at least 1");
        }
        let max_connections = admission.max_connections.unwrap_or(256);
        if admission.max_mcp_sessions_per_client == Some(0) {
            bail!("admission.max_mcp_sessions_per_client must be at least 1");
        }
        let max_mcp_sessions_per_client = admission
            .max_mcp_sessions_per_client
            .unwrap_or(max_connections / 4)
            .clamp(1, max_connections);
        let timeout = |value: Option<u64>, default: u64, key: &str| match value {
            Some(0) => bail!("admission.{key} must be at least 1"),
            value => Ok(Duration::from_millis(value.unwrap_or(default))),
        };
        let header_timeout = timeout(admission.header_timeout_ms, 10_000, "header_timeout_ms")?;
        // Short by default: the first request's head, at most 5 s (or the head timeout if shorter).
        let unauthenticated_timeout = timeout(
            admission.unauthenticated_timeout_ms,
            u64::try_from(header_timeout.min(Duration::from_secs(5)).as_millis()).unwrap_or(5_000),
            "unauthenticated_timeout_ms",
        )?;
        if admission.max_unauthenticated_connections == Some(0) {
            bail!("admission.max_unauthenticated_connections must be at least 1");
        }
        let max_unauthenticated_connections = admission
            .max_unauthenticated_connections
            .unwrap_or(max_connections / 4)
            .clamp(1, max_connections);
        let body_timeout = timeout(admission.body_timeout_ms, 30_000, "body_timeout_ms")?;
        let send_timeout = timeout(admission.send_timeout_ms, 30_000, "send_timeout_ms")?;
        let max_request_bytes = admission.max_request_bytes.unwrap_or(16 << 20);
        let sessions = session_limits(&raw.sessions)?;
        let pool = crate::pool::PoolConfig::from_raw(&raw.pool)?;
        let review = crate::review::ReviewSettings::new(
            state_dir.join("reviews"),
            raw.review.ttl_ms,
            raw.review.max_reviews,
            raw.review.max_bytes,
            raw.review.max_reviews_per_client,
        )?;
        Ok(Self {
            socket,
            socket_mode,
            socket_group: server.socket_group,
            tcp,
            state_dir,
            audit,
            default_policy,
            max_concurrent_runs,
            queue_size: admission.queue_size.unwrap_or(max_concurrent_runs * 8),
            queue_timeout: Duration::from_millis(admission.queue_timeout_ms.unwrap_or(30_000)),
            max_request_bytes,
            max_connections,
            max_mcp_sessions_per_client,
            max_unauthenticated_connections,
            unauthenticated_timeout,
            header_timeout,
            body_timeout,
            send_timeout,
            max_input_files: admission.max_input_files.unwrap_or(64),
            // What base64 in a request of the largest size can carry.
            max_input_bytes: admission
                .max_input_bytes
                .unwrap_or(max_request_bytes as u64 / 4 * 3),
            shutdown_grace: Duration::from_millis(admission.shutdown_grace_ms.unwrap_or(30_000)),
            sessions,
            pool,
            review,
            policies,
            tokens,
        })
    }

    /// The token whose secret is `secret`, if any.
    pub fn token_for(&self, secret: &str) -> Option<&Token> {
        use sha2::{Digest, Sha256};
        let digest: [u8; 32] = Sha256::digest(secret.as_bytes()).into();
        // Compare every token in full: how long this takes says nothing about which one is near.
        let mut found = None;
        for token in &self.tokens {
            let same = token
                .sha256
                .iter()
                .zip(digest.iter())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0;
            if same && found.is_none() {
                found = Some(token);
            }
        }
        found
    }
}

fn session_limits(raw: &RawSessions) -> anyhow::Result<SessionLimits> {
    let max_sessions = raw.max_sessions.unwrap_or(DEFAULT_MAX_SESSIONS);
    // By default one client may hold half the sessions (at least one), so that no single token
    // can leave every other client with 429 until its sessions idle out (issue 25).
    let max_per_client = raw
        .max_sessions_per_client
        .unwrap_or((max_sessions / 2).max(1));
    if raw.max_sessions_per_client == Some(0) {
        bail!("sessions.max_sessions_per_client must be at least 1 (turn sessions off with sessions.max_sessions = 0)");
    }
    let positive = |value: Option<u64>, default: u64, key: &str| match value {
        Some(0) => bail!("sessions.{key} must be at least 1"),
        value => Ok(Duration::from_millis(value.unwrap_or(default))),
    };
    Ok(SessionLimits {
        max_sessions,
        max_per_client: max_per_client.min(max_sessions),
        idle_timeout: positive(
            raw.idle_timeout_ms,
            DEFAULT_SESSION_IDLE_MS,
            "idle_timeout_ms",
        )?,
        max_lifetime: positive(
            raw.max_lifetime_ms,
            DEFAULT_SESSION_LIFETIME_MS,
            "max_lifetime_ms",
        )?,
    })
}

fn parse_raw(text: &str) -> anyhow::Result<RawConfig> {
    warden_policy::settings::parse_toml(text).map_err(|err| anyhow::anyhow!("{err}"))
}

fn parse_digest(text: &str) -> Option<[u8; 32]> {
    let text = text.trim();
    if text.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

/// `/run/warden/warden.sock` as root, `$XDG_RUNTIME_DIR/warden.sock` otherwise.
pub fn default_socket() -> PathBuf {
    if nix::unistd::geteuid().is_root() {
        return PathBuf::from("/run/warden/warden.sock");
    }
    std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir)
        .join("warden.sock")
}

/// Loads the identity index `warden runtime check` wrote for a registered policy and its runtime, so
/// the server's static checks judge second paths to banned objects as the CLI's do. No index is
/// fine; a stale or broken one is an error naming the policy (fail closed: rerun the check).
fn attach_identity_index(name: &str, policy: &mut Policy) -> anyhow::Result<()> {
    warden_gateway::runtime_check::attach_index(policy)
        .map(|_| ())
        .with_context(|| format!("policies.{name}: identity index"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const TOKEN_HASH: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"; // "test"

    fn parse(text: &str) -> anyhow::Result<ServerConfig> {
        ServerConfig::parse(text, None, &Overrides::default())
    }

    #[test]
    fn defaults_hold_the_builtin_policy_on_a_socket() {
        let config = parse("").unwrap();
        assert!(config.socket.is_some());
        assert!(config.tcp.is_none());
        assert_eq!(config.default_policy, "default");
        assert_eq!(config.policies["default"].source, BUILTIN);
        assert_eq!(config.socket_mode, 0o660);
        assert!(config.max_concurrent_runs >= 1);
    }

    #[test]
    fn connection_deadlines_and_input_caps_have_defaults_and_must_be_positive() {
        let config = parse("").unwrap();
        assert_eq!(config.header_timeout, Duration::from_secs(10));
        assert_eq!(config.body_timeout, Duration::from_secs(30));
        assert_eq!(config.send_timeout, Duration::from_secs(30));
        assert_eq!(config.max_input_files, 64);
        assert_eq!(config.max_input_bytes, 12 << 20);
        let config = parse(
            "[admission]\nmax_request_bytes = 4000\nheader_timeout_ms = 500\nbody_timeout_ms = 600\n\
             send_timeout_ms = 700\nmax_input_files = 3\n",
        )
        .unwrap();
        assert_eq!(config.header_timeout, Duration::from_millis(500));
        assert_eq!(config.body_timeout, Duration::from_millis(600));
        assert_eq!(config.send_timeout, Duration::from_millis(700));
        assert_eq!(config.max_input_files, 3);
        assert_eq!(config.max_input_bytes, 3000);
        for key in ["header_timeout_ms", "body_timeout_ms", "send_timeout_ms"] {
            let err = parse(&format!("[admission]\n{key} = 0\n"))
                .unwrap_err()
                .to_string();
            assert!(err.contains(key), "{err}");
        }
        let err = parse("[admission]\nidle_timeout_ms = 5\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("idle_timeout_ms"), "{err}");
    }

    #[test]
    fn sessions_have_documented_defaults_and_their_own_keys() {
        let config = parse("").unwrap();
        assert_eq!(
            config.sessions,
            SessionLimits {
                max_sessions: 4,
                max_per_client: 2,
                idle_timeout: Duration::from_secs(600),
                max_lifetime: Duration::from_secs(3600),
            }
        );
        let config = parse(
            "[sessions]\nmax_sessions = 2\nidle_timeout_ms = 1500\nmax_lifetime_ms = 60000\n",
        )
        .unwrap();
        assert_eq!(config.sessions.max_sessions, 2);
        assert_eq!(config.sessions.max_per_client, 1);
        assert_eq!(config.sessions.idle_timeout, Duration::from_millis(1500));
        assert_eq!(config.sessions.max_lifetime, Duration::from_secs(60));
        let off = parse("[sessions]\nmax_sessions = 0\n").unwrap();
        assert_eq!(off.sessions.max_sessions, 0);
        for key in [
            "idle_timeout_ms",
            "max_lifetime_ms",
            "max_sessions_per_client",
        ] {
            let err = parse(&format!("[sessions]\n{key} = 0\n"))
                .unwrap_err()
                .to_string();
            assert!(err.contains(key), "{err}");
        }
        let err = parse("[sessions]\nidle_ms = 5\n").unwrap_err().to_string();
        assert!(err.contains("sessions.idle_ms"), "{err}");
    }

    #[test]
    fn the_example_configuration_is_valid() {
        let text = include_str!("../../deploy/serve.toml");
        let raw = parse_raw(text).unwrap();
        assert_eq!(raw.admission.header_timeout_ms, Some(10_000));
        assert_eq!(raw.admission.max_input_bytes, Some(12 << 20));
    }

    #[test]
    fn unknown_keys_are_errors_with_their_place() {
        let err = parse("[server]\nsokcet = \"/tmp/x\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("2:1") && err.contains("server.sokcet"),
            "{err}"
        );
        let err = parse("[admision]\n").unwrap_err().to_string();
        assert!(err.contains("admision"), "{err}");
    }

    #[test]
    fn tcp_needs_tokens_and_loopback() {
        let err = parse("[server]\ntcp = \"127.0.0.1:1\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("token"), "{err}");
        let tokens = format!(
            "[[tokens]]\nname = \"a\"\nsha256 = \"{TOKEN_HASH}\"\npolicies = [\"default\"]\n"
        );
        let err = parse(&format!("[server]\ntcp = \"0.0.0.0:1\"\n{tokens}"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("loopback"), "{err}");
        let config = parse(&format!("[server]\ntcp = \"[::1]:1\"\n{tokens}")).unwrap();
        assert!(config.token_for("test").is_some());
        assert!(config.token_for("tesT").is_none());
        assert!(config.token_for("").is_none());
    }

    #[test]
    fn tokens_name_existing_policies_and_hold_digests() {
        let bad_policy =
            format!("[[tokens]]\nname = \"a\"\nsha256 = \"{TOKEN_HASH}\"\npolicies = [\"nope\"]\n");
        assert!(parse(&bad_policy).unwrap_err().to_string().contains("nope"));
        let bad_digest =
            "[[tokens]]\nname = \"a\"\nsha256 = \"secret\"\npolicies = [\"default\"]\n";
        assert!(parse(bad_digest)
            .unwrap_err()
            .to_string()
            .contains("64 hex"));
    }

    #[test]
    fn policies_must_exist_and_be_valid() {
        let err = parse("[policies]\nx = \"/nonexistent/rules.toml\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("cannot read"), "{err}");
        let err = parse("[server]\ndefault_policy = \"strict\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("strict"), "{err}");
        let err = parse("[server]\nsocket_mode = \"999\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("octal"), "{err}");
    }
}
