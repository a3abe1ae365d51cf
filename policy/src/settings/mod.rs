//! The rules file: raw TOML → validated [`Policy`].
//!
//! This module owns reading and validating the rules file. It is the only place that sees raw TOML; every
//! other part of warden (the checker, the jail plan, output validation) reads the validated [`Policy`].
//! It deliberately knows nothing about how the jail enforces the runtime settings.

mod extends;
mod locate;
mod pattern;
pub mod raw;
mod schema;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;

use sha2::{Digest, Sha256};

use locate::locate;
pub use pattern::{NamePattern, PatternSet};
use raw::RawRules;
pub use schema::json_schema;

use crate::finding::Action;
use crate::rules::Rule;

/// The built-in default policy: the same text as `rules/default.toml`.
pub const DEFAULT_RULES: &str = include_str!("../../../rules/default.toml");

/// The directory the program runs in, as the program sees it inside the jail. Relative paths in the
/// rules file and in the program are relative to it.
pub const WORKDIR: &str = "/work";

/// A rules file that could not be accepted, with where and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RulesError {
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// 1-based column, when known.
    pub column: Option<usize>,
    /// Dotted key path of the offending setting (e.g. `imports.alow`), when known.
    pub key: Option<String>,
    /// What is wrong.
    pub message: String,
    /// The file's other errors, in order: a rules file is reported whole, not one error at a time.
    pub more: Vec<RulesError>,
}

/// One error per line, each with its line, column and key path.
impl fmt::Display for RulesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, error) in self.all().enumerate() {
            if index > 0 {
                f.write_str("\n")?;
            }
            if let (Some(line), Some(column)) = (error.line, error.column) {
                write!(f, "{line}:{column}: ")?;
            }
            if let Some(key) = &error.key {
                write!(f, "`{key}`: ")?;
            }
            f.write_str(&error.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for RulesError {}

impl RulesError {
    fn at_key(key: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            line: None,
            column: None,
            key: Some(key.into()),
            message: message.into(),
            more: Vec::new(),
        }
    }

    /// Every error on a line of its own, each starting with `path:` (`bad.toml:5:1: …`).
    pub fn render(&self, path: &str) -> String {
        self.to_string()
            .lines()
            .map(|line| format!("{path}:{line}"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// This error and the file's others, in order (`more` is flat: its errors have no `more`).
    pub fn all(&self) -> impl Iterator<Item = &RulesError> {
        std::iter::once(self).chain(self.more.iter())
    }

    /// One error holding all of `errors` (flattened), or `None` when there are none.
    fn combine(errors: Vec<RulesError>) -> Option<RulesError> {
        let mut flat: Vec<RulesError> = Vec::new();
        for error in errors {
            for one in error.all() {
                let mut one = one.clone();
                one.more.clear();
                flat.push(one);
            }
        }
        let mut iter = flat.into_iter();
        let mut first = iter.next()?;
        first.more = iter.collect();
        Some(first)
    }
}

/// The errors of one validation pass, so that every mistake of a file is reported.
#[derive(Default)]
struct Errors(Vec<RulesError>);

impl Errors {
    /// The value, or `fallback` with the error kept.
    fn take<T>(&mut self, result: Result<T, RulesError>, fallback: T) -> T {
        result.unwrap_or_else(|error| {
            self.0.push(error);
            fallback
        })
    }

    fn push(&mut self, error: RulesError) {
        self.0.push(error);
    }

    fn finish<T>(self, value: T) -> Result<T, RulesError> {
        match RulesError::combine(self.0) {
            Some(error) => Err(error),
            None => Ok(value),
        }
    }
}

/// Source bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceLimits {
    pub max_bytes: usize,
    pub max_depth: usize,
    pub max_nodes: usize,
}

/// Import allow and deny patterns.
#[derive(Debug, Clone)]
pub struct ImportRules {
    pub allow: PatternSet,
    pub deny: PatternSet,
    /// Member allowlists of modules that are allowed only in part.
    pub members: BTreeMap<String, BTreeSet<String>>,
    guarded_roots: BTreeSet<String>,
    /// What IMP101's hint offers instead of a module the policy does not allow, sorted: derived from
    /// the patterns once, here, not for every denied import of every program.
    hint_modules: Vec<String>,
    /// IMP101's hints already made with this policy, by module ([`Self::hint_for`]).
    hint_cache: std::sync::Arc<std::sync::Mutex<BTreeMap<String, String>>>,
}

/// The longest module name whose IMP101 hint is kept ([`ImportRules::hint_for`]).
const HINT_CACHE_NAME: usize = 128;
/// How many modules' hints one policy keeps.
const HINT_CACHE_ENTRIES: usize = 1024;

/// Whether a module path may be imported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModuleVerdict {
    Allowed,
    /// Matches a deny pattern (a deny always wins).
    Denied,
    /// Matches no allow pattern.
    NotAllowed,
}

impl ImportRules {
    /// The verdict for importing exactly `module` (dotted segments).
    pub fn verdict(&self, module: &[&str]) -> ModuleVerdict {
        if self.deny.any_matches(module) {
            ModuleVerdict::Denied
        } else if self.allow.any_matches(module) {
            ModuleVerdict::Allowed
        } else {
            ModuleVerdict::NotAllowed
        }
    }

    /// True when `module` is allowed by a pattern naming it exactly (not through a `.*` wildcard).
    pub fn explicitly_allowed(&self, module: &[&str]) -> bool {
        self.verdict(module) == ModuleVerdict::Allowed && self.allow.any_exact_matches(module)
    }

    /// Builds the rules from validated patterns.
    pub fn new(
        allow: Vec<NamePattern>,
        deny: Vec<NamePattern>,
        members: BTreeMap<String, BTreeSet<String>>,
    ) -> Self {
        let mut guarded_roots: BTreeSet<String> = deny
            .iter()
            .filter(|p| p.is_exact())
            .filter_map(NamePattern::root)
            .map(str::to_owned)
            .collect();
        guarded_roots.extend(
            members
                .keys()
                .filter_map(|m| m.split('.').next())
                .map(str::to_owned),
        );
        let mut rules = Self {
            allow: PatternSet::new(allow),
            deny: PatternSet::new(deny),
            members,
            guarded_roots,
            hint_modules: Vec::new(),
            hint_cache: Default::default(),
        };
        rules.hint_modules = rules.derive_hint_modules();
        rules
    }

    /// The allowed modules as a hint names them: `numpy` and `numpy.*` show as `numpy`, an allowed
    /// submodule alone shows in full (`os.path`), and a pattern the policy also denies is left out (a
    /// deny wins). Sorted, each once.
    fn derive_hint_modules(&self) -> Vec<String> {
        let allowed = self.allowed_list();
        let shown: BTreeSet<&str> = allowed
            .iter()
            .map(|pattern| pattern.strip_suffix(".*").unwrap_or(pattern))
            .filter(|pattern| {
                !pattern.contains('.')
                    || !allowed
                        .iter()
                        .any(|a| pattern.starts_with(&format!("{a}.")))
            })
            .filter(|pattern| {
                let segments: Vec<&str> = pattern.split('.').collect();
                self.verdict(&segments) != ModuleVerdict::Denied
            })
            .collect();
        shown.into_iter().map(str::to_owned).collect()
    }

    /// The hint for `module` made once per policy: the same denied module in many programs (a server
    /// checks thousands with one policy) costs one search of the allowlist. Bounded: names longer
    /// than [`HINT_CACHE_NAME`] bytes and modules past the first [`HINT_CACHE_ENTRIES`] are made each
    /// time, so a program cannot grow it.
    pub(crate) fn hint_for(&self, module: &str, make: impl FnOnce() -> String) -> String {
        if module.len() > HINT_CACHE_NAME {
            return make();
        }
        if let Some(hint) = self
            .hint_cache
            .lock()
            .ok()
            .and_then(|cache| cache.get(module).cloned())
        {
            return hint;
        }
        let hint = make();
        if let Ok(mut cache) = self.hint_cache.lock() {
            if cache.len() < HINT_CACHE_ENTRIES {
                cache.insert(module.to_owned(), hint.clone());
            }
        }
        hint
    }

    /// The modules IMP101's hint may offer, sorted ([`Self::derive_hint_modules`]).
    pub(crate) fn hint_modules(&self) -> &[String] {
        &self.hint_modules
    }

    /// Top-level names of the modules denied exactly or allowed only in part: reaching one of these as
    /// an attribute of another module is a re-export escape.
    pub fn guarded_roots(&self) -> &BTreeSet<String> {
        &self.guarded_roots
    }

    /// When `module` is allowed only in part, whether `member` is one of the allowed members.
    pub fn member_allowed(&self, module: &str, member: &str) -> Option<bool> {
        self.members
            .get(module)
            .map(|allowed| allowed.contains(member))
    }

    /// The allow patterns as written, for hints.
    pub fn allowed_list(&self) -> Vec<String> {
        self.allow.iter().map(ToString::to_string).collect()
    }
}

/// File roots for the static path checks and the jail's Landlock ruleset.
#[derive(Debug, Clone)]
pub struct FileRules {
    /// Absolute roots (in the jail's view) the program may read.
    pub read: Vec<String>,
    /// Absolute roots (in the jail's view) the program may write.
    pub write: Vec<String>,
    pub inputs_writable: bool,
}

/// Resource limits of one run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PolicyLimits {
    pub wall_time_ms: u64,
    pub cpu_time_ms: u64,
    pub memory_bytes: u64,
    pub pids: u64,
    pub stdout_bytes: u64,
    pub stderr_bytes: u64,
    pub file_size_bytes: u64,
    pub open_files: u64,
    pub tmp_bytes: u64,
    pub output_files: u64,
    pub output_bytes: u64,
}

/// A confinement layer the policy can require.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Layer {
    Namespaces,
    Seccomp,
    Landlock,
    Cgroup,
    Rlimits,
}

impl Layer {
    pub const ALL: [Layer; 5] = [
        Layer::Namespaces,
        Layer::Seccomp,
        Layer::Landlock,
        Layer::Cgroup,
        Layer::Rlimits,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Layer::Namespaces => "namespaces",
            Layer::Seccomp => "seccomp",
            Layer::Landlock => "landlock",
            Layer::Cgroup => "cgroup",
            Layer::Rlimits => "rlimits",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|layer| layer.name() == text)
    }
}

/// Whether the runtime layer (warden's audit hook in the interpreter) is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hooks {
    /// Installed, or the run is refused (`setup_failed`).
    Required,
    /// Installed when warden's hook library is found.
    On,
    Off,
}

impl Hooks {
    pub fn name(self) -> &'static str {
        match self {
            Hooks::Required => "required",
            Hooks::On => "on",
            Hooks::Off => "off",
        }
    }
}

/// What a run does when the host cannot enforce the memory limit with a memory cgroup
/// (`[limits] memory_enforcement`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum MemoryEnforcement {
    /// The run is refused (`setup_failed`).
    #[default]
    Strict,
    /// RLIMIT_AS of one process, with what it cannot count refused.
    BestEffort,
}

impl MemoryEnforcement {
    pub fn name(self) -> &'static str {
        match self {
            MemoryEnforcement::Strict => "strict",
            MemoryEnforcement::BestEffort => "best-effort",
        }
    }
}

/// Where a run's result is read from, for the output schema to judge (`[output] result`,
/// `warden run --result`, the HTTP run body's `result`).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum ResultFrom {
    /// The whole of standard output is one JSON document.
    #[default]
    Stdout,
    /// The last non-empty line of standard output is the JSON document; lines before it are the
    /// program's own (debug prints, progress).
    LastLine,
    /// `result.json` in the work dir is the JSON document; standard output is free.
    File,
}

impl ResultFrom {
    pub const ALL: [ResultFrom; 3] = [ResultFrom::Stdout, ResultFrom::LastLine, ResultFrom::File];

    /// The name in the rules file and the HTTP body (`last_line`).
    pub fn name(self) -> &'static str {
        match self {
            ResultFrom::Stdout => "stdout",
            ResultFrom::LastLine => "last_line",
            ResultFrom::File => "file",
        }
    }

    /// Reads a name; `last-line` (the command line's spelling) is accepted too.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "last-line" => Some(ResultFrom::LastLine),
            _ => Self::ALL.into_iter().find(|from| from.name() == name),
        }
    }
}

/// Which interpreter runs the program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InterpreterSource {
    /// An absolute path to a Python binary on the host.
    Path(String),
    /// A runtime provisioned by `warden runtime`, by name.
    Runtime(String),
}

/// The validated policy: what the checker, the jail plan and output validation read.
#[derive(Debug, Clone)]
pub struct Policy {
    pub name: String,
    pub description: Option<String>,
    /// SHA-256 of the rules file text, hex.
    pub sha256: String,
    /// Target Python minor version (3.x).
    pub target_minor: u8,
    pub source: SourceLimits,
    pub imports: ImportRules,
    pub denied_references: PatternSet,
    pub denied_methods: BTreeSet<String>,
    pub allow_dunder: BTreeSet<String>,
    pub allow_dunder_definitions: BTreeSet<String>,
    /// Attribute names denied on any receiver (compared without leading underscores).
    pub denied_attribute_names: BTreeSet<String>,
    pub files: FileRules,
    pub network: bool,
    /// Whether the program may start processes (`[processes] allow`).
    pub processes: bool,
    /// Actions overridden by the rules file, by rule.
    pub actions: BTreeMap<Rule, Option<Action>>,
    pub interpreter: InterpreterSource,
    /// The runtime layer (`[runtime] hooks`).
    pub hooks: Hooks,
    /// Modules a pooled interpreter imports before a program arrives (`[runtime] preload`), each
    /// one an import this policy allows.
    pub preload: Vec<String>,
    pub limits: PolicyLimits,
    /// Whether a run may go ahead without a memory cgroup (`[limits] memory_enforcement`).
    pub memory_enforcement: MemoryEnforcement,
    pub required_layers: BTreeSet<Layer>,
    pub read_only_binds: Vec<String>,
    /// The output schema as JSON, when one is set inline.
    pub output_schema: Option<serde_json::Value>,
    /// The output schema file, resolved against the rules file's directory, when one is named.
    pub output_schema_file: Option<std::path::PathBuf>,
    /// Where the result the schema judges is read from (`[output] result`; `stdout` by default).
    pub output_result: ResultFrom,
    /// Second paths to banned objects found by `warden runtime check` for this policy and its runtime
    /// (not part of the rules file: empty until an index is attached).
    pub aliases: std::sync::Arc<crate::names::Aliases>,
    /// The modules (and names reached through allowed modules) this policy allows only in part, each
    /// with why: derived from `imports` and `denied_references` once, when the policy is built, and
    /// read by the checker for every program (`import_not_allowed::partly_allowed_modules`).
    pub(crate) partly_allowed: std::sync::Arc<BTreeMap<String, String>>,
}

const MIB: u64 = 1024 * 1024;

/// The built-in policy's rules, from the JSON the build made of [`DEFAULT_RULES`] (`build.rs`),
/// or from the text should that ever fail to read (a bug a test catches).
fn default_raw() -> RawRules {
    serde_json::from_str(DEFAULT_RULES_JSON)
        .unwrap_or_else(|_| parse_raw(DEFAULT_RULES).0.unwrap_or_default())
}

/// [`DEFAULT_RULES`] as JSON (`build.rs`).
const DEFAULT_RULES_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/default_rules.json"));

/// The JSON of [`Policy::from_toml_with_json`].
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ResolvedRules {
    sha256: String,
    rules: RawRules,
}

/// A policy's digest: of its text alone, or of every text of its `extends` chain.
fn digest_of(text: &str, texts: &[String]) -> String {
    if texts.len() == 1 {
        hex(&Sha256::digest(text.as_bytes()))
    } else {
        let mut digest = Sha256::new();
        for text in texts {
            digest.update(text.as_bytes());
            digest.update(b"\n\0extends\0\n");
        }
        hex(&digest.finalize())
    }
}

impl Policy {
    /// The built-in default policy.
    pub fn builtin_default() -> Result<Self, RulesError> {
        Self::from_raw(
            default_raw(),
            hex(&Sha256::digest(DEFAULT_RULES.as_bytes())),
            None,
        )
    }

    /// Parses and validates rules-file text, with the policy it `extends` (the built-in `default`, or
    /// a file relative to `base_dir`). `base_dir` also resolves other relative paths inside it.
    /// Every error is reported, each located by line, column and key path where the text says.
    ///
    /// The digest (`sha256`) is that of the text; for a file that extends another, of every text of
    /// the chain, so that it changes when a base changes.
    pub fn from_toml(text: &str, base_dir: Option<&Path>) -> Result<Self, RulesError> {
        Self::from_resolved(text, base_dir, extends::resolve(text, base_dir)?)
    }

    /// [`Policy::from_toml`], and the same rules with the `extends` chain merged, with their
    /// digest, as JSON: what [`Policy::from_resolved_json`] reads back into this policy with no
    /// TOML to parse and no base file to read (a server resolves each policy once and hands the
    /// JSON to every worker it starts, one per pooled jail).
    pub fn from_toml_with_json(
        text: &str,
        base_dir: Option<&Path>,
    ) -> Result<(Self, String), RulesError> {
        let resolved = extends::resolve(text, base_dir)?;
        let json = serde_json::to_string(&ResolvedRules {
            sha256: digest_of(text, &resolved.texts),
            rules: resolved.raw.clone(),
        })
        .map_err(|err| RulesError::at_key("", format!("the resolved rules: {err}")))?;
        Ok((Self::from_resolved(text, base_dir, resolved)?, json))
    }

    /// The policy of `text`, resolved: validated, every error located in `text`.
    fn from_resolved(
        text: &str,
        base_dir: Option<&Path>,
        resolved: extends::Resolved,
    ) -> Result<Self, RulesError> {
        let file_errors = resolved.errors;
        let sha256 = digest_of(text, &resolved.texts);
        let checked = Self::from_raw(resolved.raw, sha256, base_dir);
        let mut errors = file_errors;
        let policy = match checked {
            Ok(policy) => Some(policy),
            Err(error) => {
                errors.push(error);
                None
            }
        };
        match (RulesError::combine(errors), policy) {
            (None, Some(policy)) => Ok(policy),
            (Some(error), _) => Err(locate(error, text)),
            (None, None) => Err(RulesError::at_key("", "the rules file could not be read")),
        }
    }

    /// The policy of [`Policy::from_toml_with_json`]'s JSON (validated again: the JSON is not trusted
    /// to be valid, only to be quick to read). `base_dir` resolves relative paths as for
    /// `from_toml`.
    pub fn from_resolved_json(json: &str, base_dir: Option<&Path>) -> Result<Self, RulesError> {
        let resolved: ResolvedRules = serde_json::from_str(json)
            .map_err(|err| RulesError::at_key("", format!("the resolved rules: {err}")))?;
        Self::from_raw(resolved.rules, resolved.sha256, base_dir)
    }

    /// Reads and validates a rules file.
    pub fn from_file(path: &Path) -> Result<Self, RulesError> {
        let text = std::fs::read_to_string(path).map_err(|err| RulesError {
            line: None,
            column: None,
            key: None,
            message: format!("cannot read rules file {}: {err}", path.display()),
            more: Vec::new(),
        })?;
        Self::from_toml(&text, path.parent())
    }

    /// The action a rule has under this policy (`None`: the rule is off).
    pub fn action_for(&self, rule: Rule) -> Option<Action> {
        match self.actions.get(&rule) {
            Some(overridden) => *overridden,
            None => Some(rule.default_action()),
        }
    }

    fn from_raw(
        raw: RawRules,
        sha256: String,
        base_dir: Option<&Path>,
    ) -> Result<Self, RulesError> {
        let mut errors = Errors::default();
        let name = raw
            .policy
            .name
            .as_deref()
            .unwrap_or_default()
            .trim()
            .to_owned();
        if raw.policy.name.is_none() {
            errors.push(RulesError::at_key(
                "policy.name",
                "missing: a rules file needs `[policy] name = \"…\"` unless it `extends` another policy",
            ));
        } else if name.is_empty() {
            errors.push(RulesError::at_key("policy.name", "must not be empty"));
        }
        let target_minor = errors.take(parse_target(raw.policy.target_python.as_deref()), 11);
        let source = SourceLimits {
            max_bytes: errors.take(
                positive(raw.source.max_bytes, 1024 * 1024, "source.max_bytes"),
                1,
            ) as usize,
            max_depth: errors.take(
                positive(raw.source.max_depth.map(u64::from), 200, "source.max_depth"),
                1,
            ) as usize,
            max_nodes: errors.take(
                positive(raw.source.max_nodes, 500_000, "source.max_nodes"),
                1,
            ) as usize,
        };
        let mut members = BTreeMap::new();
        for (module, list) in &raw.imports.members {
            let key = format!("imports.members.{module}");
            if NamePattern::parse(module).is_none_or(|p| !p.is_exact()) {
                errors.push(RulesError::at_key(
                    key,
                    format!("{module:?} is not a dotted module name"),
                ));
                continue;
            }
            let list = errors.take(identifiers(list, &key), BTreeSet::new());
            members.insert(module.clone(), list);
        }
        let imports = ImportRules::new(
            errors.take(patterns(&raw.imports.allow, "imports.allow"), Vec::new()),
            errors.take(patterns(&raw.imports.deny, "imports.deny"), Vec::new()),
            members,
        );
        for module in imports.members.keys() {
            let segments: Vec<&str> = module.split('.').collect();
            if imports.verdict(&segments) != ModuleVerdict::Allowed {
                errors.push(RulesError::at_key(
                    format!("imports.members.{module}"),
                    format!("`{module}` has a member list but is not an allowed import"),
                ));
            }
        }
        let denied_references = PatternSet::new(errors.take(
            patterns(&raw.references.deny, "references.deny"),
            Vec::new(),
        ));
        let denied_methods = errors.take(
            identifiers(&raw.references.deny_methods, "references.deny_methods"),
            BTreeSet::new(),
        );
        let defaults = default_attributes();
        let allow_dunder = errors.take(
            dunders(
                raw.attributes
                    .allow_dunder
                    .as_deref()
                    .unwrap_or(&defaults.allow_dunder),
                "attributes.allow_dunder",
            ),
            BTreeSet::new(),
        );
        let allow_dunder_definitions = errors.take(
            dunders(
                raw.attributes
                    .allow_dunder_definitions
                    .as_deref()
                    .unwrap_or(&defaults.allow_dunder_definitions),
                "attributes.allow_dunder_definitions",
            ),
            BTreeSet::new(),
        );
        let denied_attribute_names = errors
            .take(
                identifiers(&raw.attributes.deny_names, "attributes.deny_names"),
                BTreeSet::new(),
            )
            .into_iter()
            .map(|name| name.trim_start_matches('_').to_owned())
            .collect();
        let files = errors.take(
            file_rules(&raw.files),
            FileRules {
                read: Vec::new(),
                write: Vec::new(),
                inputs_writable: false,
            },
        );
        let mut actions = errors.take(parse_actions(&raw.actions), BTreeMap::new());
        if let Some(text) = &raw.files.dynamic_path {
            match parse_action(text) {
                Some(action) => {
                    actions.insert(Rule::DynamicPath, action);
                }
                None => errors.push(RulesError::at_key(
                    "files.dynamic_path",
                    format!("unknown action {text:?}: {ACTIONS_HELP}"),
                )),
            }
        }
        let network = raw.network.allow.unwrap_or(false);
        if network {
            errors.push(RulesError::at_key(
                "network.allow",
                "network access is not supported: the jail always runs the program without a network",
            ));
        }
        let processes = raw.processes.allow.unwrap_or(false);
        let interpreter = errors.take(
            interpreter(&raw.runtime),
            InterpreterSource::Path("/usr/bin/python3".to_owned()),
        );
        let hooks = match raw.runtime.hooks.as_deref() {
            None | Some("required") => Hooks::Required,
            Some("on") => Hooks::On,
            Some("off") => Hooks::Off,
            Some(other) => {
                errors.push(RulesError::at_key(
                    "runtime.hooks",
                    format!("{other:?}: expected \"required\", \"on\" or \"off\""),
                ));
                Hooks::Required
            }
        };
        let preload = errors.take(
            preload(raw.runtime.preload.as_deref().unwrap_or_default(), &imports),
            Vec::new(),
        );
        let limits = errors.take(limits(&raw.limits), PolicyLimits::default());
        let memory_enforcement = match raw.limits.memory_enforcement.as_deref() {
            None | Some("strict") => MemoryEnforcement::Strict,
            Some("best-effort") => MemoryEnforcement::BestEffort,
            Some(other) => {
                errors.push(RulesError::at_key(
                    "limits.memory_enforcement",
                    format!("{other:?}: expected \"strict\" or \"best-effort\""),
                ));
                MemoryEnforcement::Strict
            }
        };
        let required_layers = errors.take(
            required_layers(raw.jail.required.as_deref()),
            BTreeSet::new(),
        );
        let read_only_binds = errors.take(
            absolute_paths(&raw.jail.read_only_binds, "jail.read_only_binds"),
            Vec::new(),
        );
        let output_schema = match raw.output.schema {
            Some(table) => errors.take(
                serde_json::to_value(table).map(Some).map_err(|err| {
                    RulesError::at_key("output.schema", format!("cannot convert to JSON: {err}"))
                }),
                None,
            ),
            None => None,
        };
        let output_schema_file = raw.output.schema_file.map(|file| match base_dir {
            Some(dir) => dir.join(file),
            None => std::path::PathBuf::from(file),
        });
        let output_result = match raw.output.result.as_deref() {
            None => ResultFrom::Stdout,
            Some(name) => match ResultFrom::parse(name).filter(|_| !name.contains('-')) {
                Some(from) => from,
                None => {
                    errors.push(RulesError::at_key(
                        "output.result",
                        format!("{name:?}: expected \"stdout\", \"last_line\" or \"file\""),
                    ));
                    ResultFrom::Stdout
                }
            },
        };
        if output_schema.is_some() && output_schema_file.is_some() {
            errors.push(RulesError::at_key(
                "output",
                "set `schema` or `schema_file`, not both",
            ));
        }
        let partly_allowed = std::sync::Arc::new(
            crate::rules::imports::import_not_allowed::partly_allowed_modules(
                &imports,
                &denied_references,
            ),
        );
        errors.finish(Self {
            name,
            description: raw.policy.description,
            sha256,
            target_minor,
            source,
            imports,
            denied_references,
            denied_methods,
            allow_dunder,
            allow_dunder_definitions,
            denied_attribute_names,
            files,
            network,
            processes,
            actions,
            interpreter,
            hooks,
            preload,
            limits,
            memory_enforcement,
            required_layers,
            read_only_binds,
            output_schema,
            output_schema_file,
            output_result,
            aliases: Default::default(),
            partly_allowed,
        })
    }
}

/// Deserialises the text, reporting unknown keys and type errors with line, column and key path:
/// all of them, not only the first. After each, the offending key is set aside and the rest read
/// again; the settings that could be read are returned with the errors, so that validation can
/// report the file's other mistakes too. Text that is not TOML at all has one error and no settings.
fn parse_raw(text: &str) -> (Option<RawRules>, Vec<RulesError>) {
    let first = match parse_toml::<RawRules>(text) {
        Ok(raw) => return (Some(raw), Vec::new()),
        Err(error) => error,
    };
    let Ok(mut table) = text.parse::<toml::Table>() else {
        return (None, vec![first]);
    };
    let mut errors = vec![first];
    let mut removed: Vec<String> = Vec::new();
    while errors.len() < 50 {
        let Some(key) = errors.last().and_then(|e| e.key.clone()) else {
            break;
        };
        if removed.contains(&key) || !locate::remove_key(&mut table, &key) {
            break;
        }
        removed.push(key);
        let value = toml::Value::Table(table.clone());
        match serde_path_to_error::deserialize::<_, RawRules>(value) {
            Ok(raw) => return (Some(raw), errors),
            Err(err) => {
                let key = err.path().to_string();
                let inner = err.into_inner().to_string();
                // The value deserialiser appends "in `key`" on a line of its own: the key is shown anyway.
                let message = inner.lines().next().unwrap_or_default().trim().to_owned();
                errors.push(locate(
                    RulesError {
                        line: None,
                        column: None,
                        key: (key != ".").then_some(key),
                        message,
                        more: Vec::new(),
                    },
                    text,
                ));
            }
        }
    }
    (None, errors)
}

/// The attribute allowlists of the built-in default policy: what a file that does not set them gets.
struct DefaultAttributes {
    allow_dunder: Vec<String>,
    allow_dunder_definitions: Vec<String>,
}

fn default_attributes() -> &'static DefaultAttributes {
    static DEFAULTS: std::sync::OnceLock<DefaultAttributes> = std::sync::OnceLock::new();
    DEFAULTS.get_or_init(|| {
        let raw = default_raw();
        DefaultAttributes {
            allow_dunder: raw.attributes.allow_dunder.unwrap_or_default(),
            allow_dunder_definitions: raw.attributes.allow_dunder_definitions.unwrap_or_default(),
        }
    })
}

/// Deserialises TOML text into `T`, locating any error by line, column and key path (used for
/// rules files and for the server's configuration, so both report mistakes the same way).
pub fn parse_toml<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, RulesError> {
    let deserializer = toml::Deserializer::new(text);
    serde_path_to_error::deserialize(deserializer).map_err(|err| {
        let key = err.path().to_string();
        let inner = err.into_inner();
        let (line, column) = match inner.span() {
            Some(span) => {
                let (line, column) = line_column(text, span.start);
                (Some(line), Some(column))
            }
            None => (None, None),
        };
        let message = inner.message().trim().to_owned();
        RulesError {
            line,
            column,
            key: (key != ".").then_some(key),
            message,
            more: Vec::new(),
        }
    })
}

fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

fn parse_target(text: Option<&str>) -> Result<u8, RulesError> {
    let Some(text) = text else { return Ok(11) };
    let minor = text
        .strip_prefix("3.")
        .and_then(|minor| minor.parse::<u8>().ok())
        .filter(|minor| (7..=14).contains(minor));
    minor.ok_or_else(|| {
        RulesError::at_key(
            "policy.target_python",
            format!("{text:?} is not a Python version from 3.7 to 3.14"),
        )
    })
}

fn positive(value: Option<u64>, default: u64, key: &str) -> Result<u64, RulesError> {
    match value {
        Some(0) => Err(RulesError::at_key(key, "must be greater than zero")),
        Some(value) => Ok(value),
        None => Ok(default),
    }
}

fn patterns(list: &[String], key: &str) -> Result<Vec<NamePattern>, RulesError> {
    all_or_errors(list.iter().enumerate().map(|(index, text)| {
        NamePattern::parse(text).ok_or_else(|| {
            RulesError::at_key(
                format!("{key}[{index}]"),
                format!("{text:?} is not a dotted name or a dotted name ending in `.*`"),
            )
        })
    }))
}

/// Every item, or every error among them.
fn all_or_errors<T, C: FromIterator<T>>(
    items: impl Iterator<Item = Result<T, RulesError>>,
) -> Result<C, RulesError> {
    let mut errors = Vec::new();
    let values: Vec<T> = items
        .filter_map(|item| item.map_err(|error| errors.push(error)).ok())
        .collect();
    match RulesError::combine(errors) {
        Some(error) => Err(error),
        None => Ok(values.into_iter().collect()),
    }
}

fn is_identifier(text: &str) -> bool {
    let mut chars = text.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric())
}

fn identifiers(list: &[String], key: &str) -> Result<BTreeSet<String>, RulesError> {
    all_or_errors(list.iter().enumerate().map(|(index, text)| {
        if is_identifier(text) {
            Ok(text.clone())
        } else {
            Err(RulesError::at_key(
                format!("{key}[{index}]"),
                format!("{text:?} is not an identifier"),
            ))
        }
    }))
}

fn dunders(list: &[String], key: &str) -> Result<BTreeSet<String>, RulesError> {
    let names = identifiers(list, key)?;
    if let Some(bad) = names.iter().find(|name| !crate::names::is_dunder(name)) {
        return Err(RulesError::at_key(
            key,
            format!("{bad:?} is not a dunder name (`__x__`)"),
        ));
    }
    Ok(names)
}

const ACTIONS_HELP: &str = "expected \"deny\", \"review\", \"warn\" or \"off\"";

fn parse_action(text: &str) -> Option<Option<Action>> {
    match text {
        "deny" => Some(Some(Action::Deny)),
        "review" => Some(Some(Action::Review)),
        "warn" => Some(Some(Action::Warn)),
        "off" => Some(None),
        _ => None,
    }
}

fn parse_actions(
    raw: &BTreeMap<String, String>,
) -> Result<BTreeMap<Rule, Option<Action>>, RulesError> {
    all_or_errors(raw.iter().map(|(id, text)| {
        let key = format!("actions.{id}");
        let rule = Rule::from_id(id).ok_or_else(|| {
            RulesError::at_key(
                &key,
                format!("unknown rule id {id:?}; `warden rules explain` lists them"),
            )
        })?;
        let action = parse_action(text).ok_or_else(|| {
            RulesError::at_key(&key, format!("unknown action {text:?}: {ACTIONS_HELP}"))
        })?;
        if rule.is_source_rule() && action != Some(Action::Deny) {
            return Err(RulesError::at_key(
                &key,
                "source rules (SYN*) always deny: code warden cannot parse the way CPython does cannot be judged",
            ));
        }
        Ok((rule, action))
    }))
}

/// Turns a root as written ("." or "data" relative to the work dir, or absolute) into an absolute
/// normalised path in the jail's view.
fn jail_root(text: &str, key: &str) -> Result<String, RulesError> {
    let joined = if text.starts_with('/') {
        text.to_owned()
    } else {
        format!("{WORKDIR}/{text}")
    };
    crate::paths::normalize(&joined)
        .ok_or_else(|| RulesError::at_key(key, format!("{text:?} climbs above the root with `..`")))
}

fn roots(
    list: Option<&Vec<String>>,
    default: &[&str],
    key: &str,
) -> Result<Vec<String>, RulesError> {
    match list {
        Some(list) => list
            .iter()
            .enumerate()
            .map(|(index, text)| {
                if text.starts_with('~') {
                    return Err(RulesError::at_key(
                        format!("{key}[{index}]"),
                        "`~` has no meaning in the jail",
                    ));
                }
                jail_root(text, &format!("{key}[{index}]"))
            })
            .collect(),
        None => default.iter().map(|text| jail_root(text, key)).collect(),
    }
}

fn file_rules(raw: &raw::RawFiles) -> Result<FileRules, RulesError> {
    Ok(FileRules {
        read: roots(raw.read.as_ref(), &[".", "/tmp"], "files.read")?,
        write: roots(raw.write.as_ref(), &[".", "/tmp"], "files.write")?,
        inputs_writable: raw.inputs_writable.unwrap_or(false),
    })
}

fn absolute_paths(list: &[String], key: &str) -> Result<Vec<String>, RulesError> {
    list.iter()
        .enumerate()
        .map(|(index, text)| {
            if text.starts_with('/') {
                jail_root(text, key)
            } else {
                Err(RulesError::at_key(
                    format!("{key}[{index}]"),
                    format!("{text:?} is not an absolute path"),
                ))
            }
        })
        .collect()
}

/// `[runtime] preload`: module names, each one an import the policy allows (a pooled interpreter
/// must never hold a module a program could not import itself).
fn preload(names: &[String], imports: &ImportRules) -> Result<Vec<String>, RulesError> {
    let mut out: Vec<String> = Vec::new();
    for name in names {
        let parts: Vec<&str> = name.split('.').collect();
        let well_formed = parts.iter().all(|part| {
            part.chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
                && part.chars().all(|c| c.is_alphanumeric() || c == '_')
        });
        if !well_formed {
            return Err(RulesError::at_key(
                "runtime.preload",
                format!("{name:?} is not a module name (dotted identifiers, e.g. \"pandas\")"),
            ));
        }
        match imports.verdict(&parts) {
            ModuleVerdict::Allowed => {}
            ModuleVerdict::Denied => {
                return Err(RulesError::at_key(
                    "runtime.preload",
                    format!("{name:?} is denied by [imports] deny: only modules the policy allows can be preloaded"),
                ))
            }
            ModuleVerdict::NotAllowed => {
                return Err(RulesError::at_key(
                    "runtime.preload",
                    format!("{name:?} is not in [imports] allow: only modules the policy allows can be preloaded"),
                ))
            }
        }
        if !out.contains(name) {
            out.push(name.clone());
        }
    }
    Ok(out)
}

fn interpreter(raw: &raw::RawRuntime) -> Result<InterpreterSource, RulesError> {
    match (&raw.name, &raw.interpreter) {
        (Some(_), Some(_)) => Err(RulesError::at_key(
            "runtime",
            "set `name` or `interpreter`, not both",
        )),
        (Some(name), None) if is_runtime_name(name) => Ok(InterpreterSource::Runtime(name.clone())),
        (Some(name), None) => Err(RulesError::at_key(
            "runtime.name",
            format!("{name:?}: runtime names use letters, digits, `-`, `_` and `.`"),
        )),
        (None, Some(path)) if path.starts_with('/') => Ok(InterpreterSource::Path(path.clone())),
        (None, Some(path)) => Err(RulesError::at_key(
            "runtime.interpreter",
            format!("{path:?} is not an absolute path"),
        )),
        (None, None) => Ok(InterpreterSource::Path("/usr/bin/python3".to_owned())),
    }
}

fn is_runtime_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

fn limits(raw: &raw::RawLimits) -> Result<PolicyLimits, RulesError> {
    Ok(PolicyLimits {
        wall_time_ms: positive(raw.wall_time_ms, 10_000, "limits.wall_time_ms")?,
        cpu_time_ms: positive(raw.cpu_time_ms, 10_000, "limits.cpu_time_ms")?,
        memory_bytes: positive(raw.memory_mib, 1024, "limits.memory_mib")? * MIB,
        pids: positive(raw.pids, 64, "limits.pids")?,
        stdout_bytes: positive(raw.stdout_bytes, MIB, "limits.stdout_bytes")?,
        stderr_bytes: positive(raw.stderr_bytes, 256 * 1024, "limits.stderr_bytes")?,
        file_size_bytes: positive(raw.file_size_mib, 64, "limits.file_size_mib")? * MIB,
        open_files: positive(raw.open_files, 256, "limits.open_files")?,
        tmp_bytes: positive(raw.tmp_mib, 64, "limits.tmp_mib")? * MIB,
        output_files: positive(raw.output_files, 32, "limits.output_files")?,
        output_bytes: positive(raw.output_mib, 64, "limits.output_mib")? * MIB,
    })
}

fn required_layers(list: Option<&[String]>) -> Result<BTreeSet<Layer>, RulesError> {
    let Some(list) = list else {
        return Ok([
            Layer::Namespaces,
            Layer::Seccomp,
            Layer::Landlock,
            Layer::Rlimits,
        ]
        .into());
    };
    all_or_errors(list.iter().enumerate().map(|(index, text)| {
        Layer::parse(text).ok_or_else(|| {
            RulesError::at_key(
                format!("jail.required[{index}]"),
                format!("unknown layer {text:?}; layers are namespaces, seccomp, landlock, cgroup, rlimits"),
            )
        })
    }))
}

/// Lower-case hex of a digest.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_rules_read_from_json_as_from_toml() {
        let from_json: Result<RawRules, _> = serde_json::from_str(DEFAULT_RULES_JSON);
        let from_json = from_json.unwrap_or_else(|err| panic!("{err}"));
        let (from_toml, errors) = parse_raw(DEFAULT_RULES);
        assert!(errors.is_empty(), "{errors:?}");
        let as_json = |raw: &RawRules| serde_json::to_value(raw).unwrap_or_default();
        assert_eq!(as_json(&from_json), as_json(&from_toml.unwrap_or_default()));
    }

    #[test]
    fn hints_are_made_once_per_module_and_a_program_cannot_grow_their_cache() {
        let policy = Policy::builtin_default().unwrap_or_else(|err| panic!("{err}"));
        let imports = &policy.imports;
        let cached = || {
            imports
                .hint_cache
                .lock()
                .map(|c| c.len())
                .unwrap_or(usize::MAX)
        };
        let made = std::cell::Cell::new(0);
        let make = |text: &str| {
            made.set(made.get() + 1);
            text.to_owned()
        };
        assert_eq!(imports.hint_for("requests", || make("first")), "first");
        assert_eq!(imports.hint_for("requests", || make("second")), "first");
        assert_eq!(
            made.get(),
            1,
            "the second hint for a module is the remembered one"
        );
        // Names longer than the bound are never kept.
        let long = "m".repeat(HINT_CACHE_NAME + 1);
        imports.hint_for(&long, || make("long"));
        imports.hint_for(&long, || make("long"));
        assert_eq!(made.get(), 3);
        // Past the bound, hints are made each time and the cache stays at its size.
        for i in 0..HINT_CACHE_ENTRIES + 50 {
            imports.hint_for(&format!("module_{i}"), || make("x"));
        }
        assert_eq!(cached(), HINT_CACHE_ENTRIES);
        let before = made.get();
        imports.hint_for(&format!("module_{}", HINT_CACHE_ENTRIES + 10), || make("x"));
        assert_eq!(made.get(), before + 1);
        // The list a hint offers leaves out what the policy denies and shows `numpy.*` as `numpy`.
        let offered = imports.hint_modules();
        assert!(offered.iter().any(|m| m == "numpy"), "{offered:?}");
        assert!(!offered.iter().any(|m| m.ends_with(".*")), "{offered:?}");
        assert!(!offered.iter().any(|m| m == "subprocess"), "{offered:?}");
        assert!(offered.windows(2).all(|w| w[0] < w[1]), "sorted, each once");
    }
}
