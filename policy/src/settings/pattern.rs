//! Patterns over dotted names, as written in the rules file.

use std::fmt;

/// A dotted-name pattern: `os.system` matches exactly that name; `subprocess.*` matches every name below
/// `subprocess` (but not `subprocess` itself); `*` alone matches everything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamePattern {
    segments: Vec<String>,
    subtree: bool,
}

impl NamePattern {
    /// Parses a pattern; `None` when it is not a dotted identifier path with an optional trailing `.*`.
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        if text == "*" {
            return Some(Self {
                segments: Vec::new(),
                subtree: true,
            });
        }
        let (body, subtree) = match text.strip_suffix(".*") {
            Some(body) => (body, true),
            None => (text, false),
        };
        let segments: Vec<String> = body.split('.').map(str::to_owned).collect();
        let valid = segments.iter().all(|segment| {
            let mut chars = segment.chars();
            matches!(chars.next(), Some(c) if c == '_' || c.is_alphabetic())
                && chars.all(|c| c == '_' || c.is_alphanumeric())
        });
        valid.then_some(Self { segments, subtree })
    }

    /// True when the pattern matches `name` exactly (a module path in an import).
    pub fn matches(&self, name: &[&str]) -> bool {
        if self.subtree {
            name.len() > self.segments.len() && self.is_prefix_of(name)
        } else {
            name.len() == self.segments.len() && self.is_prefix_of(name)
        }
    }

    /// True when the pattern matches `name` or one of its prefixes: a member of a banned object is banned.
    pub fn matches_prefix_of(&self, name: &[&str]) -> bool {
        (1..=name.len()).any(|len| self.matches(&name[..len]))
    }

    /// True when the pattern names one exact path, with no wildcard.
    pub fn is_exact(&self) -> bool {
        !self.subtree
    }

    fn is_prefix_of(&self, name: &[&str]) -> bool {
        self.segments.iter().zip(name).all(|(a, b)| a == b)
    }

    /// The first segment (`os` for `os.path`), if any.
    pub fn root(&self) -> Option<&str> {
        self.segments.first().map(String::as_str)
    }
}

impl fmt::Display for NamePattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.segments.is_empty(), self.subtree) {
            (true, _) => f.write_str("*"),
            (false, true) => write!(f, "{}.*", self.segments.join(".")),
            (false, false) => f.write_str(&self.segments.join(".")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::NamePattern;

    fn pattern(text: &str) -> NamePattern {
        NamePattern::parse(text).unwrap_or_else(|| panic!("bad pattern {text}"))
    }

    #[test]
    fn exact_pattern_matches_only_itself() {
        let p = pattern("numpy");
        assert!(p.matches(&["numpy"]));
        assert!(!p.matches(&["numpy", "ctypeslib"]));
        assert!(p.matches_prefix_of(&["numpy", "ctypeslib"]));
    }

    #[test]
    fn subtree_pattern_matches_below_only() {
        let p = pattern("subprocess.*");
        assert!(!p.matches(&["subprocess"]));
        assert!(p.matches(&["subprocess", "run"]));
        assert!(p.matches(&["subprocess", "run", "x"]));
        assert!(!p.matches(&["subprocessing", "run"]));
    }

    #[test]
    fn malformed_patterns_are_rejected() {
        for bad in ["", "os..path", "os.", "1os", "os.*.x", "os path"] {
            assert!(NamePattern::parse(bad).is_none(), "{bad}");
        }
    }
}
