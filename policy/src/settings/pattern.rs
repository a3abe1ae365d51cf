//! Patterns over dotted names, as written in the rules file.

use foldhash::{HashMap, HashMapExt};
use std::fmt;
use std::ops::Deref;

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

    /// The dotted segments before any `.*`.
    pub fn segments(&self) -> &[String] {
        &self.segments
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

/// The patterns of one rules-file list, in the order written, indexed by their first segment.
///
/// A dotted name can only match the patterns that share its first segment (and `*`), so matching looks
/// at those few instead of the whole list: the checker matches every reference it resolves. Derefs to
/// the patterns as written.
#[derive(Debug, Clone, Default)]
pub struct PatternSet {
    patterns: Vec<NamePattern>,
    /// Indices into `patterns`, ascending, by first segment.
    by_root: HashMap<String, Vec<usize>>,
    /// Indices of the patterns without a first segment (`*`), ascending.
    everything: Vec<usize>,
}

impl PatternSet {
    pub fn new(patterns: Vec<NamePattern>) -> Self {
        let mut by_root: HashMap<String, Vec<usize>> = HashMap::new();
        let mut everything = Vec::new();
        for (index, pattern) in patterns.iter().enumerate() {
            match pattern.root() {
                Some(root) => by_root.entry(root.to_owned()).or_default().push(index),
                None => everything.push(index),
            }
        }
        Self {
            patterns,
            by_root,
            everything,
        }
    }

    /// The indices of the patterns that may match a name starting with `root`, in no particular order.
    fn candidates<'s>(&'s self, root: Option<&&str>) -> impl Iterator<Item = usize> + 's {
        let rooted = root
            .and_then(|root| self.by_root.get(*root))
            .map_or(&[][..], Vec::as_slice);
        rooted.iter().chain(&self.everything).copied()
    }

    /// True when some pattern [`matches`](NamePattern::matches) `name`.
    pub fn any_matches(&self, name: &[&str]) -> bool {
        self.candidates(name.first())
            .any(|index| self.patterns[index].matches(name))
    }

    /// True when some exact pattern (no wildcard) matches `name`.
    pub fn any_exact_matches(&self, name: &[&str]) -> bool {
        self.candidates(name.first()).any(|index| {
            let pattern = &self.patterns[index];
            pattern.is_exact() && pattern.matches(name)
        })
    }

    /// The first pattern, in written order, that [matches a prefix](NamePattern::matches_prefix_of)
    /// of `name`.
    pub fn first_matching_prefix_of(&self, name: &[&str]) -> Option<&NamePattern> {
        self.candidates(name.first())
            .filter(|&index| self.patterns[index].matches_prefix_of(name))
            .min()
            .map(|index| &self.patterns[index])
    }
}

impl Deref for PatternSet {
    type Target = [NamePattern];

    fn deref(&self) -> &[NamePattern] {
        &self.patterns
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
    fn pattern_set_agrees_with_a_linear_scan() {
        let texts = [
            "os.path",
            "os",
            "subprocess.*",
            "numpy.*",
            "numpy.ctypeslib",
            "os.*",
            "*",
            "pandas",
        ];
        let names: [&[&str]; 8] = [
            &["os"],
            &["os", "path"],
            &["os", "system", "x"],
            &["subprocess"],
            &["subprocess", "run"],
            &["numpy", "ctypeslib", "x"],
            &["pandas"],
            &[],
        ];
        for skip in 0..texts.len() {
            let list: Vec<NamePattern> = texts.iter().skip(skip).map(|t| pattern(t)).collect();
            let set = super::PatternSet::new(list.clone());
            for name in names {
                assert_eq!(
                    set.any_matches(name),
                    list.iter().any(|p| p.matches(name)),
                    "{name:?}"
                );
                assert_eq!(
                    set.any_exact_matches(name),
                    list.iter().any(|p| p.is_exact() && p.matches(name)),
                    "{name:?}"
                );
                assert_eq!(
                    set.first_matching_prefix_of(name),
                    list.iter().find(|p| p.matches_prefix_of(name)),
                    "{name:?}"
                );
            }
        }
    }

    #[test]
    fn malformed_patterns_are_rejected() {
        for bad in ["", "os..path", "os.", "1os", "os.*.x", "os path"] {
            assert!(NamePattern::parse(bad).is_none(), "{bad}");
        }
    }
}
