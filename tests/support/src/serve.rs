//! Shared set-up for the server's end-to-end tests: a real `warden serve` on a private socket (and a
//! loopback port), a small HTTP/1.1 client, and host-side checks that nothing was left behind.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub use crate::{is_root, repo};

/// The secret of the test token (its SHA-256 is in the configuration, never the secret).
pub const TOKEN: &str = "test-token-8c1f0e";
/// A second token that may use only the `strict` policy.
pub const STRICT_TOKEN: &str = "strict-only-token-41aa";
/// A third token that may use `review` and `strict`, not the server's default.
pub const MULTI_TOKEN: &str = "review-and-strict-token-77c2";

pub fn sha256_hex(text: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Where the server can be reached.
#[derive(Debug, Clone)]
pub enum Endpoint {
    Unix(PathBuf),
    Tcp(SocketAddr),
}

/// A `warden serve` process with its own directory (socket, state, audit log, policies).
pub struct Server {
    pub child: Option<Child>,
    pub dir: tempfile::TempDir,
    pub socket: PathBuf,
    pub tcp: Option<SocketAddr>,
    pub state_dir: PathBuf,
    pub audit: PathBuf,
    pub stderr: std::sync::Arc<std::sync::Mutex<String>>,
}

/// What to put in the configuration.
#[derive(Debug, Clone)]
pub struct Options {
    pub max_concurrent_runs: usize,
    pub queue_size: usize,
    pub queue_timeout_ms: u64,
    pub max_request_bytes: usize,
    pub max_connections: usize,
    pub shutdown_grace_ms: u64,
    /// `admission.header_timeout_ms`, `body_timeout_ms`, `max_input_files`, `max_input_bytes`
    /// (the server's defaults when `None`).
    pub header_timeout_ms: Option<u64>,
    pub body_timeout_ms: Option<u64>,
    pub max_input_files: Option<usize>,
    pub max_input_bytes: Option<u64>,
    /// More lines of the `[admission]` table, as they are.
    pub admission: Option<String>,
    pub tcp: bool,
    /// Reuse this state directory (to test start-up reaping).
    pub state_dir: Option<PathBuf>,
    /// Run the server with only these capabilities (`setpriv --bounding-set` syntax) and
    /// no_new_privs, as the systemd unit does.
    pub bounding_set: Option<String>,
    /// More `[policies]` entries: name and rules file.
    pub extra_policies: Vec<(String, PathBuf)>,
    /// Run the server as this (uid, gid) instead of root (the test directory is given to it).
    pub user: Option<(u32, u32)>,
    /// Lines of the `[sessions]` table (`max_sessions = 2\n`…); the server's defaults when `None`.
    pub sessions: Option<String>,
    /// More configuration, appended as it is (`[review]`, more `[[tokens]]`…).
    pub extra_config: Option<String>,
    /// Lines of the `[pool]` table (`depth = 1\n`…). `None`: `enabled = false` — the server's
    /// default is a pool, which the tests of the pool turn on (tests/serve/pool.rs); elsewhere it
    /// would only add idle jails to every test server.
    pub pool: Option<String>,
    /// Environment variables for the server (`WARDEN_NODE`…).
    pub env: Vec<(String, String)>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            max_concurrent_runs: 2,
            queue_size: 16,
            queue_timeout_ms: 30_000,
            max_request_bytes: 4 << 20,
            max_connections: 64,
            shutdown_grace_ms: 20_000,
            header_timeout_ms: None,
            body_timeout_ms: None,
            max_input_files: None,
            max_input_bytes: None,
            admission: None,
            tcp: false,
            state_dir: None,
            bounding_set: None,
            extra_policies: Vec::new(),
            user: None,
            sessions: None,
            extra_config: None,
            pool: None,
            env: Vec::new(),
        }
    }
}

impl Server {
    pub fn start(options: Options) -> Server {
        let dir = tempfile::Builder::new()
            .prefix("warden-serve-test-")
            .tempdir()
            .expect("tempdir");
        let socket = dir.path().join("warden.sock");
        let state_dir = options
            .state_dir
            .clone()
            .unwrap_or_else(|| dir.path().join("state"));
        let audit = dir.path().join("audit.jsonl");
        // A second policy: the default with dynamic paths sent to review, registered as `review`;
        // and the repo's strict policy as `strict`.
        let default = std::fs::read_to_string(repo().join("rules/default.toml")).expect("rules");
        let review = default
            .replacen("name = \"default\"", "name = \"review-test\"", 1)
            .replace("[actions]\n", "[actions]\nDYN403 = \"review\"\n");
        // An unprivileged server has no memory cgroup on a host that did not delegate one: its
        // policies accept the best effort, or the server refuses them at start-up.
        let as_run = |rules: &str| match options.user {
            Some(_) => crate::jail::rules_for(crate::jail::As::User, rules),
            None => rules.to_owned(),
        };
        std::fs::write(dir.path().join("review.toml"), as_run(&review)).expect("write");
        let strict_rules =
            std::fs::read_to_string(repo().join("rules/strict.toml")).expect("rules");
        std::fs::write(dir.path().join("strict.toml"), as_run(&strict_rules)).expect("write");
        let default_policy = if options.user.is_some() {
            std::fs::write(dir.path().join("default.toml"), as_run(&default)).expect("write");
            "default.toml"
        } else {
            "builtin"
        };
        let tcp = if options.tcp {
            "tcp = \"127.0.0.1:0\"\n"
        } else {
            ""
        };
        let config = format!(
            r#"[server]
socket = "{socket}"
socket_mode = "0660"
{group}{tcp}state_dir = "{state}"
audit_log = "{audit}"
default_policy = "default"

[admission]
max_concurrent_runs = {runs}
queue_size = {queue}
queue_timeout_ms = {queue_timeout}
max_request_bytes = {max_request}
max_connections = {max_connections}
shutdown_grace_ms = {grace}
{optional}{admission}
[pool]
{pool}
[policies]
default = "{default_policy}"
review = "review.toml"
strict = "{strict}"
{extra}

[[tokens]]
name = "agent-a"
sha256 = "{token}"
policies = ["default", "review"]

[[tokens]]
name = "strict-agent"
sha256 = "{strict_token}"
policies = ["strict"]

[[tokens]]
name = "multi-agent"
sha256 = "{multi_token}"
policies = ["review", "strict"]
"#,
            socket = socket.display(),
            // Root may give the socket to any group; the unprivileged server keeps its own.
            group = if options.user.is_none() {
                "socket_group = \"nogroup\"\n"
            } else {
                ""
            },
            state = state_dir.display(),
            audit = audit.display(),
            runs = options.max_concurrent_runs,
            queue = options.queue_size,
            queue_timeout = options.queue_timeout_ms,
            max_request = options.max_request_bytes,
            max_connections = options.max_connections,
            grace = options.shutdown_grace_ms,
            admission = options.admission.clone().unwrap_or_default(),
            pool = options
                .pool
                .clone()
                .unwrap_or_else(|| "enabled = false\n".to_owned()),
            optional = [
                (
                    "header_timeout_ms",
                    options.header_timeout_ms.map(|v| v.to_string())
                ),
                (
                    "body_timeout_ms",
                    options.body_timeout_ms.map(|v| v.to_string())
                ),
                (
                    "max_input_files",
                    options.max_input_files.map(|v| v.to_string())
                ),
                (
                    "max_input_bytes",
                    options.max_input_bytes.map(|v| v.to_string())
                ),
            ]
            .into_iter()
            .filter_map(|(key, value)| value.map(|value| format!("{key} = {value}\n")))
            .collect::<String>(),
            strict = dir.path().join("strict.toml").display(),
            extra = options
                .extra_policies
                .iter()
                .map(|(name, path)| format!("{name} = \"{}\"\n", path.display()))
                .collect::<String>(),
            token = sha256_hex(TOKEN),
            strict_token = sha256_hex(STRICT_TOKEN),
            multi_token = sha256_hex(MULTI_TOKEN),
        );
        let config = match &options.sessions {
            Some(lines) => format!("{config}\n[sessions]\n{lines}\n"),
            None => config,
        };
        let config = match &options.extra_config {
            Some(extra) => format!("{config}\n{extra}\n"),
            None => config,
        };
        let config_path = dir.path().join("serve.toml");
        std::fs::write(&config_path, config).expect("write config");
        if let Some((uid, gid)) = options.user {
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid)).expect("chown test dir");
        }
        // As another user (setpriv: ids and no supplementary groups) and/or with a reduced
        // capability bounding set, like the systemd unit.
        let mut setpriv: Vec<String> = Vec::new();
        if let Some((uid, gid)) = options.user {
            setpriv.extend([
                format!("--reuid={uid}"),
                format!("--regid={gid}"),
                "--clear-groups".to_owned(),
            ]);
        }
        if let Some(set) = &options.bounding_set {
            setpriv.extend([
                "--bounding-set".to_owned(),
                set.clone(),
                "--inh-caps".to_owned(),
                "-all".to_owned(),
                "--no-new-privs".to_owned(),
            ]);
        }
        let mut command = if setpriv.is_empty() {
            Command::new(crate::warden_bin())
        } else {
            let mut command = Command::new("setpriv");
            command.args(&setpriv).arg("--").arg(crate::warden_bin());
            command
        };
        if options.user.is_some() {
            // The runtimes stay where root installed them; nothing else of root's environment.
            command
                .env("WARDEN_DATA_DIR", "/var/lib/warden")
                .env("HOME", "/tmp")
                .env_remove("XDG_RUNTIME_DIR");
        }
        command.envs(options.env.iter().map(|(k, v)| (k, v)));
        let mut child = command
            .args(["serve", "--config"])
            .arg(&config_path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start warden serve");
        // The first stderr line says where it listens.
        let stderr = child.stderr.take().expect("stderr");
        let mut reader = BufReader::new(stderr);
        let mut first = String::new();
        reader.read_line(&mut first).expect("read stderr");
        assert!(
            first.contains("serving on"),
            "warden serve did not start: {first}{}",
            {
                let mut rest = String::new();
                let _ = reader.read_to_string(&mut rest);
                rest
            }
        );
        let tcp = first
            .split("tcp:")
            .nth(1)
            .and_then(|rest| rest.split([',', ' ']).next())
            .map(|addr| addr.parse().expect("tcp address"));
        let log = std::sync::Arc::new(std::sync::Mutex::new(first));
        let sink = log.clone();
        std::thread::spawn(move || {
            let mut line = String::new();
            while reader.read_line(&mut line).unwrap_or(0) > 0 {
                if let Ok(mut log) = sink.lock() {
                    log.push_str(&line);
                }
                line.clear();
            }
        });
        Server {
            child: Some(child),
            dir,
            socket,
            tcp,
            state_dir,
            audit,
            stderr: log,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    pub fn unix(&self) -> Endpoint {
        Endpoint::Unix(self.socket.clone())
    }

    pub fn tcp(&self) -> Endpoint {
        Endpoint::Tcp(self.tcp.expect("the server listens on TCP"))
    }

    /// Sends SIGTERM and waits for a clean exit.
    pub fn stop(&mut self) -> std::process::ExitStatus {
        let mut child = self.child.take().expect("running");
        signal(child.id(), "TERM");
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = child.try_wait().expect("wait") {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "warden serve did not stop on SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Kills the server with SIGKILL and reaps it.
    pub fn kill(&mut self) {
        let mut child = self.child.take().expect("running");
        signal(child.id(), "KILL");
        let _ = child.wait();
    }

    pub fn audit_lines(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.audit)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("audit line is JSON"))
            .collect()
    }
}

impl Drop for Server {
    /// Stops the server as an operator would (SIGTERM: it ends its pooled jails, templates and
    /// sessions and removes their cgroups), killing it only if it has not exited within 20 s: a
    /// killed server's workers die with it and leave their jails' (empty) cgroups to the next
    /// warden's start-up sweep.
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            signal(child.id(), "TERM");
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
            while std::time::Instant::now() < deadline {
                if matches!(child.try_wait(), Ok(Some(_))) {
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            signal(child.id(), "KILL");
            let _ = child.wait();
        }
    }
}

pub fn signal(pid: u32, name: &str) {
    let _ = Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status();
}

/// An HTTP response.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|err| {
            panic!("not JSON ({err}): {}", String::from_utf8_lossy(&self.body))
        })
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// One request on a fresh connection (`Connection: close`), with a generous read timeout.
pub fn request(
    endpoint: &Endpoint,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&[u8]>,
) -> Response {
    let mut stream = connect(endpoint);
    stream.set_read_timeout(Some(Duration::from_secs(180)));
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: warden\r\nConnection: close\r\n");
    if let Some(token) = token {
        head.push_str(&format!("Authorization: Bearer {token}\r\n"));
    }
    if let Some(body) = body {
        head.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        ));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).expect("send head");
    if let Some(body) = body {
        // The server may answer (413) before reading everything; a broken pipe then is fine.
        let _ = stream.write_all(body);
    }
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    parse_response(&raw)
}

pub fn post_json(endpoint: &Endpoint, path: &str, token: Option<&str>, body: &Value) -> Response {
    request(
        endpoint,
        "POST",
        path,
        token,
        Some(&serde_json::to_vec(body).expect("json")),
    )
}

/// A raw connection to the server, for tests that speak HTTP byte by byte.
pub enum Stream {
    Unix(UnixStream),
    Tcp(TcpStream),
}

/// Connects to the server.
pub fn connect(endpoint: &Endpoint) -> Stream {
    match endpoint {
        Endpoint::Unix(path) => {
            Stream::Unix(UnixStream::connect(path).expect("connect to the socket"))
        }
        Endpoint::Tcp(addr) => Stream::Tcp(TcpStream::connect(addr).expect("connect over TCP")),
    }
}

impl Stream {
    pub fn set_read_timeout(&self, timeout: Option<Duration>) {
        match self {
            Stream::Unix(s) => s.set_read_timeout(timeout),
            Stream::Tcp(s) => s.set_read_timeout(timeout),
        }
        .expect("set the read timeout");
    }

    pub fn set_nonblocking(&self, yes: bool) {
        match self {
            Stream::Unix(s) => s.set_nonblocking(yes),
            Stream::Tcp(s) => s.set_nonblocking(yes),
        }
        .expect("set non-blocking");
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Unix(s) => s.read(buf),
            Stream::Tcp(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Unix(s) => s.write(buf),
            Stream::Tcp(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Stream::Unix(s) => s.flush(),
            Stream::Tcp(s) => s.flush(),
        }
    }
}

/// Parses a raw HTTP/1.1 response (head and body as received).
pub fn parse_raw_response(raw: &[u8]) -> Response {
    parse_response(raw)
}

/// A `Vm*` line of `/proc/<pid>/status` (`VmRSS`, `VmHWM`), in KiB.
pub fn memory_kib(pid: u32, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|line| line.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no {key} for process {pid}"))
}

/// CPU time (user + system) a process has used, in seconds.
pub fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    let after = &stat[stat.rfind(')').expect("comm") + 2..];
    let fields: Vec<&str> = after.split(' ').collect();
    let ticks: u64 =
        fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime");
    // USER_HZ is 100 on Linux.
    ticks as f64 / 100.0
}

fn parse_response(raw: &[u8]) -> Response {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no HTTP response: {:?}", String::from_utf8_lossy(raw)));
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .expect("status line");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    let chunked = headers
        .iter()
        .any(|(n, v)| n.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    if chunked {
        body = dechunk(&body);
    }
    Response {
        status,
        headers,
        body,
    }
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(end) = data.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let size =
            usize::from_str_radix(String::from_utf8_lossy(&data[..end]).trim(), 16).unwrap_or(0);
        if size == 0 {
            return out;
        }
        let start = end + 2;
        out.extend_from_slice(&data[start..(start + size).min(data.len())]);
        data = &data[(start + size + 2).min(data.len())..];
    }
}

/// Pids of every live descendant of `pid`, with their start times (to tell reused pids apart).
pub fn descendants(pid: u32) -> Vec<(u32, String)> {
    let mut parents: Vec<(u32, u32, String)> = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Some((ppid, start)) = stat_of(child) {
            parents.push((child, ppid, start));
        }
    }
    let mut found: Vec<(u32, String)> = Vec::new();
    let mut frontier = vec![pid];
    while let Some(parent) = frontier.pop() {
        for (child, ppid, start) in &parents {
            if *ppid == parent && !found.iter().any(|(p, _)| p == child) {
                found.push((*child, start.clone()));
                frontier.push(*child);
            }
        }
    }
    found
}

/// Whether a process with this pid and start time still exists (zombies count as gone).
pub fn alive(pid: u32, start: &str) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let Some(after) = stat.rfind(')').map(|i| &stat[i + 2..]) else {
        return false;
    };
    let fields: Vec<&str> = after.split(' ').collect();
    fields.first() != Some(&"Z") && fields.get(19) == Some(&start)
}

fn stat_of(pid: u32) -> Option<(u32, String)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = after.split(' ').collect();
    Some((fields.get(1)?.parse().ok()?, (*fields.get(19)?).to_owned()))
}

/// The run cgroups (`run-*`) under warden's cgroup directories.
pub fn run_cgroups() -> Vec<PathBuf> {
    let mut found = Vec::new();
    walk_cgroups(Path::new("/sys/fs/cgroup"), 0, &mut found);
    found
}

fn walk_cgroups(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if depth > 5 {
        return;
    }
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if !entry.file_type().map(|t| t.is_dir()).unwrap_or(false) {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("run-")
            && dir
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("warden"))
        {
            out.push(entry.path());
        } else {
            walk_cgroups(&entry.path(), depth + 1, out);
        }
    }
}

/// Job directories in a state directory.
pub fn job_dirs(state_dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(state_dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("job-"))
        .map(|e| e.path())
        .collect()
}

/// Polls `condition` until it holds or `limit` passes.
pub fn wait_until(limit: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if condition() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    condition()
}

/// The value of a metric line `name value` in Prometheus text.
pub fn metric(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|rest| rest.strip_prefix(' ')))
        .and_then(|v| v.trim().parse().ok())
}

/// One request with extra header lines (`Accept: text/event-stream`), read as it arrives: each
/// read with the time since the request was sent (to see a streamed body arrive in pieces).
pub fn timed_request(
    endpoint: &Endpoint,
    method: &str,
    path: &str,
    token: Option<&str>,
    headers: &[&str],
    body: &[u8],
) -> Vec<(Duration, Vec<u8>)> {
    let mut stream = connect(endpoint);
    stream.set_read_timeout(Some(Duration::from_secs(120)));
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: warden\r\nConnection: close\r\n");
    if let Some(token) = token {
        head.push_str(&format!("Authorization: Bearer {token}\r\n"));
    }
    for header in headers {
        head.push_str(&format!("{header}\r\n"));
    }
    head.push_str(&format!(
        "Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    ));
    stream.write_all(head.as_bytes()).expect("send head");
    stream.write_all(body).expect("send body");
    let sent = Instant::now();
    let mut reads = Vec::new();
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => reads.push((sent.elapsed(), buffer[..n].to_vec())),
        }
    }
    reads
}

/// The Server-Sent Events of a response body: (event name, data as JSON).
pub fn sse_events(body: &[u8]) -> Vec<(String, Value)> {
    String::from_utf8_lossy(body)
        .split("\n\n")
        .filter_map(|block| {
            let mut name = None;
            let mut data = None;
            for line in block.lines() {
                if let Some(value) = line.strip_prefix("event: ") {
                    name = Some(value.to_owned());
                } else if let Some(value) = line.strip_prefix("data: ") {
                    data = serde_json::from_str(value).ok();
                }
            }
            Some((name?, data?))
        })
        .collect()
}

/// Pids of the `warden session-worker` processes of the server with this state directory.
pub fn session_workers(state_dir: &Path) -> Vec<u32> {
    let marker = state_dir.join("session-");
    let marker = marker.to_string_lossy();
    crate::jail::processes_with(&marker)
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|cmdline| String::from_utf8_lossy(&cmdline).contains("session-worker"))
        })
        .collect()
}

/// Session directories in a state directory.
pub fn session_dirs(state_dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(state_dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("session-"))
        .map(|e| e.path())
        .collect()
}

/// The cgroups (under warden's cgroup directories) of the jails `pid` started (`run-<pid>-…`).
pub fn cgroups_of(pid: u32) -> Vec<PathBuf> {
    let prefix = format!("run-{pid}-");
    crate::jail::warden_cgroup_dirs()
        .into_iter()
        .flat_map(|dir| std::fs::read_dir(dir).into_iter().flatten().flatten())
        .filter(|entry| entry.file_name().to_string_lossy().starts_with(&prefix))
        .map(|entry| entry.path())
        .collect()
}
