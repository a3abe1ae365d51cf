//! A small HTTP/1.1 client for `warden serve`'s API, as the binary's own commands need it
//! (`warden review …`, `warden run --server`): one request per connection, JSON in and out, over
//! the server's Unix socket or plain TCP. No async runtime in the binary's own code.
//!
//! Addresses are spelled as the Python client spells them: `unix:/path` (or a path), or
//! `http://host:port`. HTTPS is not spoken here (put warden behind its TLS proxy and use the
//! proxy's local side, or the Unix socket).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context};
use serde_json::Value;

/// The largest answer read (a run record with its files is within this).
const MAX_ANSWER: u64 = 512 << 20;

/// Where a server listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Address {
    Unix(PathBuf),
    /// `host:port`, as written in the URL (also the `Host` header).
    Tcp(String),
}

impl Address {
    /// `unix:/path`, `/path`, `./path` or `http://host:port[/]`.
    pub fn parse(text: &str) -> anyhow::Result<Address> {
        if let Some(path) = text.strip_prefix("unix:") {
            let path = path.strip_prefix("//").unwrap_or(path);
            if path.is_empty() {
                bail!("{text:?}: no socket path after unix:");
            }
            return Ok(Address::Unix(PathBuf::from(path)));
        }
        if let Some(rest) = text.strip_prefix("http://") {
            let authority = rest.trim_end_matches('/');
            if authority.is_empty() || authority.contains('/') || authority.contains('@') {
                bail!("{text:?}: expected http://host:port (no path, no user)");
            }
            let authority = if authority
                .rsplit_once(':')
                .is_some_and(|(_, p)| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
            {
                authority.to_owned()
            } else {
                format!("{authority}:80")
            };
            return Ok(Address::Tcp(authority));
        }
        if text.starts_with("https://") {
            bail!("{text:?}: HTTPS is not spoken by the warden binary; use the server's Unix socket or a plain http:// address on the local side of its TLS proxy");
        }
        if text.starts_with('/') || text.starts_with('.') {
            return Ok(Address::Unix(PathBuf::from(text)));
        }
        bail!("{text:?} is not a warden address (unix:/path or http://host:port)")
    }

    fn describe(&self) -> String {
        match self {
            Address::Unix(path) => format!("unix:{}", path.display()),
            Address::Tcp(authority) => format!("http://{authority}"),
        }
    }
}

/// One request: the status and the JSON body. `token` is sent as a bearer token (TCP servers need
/// one; the Unix socket knows its peers by their uid).
pub fn call(
    address: &Address,
    token: Option<&str>,
    method: &str,
    path: &str,
    body: Option<&Value>,
    timeout: Duration,
) -> anyhow::Result<(u16, Value)> {
    let payload = body
        .map(serde_json::to_vec)
        .transpose()?
        .unwrap_or_default();
    let host = match address {
        Address::Unix(_) => "warden",
        Address::Tcp(authority) => authority.as_str(),
    };
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: {}\r\n",
        payload.len()
    );
    if body.is_some() {
        request.push_str("Content-Type: application/json\r\n");
    }
    if let Some(token) = token {
        if token.bytes().any(|b| b.is_ascii_control()) {
            bail!("the token has control characters");
        }
        request.push_str(&format!("Authorization: Bearer {token}\r\n"));
    }
    request.push_str("\r\n");
    let unreachable = || {
        format!(
            "cannot connect to warden serve at {} (is it running?)",
            address.describe()
        )
    };
    let raw = match address {
        Address::Unix(socket) => {
            let stream = UnixStream::connect(socket).with_context(unreachable)?;
            stream.set_read_timeout(Some(timeout))?;
            stream.set_write_timeout(Some(timeout))?;
            exchange(stream, &request, &payload)
        }
        Address::Tcp(authority) => {
            let stream = TcpStream::connect(authority.as_str()).with_context(unreachable)?;
            stream.set_read_timeout(Some(timeout))?;
            stream.set_write_timeout(Some(timeout))?;
            exchange(stream, &request, &payload)
        }
    }
    .with_context(|| format!("no answer from {}", address.describe()))?;
    parse_response(&raw)
}

fn exchange(mut stream: impl Read + Write, head: &str, payload: &[u8]) -> std::io::Result<Vec<u8>> {
    stream.write_all(head.as_bytes())?;
    stream.write_all(payload)?;
    let mut raw = Vec::new();
    stream.take(MAX_ANSWER).read_to_end(&mut raw)?;
    Ok(raw)
}

/// An HTTP/1.1 response: its status and its body as JSON (a chunked body is joined).
pub fn parse_response(raw: &[u8]) -> anyhow::Result<(u16, Value)> {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .context("the server's answer has no complete head")?;
    let head = String::from_utf8_lossy(&raw[..split]);
    let mut body = raw[split + 4..].to_vec();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse::<u16>().ok())
        .context("the server's answer has no status")?;
    let chunked = head.lines().any(|line| {
        let lower = line.to_ascii_lowercase();
        lower.starts_with("transfer-encoding:") && lower.contains("chunked")
    });
    if chunked {
        body = dechunk(&body)?;
    }
    let value = serde_json::from_slice(&body).with_context(|| {
        format!(
            "the server answered {status} without JSON: {}",
            String::from_utf8_lossy(&body)
        )
    })?;
    Ok((status, value))
}

fn dechunk(mut data: &[u8]) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = data
            .windows(2)
            .position(|w| w == b"\r\n")
            .context("a chunk without its size line")?;
        let size_text = String::from_utf8_lossy(&data[..line_end]);
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .context("a chunk size that is not hex")?;
        data = &data[line_end + 2..];
        if size == 0 {
            return Ok(out);
        }
        let chunk = data.get(..size).context("a chunk cut short")?;
        out.extend_from_slice(chunk);
        data = data.get(size + 2..).unwrap_or_default();
    }
}

/// The API's error message, `{"error": {"code", "message"}}`, or the body as text.
pub fn error_text(status: u16, body: &Value) -> String {
    let error = &body["error"];
    match (error["code"].as_str(), error["message"].as_str()) {
        (Some(code), Some(message)) => format!("{status} {code}: {message}"),
        _ => format!("{status}: {body}"),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn responses_plain_and_chunked_are_read() {
        let plain = b"HTTP/1.1 403 Forbidden\r\ncontent-length: 13\r\n\r\n{\"error\": 1}\n";
        assert_eq!(parse_response(plain).unwrap(), (403, json!({"error": 1})));
        let chunked =
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n4\r\n{\"a\"\r\n3\r\n: 1\r\n1\r\n}\r\n0\r\n\r\n";
        assert_eq!(parse_response(chunked).unwrap(), (200, json!({"a": 1})));
        assert!(parse_response(b"HTTP/1.1 200 OK\r\n").is_err());
    }

    #[test]
    fn addresses_are_spelled_as_the_python_client_spells_them() {
        assert_eq!(
            Address::parse("unix:/run/warden/warden.sock").unwrap(),
            Address::Unix("/run/warden/warden.sock".into())
        );
        assert_eq!(
            Address::parse("unix:///tmp/w.sock").unwrap(),
            Address::Unix("/tmp/w.sock".into())
        );
        assert_eq!(
            Address::parse("/tmp/w.sock").unwrap(),
            Address::Unix("/tmp/w.sock".into())
        );
        assert_eq!(
            Address::parse("http://127.0.0.1:8377/").unwrap(),
            Address::Tcp("127.0.0.1:8377".into())
        );
        assert_eq!(
            Address::parse("http://warden").unwrap(),
            Address::Tcp("warden:80".into())
        );
        for bad in [
            "",
            "unix:",
            "https://x:1",
            "http://x:1/v1",
            "http://u@x:1",
            "warden.sock",
            "tcp:1",
        ] {
            assert!(Address::parse(bad).is_err(), "{bad:?}");
        }
    }
}
