//! `warden serve`: binds the listeners, serves the API, and shuts down gracefully.
//!
//! Shutdown (SIGTERM or SIGINT): stop accepting connections and turn away queued requests and new
//! sessions (503); let running runs and cells finish for up to `shutdown_grace`; then kill the
//! workers left (their jails die with them); end every session; remove job and session
//! directories, run cgroups and the socket file; exit 0.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use tokio::sync::watch;

use super::config::ServerConfig;
use super::http::router;
use super::listen::{self, ConnectionLimits};
use super::Service;

/// How often run cgroups left by dead workers are looked for (besides at start-up).
const REAP_INTERVAL: Duration = Duration::from_secs(2);

/// Checks on this host what the configuration file alone cannot say and would otherwise stop the
/// server after it started planning (`--check-config` runs it too): the socket's group exists, and
/// the audit log's directory exists (nothing is created).
pub fn check_host(config: &ServerConfig) -> anyhow::Result<()> {
    if config.socket.is_some() {
        if let Some(group) = &config.socket_group {
            socket_gid(group)?;
        }
    }
    crate::audit::check_target(&config.audit)
}

fn socket_gid(group: &str) -> anyhow::Result<nix::unistd::Gid> {
    match nix::unistd::Group::from_name(group) {
        Ok(Some(found)) => Ok(found.gid),
        Ok(None) => anyhow::bail!(
            "server.socket_group: no group is named {group:?} on this host (create it, e.g. \
             `groupadd --system {group}`, or change the setting)"
        ),
        Err(err) => anyhow::bail!("server.socket_group: cannot look up group {group:?}: {err}"),
    }
}

/// Runs the server until a terminating signal; blocks the calling thread.
pub fn serve_blocking(config: ServerConfig, worker_binary: PathBuf) -> anyhow::Result<()> {
    check_host(&config)?;
    // The service is started (and the state dir swept) before the runtime's threads exist: nothing
    // here needs them, and errors then reach the operator before anything listens.
    let service = Arc::new(Service::start(config, worker_binary)?);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(serve(service))
}

async fn serve(service: Arc<Service>) -> anyhow::Result<()> {
    // The handlers are in place before anything listens: a SIGTERM that comes as soon as the first
    // request has been answered is a shutdown, never the default action's death.
    let mut signals = TerminatingSignals::new()?;
    let (stop_tx, stop_rx) = watch::channel(false);
    let mcp = crate::mcp_http::Endpoint::new(Arc::clone(&service));
    let app = router(Arc::clone(&service), mcp.clone());
    let limits = ConnectionLimits {
        max_connections: service.config.max_connections,
        header_timeout: service.config.header_timeout,
        send_timeout: service.config.send_timeout,
        max_unauthenticated: service.config.max_unauthenticated_connections,
        unauthenticated_timeout: service.config.unauthenticated_timeout,
    };
    let refusals: listen::Refusals = {
        let service = Arc::clone(&service);
        Arc::new(move |reason| service.note_rejected(reason))
    };
    let mut servers = tokio::task::JoinSet::new();
    let mut places = Vec::new();
    let socket = service.config.socket.clone();
    if let Some(path) = &socket {
        let listener = bind_unix(path, &service.config)?;
        places.push(format!("unix:{}", path.display()));
        servers.spawn(listen::serve(
            listener,
            app.clone(),
            limits,
            Arc::clone(&refusals),
            stop_rx.clone(),
        ));
    }
    if let Some(addr) = service.config.tcp {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("cannot listen on {addr}"))?;
        let bound = listener.local_addr().unwrap_or(addr);
        places.push(format!("tcp:{bound}"));
        servers.spawn(listen::serve(
            listener,
            app.clone(),
            limits,
            Arc::clone(&refusals),
            stop_rx.clone(),
        ));
    }
    eprintln!(
        "warden: serving on {} ({} run slots, queue {}, {} sessions, policies: {})",
        places.join(", "),
        service.config.max_concurrent_runs,
        service.config.queue_size,
        service.config.sessions.max_sessions,
        service
            .config
            .policies
            .keys()
            .cloned()
            .collect::<Vec<_>>()
            .join(", ")
    );

    let reaper = tokio::spawn(reap_periodically(Arc::clone(&service)));
    let pool = tokio::spawn(crate::pool::maintain(Arc::clone(&service)));
    let session_reaper = tokio::spawn(crate::sessions::reap_periodically(Arc::clone(
        service.sessions(),
    )));

    let signal = signals.recv().await;
    reaper.abort();
    pool.abort();
    session_reaper.abort();
    eprintln!(
        "warden: {signal}: shutting down (grace {:?})",
        service.config.shutdown_grace
    );
    service.stop_admitting();
    mcp.stop();
    let _ = stop_tx.send(true);
    let drained = tokio::time::timeout(service.config.shutdown_grace, drain(&mut servers)).await;
    if drained.is_err() {
        eprintln!(
            "warden: {} run(s) still going after the grace period; killing them",
            service.running()
        );
        service.kill_running();
        if tokio::time::timeout(Duration::from_secs(10), drain(&mut servers))
            .await
            .is_err()
        {
            servers.abort_all();
        }
    }
    // Sessions cannot outlive the server: each is closed (its jail ends and removes what it had).
    service.end_sessions("shutdown").await;
    // Workers are gone; give the kernel a moment to tear their jails down, then sweep.
    for _ in 0..50 {
        if service.running() == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    service.reap();
    if let Some(path) = &socket {
        let _ = std::fs::remove_file(path);
    }
    eprintln!("warden: stopped");
    Ok(())
}

/// Reaps run cgroups whose worker is gone, every [`REAP_INTERVAL`], until the task is aborted.
pub async fn reap_periodically(service: Arc<Service>) {
    let mut every = tokio::time::interval(REAP_INTERVAL);
    every.tick().await;
    loop {
        every.tick().await;
        let service = Arc::clone(&service);
        let _ = tokio::task::spawn_blocking(move || service.reap_cgroups()).await;
    }
}

async fn drain(servers: &mut tokio::task::JoinSet<()>) {
    while servers.join_next().await.is_some() {}
}

/// SIGTERM and SIGINT, handled from the moment this is made.
pub(crate) struct TerminatingSignals {
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
}

impl TerminatingSignals {
    pub(crate) fn new() -> anyhow::Result<Self> {
        use tokio::signal::unix::{signal, SignalKind};
        Ok(Self {
            term: signal(SignalKind::terminate()).context("cannot handle SIGTERM")?,
            int: signal(SignalKind::interrupt()).context("cannot handle SIGINT")?,
        })
    }

    /// The first of them to arrive.
    pub(crate) async fn recv(&mut self) -> &'static str {
        tokio::select! {
            _ = self.term.recv() => "SIGTERM",
            _ = self.int.recv() => "SIGINT",
        }
    }
}

/// Binds the Unix socket: removes a stale socket file (nobody answering on it), refuses a live one,
/// then applies the configured mode and group.
fn bind_unix(path: &Path, config: &ServerConfig) -> anyhow::Result<tokio::net::UnixListener> {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if !meta.file_type().is_socket() {
            anyhow::bail!(
                "{} exists and is not a socket; refusing to replace it",
                path.display()
            );
        }
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            anyhow::bail!("another server is listening on {}", path.display());
        }
        std::fs::remove_file(path)
            .with_context(|| format!("cannot remove the stale socket {}", path.display()))?;
    }
    let listener = tokio::net::UnixListener::bind(path)
        .with_context(|| format!("cannot listen on {}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(config.socket_mode))
        .with_context(|| format!("cannot set the mode of {}", path.display()))?;
    if let Some(group) = &config.socket_group {
        let gid = socket_gid(group)?;
        nix::unistd::chown(path, None, Some(gid))
            .with_context(|| format!("cannot give {} to group {group}", path.display()))?;
    }
    Ok(listener)
}
