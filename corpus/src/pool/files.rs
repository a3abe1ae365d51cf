//! A pooled run's returned files: the record's `files` (`path`, `content_base64`) written under
//! the run's output directory, where the host-side checks look for them, as `warden run
//! --output-dir` leaves them.
//!
//! Owns: decoding them (base64) and refusing a path that would leave the directory. Does not own:
//! checking them (`verify.rs`).

use std::path::{Component, Path};

use serde_json::Value;

/// Writes the record's `files` (`path`, `content_base64`) under `dir`, refusing any path that
/// would leave it.
pub(super) fn write_files(record: &Value, dir: &Path) -> Result<(), String> {
    let Some(files) = record["files"].as_array() else {
        return Ok(());
    };
    if files.is_empty() {
        return Ok(());
    }
    std::fs::create_dir_all(dir).map_err(|err| format!("{}: {err}", dir.display()))?;
    for file in files {
        let (Some(path), Some(content)) = (file["path"].as_str(), file["content_base64"].as_str())
        else {
            continue;
        };
        let relative = Path::new(path);
        if relative
            .components()
            .any(|c| !matches!(c, Component::Normal(_)))
        {
            return Err(format!("the record names the file {path:?}"));
        }
        let bytes = base64_decode(content).ok_or_else(|| format!("{path}: not base64"))?;
        let target = dir.join(relative);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|err| format!("{path}: {err}"))?;
        }
        std::fs::write(&target, bytes).map_err(|err| format!("{path}: {err}"))?;
    }
    Ok(())
}

/// Standard base64 (with or without padding); `None` when `text` is not.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let digits: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    let digits = digits
        .strip_suffix(b"==")
        .or_else(|| digits.strip_suffix(b"="))
        .unwrap_or(&digits);
    if digits.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for chunk in digits.chunks(4) {
        let mut n = 0u32;
        for (i, c) in chunk.iter().enumerate() {
            n |= value(*c)? << (18 - 6 * i);
        }
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
    }
    Some(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn base64_decodes_with_and_without_padding() {
        assert_eq!(base64_decode("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(base64_decode("aGVsbG8").unwrap(), b"hello");
        assert_eq!(base64_decode("").unwrap(), b"");
        assert_eq!(base64_decode("AAEC/w==").unwrap(), [0, 1, 2, 255]);
        assert!(base64_decode("a$==").is_none());
        assert!(base64_decode("a").is_none());
    }

    #[test]
    fn returned_files_stay_in_their_directory() {
        let dir = tempfile::tempdir().unwrap();
        let record = json!({"files": [{"path": "a/b.csv", "content_base64": "eA=="}]});
        write_files(&record, dir.path()).unwrap();
        assert_eq!(std::fs::read(dir.path().join("a/b.csv")).unwrap(), b"x");
        let evil = json!({"files": [{"path": "../x", "content_base64": "eA=="}]});
        assert!(write_files(&evil, dir.path()).is_err());
        let absolute = json!({"files": [{"path": "/tmp/x", "content_base64": "eA=="}]});
        assert!(write_files(&absolute, dir.path()).is_err());
    }
}
