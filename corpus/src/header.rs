//! Reading a corpus case's header: the `# key: value` lines at the top of a Python file, turned into
//! a validated [`CaseSpec`].
//!
//! Owns: the header grammar of `corpus/README.md` (BOM, ASCII keys, coding declarations that are
//! not keys) and the rules for required keys and values. Does not own: the `expect-jail` language
//! (`effects.rs`) or finding files (`load.rs`). Every error names the file and the line.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use super::effects::Effect;

/// The header keys warden reads; any other key is ignored (so teams can add their own).
pub const KEYS: [&str; 11] = [
    "warden-case",
    "group",
    "technique",
    "variant",
    "references",
    "expect-static",
    "expect-rules",
    "expect-jail",
    "expect-output",
    "expect-runtime",
    "session",
];

/// The groups of attacks (corpus/README.md, "Groups") plus `JAIL`; benign cases use `BENIGN`.
pub const GROUPS: [&str; 15] = [
    "A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K", "L", "M", "JAIL", "BENIGN",
];

/// A malformed header: where and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderError {
    pub file: PathBuf,
    pub line: usize,
    pub message: String,
}

impl fmt::Display for HeaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file.display(), self.line, self.message)
    }
}

impl std::error::Error for HeaderError {}

/// The static verdict a case expects from `warden check` with the default policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExpectStatic {
    Allow,
    Deny,
}

impl ExpectStatic {
    pub fn as_str(self) -> &'static str {
        match self {
            ExpectStatic::Allow => "allow",
            ExpectStatic::Deny => "deny",
        }
    }
}

/// What a case in warden's header format expects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CaseSpec {
    Attack {
        expect_static: ExpectStatic,
        /// Rules `warden check` must report (empty for `none`).
        expect_rules: Vec<String>,
        /// Host-side effects with the static layer off.
        expect_jail: Vec<Effect>,
        /// The rule the runtime layer stops it with when the static layer is off
        /// (`expect-runtime`); `None`: the runtime layer is not expected to stop it.
        expect_runtime: Option<String>,
    },
    Benign {
        /// A substring stdout must contain after a successful run.
        expect_output: String,
    },
}

/// A parsed header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub id: String,
    pub group: String,
    pub technique: String,
    pub variant: Option<String>,
    pub references: Vec<String>,
    pub spec: CaseSpec,
}

/// One `key: value` line, with its line number (1-based).
type Fields = BTreeMap<String, (usize, String)>;

/// Reads the raw `key: value` pairs of a header (header lines are ASCII; the rest of the file may
/// be in any encoding, so this works on bytes).
pub fn fields(file: &Path, bytes: &[u8]) -> Result<Fields, HeaderError> {
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let mut fields = Fields::new();
    for (index, raw) in bytes.split(|b| *b == b'\n').enumerate() {
        let line = index + 1;
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let Some(rest) = raw.strip_prefix(b"#") else {
            break;
        };
        let text = String::from_utf8_lossy(rest);
        let Some((key, value)) = text.split_once(':') else {
            continue;
        };
        let key = key.trim();
        let is_key = key.starts_with(|c: char| c.is_ascii_lowercase())
            && key
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if !is_key || !KEYS.contains(&key) {
            continue;
        }
        if let Some((first, _)) = fields.get(key) {
            return Err(HeaderError {
                file: file.to_path_buf(),
                line,
                message: format!("`{key}` given twice (first on line {first})"),
            });
        }
        fields.insert(key.to_owned(), (line, value.trim().to_owned()));
    }
    Ok(fields)
}

/// Parses and validates the header of `file` (its content is `bytes`).
pub fn parse(file: &Path, bytes: &[u8]) -> Result<Header, HeaderError> {
    let fields = fields(file, bytes)?;
    let last_line = fields.values().map(|(line, _)| *line).max().unwrap_or(1);
    let error = |line: usize, message: String| HeaderError {
        file: file.to_path_buf(),
        line,
        message,
    };
    let required = |key: &str| -> Result<(usize, &str), HeaderError> {
        match fields.get(key) {
            Some((line, value)) if !value.is_empty() => Ok((*line, value.as_str())),
            Some((line, _)) => Err(error(*line, format!("`{key}` is empty"))),
            None => Err(error(
                last_line,
                format!("the header has no `{key}:` line (see corpus/README.md, \"Header\")"),
            )),
        }
    };
    let (id_line, id) = required("warden-case")?;
    let valid_id = id
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !valid_id {
        return Err(error(
            id_line,
            format!("case id `{id}` must be lowercase letters, digits and `-`"),
        ));
    }
    let (group_line, group) = required("group")?;
    if !GROUPS.contains(&group) {
        return Err(error(
            group_line,
            format!("unknown group `{group}` ({})", GROUPS.join(", ")),
        ));
    }
    let (_, technique) = required("technique")?;
    let (static_line, expect_static) = required("expect-static")?;
    let expect_static = match expect_static {
        "allow" => ExpectStatic::Allow,
        "deny" => ExpectStatic::Deny,
        other => {
            return Err(error(
                static_line,
                format!("expect-static must be `allow` or `deny`, not `{other}`"),
            ))
        }
    };
    let references = fields
        .get("references")
        .map(|(_, v)| {
            v.split(',')
                .map(str::trim)
                .filter(|r| !r.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let spec = if group == "BENIGN" {
        if expect_static != ExpectStatic::Allow {
            return Err(error(
                static_line,
                "a benign case must expect `allow`".to_owned(),
            ));
        }
        let (_, output) = required("expect-output")?;
        if let Some((line, _)) = fields.get("expect-runtime") {
            return Err(error(
                *line,
                "expect-runtime names the rule that stops an attack; a benign case has none"
                    .to_owned(),
            ));
        }
        CaseSpec::Benign {
            expect_output: output.to_owned(),
        }
    } else {
        let (_, rules) = required("expect-rules")?;
        let expect_rules: Vec<String> = rules
            .split([' ', ','])
            .filter(|r| !r.is_empty() && *r != "none")
            .map(str::to_owned)
            .collect();
        let (jail_line, jail) = required("expect-jail")?;
        let expect_jail = Effect::parse_list(jail)
            .map_err(|err| error(jail_line, format!("expect-jail: {err}")))?;
        let expect_runtime = match fields.get("expect-runtime") {
            None => None,
            Some((_, rule)) if is_rule_id(rule) => Some(rule.clone()),
            Some((line, rule)) => {
                return Err(error(
                    *line,
                    format!("expect-runtime must be one rule id (`PROC801`), not `{rule}`"),
                ))
            }
        };
        CaseSpec::Attack {
            expect_static,
            expect_rules,
            expect_jail,
            expect_runtime,
        }
    };
    if let Some((line, value)) = fields.get(crate::session::KEY) {
        if value != crate::session::VALUE || !matches!(spec, CaseSpec::Attack { .. }) {
            return Err(error(
                *line,
                format!(
                    "`session: {}` makes an attack a session of cells (corpus/README.md, \"Attack sessions\"); not `{value}`, and only for attacks",
                    crate::session::VALUE
                ),
            ));
        }
    }
    let variant = fields.get("variant").map(|(_, v)| v.clone());
    if matches!(spec, CaseSpec::Attack { .. }) && variant.is_none() {
        required("variant")?;
    }
    Ok(Header {
        id: id.to_owned(),
        group: group.to_owned(),
        technique: technique.to_owned(),
        variant,
        references,
        spec,
    })
}

/// A rule id: upper-case letters then digits (`PROC801`, `IMP101`).
fn is_rule_id(text: &str) -> bool {
    let digits = text.trim_start_matches(|c: char| c.is_ascii_uppercase());
    digits.len() < text.len() && !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    const ATTACK: &str = "# warden-case: jail-tcp-loopback\n\
        # group: JAIL\n\
        # technique: TCP to the host's loopback\n\
        # variant: plain\n\
        # references: CVE-2025-1, https://example.invalid/a\n\
        # expect-static: deny\n\
        # expect-rules: IMP101 REF201\n\
        # expect-jail: no-connect tcp4:127.0.0.1:5758; no-survivor\n\
        import socket\n\
        # not a header line any more: expect-static: allow\n";

    fn parse_str(text: &str) -> Result<Header, HeaderError> {
        parse(Path::new("case.py"), text.as_bytes())
    }

    #[test]
    fn session_is_cells_and_only_for_attacks() {
        let session = ATTACK.replace("# expect-jail:", "# session: cells\n# expect-jail:");
        assert!(parse_str(&session).is_ok());
        let wrong = ATTACK.replace("# expect-jail:", "# session: yes\n# expect-jail:");
        let err = parse_str(&wrong).expect_err("not cells");
        assert!(err.message.contains("session: cells"), "{err}");
        let benign = "# warden-case: b\n# group: BENIGN\n# technique: t\n# expect-static: allow\n\
            # expect-output: OK\n# session: cells\nx = 1\n";
        assert!(parse_str(benign).is_err());
    }

    #[test]
    fn an_attack_header_parses_with_its_effects() {
        let header = parse_str(ATTACK).unwrap();
        assert_eq!(header.id, "jail-tcp-loopback");
        assert_eq!(header.group, "JAIL");
        assert_eq!(header.references.len(), 2);
        let CaseSpec::Attack {
            expect_static,
            expect_rules,
            expect_jail,
            expect_runtime,
        } = header.spec
        else {
            panic!("not an attack")
        };
        assert_eq!(expect_static, ExpectStatic::Deny);
        assert_eq!(expect_rules, ["IMP101", "REF201"]);
        assert_eq!(expect_jail.len(), 2);
        assert_eq!(expect_runtime, None);
    }

    #[test]
    fn expect_runtime_names_one_rule_of_an_attack() {
        let with = ATTACK.replace("# expect-jail:", "# expect-runtime: NET802\n# expect-jail:");
        let header = parse_str(&with).unwrap();
        let CaseSpec::Attack { expect_runtime, .. } = header.spec else {
            panic!("not an attack")
        };
        assert_eq!(expect_runtime.as_deref(), Some("NET802"));
        for bad in ["NET802 PROC801", "net802", "802", "NET", "runtime"] {
            let text = ATTACK.replace(
                "# expect-jail:",
                &format!("# expect-runtime: {bad}\n# expect-jail:"),
            );
            let err = parse_str(&text).unwrap_err();
            assert_eq!(err.line, 8, "{bad}: {err}");
            assert!(err.message.starts_with("expect-runtime must be"), "{err}");
        }
        let benign = "# warden-case: pandas-x\n# group: BENIGN\n# technique: t\n\
            # expect-static: allow\n# expect-output: OK\n# expect-runtime: PROC801\nx = 1\n";
        let err = parse_str(benign).unwrap_err();
        assert_eq!(err.line, 6);
        assert!(err.message.contains("a benign case has none"), "{err}");
    }

    #[test]
    fn bom_crlf_and_coding_declarations_are_handled() {
        let text = "\u{feff}# warden-case: l-x\r\n# -*- coding: utf-7 -*-\r\n# vim: set fileencoding=utf-7 :\r\n\
                    # group: L\r\n# technique: t\r\n# variant: other\r\n# expect-static: deny\r\n\
                    # expect-rules: SYN003\r\n# expect-jail: status error\r\nx = 1\r\n";
        let header = parse_str(text).unwrap();
        assert_eq!(header.id, "l-x");
        assert!(matches!(header.spec, CaseSpec::Attack { .. }));
    }

    #[test]
    fn non_utf8_bodies_do_not_matter() {
        let mut bytes = ATTACK.as_bytes().to_vec();
        bytes.extend_from_slice(b"x = '\xff\xfe'\n\0\n");
        assert!(parse(Path::new("case.py"), &bytes).is_ok());
    }

    #[test]
    fn a_benign_header_needs_its_output() {
        let text =
            "# warden-case: pandas-x\n# group: BENIGN\n# technique: t\n# expect-static: allow\n\
                    # expect-output: OK: 3\nprint('OK: 3')\n";
        let header = parse_str(text).unwrap();
        assert_eq!(
            header.spec,
            CaseSpec::Benign {
                expect_output: "OK: 3".to_owned()
            }
        );
        let missing = parse_str(&text.replace("# expect-output: OK: 3\n", "")).unwrap_err();
        assert!(missing.message.contains("no `expect-output:`"), "{missing}");
    }

    #[test]
    fn errors_name_file_line_and_problem() {
        let bad_jail = parse_str(&ATTACK.replace("no-survivor", "no-survivors")).unwrap_err();
        assert_eq!(bad_jail.line, 8);
        assert!(bad_jail.to_string().starts_with("case.py:8: expect-jail:"));
        assert!(bad_jail.message.contains("unknown effect `no-survivors`"));

        let twice = parse_str(&ATTACK.replace("# variant: plain\n", "# group: A\n")).unwrap_err();
        assert_eq!(twice.line, 4);
        assert!(twice.message.contains("given twice"));

        let group = parse_str(&ATTACK.replace("JAIL", "Z")).unwrap_err();
        assert_eq!(group.line, 2);

        let verdict = parse_str(&ATTACK.replace("static: deny", "static: maybe")).unwrap_err();
        assert_eq!(verdict.line, 6);

        let no_header = parse_str("import os\n").unwrap_err();
        assert!(no_header.message.contains("no `warden-case:`"));

        let id = parse_str(&ATTACK.replace("jail-tcp-loopback", "Jail_Tcp")).unwrap_err();
        assert!(id.message.contains("lowercase"));
    }
}
