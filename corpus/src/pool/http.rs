//! The pool pass's HTTP client: one HTTP/1.1 request at a time over a server's Unix socket
//! (`Connection: close`), and the samples of its Prometheus metrics.
//!
//! Owns: writing the request, reading the answer (delimited by its length, chunked, or to the
//! end) within a size cap and a timeout. Does not own: what is asked, or when (`server.rs`).

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

/// The most bytes of one HTTP answer kept.
const MAX_ANSWER: u64 = 256 << 20;

/// The value of one sample (`name{labels}` exactly as printed) in Prometheus text.
pub(super) fn metric(text: &str, key: &str) -> Option<f64> {
    text.lines().find_map(|line| {
        let rest = line.strip_prefix(key)?;
        rest.strip_prefix(' ')?.trim().parse().ok()
    })
}

/// An HTTP answer.
#[derive(Debug, Clone)]
pub(super) struct Answer {
    pub(super) status: u16,
    pub(super) body: Vec<u8>,
}

/// One HTTP/1.1 request over the Unix socket (`Connection: close`), waiting at most `timeout` for
/// each read.
pub(super) fn request(
    socket: &Path,
    method: &str,
    path: &str,
    body: Option<&Value>,
    timeout: Duration,
) -> Result<Answer, String> {
    let mut stream =
        UnixStream::connect(socket).map_err(|err| format!("{}: {err}", socket.display()))?;
    stream
        .set_read_timeout(Some(timeout))
        .and_then(|()| stream.set_write_timeout(Some(timeout)))
        .map_err(|err| err.to_string())?;
    let body = body.map(Value::to_string).unwrap_or_default();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: warden\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream
        .write_all(head.as_bytes())
        .and_then(|()| stream.write_all(body.as_bytes()))
        .map_err(|err| format!("{method} {path}: {err}"))?;
    let mut raw = Vec::new();
    match stream.take(MAX_ANSWER).read_to_end(&mut raw) {
        Ok(_) => {}
        Err(err)
            if matches!(
                err.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) =>
        {
            return Err(format!(
                "{method} {path}: no answer within {}s (timed out)",
                timeout.as_secs()
            ));
        }
        Err(err) => return Err(format!("{method} {path}: {err}")),
    }
    parse_answer(&raw).ok_or_else(|| {
        format!(
            "{method} {path}: not an HTTP answer: {}",
            crate::verify::clip(&String::from_utf8_lossy(&raw[..raw.len().min(200)]))
        )
    })
}

/// Reads a whole HTTP/1.1 answer: the status line, headers, and a body that is read to the end
/// of the connection, delimited by `Content-Length`, or chunked.
fn parse_answer(raw: &[u8]) -> Option<Answer> {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&raw[..end]).ok()?;
    let mut lines = head.split("\r\n");
    let status: u16 = lines.next()?.split_whitespace().nth(1)?.parse().ok()?;
    let mut length = None;
    let mut chunked = false;
    for line in lines {
        let (name, value) = line.split_once(':')?;
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            length = value.parse::<usize>().ok();
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = value.to_ascii_lowercase().contains("chunked");
        }
    }
    let rest = &raw[end + 4..];
    let body = if chunked {
        let mut body = Vec::new();
        let mut at = rest;
        loop {
            let line_end = at.windows(2).position(|w| w == b"\r\n")?;
            let size_text = std::str::from_utf8(&at[..line_end]).ok()?;
            let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
            at = &at[line_end + 2..];
            if size == 0 {
                break;
            }
            body.extend_from_slice(at.get(..size)?);
            at = at.get(size + 2..)?;
        }
        body
    } else {
        match length {
            Some(n) => rest.get(..n)?.to_vec(),
            None => rest.to_vec(),
        }
    };
    Some(Answer { status, body })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn answers_parse_with_a_length_or_chunked() {
        let plain = b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\n{\"a\"";
        let answer = parse_answer(plain).unwrap();
        assert_eq!(
            (answer.status, answer.body.as_slice()),
            (200, &b"{\"a\""[..])
        );
        let chunked =
            b"HTTP/1.1 429 Too Many\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x\r\nde\r\n0\r\n\r\n";
        let answer = parse_answer(chunked).unwrap();
        assert_eq!(
            (answer.status, answer.body.as_slice()),
            (429, &b"abcde"[..])
        );
        assert!(parse_answer(b"garbage").is_none());
        assert!(parse_answer(b"HTTP/1.1 200 OK\r\ncontent-length: 9\r\n\r\nshort").is_none());
    }

    #[test]
    fn metrics_are_read_by_their_exact_sample_name() {
        let text = "# HELP warden_pool_ready x\nwarden_pool_ready{policy=\"corpus-pool\"} 2\n\
                    warden_pool_ready{policy=\"other\"} 0\nwarden_pool_busy 1\n";
        assert_eq!(
            metric(text, "warden_pool_ready{policy=\"corpus-pool\"}"),
            Some(2.0)
        );
        assert_eq!(metric(text, "warden_pool_busy"), Some(1.0));
        assert_eq!(metric(text, "warden_pool"), None);
    }
}
