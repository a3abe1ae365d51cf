//! Every rule warden knows, in one table.
//!
//! Each rule lives in its own file under a family folder, with its documentation (`DOC`: *What it does*,
//! *Why is this bad?*, *Example*, *Evasions handled*, *Known gaps*) next to its check. Where a check is
//! shared with other rules or must run before the checker (the source rules, FILE704), the rule's `//!`
//! says where it is. The checker (`checker.rs`) is the one place that calls the rules. This table gives
//! each rule its stable id, name, family, severity and default action; `warden rules explain ID` prints
//! its DOC.

use std::fmt;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::finding::{Action, Severity};

pub(crate) mod attributes;
pub(crate) mod dynamic;
pub(crate) mod files;
pub(crate) mod imports;
pub(crate) mod references;
pub mod runtime;
pub(crate) mod source;
pub(crate) mod strings;

macro_rules! rule_table {
    ($( $variant:ident => $id:literal, $name:literal, $family:literal, $severity:ident, $action:ident, $doc:path; )*) => {
        /// A rule, by its stable id.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Rule {
            $( $variant, )*
        }

        impl Rule {
            /// Every rule, in table order.
            pub const ALL: &'static [Rule] = &[$( Rule::$variant, )*];

            /// The stable id, e.g. `ATTR301`.
            pub fn id(self) -> &'static str {
                match self { $( Rule::$variant => $id, )* }
            }

            /// The kebab-case name, e.g. `dunder-attribute`.
            pub fn name(self) -> &'static str {
                match self { $( Rule::$variant => $name, )* }
            }

            /// The family (`source`, `imports`, `references`, `attributes`, `dynamic`, `strings`, `files`).
            pub fn family(self) -> &'static str {
                match self { $( Rule::$variant => $family, )* }
            }

            pub fn severity(self) -> Severity {
                match self { $( Rule::$variant => Severity::$severity, )* }
            }

            /// The action when the rules file does not override it.
            pub fn default_action(self) -> Action {
                match self { $( Rule::$variant => Action::$action, )* }
            }

            /// The rule's documentation, in Markdown.
            pub fn doc(self) -> &'static str {
                match self { $( Rule::$variant => $doc, )* }
            }
        }
    };
}

rule_table! {
    SyntaxError => "SYN001", "syntax-error", "source", High, Deny, source::syntax_error::DOC;
    UnsupportedSyntax => "SYN002", "unsupported-syntax", "source", Medium, Deny, source::unsupported_syntax::DOC;
    SourceEncoding => "SYN003", "source-encoding", "source", High, Deny, source::source_encoding::DOC;
    SourceLimits => "SYN004", "source-limits", "source", Medium, Deny, source::source_limits::DOC;
    ImportNotAllowed => "IMP101", "import-not-allowed", "imports", High, Deny, imports::import_not_allowed::DOC;
    StarImport => "IMP102", "star-import", "imports", Medium, Deny, imports::star_import::DOC;
    RelativeImport => "IMP103", "relative-import", "imports", Medium, Deny, imports::relative_import::DOC;
    BannedReference => "REF201", "banned-reference", "references", High, Deny, references::banned_reference::DOC;
    BannedMethod => "REF202", "banned-method", "references", High, Deny, references::banned_method::DOC;
    DunderAttribute => "ATTR301", "dunder-attribute", "attributes", High, Deny, attributes::dunder_attribute::DOC;
    PrivateAttribute => "ATTR302", "private-attribute", "attributes", Medium, Deny, attributes::private_attribute::DOC;
    FrameAttribute => "ATTR303", "frame-attribute", "attributes", Critical, Deny, attributes::frame_attribute::DOC;
    ComputedAttribute => "ATTR304", "computed-attribute", "attributes", High, Deny, attributes::computed_attribute::DOC;
    DynamicCode => "DYN401", "dynamic-code", "dynamic", Critical, Deny, dynamic::dynamic_code::DOC;
    DynamicImport => "DYN402", "dynamic-import", "dynamic", Critical, Deny, dynamic::dynamic_import::DOC;
    Reflection => "DYN403", "reflection", "dynamic", High, Deny, dynamic::reflection::DOC;
    ClassHook => "DYN404", "class-hook", "dynamic", High, Deny, dynamic::class_hook::DOC;
    ComputedCodeString => "DYN405", "computed-code-string", "dynamic", High, Deny, dynamic::computed_code_string::DOC;
    ReexportedModule => "REX501", "reexported-module", "imports", Critical, Deny, imports::reexported_module::DOC;
    ModuleNamedAttribute => "REX502", "module-named-attribute", "imports", Medium, Warn, imports::module_named_attribute::DOC;
    StringSink => "STR601", "string-sink", "strings", High, Deny, strings::string_sink::DOC;
    DynamicStringSink => "STR602", "dynamic-string-sink", "strings", Medium, Warn, strings::dynamic_string_sink::DOC;
    PathNotReadable => "FILE701", "path-not-readable", "files", High, Deny, files::path_not_readable::DOC;
    PathNotWritable => "FILE702", "path-not-writable", "files", High, Deny, files::path_not_writable::DOC;
    UrlAccess => "FILE703", "url-access", "files", High, Deny, files::url_access::DOC;
    DynamicPath => "FILE704", "dynamic-path", "files", Low, Warn, files::dynamic_path::DOC;
}

impl Rule {
    /// Looks a rule up by id (`ATTR301`) or name (`dunder-attribute`), case-insensitively for ids.
    pub fn from_id(text: &str) -> Option<Rule> {
        Rule::ALL
            .iter()
            .copied()
            .find(|rule| rule.id().eq_ignore_ascii_case(text) || rule.name() == text)
    }

    /// Source rules decide whether the program can be judged at all; they always deny.
    pub fn is_source_rule(self) -> bool {
        self.family() == "source"
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl Serialize for Rule {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.id())
    }
}

/// A rule id read back from a record (a worker's reply, a stored report).
impl<'de> Deserialize<'de> for Rule {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let id = String::deserialize(deserializer)?;
        Rule::from_id(&id).ok_or_else(|| D::Error::custom(format!("unknown rule id {id:?}")))
    }
}

#[cfg(test)]
mod tests {
    use super::Rule;

    #[test]
    fn every_rule_is_documented_with_the_fixed_headings() {
        for rule in Rule::ALL {
            let doc = rule.doc();
            for heading in [
                "## What it does",
                "## Why is this bad?",
                "## Example",
                "## Evasions handled",
                "## Known gaps",
            ] {
                assert!(doc.contains(heading), "{} lacks `{heading}`", rule.id());
            }
        }
    }

    #[test]
    fn ids_and_names_are_unique_and_round_trip() {
        for rule in Rule::ALL {
            assert_eq!(Rule::from_id(rule.id()), Some(*rule));
            assert_eq!(Rule::from_id(rule.name()), Some(*rule));
        }
        let mut ids: Vec<_> = Rule::ALL.iter().map(|r| r.id()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), Rule::ALL.len());
    }
}
