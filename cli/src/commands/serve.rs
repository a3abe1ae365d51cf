//! `warden serve`, `warden mcp` and the hidden `warden worker` and `warden session-worker` they
//! spawn.

use super::out::outln;
use std::path::PathBuf;
use std::process::ExitCode;

use super::exit;
use anyhow::Context;
use clap::Args;
use warden_service::config::{Overrides, ServerConfig};

/// Serve the gateway over HTTP/JSON to agents on this host.
///
/// Listens on a Unix socket (default /run/warden/warden.sock as root, $XDG_RUNTIME_DIR/warden.sock
/// otherwise) and, when configured, on a TCP address that requires bearer tokens. Endpoints:
/// POST /v1/check, POST /v1/run, GET /v1/policies, GET /healthz, GET /metrics, and sessions (a jailed
/// interpreter that keeps its state across cells) under /v1/sessions, and the MCP tools of `warden
/// mcp` over Streamable HTTP at /mcp (same tokens and limits). Policies are held by
/// the server (named in the configuration; the built-in policy by default): a client picks one by
/// name and may tighten its limits, never loosen them. Every run happens in a fresh single-threaded
/// worker process in the jail. SIGTERM stops accepting, lets runs finish for the grace period, then
/// kills them and cleans up. The configuration file is documented in docs/serve.md.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Server configuration file (TOML; see docs/serve.md). Without it: the built-in policy on the
    /// default socket.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Listen on this Unix socket (overrides server.socket).
    #[arg(long, value_name = "PATH", conflicts_with = "no_socket")]
    pub socket: Option<PathBuf>,
    /// Do not listen on a Unix socket (TCP only).
    #[arg(long)]
    pub no_socket: bool,
    /// Also listen on this TCP address, e.g. 127.0.0.1:8750 (overrides server.tcp; needs tokens).
    #[arg(long, value_name = "ADDR")]
    pub tcp: Option<String>,
    /// Directory for the server's lock and per-run job directories (overrides server.state_dir).
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// Audit log file, `-` for standard error (the journal under systemd) or `off`.
    #[arg(long, value_name = "PATH")]
    pub audit_log: Option<String>,
    /// Runs allowed at once (overrides admission.max_concurrent_runs; default: the CPU count).
    #[arg(long, value_name = "N")]
    pub max_concurrent_runs: Option<usize>,
    /// Validate the configuration and every policy against this host (its jail can be planned, and
    /// every module it allows imports in the jail with its runtime), print a summary, and exit.
    #[arg(long)]
    pub check_config: bool,
}

impl ServeArgs {
    fn load(&self) -> anyhow::Result<ServerConfig> {
        ServerConfig::load(
            self.config.as_deref(),
            &Overrides {
                socket: self.socket.clone(),
                no_socket: self.no_socket,
                tcp: self.tcp.clone(),
                state_dir: self.state_dir.clone(),
                audit_log: self.audit_log.clone(),
                max_concurrent_runs: self.max_concurrent_runs,
            },
        )
    }
}

pub fn serve(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let config = args.load()?;
    if args.check_config {
        warden_service::server::check_host(&config)?;
        let plans = warden_service::plan_policies(&config)?;
        let imports = warden_service::check_policy_imports(&config)?;
        for (name, registered) in &config.policies {
            let layers = plans.get(name).map(warden_jail::layers);
            outln!(
                "policy {name}: {} (sha256 {}); layers {}; {} allowed modules import in the jail",
                registered.source,
                registered.policy.sha256,
                serde_json::to_string(&layers)?,
                imports.get(name).copied().unwrap_or_default()
            );
        }
        outln!(
            "listen: socket {}, tcp {}; {} run slots, queue {}, {} sessions, {} token(s)",
            config
                .socket
                .as_ref()
                .map_or_else(|| "none".to_owned(), |p| p.display().to_string()),
            config
                .tcp
                .map_or_else(|| "none".to_owned(), |a| a.to_string()),
            config.max_concurrent_runs,
            config.queue_size,
            config.sessions.max_sessions,
            config.tokens.len()
        );
        return Ok(ExitCode::from(exit::OK));
    }
    let binary = std::env::current_exe().context("cannot find warden's own binary")?;
    warden_service::server::serve_blocking(config, binary)?;
    Ok(ExitCode::from(exit::OK))
}

/// Serve the gateway to one MCP client over standard input and output.
///
/// Tools: run_python (a cell in the connection's persistent session: state is kept between calls,
/// `reset` starts over; each cell is checked in the context of the earlier ones and runs in the
/// jail; figures come back as images), check_python
/// (the policy's verdict without running) and describe_policy (allowed modules and limits, for the
/// model's prompt). Policy denials and failed runs are tool results with isError set, in words a
/// model can act on. The policies, limits and audit log come from the same configuration file as
/// `warden serve` (listening settings are ignored).
#[derive(Debug, Args)]
pub struct McpArgs {
    /// Server configuration file (see docs/serve.md); only its policies, admission and audit
    /// settings apply.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The policy the tools use when the client names none (overrides server.default_policy).
    #[arg(long, value_name = "NAME")]
    pub policy: Option<String>,
    /// Audit log file, `-` for standard error, or `off` (default: standard error).
    #[arg(long, value_name = "PATH")]
    pub audit_log: Option<String>,
}

pub fn mcp(args: McpArgs) -> anyhow::Result<ExitCode> {
    let mut config = ServerConfig::load(
        args.config.as_deref(),
        &Overrides {
            no_socket: false,
            audit_log: args.audit_log.clone(),
            ..Overrides::default()
        },
    )?;
    if let Some(policy) = &args.policy {
        if !config.policies.contains_key(policy) {
            anyhow::bail!("--policy: no policy is named {policy:?}");
        }
        config.default_policy = policy.clone();
    }
    let binary = std::env::current_exe().context("cannot find warden's own binary")?;
    warden_service::mcp::serve_stdio_blocking(config, binary)?;
    Ok(ExitCode::from(exit::OK))
}

/// Run one job read from standard input (spawned by `warden serve` and `warden mcp`).
#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// The job's private directory (made and removed by the server).
    pub dir: PathBuf,
}

pub fn worker(args: WorkerArgs) -> anyhow::Result<ExitCode> {
    warden_worker::run::serve_one(&args.dir)?;
    Ok(ExitCode::from(exit::OK))
}

/// Hold one session (spawned by `warden serve` and `warden mcp`): the session job, then requests as
/// JSON lines on standard input, answers on standard output.
pub fn session_worker(args: WorkerArgs) -> anyhow::Result<ExitCode> {
    warden_worker::serve_session_worker(&args.dir)?;
    Ok(ExitCode::from(exit::OK))
}
