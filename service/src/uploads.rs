//! Session file uploads, staged on disk under admission (issue 25).
//!
//! An upload holds a run slot from before its body is read until the session's worker has written
//! the file into the jail, like a run: uploads in flight are bounded by `max_concurrent_runs`, and
//! the queue, its timeout and the 429/503 answers are the runs'. Its body goes to a file of the
//! server's own (`<state_dir>/uploads/`, mode 0600 in a 0700 directory) as it arrives, a frame at a
//! time and within `max_request_bytes` and `body_timeout`; the worker then reads that file a piece
//! at a time (`warden_gateway::session::UPLOAD_PIECE`) into the jail. So what the server holds of an
//! upload is one body frame, and a worker one piece, whatever the file's size and however many
//! uploads run: before, the body, its base64 text and the worker's copy were all in memory (eleven
//! concurrent 15 MiB uploads: +508 MiB).
//!
//! Owns: the staging directory (made, and emptied of a previous server's files, at start), a
//! staged file's name, its removal however the upload ends. Does not own: reading the body (the
//! HTTP front end, `http.rs`), the slot (`admission.rs`), writing into the jail (the worker).

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::admission::Slot;

/// Where uploads are staged.
#[derive(Debug)]
pub struct Staging {
    dir: PathBuf,
    next: AtomicU64,
}

impl Staging {
    /// The staging directory under `state_dir`, made (0700) or emptied of what a previous server
    /// left.
    pub fn new(state_dir: &Path) -> anyhow::Result<Self> {
        let dir = state_dir.join("uploads");
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => {}
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            Err(err) => anyhow::bail!("cannot empty {}: {err}", dir.display()),
        }
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .map_err(|err| anyhow::anyhow!("cannot make {}: {err}", dir.display()))?;
        Ok(Self {
            dir,
            next: AtomicU64::new(0),
        })
    }

    /// A new, empty staged file for an upload that holds `slot`.
    pub fn stage(&self, slot: Slot) -> std::io::Result<Upload> {
        let n = self.next.fetch_add(1, Ordering::SeqCst);
        let path = self.dir.join(format!("upload-{}-{n}", std::process::id()));
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_CLOEXEC)
            .open(&path)?;
        Ok(Upload {
            _slot: slot,
            path,
            file: Some(file),
            written: 0,
        })
    }
}

/// A staged file of the server's own that holds no slot (a JSON body, before its base64 is
/// decoded into the upload's file), removed when it is dropped.
#[derive(Debug)]
pub struct Scratch {
    path: PathBuf,
    file: std::fs::File,
}

impl Staging {
    /// A new, empty scratch file (for a request that already holds its upload's slot).
    pub fn scratch(&self) -> std::io::Result<Scratch> {
        let n = self.next.fetch_add(1, Ordering::SeqCst);
        let path = self.dir.join(format!("body-{}-{n}", std::process::id()));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_CLOEXEC)
            .open(&path)?;
        Ok(Scratch { path, file })
    }
}

impl Scratch {
    /// Appends `bytes`.
    pub fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.file.write_all(bytes)
    }

    /// The file, from its start.
    pub fn reader(&mut self) -> std::io::Result<std::io::BufReader<&std::fs::File>> {
        use std::io::Seek;
        self.file.seek(std::io::SeekFrom::Start(0))?;
        Ok(std::io::BufReader::with_capacity(64 << 10, &self.file))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// One upload in flight: its run slot and its staged file, removed when it is dropped.
#[derive(Debug)]
pub struct Upload {
    _slot: Slot,
    path: PathBuf,
    file: Option<std::fs::File>,
    written: u64,
}

impl Upload {
    /// Appends `bytes` to the staged file.
    pub fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let file = self
            .file
            .as_mut()
            .ok_or_else(|| std::io::Error::other("the staged file is closed"))?;
        file.write_all(bytes)?;
        self.written += bytes.len() as u64;
        Ok(())
    }

    /// Appends the bytes of `text` (base64, standard alphabet, padded), decoded a piece at a time.
    pub fn write_base64(&mut self, text: &str) -> Result<(), String> {
        use base64::Engine;
        // A multiple of 4 characters decodes on its own; only the last piece may carry padding.
        const PIECE: usize = 1 << 20;
        let text = text.as_bytes();
        if !text.len().is_multiple_of(4) {
            return Err("its length is not a multiple of 4 (standard, padded base64)".into());
        }
        let mut decoded = Vec::with_capacity(PIECE / 4 * 3);
        for piece in text.chunks(PIECE) {
            decoded.clear();
            base64::engine::general_purpose::STANDARD
                .decode_vec(piece, &mut decoded)
                .map_err(|err| err.to_string())?;
            self.write(&decoded).map_err(|err| err.to_string())?;
        }
        Ok(())
    }

    /// Reads a JSON upload body, `{"name": "…", "content_base64": "…"}` (no other member), from
    /// `source`, decoding the base64 into the staged file a piece at a time: what it holds is one
    /// piece, whatever the file's size (a general JSON parser would hold the whole string). Gives
    /// the name.
    pub fn write_json(&mut self, source: impl std::io::Read) -> Result<String, String> {
        let mut json = JsonScanner::new(source);
        json.expect(b'{')?;
        let (mut name, mut content) = (None, false);
        loop {
            match json.next_token()? {
                b'}' if name.is_none() && !content => {
                    return Err("the body has no `name` and no `content_base64`".into())
                }
                b'}' => break,
                b',' if name.is_some() || content => {}
                b'"' if name.is_none() && !content => json.unread_quote(),
                other => return Err(format!("unexpected `{}` in the body", other as char)),
            }
            json.expect(b'"')?;
            let key = json.short_string()?;
            json.expect(b':')?;
            json.expect(b'"')?;
            match key.as_str() {
                "name" if name.is_none() => name = Some(json.short_string()?),
                "content_base64" if !content => {
                    json.base64_string(self)?;
                    content = true;
                }
                "name" | "content_base64" => return Err(format!("`{key}` is given twice")),
                other => return Err(format!("unknown member `{other}`")),
            }
        }
        json.end()?;
        match (name, content) {
            (Some(name), true) => Ok(name),
            (None, _) => Err("the body has no `name`".into()),
            (_, false) => Err("the body has no `content_base64`".into()),
        }
    }

    /// The bytes written so far.
    pub fn len(&self) -> u64 {
        self.written
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.written == 0
    }

    /// Closes the staged file (every byte written) and gives its path, for the worker to read.
    pub fn finish(&mut self) -> std::io::Result<&Path> {
        if let Some(file) = self.file.take() {
            file.sync_data().or_else(|err| {
                // tmpfs and the like need no flush; anything else is the disk failing.
                if err.raw_os_error() == Some(nix::libc::EINVAL) {
                    Ok(())
                } else {
                    Err(err)
                }
            })?;
        }
        Ok(&self.path)
    }
}

/// Just enough of a JSON reader for an upload body: an object of two strings, one of them long.
struct JsonScanner<R> {
    source: std::io::BufReader<R>,
    /// A `"` the object loop read ahead and handed back.
    quote: bool,
}

/// The longest `name` (and member name) read.
const SHORT_STRING: usize = 4096;

impl<R: std::io::Read> JsonScanner<R> {
    fn new(source: R) -> Self {
        Self {
            source: std::io::BufReader::with_capacity(64 << 10, source),
            quote: false,
        }
    }

    fn byte(&mut self) -> Result<Option<u8>, String> {
        use std::io::BufRead;
        let buf = self.source.fill_buf().map_err(|err| err.to_string())?;
        let Some(&byte) = buf.first() else {
            return Ok(None);
        };
        self.source.consume(1);
        Ok(Some(byte))
    }

    /// Appends to `text` the plain run of a string's characters that starts here (printable
    /// ASCII but `"` and `\\`), at most `room` bytes of it, without a per-character step.
    fn plain_run(&mut self, text: &mut String, room: usize) -> Result<(), String> {
        use std::io::BufRead;
        let buf = self.source.fill_buf().map_err(|err| err.to_string())?;
        let run = buf
            .iter()
            .take(room)
            .position(|&b| !(0x20..0x7f).contains(&b) || b == b'"' || b == b'\\')
            .unwrap_or(buf.len().min(room));
        // Printable ASCII is UTF-8.
        text.push_str(std::str::from_utf8(&buf[..run]).map_err(|err| err.to_string())?);
        self.source.consume(run);
        Ok(())
    }

    fn unread_quote(&mut self) {
        self.quote = true;
    }

    /// The next byte that is not white space.
    fn next_token(&mut self) -> Result<u8, String> {
        if std::mem::take(&mut self.quote) {
            return Ok(b'"');
        }
        loop {
            match self.byte()? {
                Some(b' ' | b'\t' | b'\n' | b'\r') => {}
                Some(byte) => return Ok(byte),
                None => return Err("the body ends too early".into()),
            }
        }
    }

    fn expect(&mut self, want: u8) -> Result<(), String> {
        match self.next_token()? {
            got if got == want => Ok(()),
            got => Err(format!(
                "expected `{}`, found `{}` in the body",
                want as char, got as char
            )),
        }
    }

    /// Nothing but white space left.
    fn end(&mut self) -> Result<(), String> {
        loop {
            match self.byte()? {
                Some(b' ' | b'\t' | b'\n' | b'\r') => {}
                Some(_) => return Err("more after the body's object".into()),
                None => return Ok(()),
            }
        }
    }

    /// One character of a string after its opening quote: `None` at the closing quote.
    fn string_char(&mut self) -> Result<Option<char>, String> {
        let byte = self.byte()?.ok_or("a string is not closed")?;
        let first = match byte {
            b'"' => return Ok(None),
            b'\\' => return self.escape().map(Some),
            0..=0x1f => return Err("a control character in a string".into()),
            byte => byte,
        };
        // UTF-8: the sequence's length from its first byte.
        let len = match first {
            0x00..=0x7f => return Ok(Some(first as char)),
            0xc0..=0xdf => 2,
            0xe0..=0xef => 3,
            0xf0..=0xf7 => 4,
            _ => return Err("the body is not UTF-8".into()),
        };
        let mut buf = [first, 0, 0, 0];
        for slot in buf.iter_mut().take(len).skip(1) {
            *slot = self.byte()?.ok_or("a string is not closed")?;
        }
        std::str::from_utf8(&buf[..len])
            .ok()
            .and_then(|text| text.chars().next())
            .map(Some)
            .ok_or_else(|| "the body is not UTF-8".into())
    }

    fn escape(&mut self) -> Result<char, String> {
        let hex4 = |scanner: &mut Self| -> Result<u32, String> {
            let mut value = 0;
            for _ in 0..4 {
                let digit = scanner.byte()?.ok_or("a string is not closed")?;
                value = value * 16
                    + (digit as char)
                        .to_digit(16)
                        .ok_or("a bad \\u escape in a string")?;
            }
            Ok(value)
        };
        match self.byte()?.ok_or("a string is not closed")? {
            b'"' => Ok('"'),
            b'\\' => Ok('\\'),
            b'/' => Ok('/'),
            b'b' => Ok('\u{8}'),
            b'f' => Ok('\u{c}'),
            b'n' => Ok('\n'),
            b'r' => Ok('\r'),
            b't' => Ok('\t'),
            b'u' => {
                let high = hex4(self)?;
                let code = if (0xd800..0xdc00).contains(&high) {
                    if self.byte()? != Some(b'\\') || self.byte()? != Some(b'u') {
                        return Err("a lone surrogate in a string".into());
                    }
                    let low = hex4(self)?;
                    if !(0xdc00..0xe000).contains(&low) {
                        return Err("a lone surrogate in a string".into());
                    }
                    0x10000 + ((high - 0xd800) << 10) + (low - 0xdc00)
                } else {
                    high
                };
                char::from_u32(code).ok_or_else(|| "a lone surrogate in a string".into())
            }
            other => Err(format!("a bad escape `\\{}` in a string", other as char)),
        }
    }

    /// The rest of a string of at most [`SHORT_STRING`] bytes.
    fn short_string(&mut self) -> Result<String, String> {
        let mut text = String::new();
        while let Some(c) = self.string_char()? {
            text.push(c);
            if text.len() > SHORT_STRING {
                return Err(format!("a name is longer than {SHORT_STRING} bytes"));
            }
        }
        Ok(text)
    }

    /// The rest of a base64 string, decoded into `upload` a piece at a time.
    fn base64_string(&mut self, upload: &mut Upload) -> Result<(), String> {
        const PIECE: usize = 1 << 20;
        let mut text = String::with_capacity(PIECE);
        loop {
            let room = PIECE.saturating_sub(text.len());
            self.plain_run(&mut text, room)?;
            if text.len() < PIECE {
                match self.string_char()? {
                    Some(c) => text.push(c),
                    None => break,
                }
            }
            if text.len() >= PIECE {
                upload
                    .write_base64(&text)
                    .map_err(|err| format!("content_base64 is not valid base64: {err}"))?;
                text.clear();
            }
        }
        upload
            .write_base64(&text)
            .map_err(|err| format!("content_base64 is not valid base64: {err}"))
    }
}

impl Drop for Upload {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::admission::Admission;
    use std::time::Duration;

    #[tokio::test]
    async fn a_staged_upload_is_private_whole_and_gone_when_dropped() {
        use std::os::unix::fs::PermissionsExt;
        let state = std::env::temp_dir().join(format!("warden-staging-{}", std::process::id()));
        std::fs::create_dir_all(state.join("uploads")).unwrap();
        std::fs::write(state.join("uploads/left-over"), b"x").unwrap();
        let staging = Staging::new(&state).unwrap();
        assert!(!state.join("uploads/left-over").exists());
        let mode = std::fs::metadata(state.join("uploads"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
        let admission = Admission::new(1, 0, Duration::from_millis(10));
        let mut upload = staging.stage(admission.admit().await.unwrap()).unwrap();
        // The upload holds the slot: nothing else is admitted meanwhile.
        assert!(admission.admit().await.is_err());
        upload.write(b"abc").unwrap();
        upload.write_base64("ZGVm").unwrap();
        assert!(upload.write_base64("ZGV").is_err());
        assert!(upload.write_base64("ZG=m").is_err());
        assert_eq!(upload.len(), 6);
        let path = upload.finish().unwrap().to_path_buf();
        assert_eq!(std::fs::read(&path).unwrap(), b"abcdef");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        drop(upload);
        assert!(!path.exists());
        assert!(admission.admit().await.is_ok());
        std::fs::remove_dir_all(&state).unwrap();
    }

    #[tokio::test]
    async fn a_json_upload_is_decoded_as_serde_would_read_it() {
        use base64::Engine;
        let state = std::env::temp_dir().join(format!("warden-json-{}", std::process::id()));
        std::fs::create_dir_all(&state).unwrap();
        let staging = Staging::new(&state).unwrap();
        let admission = Admission::new(4, 0, Duration::from_millis(10));
        let content: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let encoded = base64::engine::general_purpose::STANDARD.encode(&content);
        let mut upload = staging.stage(admission.admit().await.unwrap()).unwrap();
        // Any spelling a JSON encoder may choose: escaped slashes and names, members reordered.
        let body = format!(
            " {{ \"content_base64\" : \"{}\",\n\"name\":\"d\\u00e9j\\u00e0/\\ud83d\\ude00.bin\" }} ",
            encoded.replace('/', "\\/")
        );
        let name = upload.write_json(body.as_bytes()).unwrap();
        assert_eq!(name, "déjà/😀.bin");
        let path = upload.finish().unwrap().to_path_buf();
        assert_eq!(std::fs::read(&path).unwrap(), content);
        for (bad, why) in [
            ("{\"name\": \"a\"}", "no `content_base64`"),
            ("{\"content_base64\": \"\"}", "no `name`"),
            (
                "{\"name\": \"a\", \"content_base64\": \"eA==\", \"x\": \"\"}",
                "unknown member",
            ),
            (
                "{\"name\": \"a\", \"name\": \"b\", \"content_base64\": \"\"}",
                "twice",
            ),
            ("{\"name\": \"a\", \"content_base64\": \"eA=\"}", "base64"),
            (
                "{\"name\": \"a\", \"content_base64\": \"eA==\"} x",
                "more after",
            ),
            ("{\"name\": 1, \"content_base64\": \"\"}", "expected"),
            ("{\"name\": \"a", "not closed"),
            ("{}", "no `name`"),
        ] {
            let mut upload = staging.stage(admission.admit().await.unwrap()).unwrap();
            let err = upload.write_json(bad.as_bytes()).unwrap_err();
            assert!(err.contains(why), "{bad}: {err}");
        }
        drop(upload);
        std::fs::remove_dir_all(&state).unwrap();
    }
}
