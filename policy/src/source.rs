//! Source decoding: bytes in, the one text that is both checked and run.
//!
//! CPython and warden must read the same program. warden decodes once, here, and hands the decoded text
//! to the interpreter, so no coding declaration, byte-order mark or newline convention can make CPython
//! see something other than what was checked. This module does not parse.

use std::fmt;

/// The program as warden will check it and the interpreter will run it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Decoded {
    /// UTF-8 text with the BOM removed and every `\r\n` or lone `\r` turned into `\n`.
    pub text: String,
}

/// Why the bytes are not a program warden accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceError {
    TooLarge { bytes: usize, limit: usize },
    InvalidUtf8 { offset: usize },
    NulByte { offset: usize },
    Coding { offset: usize, encoding: String },
}

impl SourceError {
    /// Byte offset into the input where the problem is.
    pub fn offset(&self) -> usize {
        match self {
            SourceError::TooLarge { .. } => 0,
            SourceError::InvalidUtf8 { offset }
            | SourceError::NulByte { offset }
            | SourceError::Coding { offset, .. } => *offset,
        }
    }
}

impl fmt::Display for SourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SourceError::TooLarge { bytes, limit } => {
                write!(f, "program is {bytes} bytes; the policy accepts at most {limit}")
            }
            SourceError::InvalidUtf8 { offset } => write!(f, "invalid UTF-8 at byte {offset}"),
            SourceError::NulByte { offset } => write!(f, "NUL byte at byte {offset}"),
            SourceError::Coding { encoding, .. } => write!(
                f,
                "coding declaration `{encoding}`: only UTF-8 source is accepted (another encoding would make \
                 CPython read different code than warden checked)"
            ),
        }
    }
}

/// Decodes program bytes, rejecting everything CPython could read differently.
pub fn decode(bytes: &[u8], max_bytes: usize) -> Result<Decoded, SourceError> {
    if bytes.len() > max_bytes {
        return Err(SourceError::TooLarge {
            bytes: bytes.len(),
            limit: max_bytes,
        });
    }
    let (body, bom) = match bytes.strip_prefix(b"\xEF\xBB\xBF") {
        Some(rest) => (rest, 3),
        None => (bytes, 0),
    };
    let text = std::str::from_utf8(body).map_err(|err| SourceError::InvalidUtf8 {
        offset: bom + err.valid_up_to(),
    })?;
    if let Some(offset) = memchr_nul(text.as_bytes()) {
        return Err(SourceError::NulByte {
            offset: bom + offset,
        });
    }
    if let Some((offset, encoding)) = coding_declaration(text) {
        if !is_utf8_name(&encoding) {
            return Err(SourceError::Coding {
                offset: bom + offset,
                encoding,
            });
        }
    }
    Ok(Decoded {
        text: normalize_newlines(text),
    })
}

fn memchr_nul(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == 0)
}

/// PEP 263: a comment on line 1 or 2 matching `coding[:=]\s*([-\w.]+)`; line 2 counts only when line 1
/// is blank or a comment. Returns the byte offset of the line and the encoding name.
fn coding_declaration(text: &str) -> Option<(usize, String)> {
    let mut offset = 0;
    for (index, line) in text.split_inclusive(['\n', '\r']).take(2).enumerate() {
        let trimmed = line.trim_start_matches([' ', '\t', '\x0c']);
        if trimmed.starts_with('#') {
            if let Some(encoding) = coding_in_comment(trimmed) {
                return Some((offset, encoding));
            }
        } else if index == 0 && !trimmed.trim().is_empty() {
            return None;
        }
        offset += line.len();
    }
    None
}

fn coding_in_comment(comment: &str) -> Option<String> {
    let at = comment.find("coding")?;
    let rest = &comment[at + "coding".len()..];
    let rest = rest.strip_prefix([':', '='])?;
    let rest = rest.trim_start_matches([' ', '\t']);
    let name: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .collect();
    (!name.is_empty()).then_some(name)
}

/// CPython's own normalisation: `utf-8`, `utf_8`, `utf8` and `utf-8-*` in any case are UTF-8.
fn is_utf8_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase().replace('_', "-");
    name == "utf-8" || name == "utf8" || name.starts_with("utf-8-")
}

fn normalize_newlines(text: &str) -> String {
    if !text.contains('\r') {
        return text.to_owned();
    }
    text.replace("\r\n", "\n").replace('\r', "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_utf8_passes_through() {
        assert_eq!(
            decode(b"print(1)\n", 100).map(|d| d.text),
            Ok("print(1)\n".to_owned())
        );
    }

    #[test]
    fn bom_is_removed_and_newlines_normalised() {
        let decoded = decode(b"\xEF\xBB\xBFa = 1\r\nb = 2\rc = 3", 100);
        assert_eq!(
            decoded.map(|d| d.text),
            Ok("a = 1\nb = 2\nc = 3".to_owned())
        );
    }

    #[test]
    fn other_coding_declarations_are_rejected() {
        for source in [
            "# -*- coding: utf-7 -*-\nx = 1\n",
            "#!/usr/bin/python\n# vim: set fileencoding=latin-1 :\n",
            "\n# coding=cp1252\n",
        ] {
            assert!(
                matches!(
                    decode(source.as_bytes(), 1000),
                    Err(SourceError::Coding { .. })
                ),
                "{source}"
            );
        }
        for source in [
            "# coding: utf-8\n",
            "# -*- coding: UTF_8 -*-\n",
            "x = 1\n# coding: latin-1\n",
        ] {
            assert!(decode(source.as_bytes(), 1000).is_ok(), "{source}");
        }
    }

    #[test]
    fn nul_invalid_utf8_and_size_are_rejected() {
        assert_eq!(
            decode(b"a = 1\0", 100),
            Err(SourceError::NulByte { offset: 5 })
        );
        assert_eq!(
            decode(b"a = '\xff'", 100),
            Err(SourceError::InvalidUtf8 { offset: 5 })
        );
        assert!(matches!(
            decode(&[b' '; 101], 100),
            Err(SourceError::TooLarge { .. })
        ));
    }
}
